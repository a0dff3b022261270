"""A quantised checkpoint's weights at the precision it stores them, from `quantization_config`.

Each method stores its quantised weights at `bits` plus constants, per weight:
- GPTQ: one fp16 scale and one `bits`-wide packed zero point per `group_size` weights (per
  output row when group_size is -1), plus the int32 `g_idx` of each input row;
- AWQ: one fp16 scale per `group_size` weights, and a packed zero point when zero_point;
- bitsandbytes: nf4/fp4, 4 bits + an fp32 absmax per 64 weights, or with double quantisation
  an 8-bit absmax per 64 and an fp32 constant per 256 of those; int8, an fp32 scale per row;
- FP8: 1 byte + one fp32 scale per weight_block_size block (per tensor without blocks);
- MXFP4: 4 bits + one 8-bit shared exponent per 32 values = 4.25 bits; only the MoE experts
  (as transformers' Mxfp4 integration converts them), everything else stays 16-bit;
- compressed-tensors: `weights.num_bits` + one 16-bit scale per group / row / block (and a
  zero point when not symmetric), from its one config group.
Embeddings and the output head stay 16-bit in every method; so do the attention projections
when modules_to_not_convert names them. Norms, biases and routers (well under 0.1% of a
model's parameters) are counted at the quantised width.

Every field is read the config_values.py way: a wrong type or an absurd value is an
UnsupportedArchitecture naming `quantization_config.<field>`.
"""

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from advisor.domain.sizing.architecture.config_values import shown
from advisor.domain.sizing.architecture.model import (
    ModelArchitecture,
    StoredWeights,
    UnsupportedArchitecture,
    WeightPart,
)
from advisor.domain.sizing.architecture.quantization_config_values import (
    QUANTIZATION_LIMITS,
    block,
    count,
    flag,
    group_size,
    names,
    text,
    where,
)

Reader = Callable[[Mapping[str, Any], str], ModelArchitecture]

SIXTEEN_BITS = 16.0
FP16_SCALE_BITS = 16
FP32_SCALE_BITS = 32
INT32_BITS = 32
MXFP4_BITS = 4 + 8 / 32
NF4_BLOCK = 64
NF4_DOUBLE_QUANT_BLOCK = 256
# Modules every method leaves 16-bit already, or too small to matter (routers, norms).
ALREADY_SIXTEEN_BIT = ("lm_head", "embed_tokens", "embed", "wte", "norm", "router", "gate")
ATTENTION_MODULES = ("self_attn", "attn", "attention")
EXPERT_GROUPS = ("gate_proj", "up_proj", "down_proj")
ATTENTION_GROUPS = ("q_proj", "k_proj", "v_proj", "o_proj", "q_a_proj", "q_b_proj")


def _per_group(bits: float, constant_bits: float, size: int, row: int) -> float:
    """Bits per weight: `bits`, plus `constant_bits` per group of `size` (a row when -1)."""
    return bits + constant_bits / (row if size == -1 else size)


def _sixteen_bit_name(config: Mapping[str, Any]) -> str:
    dtype = config.get("torch_dtype", config.get("dtype"))
    return "fp16" if dtype == "float16" else "bf16"


def _kept_attention(architecture: ModelArchitecture, kept: tuple[str, ...], method: str) -> int:
    """Attention parameters modules_to_not_convert keeps 16-bit; a module we cannot place is
    refused by name rather than guessed."""
    attention = False
    for module in kept:
        leaf = module.rstrip(".*").rsplit(".", 1)[-1]
        if leaf in ATTENTION_MODULES:
            attention = True
        elif not any(part in leaf for part in ALREADY_SIXTEEN_BIT):
            raise UnsupportedArchitecture(
                f"{where('modules_to_not_convert')}: {module!r} is not a module we can size "
                f"in a {method} checkpoint (we keep embeddings, lm_head, norms, routers and "
                "attention 16-bit)"
            )
    if not attention:
        return 0
    return sum(
        group.in_features * group.out_features * group.count
        for group in architecture.lora_groups
        if group.name in ATTENTION_GROUPS
    )


