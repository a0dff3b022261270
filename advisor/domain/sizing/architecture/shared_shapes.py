"""Shapes several families share: the trunk a reader starts from, the embeddings, routed
experts, gated MLPs and their LoRA targets, and the assembly of a ModelArchitecture."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NamedTuple

from advisor.domain.sizing.architecture.config_values import flag, optional_int, positive_int
from advisor.domain.sizing.architecture.model import (
    LinearGroup,
    ModelArchitecture,
    UnsupportedArchitecture,
)


class Trunk(NamedTuple):
    """The widths every family has: hidden size, layers (holding a KV cache), attention heads,
    vocabulary."""

    hidden: int
    layers: int
    heads: int
    vocab: int


def trunk(
    config: Mapping[str, Any],
    hidden: tuple[str, ...] = ("hidden_size",),
    layers: tuple[str, ...] = ("num_hidden_layers",),
    heads: tuple[str, ...] = ("num_attention_heads",),
) -> Trunk:
    """The trunk read in that order, then vocab_size; each from the first of its names set."""
    return Trunk(
        positive_int(config, *hidden),
        positive_int(config, *layers),
        positive_int(config, *heads),
        positive_int(config, "vocab_size"),
    )


class Embeddings(NamedTuple):
    """The token embedding matrices, kept 16-bit when weights are quantised."""

    input: int
    head: int  # the output head; 0 when tied to the input embedding (counted once)

    @property
    def params(self) -> int:
        return self.input + self.head


def embeddings(config: Mapping[str, Any], shape: Trunk, tied_by_default: bool) -> Embeddings:
    """Vocabulary x hidden for the input, and again for the head unless tie_word_embeddings."""
    matrix = shape.vocab * shape.hidden
    tied = flag(config, "tie_word_embeddings", tied_by_default)
    return Embeddings(matrix, 0 if tied else matrix)


def experts_per_token(config: Mapping[str, Any], experts: int, experts_name: str) -> int:
    """num_experts_per_tok, which cannot exceed the routed experts (`experts_name`)."""
    per_token = positive_int(config, "num_experts_per_tok")
    if per_token > experts:
        raise UnsupportedArchitecture(
            f"num_experts_per_tok={per_token} exceeds {experts_name}={experts}"
        )
    return per_token


def max_positions(config: Mapping[str, Any]) -> int | None:
    """max_position_embeddings for families that may leave it out (0 or null: not known)."""
    return optional_int(config, "max_position_embeddings", 0) or None


def layer_groups(count: int, *shapes: tuple[str, int, int]) -> tuple[LinearGroup, ...]:
    """LoRA targets of (name, in_features, out_features), `count` of each in the model."""
    return tuple(LinearGroup(name, in_features, out, count) for name, in_features, out in shapes)


def attention_groups(count: int, hidden: int, q_dim: int, kv_dim: int) -> tuple[LinearGroup, ...]:
    """LoRA targets of separate q/k/v/o projections, `count` layers of them."""
    return layer_groups(
        count,
        ("q_proj", hidden, q_dim),
        ("k_proj", hidden, kv_dim),
        ("v_proj", hidden, kv_dim),
        ("o_proj", q_dim, hidden),
    )


def block_groups(
    shape: Trunk, inter: int, attention: tuple[tuple[str, int], ...], mlp: tuple[str, str]
) -> tuple[LinearGroup, ...]:
    """LoRA targets of a block whose attention projections (name, out_features) all read the
    hidden state and whose MLP is one up and one down projection (names), on every layer."""
    up, down = mlp
    return layer_groups(
        shape.layers,
        *((name, shape.hidden, out) for name, out in attention),
        (up, shape.hidden, inter),
        (down, inter, shape.hidden),
    )


def gated_mlp_groups(hidden: int, inter: int, count: int) -> tuple[LinearGroup, ...]:
    """A gated MLP's gate_proj, up_proj and down_proj, `count` of each."""
    return layer_groups(
        count,
        ("gate_proj", hidden, inter),
        ("up_proj", hidden, inter),
        ("down_proj", inter, hidden),
    )


def assemble(
    name: str,
    family: str,
    shape: Trunk,
    embedding: Embeddings,
    *,
    params_total: int,
    intermediate_size: int,
    kv_dim: int,
    **details: Any,
) -> ModelArchitecture:
    """A ModelArchitecture with what most families share as defaults, each overridable in
    `details`: every parameter active per token (dense), K and V of `kv_dim` cached on every
    layer with one KV head per attention head, the input embedding as the largest layer."""
    defaults: dict[str, Any] = {
        "params_active": params_total,
        "num_kv_heads": shape.heads,
        "kv_elements_per_token": 2 * shape.layers * kv_dim,
        "largest_layer_params": embedding.input,
    }
    return ModelArchitecture(
        name=name,
        family=family,
        params_total=params_total,
        params_embedding=embedding.params,
        num_layers=shape.layers,
        hidden_size=shape.hidden,
        intermediate_size=intermediate_size,
        num_attention_heads=shape.heads,
        kv_dim=kv_dim,
        vocab_size=shape.vocab,
        **(defaults | details),
    )


def with_vision_tower(
    model: ModelArchitecture, tower: int | None, what: str, **changes: Any
) -> ModelArchitecture:
    """A multimodal wrapper's text model with its vision tower (`what`, `tower` parameters)
    added to the weights but not to the active parameters or the KV cache: it is loaded and
    idle while text is generated. None: vision_config does not give the tower's shapes, and
    the answer says it is not included."""
    if tower is None:
        note = (
            f"sized: the text model; vision_config does not give the shapes of the {what}, so "
            "it is not included"
        )
        return replace(model, notes=(*model.notes, note), **changes)
    note = (
        f"includes the {what} ({tower:,} parameters, no KV cache, not active for text tokens); "
        "the text model has the rest"
    )
    return replace(
        model,
        params_total=model.params_total + tower,
        params_vision=tower,
        notes=(*model.notes, note),
        **changes,
    )
