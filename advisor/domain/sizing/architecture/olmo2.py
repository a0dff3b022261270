"""OLMo 2: Llama's shapes with the norms moved after attention and after the MLP, plus an
RMSNorm over all of q and of k (q_norm, k_norm) in every layer."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from advisor.domain.sizing.architecture import decoder
from advisor.domain.sizing.architecture.model import ModelArchitecture


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    # Two hidden-size norms per layer, as Llama; only the place differs.
    llama = decoder.read(config, name)
    q_dim = llama.num_attention_heads * (llama.kv_dim // llama.num_kv_heads)
    qk_norms = llama.num_layers * (q_dim + llama.kv_dim)
    return replace(
        llama,
        params_total=llama.params_total + qk_norms,
        params_active=llama.params_active + qk_norms,
    )
