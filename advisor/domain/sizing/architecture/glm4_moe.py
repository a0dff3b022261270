"""GLM-4.5 / GLM-4.5-Air (glm4_moe): grouped-query attention with biased q, k and v, the first
layers dense, the rest a MoE with routed experts, shared experts and a sigmoid router whose
score-correction bias is stored with the weights (counted here, as for DeepSeek-V3).

The multi-token-prediction layer some checkpoints carry (num_nextn_predict_layers) is not part
of the model transformers builds and is not counted."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import flag, optional_int, positive_int
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
)


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    shape = trunk(config)
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    kv, head_dim = head_layout(config, h, heads)
    q_dim, kv_dim = heads * head_dim, kv * head_dim
    inter = positive_int(config, "intermediate_size")
    moe_inter = positive_int(config, "moe_intermediate_size")
    routed = positive_int(config, "n_routed_experts")
    shared = optional_int(config, "n_shared_experts", 0, minimum=0)
    top_k = experts_per_token(config, routed, "n_routed_experts")
    dense_layers = optional_int(config, "first_k_dense_replace", 0, minimum=0)
    if dense_layers > layers:
        raise UnsupportedArchitecture(
            f"first_k_dense_replace={dense_layers:,} exceeds num_hidden_layers={layers:,}"
        )
    moe_layers = layers - dense_layers
    # attention_bias puts biases on q, k and v only; o_proj has none.
    attention = attention_params(h, q_dim, kv_dim, flag(config, "attention_bias", False), False)
    if flag(config, "use_qk_norm", False):
        attention += 2 * head_dim
    expert = 3 * h * moe_inter
    gate = routed * h + routed  # the router and its e_score_correction_bias
    embedding = embeddings(config, shape, False)
    common = (
        embedding.params
        + h
        + layers * (attention + 2 * h)
        + dense_layers * 3 * h * inter
        + moe_layers * (shared * expert + gate)
    )
    return assemble(
        name,
        "glm4_moe",
        shape,
        embedding,
        params_total=common + moe_layers * routed * expert,
        params_active=common + moe_layers * top_k * expert,
        intermediate_size=moe_inter * (top_k + shared) if moe_layers else inter,
        kv_dim=kv_dim,
        query_width=q_dim,
        num_kv_heads=kv,
        largest_layer_params=max(embedding.input, routed * expert if moe_layers else 0),
        lora_groups=attention_groups(layers, h, q_dim, kv_dim)
        + gated_mlp_groups(h, moe_inter, moe_layers * routed),
        params_routed_experts=moe_layers * routed * expert,
        routed_fraction_per_token=top_k / routed,
        moe_layers=moe_layers,
        experts_per_token=top_k,
        max_positions=max_positions(config),
    )
