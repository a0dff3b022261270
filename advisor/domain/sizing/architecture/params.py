"""A dense decoder known only by its parameter count (and whatever of its shape is given)."""

import math

from advisor.domain.sizing.architecture.model import (
    LinearGroup,
    ModelArchitecture,
    UnsupportedArchitecture,
)

# A dense decoder has about 12·L·h² parameters in its layers; published models keep h/L near
# 128 (Llama-2-7B: 4096/32; Llama-3.1-70B: 8192/80 = 102).
TYPICAL_HIDDEN_PER_LAYER = 128


def architecture_from_params(
    params: int,
    *,
    num_layers: int | None = None,
    hidden_size: int | None = None,
    num_kv_heads: int | None = None,
    num_attention_heads: int | None = None,
    vocab_size: int = 32_000,
    params_active: int | None = None,
) -> ModelArchitecture:
    """A dense decoder known only by its size; the shape it assumes is listed in `notes`."""
    if params <= 0:
        raise UnsupportedArchitecture("params must be positive")
    notes = []
    if hidden_size is None and num_layers is None:
        hidden_size = round((params * TYPICAL_HIDDEN_PER_LAYER / 12) ** (1 / 3) / 128) * 128 or 128
        notes.append(f"hidden size {hidden_size} assumed from the parameter count (h/L ≈ 128)")
    if num_layers is None:
        num_layers = max(1, round(params / (12 * hidden_size**2)))
        notes.append(f"{num_layers} layers assumed from params ≈ 12·L·h²")
    if hidden_size is None:
        hidden_size = max(64, round(math.sqrt(params / (12 * num_layers)) / 64) * 64)
        notes.append(f"hidden size {hidden_size} assumed from params ≈ 12·L·h²")
    heads = num_attention_heads or max(1, hidden_size // 128)
    kv_heads = num_kv_heads or heads
    if num_kv_heads is None:
        notes.append("no KV head count given: full multi-head attention assumed (largest KV cache)")
    head_dim = hidden_size // heads
    inter = 4 * hidden_size
    return ModelArchitecture(
        name=f"{params / 1e9:.3g}B-parameter model",
        family="dense",
        params_total=params,
        params_active=params_active or params,
        params_embedding=2 * vocab_size * hidden_size,
        num_layers=num_layers,
        hidden_size=hidden_size,
        intermediate_size=inter,
        num_attention_heads=heads,
        kv_dim=kv_heads * head_dim,
        num_kv_heads=kv_heads,
        vocab_size=vocab_size,
        kv_elements_per_token=2 * num_layers * kv_heads * head_dim,
        gated_mlp=False,
        largest_layer_params=vocab_size * hidden_size,
        lora_groups=(
            LinearGroup("attention", hidden_size, hidden_size, 4 * num_layers),
            LinearGroup("mlp", hidden_size, inter, 2 * num_layers),
        ),
        notes=tuple(notes),
    )
