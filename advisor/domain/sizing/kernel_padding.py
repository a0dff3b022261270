"""What a serving stack's kernels pad stored weights to before they fit its GEMMs.

vLLM loads gpt-oss's MXFP4 experts into the shapes its MoE kernel for the GPU accepts
(Mxfp4MoEMethod.create_weights in vllm/model_executor/layers/quantization/mxfp4.py,
https://github.com/vllm-project/vllm/blob/007d50058a06dec0f82472d63c819244d460c40d/vllm/model_executor/layers/quantization/mxfp4.py):
each expert's intermediate width on a GPU (split by tensor parallelism) and the hidden width
are rounded up to the kernel's tile, and the experts' blocks, scales and biases are allocated
at the padded shape. The kernel by GPU generation, as that file picks it by default:
- Hopper: OpenAI's Triton kernels, the intermediate width to a multiple of 64;
- Blackwell data-centre parts (SM100): FlashInfer's, both widths to 256;
- every other NVIDIA GPU (Ampere, Ada, consumer Blackwell): Marlin's weight-only FP4 kernel
  ("n % 256 == 0 and k % 128 == 0"), the intermediate width to 128 and the hidden to 256.
AMD GPUs pad to an alignment the file reads from the platform at run time: not modelled.
"""

from advisor.domain.sizing.architecture import ModelArchitecture

# (intermediate, hidden) multiples by the catalogue's architecture; Marlin's for the rest.
MXFP4_TILES_BY_ARCHITECTURE = {
    "Hopper": (64, 1),
    "Blackwell": (256, 256),
    "Blackwell Ultra": (256, 256),
}
MARLIN_TILES = (128, 256)
PADDING_STACKS = frozenset({"vllm"})


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def pads_weights(arch: ModelArchitecture, stack_name: str) -> bool:
    """Whether the stack pads this checkpoint's weights by GPU (MXFP4 experts under vLLM)."""
    stored = arch.stored_weights
    return (
        stack_name in PADDING_STACKS
        and stored is not None
        and stored.method == "mxfp4"
        and arch.expert_intermediate_size > 0
    )


def padded_expert_fraction(
    arch: ModelArchitecture, vendor: str, gpu_architecture: str, tensor_parallel: int
) -> float:
    """The routed experts' bytes per GPU as loaded over their bytes as stored (1.0: none)."""
    if vendor != "NVIDIA":
        return 1.0
    tile_i, tile_h = MXFP4_TILES_BY_ARCHITECTURE.get(gpu_architecture, MARLIN_TILES)
    width = arch.expert_intermediate_size / tensor_parallel
    padded_width = _round_up(round(width), tile_i)
    padded_hidden = _round_up(arch.hidden_size, tile_h)
    return (padded_width * padded_hidden) / (width * arch.hidden_size)
