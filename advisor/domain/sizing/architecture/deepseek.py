"""DeepSeek-V2/V3 (and R1 and Kimi K2, built as V3): multi-head latent attention (the KV cache
holds the compressed latent and the shared rotary key) and a MoE with routed and shared
experts."""

from collections.abc import Mapping
from typing import Any, NamedTuple

from advisor.domain.sizing.architecture.config_values import (
    optional_int,
    optional_text,
    positive_int,
)
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    assemble,
    embeddings,
    experts_per_token,
    gated_mlp_groups,
    layer_groups,
    max_positions,
    trunk,
)

# DeepSeek-V3's router (and so R1's and Kimi K2's) adds a learned per-expert bias to the scores
# it ranks; transformers always builds it (a persistent buffer, saved with the weights).
NOAUX_ROUTERS = frozenset({"deepseek_v3", "kimi_k2"})


class Latent(NamedTuple):
    """Multi-head latent attention, per layer."""

    params: int
    q_head: int  # query width per head: the no-rotary part and the rotary part
    v_head: int
    cached: int  # elements in the KV cache per token: the latent and the shared rotary key


def _dense_layers(config: Mapping[str, Any], layers: int) -> int:
    """The first layers, whose MLP is dense; every later one is a MoE layer."""
    dense_layers = optional_int(config, "first_k_dense_replace", 0, minimum=0)
    if dense_layers > layers:
        raise UnsupportedArchitecture(
            f"first_k_dense_replace={dense_layers:,} exceeds num_hidden_layers={layers:,}"
        )
    if optional_int(config, "moe_layer_freq", 1, null_ok=False) != 1:
        raise UnsupportedArchitecture("moe_layer_freq other than 1 is not supported")
    return dense_layers


def _latent(config: Mapping[str, Any], h: int, heads: int) -> Latent:
    kv_rank = positive_int(config, "kv_lora_rank")
    q_rank = optional_int(config, "q_lora_rank", 0, minimum=0)
    nope, rope = (
        positive_int(config, "qk_nope_head_dim"),
        positive_int(config, "qk_rope_head_dim"),
    )
    v_head = positive_int(config, "v_head_dim")
    q_head = nope + rope
    # With q_lora_rank: q_a_proj, q_a_layernorm, q_b_proj; without: one q_proj.
    q_proj = (h * q_rank + q_rank + q_rank * heads * q_head) if q_rank else h * heads * q_head
    params = (
        q_proj
        + h * (kv_rank + rope)  # kv_a_proj_with_mqa
        + kv_rank  # kv_a_layernorm
        + kv_rank * heads * (nope + v_head)  # kv_b_proj
        + heads * v_head * h  # o_proj
    )
    return Latent(params, q_head, v_head, kv_rank + rope)


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    shape = trunk(config)
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    inter = positive_int(config, "intermediate_size")
    moe_inter = positive_int(config, "moe_intermediate_size")
    routed = positive_int(config, "n_routed_experts")
    shared = optional_int(config, "n_shared_experts", 0, minimum=0)
    top_k = experts_per_token(config, routed, "n_routed_experts")
    dense_layers = _dense_layers(config, layers)
    latent = _latent(config, h, heads)
    expert = 3 * h * moe_inter
    gate = routed * h
    if config["model_type"] in NOAUX_ROUTERS or optional_text(config, "topk_method") == "noaux_tc":
        gate += routed  # the router's e_score_correction_bias: stored in the checkpoint
    shared_mlp = shared * expert
    moe_layers = layers - dense_layers
    embedding = embeddings(config, shape, False)
    common = embedding.params + h + layers * (latent.params + 2 * h) + dense_layers * 3 * h * inter
    return assemble(
        name,
        config["model_type"],
        shape,
        embedding,
        params_total=common + moe_layers * (routed * expert + shared_mlp + gate),
        params_active=common + moe_layers * (top_k * expert + shared_mlp + gate),
        intermediate_size=moe_inter * (top_k + shared) if moe_layers else inter,
        kv_dim=heads * latent.v_head,
        query_width=heads * latent.q_head,
        value_width=heads * latent.v_head,
        num_kv_heads=1,  # the latent is shared by all heads: every TP rank holds all of it
        kv_elements_per_token=layers * latent.cached,
        largest_layer_params=max(embedding.input, routed * expert),
        lora_groups=layer_groups(
            layers, ("q_proj", h, heads * latent.q_head), ("o_proj", heads * latent.v_head, h)
        )
        + gated_mlp_groups(h, moe_inter, moe_layers * routed),
        params_routed_experts=moe_layers * routed * expert,
        routed_fraction_per_token=top_k / routed,
        moe_layers=moe_layers,
        experts_per_token=top_k,
        max_positions=max_positions(config),
        notes=("KV cache holds the MLA latent (kv_lora_rank + qk_rope_head_dim per layer)",),
    )
