"""The requests the sizing benchmarks send, as API request bodies."""

SIZING_PATH = "/api/v1/advice/sizing"
SIZING_BODY = {
    "model": "llama-3.1-70b",
    "task": "inference",
    "context_tokens": 8192,
    "concurrent_users": 16,
}
BASELINE_PATH = "/api/v1/gpus/H100-SXM/"

# The engine workloads (built through the same serializer as the API's).
ENGINE_WORKLOADS = {
    "70B inference (8k ctx, 16 users)": SIZING_BODY,
    "8B LoRA (4k ctx, micro-batch 4)": {
        "model": "llama-3.1-8b",
        "task": "lora",
        "context_tokens": 4096,
        "batch_size": 4,
    },
    "70B QLoRA (4k ctx)": {"model": "llama-3.1-70b", "task": "qlora", "context_tokens": 4096},
    "405B full training (fits nowhere: remedies sized)": {
        "model": "llama-3.1-405b",
        "task": "full",
        "context_tokens": 4096,
    },
}
