"""How the sizing form and the answer name each choice: words a person reads, not the API's
enum values (the API keeps the values; the page shows these)."""

from advisor.domain.sizing.stacks import DEFAULT_STACK_BY_TASK, STACKS

CHOICE_LABELS: dict[str, dict[str, str]] = {
    "task": {
        "inference": "Inference (serving)",
        "lora": "LoRA fine-tune",
        "qlora": "QLoRA fine-tune (4-bit base)",
        "full": "Full fine-tune",
        "pretrain": "Pre-training",
    },
    "weight_dtype": {
        "": "As stored (BF16 unless the checkpoint is quantised)",
        "fp32": "FP32 (4 bytes)",
        "bf16": "BF16 (2 bytes)",
        "fp16": "FP16 (2 bytes)",
        "fp8": "FP8 (1 byte)",
        "int8": "INT8 (1 byte)",
        "int4": "INT4 GPTQ/AWQ (½ byte)",
    },
    "kv_dtype": {
        "": "As the weights (BF16 for FP8/INT8/INT4)",
        "fp32": "FP32 (4 bytes)",
        "bf16": "BF16 (2 bytes)",
        "fp16": "FP16 (2 bytes)",
        "fp8": "FP8 (1 byte)",
    },
    "optimizer": {
        "adamw": "AdamW, mixed precision",
        "adamw_bf16": "AdamW, pure BF16",
        "adamw_8bit": "AdamW, 8-bit states",
        "sgd": "SGD with momentum",
        "adafactor": "Adafactor",
    },
    "gradient_checkpointing": {"true": "On", "false": "Off"},
    "flash_attention": {"true": "On", "false": "Off"},
    "zero_stage": {
        "": "Auto (smallest fitting)",
        "0": "0 (plain data parallel)",
        "1": "1 (shard optimizer states)",
        "2": "2 (+ gradients)",
        "3": "3 / FSDP (+ weights)",
    },
    "tensor_parallel": {"1": "1 (none)", "2": "2", "4": "4", "8": "8"},
    "stack": {
        "": "The task's default ("
        + "; ".join(STACKS[name].label for name in dict.fromkeys(DEFAULT_STACK_BY_TASK.values()))
        + ")",
        **{name: stack.label for name, stack in STACKS.items()},
    },
    "activation_checkpointing": {
        "": "The stack's, when gradient checkpointing is on",
        "none": "None (keep every activation)",
        "selective": "Selective (recompute attention scores)",
        "full": "Full (keep layer inputs)",
    },
    "optimizer_offload": {"true": "On", "false": "Off"},
    "parameter_offload": {"true": "On", "false": "Off"},
    "activation_offloading": {"": "The stack's default", "true": "On", "false": "Off"},
    "optimizer_in_backward": {"": "The stack's default", "true": "On", "false": "Off"},
    "pricing_model": {
        "on_demand": "On-demand",
        "spot": "Spot",
        "any": "Either (the cheaper, each says which)",
    },
    "exclude_marketplaces": {"true": "Yes", "false": "No"},
    "goal": {"cheapest": "Cheapest", "fastest": "Fastest"},
}