def _linear_format(settings: Mapping[str, Any], method: str, hidden: int) -> tuple[str, float, str]:
    """(what the quantised linear layers are, bits per weight, the not-converted field)."""
    if method == "gptq":
        bits = count(settings, "bits")
        group = group_size(settings, "group_size", default=128)
        flag(settings, "desc_act", False)
        per_weight = _per_group(bits, FP16_SCALE_BITS + bits, group, hidden) + INT32_BITS / hidden
        return f"GPTQ {bits}-bit (group size {group})", per_weight, "modules_to_not_convert"
    if method == "awq":
        bits = count(settings, "bits", "w_bit")
        group = group_size(settings, "group_size", "q_group_size", default=128)
        zero = flag(settings, "zero_point", True)
        per_weight = _per_group(bits, FP16_SCALE_BITS + (bits if zero else 0), group, hidden)
        return f"AWQ {bits}-bit (group size {group})", per_weight, "modules_to_not_convert"
    if method == "bitsandbytes":
        four, eight = flag(settings, "load_in_4bit", False), flag(settings, "load_in_8bit", False)
        if four == eight:
            raise UnsupportedArchitecture(
                f"{where('load_in_4bit')} / load_in_8bit: exactly one must be true"
            )
        if eight:
            return "bitsandbytes int8", 8 + FP32_SCALE_BITS / hidden, "llm_int8_skip_modules"
        kind = text(settings, "bnb_4bit_quant_type", "fp4")
        if kind not in {"nf4", "fp4"}:
            raise UnsupportedArchitecture(
                f"{where('bnb_4bit_quant_type')} must be 'nf4' or 'fp4', got {shown(kind)}"
            )
        if flag(settings, "bnb_4bit_use_double_quant", False):
            constants = 8 / NF4_BLOCK + FP32_SCALE_BITS / (NF4_BLOCK * NF4_DOUBLE_QUANT_BLOCK)
            kind += ", double quantised"
        else:
            constants = FP32_SCALE_BITS / NF4_BLOCK
        return f"bitsandbytes {kind}", 4 + constants, "llm_int8_skip_modules"
    if method == "fp8":
        text(settings, "activation_scheme", "dynamic")
        values = block(settings, "weight_block_size")
        if values is None:
            return "FP8 (per-tensor scales)", 8.0, "modules_to_not_convert"
        return "FP8 (block-wise scales)", 8 + FP32_SCALE_BITS / values, "modules_to_not_convert"
    return _compressed_tensors(settings, hidden)


def _compressed_tensors(settings: Mapping[str, Any], hidden: int) -> tuple[str, float, str]:
    groups = settings.get("config_groups")
    if not isinstance(groups, Mapping) or len(groups) != 1:
        raise UnsupportedArchitecture(
            f"{where('config_groups')} must hold exactly one quantisation scheme, "
            f"got {shown(groups)}"
        )
    scheme = next(iter(groups.values()))
    weights = scheme.get("weights") if isinstance(scheme, Mapping) else None
    if not isinstance(weights, Mapping):
        raise UnsupportedArchitecture(
            f"{where('config_groups')}: the scheme needs a weights object, got {shown(scheme)}"
        )
    bits = count(weights, "num_bits")
    strategy = text(weights, "strategy", "tensor")
    zero = 0 if flag(weights, "symmetric", True) else bits
    if strategy == "group":
        group = group_size(weights, "group_size", default=128)
        per_weight = _per_group(bits, FP16_SCALE_BITS + zero, group, hidden)
    elif strategy == "tensor_group":  # NVFP4: an fp8 scale per group of 16
        per_weight = bits + 8 / group_size(weights, "group_size", default=16)
    elif strategy == "channel":
        per_weight = bits + (FP16_SCALE_BITS + zero) / hidden
    elif strategy == "block":
        per_weight = bits + FP16_SCALE_BITS / (block(weights, "block_structure") or 1)
    elif strategy == "tensor":
        per_weight = float(bits)
    else:
        raise UnsupportedArchitecture(
            f"{where('weights.strategy')} must be group, tensor_group, channel, block or "
            f"tensor, got {shown(strategy)}"
        )
    kind = text(weights, "type", "int")
    return f"compressed-tensors {kind}{bits} ({strategy})", per_weight, "ignore"


def _expert_matrices(architecture: ModelArchitecture) -> int:
    """The routed experts' weight matrices: a MoE's MLP LinearGroups are its routed experts;
    what params_routed_experts holds beyond them is expert biases, which MXFP4 leaves 16-bit."""
    matrices = sum(
        group.in_features * group.out_features * group.count
        for group in architecture.lora_groups
        if group.name in EXPERT_GROUPS
    )
    return min(matrices, architecture.params_routed_experts) or architecture.params_routed_experts


METHODS = ("gptq", "awq", "bitsandbytes", "fp8", "mxfp4", "compressed-tensors")


