"""The pages and code the compatibility table and the other stacks cite, each with its words;
every one read on READ_ON (from stored copies of the public pages: nothing here was tested on
hardware)."""

from dataclasses import dataclass

READ_ON = "2026-12-01"


@dataclass(frozen=True)
class Source:
    url: str
    quote: str


VLLM_CUDA = Source(
    "https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/gpu.cuda.inc.md",
    "GPU: compute capability 7.5 or higher (e.g., T4, RTX20xx, A100, L4, H100, B200, etc.)",
)
VLLM_ARCHS = Source(
    "https://github.com/vllm-project/vllm/blob/main/CMakeLists.txt",
    'set(CUDA_SUPPORTED_ARCHS "7.5;8.0;8.6;8.7;8.9;9.0;10.0;10.1;10.3;12.0;12.1")',
)
VLLM_ROCM = Source(
    "https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/gpu.rocm.inc.md",
    "GPU: MI200s (gfx90a), MI300 (gfx942), MI350 (gfx950), Radeon RX 7900 series",
)
VLLM_XPU = Source(
    "https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/",
    "Supported Hardware: Intel Data Center GPU, Intel ARC GPU",
)
VLLM_TPU = Source(
    "https://docs.vllm.ai/projects/tpu/en/latest/getting_started/quickstart/",
    "TPU versions: v7x, v6e, v5e",
)
VLLM_GAUDI = Source(
    "https://docs.vllm.ai/projects/gaudi/en/latest/general/faq.html",
    "Intel Gaudi 2 or Intel Gaudi 3 AI accelerator. Intel Gaudi software version 1.24.0 and above.",
)
VLLM_NEURON = Source(
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/vllm-neuron/index.html",
    "The vLLM Neuron plugin brings the full vLLM serving stack to AWS Trainium (Trn2 and Trn3).",
)
NXD_INFERENCE = Source(
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/libraries/vllm-neuron/neuron-inference-overview.html",
    "It supports Inf2, Trn1, and Trn2 instances.",
)
NXD_INFERENCE_END = Source(
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-nxdi-nxd-core-inference-trn.html",
    "Starting with Neuron Release 2.34.0, Neuron no longer supports the NeuronX Distributed (NxD) "
    "Inference library...on Trn2 and Trn3",
)
TORCH_NEURON_INF1 = Source(
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/frameworks/torch/",
    "PyTorch Neuron (torch-neuron) (archived): The legacy PyTorch integration for NeuronCores v1 "
    "architecture (Inf1 only).",
)
SGLANG_RUNNER = Source(
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py",
    "SGLang only supports sm75 and above.",
)
SGLANG_ROCM = Source(
    "https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/sglang.html",
    "how to set up and run SGLang on AMD GPUs",
)
SGLANG_TPU = Source(
    "https://github.com/sgl-project/sglang/blob/main/docs/platforms/tpu.md",
    "SGLang TPU support is implemented via the SGLang-JAX backend",
)
TRTLLM_HARDWARE = Source(
    "https://nvidia.github.io/TensorRT-LLM/supported-hardware.html",
    "NVIDIA Blackwell: B200, GB200, B300, GB300, DGX Spark ... NVIDIA Ada Lovelace: L20, "
    "L40/L40S NVIDIA Ampere: A100",
)
TRTLLM_MATRIX = Source(
    "https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/reference/support-matrix.md",
    "Blackwell (SM100/SM120) - FP32, FP16, BF16, FP8, FP4, INT8, INT4",
)
TRTLLM_UNLISTED = Source(
    "https://nvidia.github.io/TensorRT-LLM/0.18.2/reference/support-matrix.html",
    "If a GPU architecture is not listed, the TensorRT-LLM team does not develop or test the "
    "software on the architecture",
)
ROCM_PEFT = Source(
    "https://rocm.docs.amd.com/how-to/llm-fine-tuning-optimization/single-gpu-fine-tuning-and-inference.html",
    "Hardware: AMD Instinct MI300X GPU ... Libraries: transformers datasets huggingface-hub "
    "peft trl",
)
ROCM_QLORA = Source(
    "https://rocm.docs.amd.com/projects/ai-developer-hub/en/latest/notebooks/fine_tune/QLoRA_Llama-3.1.html",
    "fine-tune the Llama-3.1 8B large language model using Quantized Low-Rank Adaptation (QLoRA) "
    "on AMD ROCm GPUs",
)
PEFT_README = Source(
    "https://github.com/huggingface/peft/blob/main/README.md",
    "State-of-the-art Parameter-Efficient Fine-Tuning (PEFT) methods",
)
HF_GAUDI = Source(
    "https://huggingface.co/docs/transformers/v5.10.2/perf_train_gaudi",
    "Trainer, and Pipeline detect Intel Gaudi devices and set the backend to hpu automatically.",
)
OPTIMUM_TPU = Source(
    "https://huggingface.co/docs/optimum-tpu/supported-architectures",
    "tested and validated for fine-tuning on TPU v5e and v6e",
)
NEURON_HF = Source(
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/training.html",
    "Hugging Face transformers, diffusers, PEFT, and accelerate, which run natively on TorchNeuron",
)
TORCH_NEURON = Source(
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/index.html",
    "supported on Trainium 2 (trn2) and Trainium 3 (trn3) ... supports the PyTorch parallelism "
    "APIs: DDP, FSDP2, tensor and sequence parallelism with DTensor",
)
TORCHTUNE_DEVICES = Source(
    "https://github.com/pytorch/torchtune/blob/main/torchtune/utils/_device.py",
    "This currently only supports CPU, CUDA, NPU, and XPU.",
)
TORCHTUNE_STOPPED = Source(
    "https://github.com/meta-pytorch/torchtune/issues/2883",
    "we are stopping active development on torchtune, effective immediately",
)
UNSLOTH_NVIDIA = Source(
    "https://unsloth.ai/docs/zh/kai-shi/fine-tuning-for-beginners/unsloth-requirements",
    "最低 CUDA 能力 7.0(V100、T4、Titan V、RTX 20 & 50、A100、H100、L40 等) (minimum CUDA "
    "capability 7.0)",
)
UNSLOTH_AMD = Source(
    "https://unsloth.ai/docs/get-started/install/amd.md",
    "Unsloth supports AMD Radeon RDNA 3/3.5/4 (RX 6000-9000 series)... data center GPUs including "
    "the MI300X (192GB).",
)
UNSLOTH_INTEL = Source(
    "https://unsloth.ai/docs/de/los-gehts/install/intel",
    "Intel GPU: Data Center GPU Max Series, Arc Series oder Intel Ultra AIPC",
)
AUTOMODEL_INSTALL = Source(
    "https://github.com/NVIDIA-NeMo/Automodel/blob/main/docs/guides/installation.md",
    "GPU: NVIDIA GPU with 8GB+ VRAM (16GB+ recommended)",
)
PYTORCH_FSDP2 = Source(
    "https://pytorch.org/docs/stable/distributed.fsdp.fully_shard.html",
    "PyTorch FSDP2 provides a fully sharded data parallelism (FSDP) implementation targeting "
    "performant eager-mode",
)
TORCH_XLA_FSDP = Source(
    "https://docs.pytorch.org/xla/release/r2.8/perf/fsdp_spmd.html",
    "This differs from the other implementation of FSDP in PyTorch/XLA in that this "
    "implementation uses SPMD.",
)
GAUDI_FSDP = Source(
    "https://docs.habana.ai/en/latest/PyTorch/PyTorch_FSDP/Pytorch_FSDP.html",
    "Fully Sharded Data Parallel (FSDP) is a type of data parallel training supported by Intel "
    "Gaudi 2 AI accelerator",
)
DEEPSPEED_README = Source(
    "https://github.com/deepspeedai/DeepSpeed/blob/master/README.md",
    "NVIDIA: Pascal, Volta, Ampere, and Hopper architectures; AMD: MI100 and MI200; Intel(R) "
    "Gaudi(R) 2 AI accelerator | hpu | Yes | Yes",
)
DEEPSPEED_GAUDI = Source(
    "https://docs.habana.ai/en/latest/PyTorch/DeepSpeed/Getting_Started_with_DeepSpeed/Getting_Started_with_DeepSpeed.html",
    "Installing public DeepSpeed packages is not supported.",
)
MEGATRON = Source(
    "https://docs.nvidia.com/megatron-core/developer-guide/latest/get-started/install.html",
    "Recommended: NVIDIA Turing architecture or later; FP8 Support: NVIDIA Hopper, Ada, Blackwell",
)
MEGATRON_ROCM = Source(
    "https://rocm.docs.amd.com/projects/primus/en/v26.9/_sources/02-user-guide/megatron-lm-training.md",
    "pretraining a model on the AMD Instinct MI300X, MI325X, MI350X, and MI355X GPUs.",
)
MEGATRON_GAUDI = Source(
    "https://docs.habana.ai/en/latest/Support_Matrix/Support_Matrix.html",
    "Megatron-LM | Forked from the official Megatron-LM, core_r0.13.0",
)
MAXTEXT = Source(
    "https://github.com/AI-Hypercomputer/maxtext",
    "targeting Google Cloud TPUs and GPUs for training and inference",
)
BITSANDBYTES = Source(
    "https://huggingface.co/docs/bitsandbytes/v0.50.2/en/installation.md",
    "We provide official support for NVIDIA GPUs, AMD GPUs, Intel XPUs, Apple Silicon, and Intel "
    "Gaudi. ... NF4/FP4 quantization | 6.0+ | Pascal",
)
FLASH_ATTENTION = Source(
    "https://github.com/Dao-AILab/flash-attention/blob/main/README.md",
    "FlashAttention-2 with CUDA currently supports: 1. Ampere, Ada, or Hopper GPUs ... 1. MI200x, "
    "MI250x, MI300x, and MI355x GPUs.",
)
VLLM_QUANTIZATION = Source(
    "https://docs.vllm.ai/en/v0.15.1/features/quantization/",
    "| FP8 (W8A8) | ... Volta refers to SM 7.0, Turing to SM 7.5, Ampere to SM 8.0/8.6, Ada to "
    "SM 8.9",
)
GAUDI_FP8 = Source(
    "https://docs.habana.ai/en/latest/PyTorch/Inference_on_PyTorch/Inference_Using_FP8.html",
    "enable FP8 inference on your Intel Gaudi 2 and Intel Gaudi 3 AI accelerator.",
)
VLLM_MXFP4 = Source(
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/mxfp4.py",
    "triton_kernels are only confirmed to work on SM90 and SM100 ... get_min_capability ... "
    "return 80",
)
GPT_OSS_RECIPE = Source(
    "https://github.com/vllm-project/recipes/blob/main/OpenAI/GPT-OSS.md",
    "run it on NVIDIA H100, H200, B200 as well as MI300x, MI325x, MI355x",
)
BF16_FLOOR = Source(
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py",
    "Compute capability below sm80. Use float16 due to lack of bfloat16 support.",
)
V520_ROCM = Source(
    "https://github.com/ROCm/rocm-libraries/issues/4347",
    "AWS EC2 g4ad* instances are powered by AMD Radeon Pro V520 GPUs. rocBLAS seems to not be "
    "supported on this hardware?",
)
