"""Llama 4 (Scout, Maverick): the text model inside `text_config` (llama4), or alone
(llama4_text).

MoE layers (`moe_layers`, else every `interleave_moe_layer_step`-th) hold routed experts of
intermediate_size, a shared expert of the same width and a router; the other layers a dense MLP
of intermediate_size_mlp. Attention layers with RoPE attend within chunks of
attention_chunk_size tokens, so their KV cache holds at most one chunk; NoPE layers
(`no_rope_layers` 0, else every `no_rope_layer_interval`-th) attend globally. The q/k norm is an
L2 norm without weights. The vision tower (a ViT with a class token, a pixel-shuffle MLP
adapter and a linear projector into the text model) is counted when vision_config gives its
shapes; it holds no KV cache and is idle for text tokens."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import (
    flag,
    flag_list,
    index_list,
    layer_kinds,
    optional_int,
    optional_text,
    positive_int,
    sub_config,
)
from advisor.domain.sizing.architecture.decoder import attention_params, head_layout
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    assemble,
    attention_groups,
    embeddings,
    experts_per_token,
    gated_mlp_groups,
    max_positions,
    trunk,
    with_vision_tower,
)

CHUNK_KINDS = frozenset({"full_attention", "chunked_attention"})
# Llama 4's q/k norm is an L2 norm without weights: on or off, the counts are the same; the
# projector has no bias whatever multi_modal_projector_bias says (transformers' projector).
KNOWN_FIELDS = frozenset({"use_qk_norm", "multi_modal_projector_bias"})


def _moe_layers(config: Mapping[str, Any], layers: int) -> int:
    listed = index_list(config, "moe_layers", layers)
    if config.get("moe_layers") is not None:
        return len(set(listed))
    step = optional_int(config, "interleave_moe_layer_step", 1)
    return len(range(step - 1, layers, step))


def _chunked_layers(config: Mapping[str, Any], layers: int) -> tuple[int | None, int]:
    """(attention_chunk_size, layers attending within chunks): the RoPE layers."""
    chunk = optional_int(config, "attention_chunk_size", 8192)
    if "attention_chunk_size" in config and config["attention_chunk_size"] is None:
        return None, 0
    kinds = layer_kinds(config, layers, CHUNK_KINDS)
    if kinds is not None:
        chunked = kinds.count("chunked_attention")
    else:
        rope = flag_list(config, "no_rope_layers", layers)
        if rope is None:
            interval = optional_int(config, "no_rope_layer_interval", 4)
            rope = tuple((i + 1) % interval != 0 for i in range(layers))
        chunked = sum(rope)
    return (chunk, chunked) if chunked else (None, 0)


def read_text(config: Mapping[str, Any], name: str, family: str) -> ModelArchitecture:
    shape = trunk(config)
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    kv, head_dim = head_layout(config, h, heads)
    q_dim, kv_dim = heads * head_dim, kv * head_dim
    bias = flag(config, "attention_bias", False)
    attention = attention_params(h, q_dim, kv_dim, bias, bias)
    experts = positive_int(config, "num_local_experts")
    per_token = experts_per_token(config, experts, "num_local_experts")
    inter = positive_int(config, "intermediate_size")
    expert = 3 * h * inter
    moe_layers = _moe_layers(config, layers)
    dense_layers = layers - moe_layers
    dense = 3 * h * positive_int(config, "intermediate_size_mlp") if dense_layers else 0
    moe_common = h * experts + expert  # the router and the shared expert
    embedding = embeddings(config, shape, False)
    common = (
        embedding.params
        + h
        + layers * (attention + 2 * h)
        + dense_layers * dense
        + moe_layers * moe_common
    )
    chunk, chunked = _chunked_layers(config, layers)
    return assemble(
        name,
        family,
        shape,
        embedding,
        params_total=common + moe_layers * experts * expert,
        params_active=common + moe_layers * per_token * expert,
        intermediate_size=inter * (per_token + 1),
        kv_dim=kv_dim,
        query_width=q_dim,
        num_kv_heads=kv,
        sliding_window=chunk,
        sliding_window_layers=chunked,
        largest_layer_params=max(embedding.input, experts * expert),
        lora_groups=attention_groups(layers, h, q_dim, kv_dim)
        + gated_mlp_groups(h, inter, moe_layers * experts),
        params_routed_experts=moe_layers * experts * expert,
        routed_fraction_per_token=per_token / experts,
        moe_layers=moe_layers,
        experts_per_token=per_token,
        max_positions=max_positions(config),
        notes=(
            f"MoE: {per_token} of {experts} routed experts per token plus a shared expert on "
            f"{moe_layers} of {layers} layers",
            f"{chunked} of {layers} layers attend within chunks of {chunk:,} tokens (their KV "
            "cache holds at most one chunk); the NoPE layers attend to the whole context"
            if chunk
            else "every layer attends to the whole context",
        ),
    )


VISION_SHAPES = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "image_size",
    "patch_size",
    "projector_input_dim",
    "projector_output_dim",
    "vision_output_dim",
)


def vision_params(vision: Mapping[str, Any], text_hidden: int) -> int | None:
    """Llama 4's vision encoder, adapter and projector (transformers' Llama4VisionModel and
    Llama4MultiModalProjector), or None when vision_config does not give their shapes."""
    if any(vision.get(shape) is None for shape in VISION_SHAPES):
        return None
    vh = positive_int(vision, "hidden_size")
    inter = positive_int(vision, "intermediate_size")
    patch = positive_int(vision, "patch_size")
    positions = (positive_int(vision, "image_size") // patch) ** 2 + 1  # the class token's too
    channels = optional_int(vision, "num_channels", 3)
    # Class embedding, positions, the unfolded patches' bias-free linear, two LayerNorms.
    embedding = vh + positions * vh + channels * patch * patch * vh + 2 * 2 * vh
    # q, k, v, o with biases; fc1 and fc2 with biases; two LayerNorms with biases.
    layer = 4 * (vh * vh + vh) + (vh * inter + inter) + (inter * vh + vh) + 2 * 2 * vh
    # The pixel-shuffle MLP (Llama4VisionMLP2: intermediate -> projector_input_dim, then
    # projector_output_dim square, bias-free), then the bias-free projector into the text model
    # (transformers builds it without a bias whatever multi_modal_projector_bias says).
    projector_out = positive_int(vision, "projector_output_dim")
    adapter = inter * positive_int(vision, "projector_input_dim") + projector_out * projector_out
    projector = positive_int(vision, "vision_output_dim") * text_hidden
    return embedding + positive_int(vision, "num_hidden_layers") * layer + adapter + projector


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    if config["model_type"] == "llama4_text":
        return read_text(config, name, "llama4_text")
    text = sub_config(config, "text_config")
    if optional_text(text, "model_type", "llama4_text") != "llama4_text":
        raise UnsupportedArchitecture("llama4: text_config.model_type must be llama4_text")
    model = read_text(text, name, "llama4")
    vision = (
        vision_params(sub_config(config, "vision_config"), model.hidden_size)
        if "vision_config" in config
        else None
    )
    return with_vision_tower(model, vision, "vision tower, its adapter and projector")