def stored_weights(
    config: Mapping[str, Any], architecture: ModelArchitecture, reader: Reader
) -> StoredWeights:
    """The weights `config`'s quantization_config stores, part by part.

    `reader` counts the family; it sizes the multi-token-prediction layers a checkpoint may
    carry beyond those served (DeepSeek-V3's num_nextn_predict_layers)."""
    settings = config["quantization_config"]
    if not isinstance(settings, Mapping):
        raise UnsupportedArchitecture(
            f"quantization_config must be a JSON object, got {shown(settings)}"
        )
    method = settings.get("quant_method")
    if method not in METHODS:
        raise UnsupportedArchitecture(
            f"{where('quant_method')}={shown(method)} is not supported "
            f"(supported: {', '.join(METHODS)})"
        )
    sixteen = _sixteen_bit_name(config)
    embedding = architecture.params_embedding
    if method == "mxfp4":
        names(settings, "modules_to_not_convert")
        experts = _expert_matrices(architecture)
        if not experts:
            raise UnsupportedArchitecture(
                f"{where('quant_method')}='mxfp4' stores MoE experts; {architecture.name} has none"
            )
        parts = (
            WeightPart("MXFP4 experts", experts, MXFP4_BITS),
            WeightPart(
                f"{sixteen} attention, routers, expert biases, norms and embeddings",
                architecture.params_total - experts,
                SIXTEEN_BITS,
            ),
        )
        summary = f"MXFP4 experts, {sixteen} attention and embeddings"
        quantised_bits = MXFP4_BITS
        expert_bytes = experts * MXFP4_BITS / 8
        expert_bytes += (architecture.params_routed_experts - experts) * SIXTEEN_BITS / 8
        vision_bytes = architecture.params_vision * SIXTEEN_BITS / 8
    else:
        what, quantised_bits, kept_field = _linear_format(
            settings, method, architecture.hidden_size
        )
        attention = _kept_attention(architecture, names(settings, kept_field), what)
        quantised = architecture.params_total - embedding - attention
        parts = (WeightPart(f"{what} linear layers", quantised, quantised_bits),)
        kept = f"{sixteen} embeddings and output head"
        if attention:
            parts += (WeightPart(f"{sixteen} attention", attention, SIXTEEN_BITS),)
            kept = f"{sixteen} attention, embeddings and output head"
        parts += (WeightPart(f"{sixteen} embeddings and output head", embedding, SIXTEEN_BITS),)
        summary = f"{what} linear layers, {kept}"
        expert_bytes = architecture.params_routed_experts * quantised_bits / 8
        vision_bytes = architecture.params_vision * quantised_bits / 8  # in the linear layers
    return StoredWeights(
        method=method,
        summary=f"weights as stored: {summary} (from quantization_config)",
        parts=parts,
        routed_expert_bytes=expert_bytes,
        vision_bytes=vision_bytes,
        checkpoint_extra_bytes=_prediction_layer_bytes(
            config, architecture, reader, quantised_bits
        ),
    )


def _prediction_layer_bytes(
    config: Mapping[str, Any], architecture: ModelArchitecture, reader: Reader, bits: float
) -> float:
    """Bytes of the multi-token-prediction modules the files hold after the served layers, in
    DeepSeek-V3's layout: a decoder layer (quantised), and 16-bit copies of the embedding and
    output head, its 2h x h eh_proj and three norms."""
    extra = config.get("num_nextn_predict_layers") or 0
    limit = QUANTIZATION_LIMITS["num_nextn_predict_layers"]
    if isinstance(extra, bool) or not isinstance(extra, int) or not 0 <= extra <= limit:
        raise UnsupportedArchitecture(
            f"num_nextn_predict_layers must be a whole number from 0 to {limit:,}, "
            f"got {shown(extra)}"
        )
    if not extra:
        return 0.0
    deeper = {**config, "num_hidden_layers": architecture.num_layers + extra}
    layers = reader(deeper, architecture.name).params_total - architecture.params_total
    h = architecture.hidden_size
    sixteen_bit = extra * (2 * architecture.vocab_size * h + 2 * h * h + 3 * h)
    return layers * bits / 8 + sixteen_bit * SIXTEEN_BITS / 8


def with_stored_weights(
    config: Mapping[str, Any], architecture: ModelArchitecture, reader: Reader
) -> ModelArchitecture:
    """`architecture` knowing its checkpoint's stored weights, when config is quantised."""
    if config.get("quantization_config") is None:
        return architecture
    return replace(architecture, stored_weights=stored_weights(config, architecture, reader))
