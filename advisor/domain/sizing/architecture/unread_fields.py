"""Which config.json fields a reader knows, and what to do with the ones it does not.

A reader gets the config wrapped in ReadRecorder, which records every key it looks at
(indexing, `get`, `in`); a family module may also declare KNOWN_FIELDS, fields it knows do
not change its counts though it does not read them. Whatever else the config sets is unknown
to that reader. One whose name says it can change a count (experts, layers, heads, head widths,
...) is refused by name, unless it is set to nothing (null, false, 0, empty) or is a field some
reader counts (in FIELD_LIMITS: a reader that skips it does so because the rest of the config
makes it unused, as Qwen3-MoE's intermediate_size when every layer is MoE). The rest cannot
change the count: they are ignored, and the answer says which. So a family that declares
nothing is still checked, on what it actually read.
"""

import re
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from advisor.domain.sizing.architecture.config_values import FIELD_LIMITS
from advisor.domain.sizing.architecture.model import UnsupportedArchitecture

# Fields that never change a parameter count or the KV cache per token: token ids, dropout,
# initialisation, dtypes, norm epsilons, RoPE and its scaling, caching, attention kernels,
# generation and bookkeeping.
COUNT_NEUTRAL_FIELDS = frozenset(
    {
        "_name_or_path",
        "architectures",
        "model_type",
        "transformers_version",
        "torch_dtype",
        "dtype",
        "auto_map",
        "bos_token_id",
        "boi_token_index",  # a multimodal model's image markers: ids in its vocabulary
        "eoi_token_index",
        "image_token_index",
        "eos_token_id",
        "pad_token_id",
        "sep_token_id",
        "decoder_start_token_id",
        "unk_token_id",
        "tokenizer_class",
        "dropout",
        "dropout_rate",
        "attention_dropout",
        "hidden_dropout",
        "hidden_dropout_prob",
        "attention_probs_dropout_prob",
        "resid_pdrop",
        "embd_pdrop",
        "attn_pdrop",
        "summary_first_dropout",
        "classifier_dropout",
        "initializer_range",
        "initializer_factor",
        "rms_norm_eps",
        "layer_norm_eps",
        "layer_norm_epsilon",
        "norm_epsilon",
        "rope_theta",
        "rope_scaling",
        "original_max_position_embeddings",
        "rope_parameters",
        "rope_interleave",
        "partial_rotary_factor",
        "rotary_dim",
        "rotary_pct",
        "rotary_emb_base",
        "no_rope_layers",
        "use_cache",
        "_attn_implementation",
        "attn_implementation",
        "hidden_act",
        "hidden_activation",
        "activation_function",
        "pretraining_tp",
        "output_router_logits",
        "router_aux_loss_coef",
        "router_jitter_noise",
        "aux_loss_alpha",
        "seq_aux",
        "norm_topk_prob",
        "scoring_func",
        "topk_method",
        "routed_scaling_factor",
        "n_group",
        "topk_group",
        "ep_size",
        "attn_logit_softcapping",
        "final_logit_softcapping",
        "query_pre_attn_scalar",
        "logits_scaling",
        "embedding_multiplier",
        "residual_multiplier",
        "attention_multiplier",
        "scale_attn_weights",
        "scale_attn_by_inverse_layer_idx",
        "reorder_and_upcast_attn",
        "gradient_checkpointing",
        "is_encoder_decoder",
        "is_decoder",
        "task_specific_params",
        "id2label",
        "label2id",
        "problem_type",
        "position_embedding_type",
        "summary_type",
        "summary_use_proj",
        "summary_activation",
        "summary_proj_to_labels",
        "n_ctx",
        # Multi-token-prediction layers: transformers does not build them, so the meta-device
        # counts (the references) leave them out.
        "num_nextn_predict_layers",
        "generation_config",
        "quantization_config",
    }
)
# Names that say a field can change a count: refused by name when a reader does not read them.
COUNT_CHANGING_PATTERN = re.compile(
    r"expert|moe|lora_rank|layers|heads|head_dim|intermediate|hidden_size|ffn|inner|vocab"
    r"|window|chunk|bias|qk_norm|qk_layernorm|tie_|tied|kv_|_kv|layer_type|attention_type"
    r"|attn_type|embedding_size|embed_dim|^num_|^n_",
    re.IGNORECASE,
)


class ReadRecorder(dict):
    """The config, recording which keys the reader looked at."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__(config)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.add(key)
        return super().__contains__(key)


def declared_fields(module: ModuleType | None) -> frozenset[str]:
    """A family module's KNOWN_FIELDS; none for a module that declares nothing."""
    return frozenset(getattr(module, "KNOWN_FIELDS", ()))


def _sets_nothing(value: Any) -> bool:
    return value is None or value is False or value == 0 or value in ("", [], {})


def unknown_fields_check(
    config: ReadRecorder, model_type: str, known: Iterable[str] = ()
) -> tuple[str, ...]:
    """The fields `config` sets that its reader neither read nor knows, count-neutral ones
    (which it returns, sorted); a count-changing one is refused by name."""
    unknown = sorted(set(config) - config.read - COUNT_NEUTRAL_FIELDS - set(known))
    refused = [
        name
        for name in unknown
        if COUNT_CHANGING_PATTERN.search(name)
        and name not in FIELD_LIMITS
        and not _sets_nothing(dict.get(config, name))
    ]
    if refused:
        raise UnsupportedArchitecture(
            f"{', '.join(refused[:5])}{' ...' if len(refused) > 5 else ''}: the {model_type} "
            "reader does not know "
            + ("this field" if len(refused) == 1 else "these fields")
            + ", which can change the parameter or KV-cache count; remove "
            + ("it" if len(refused) == 1 else "them")
            + " only if the model does not use "
            + ("it" if len(refused) == 1 else "them")
        )
    return tuple(unknown)


def ignored_fields_note(model_type: str, ignored: tuple[str, ...]) -> str:
    shown = ", ".join(ignored[:10]) + (
        f" and {len(ignored) - 10} more" if len(ignored) > 10 else ""
    )
    return (
        f"config.json fields the {model_type} reader does not use, ignored (they do not change "
        f"the counts given the rest of the config): {shown}"
    )
