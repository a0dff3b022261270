"""What a reader returns: a model's parameter counts and KV-cache size per token."""

from dataclasses import dataclass, field


class UnsupportedArchitecture(ValueError):
    """A config we cannot account for exactly; the message names the field."""


@dataclass(frozen=True)
class LinearGroup:
    """Linear layers a LoRA adapter can target: `count` matrices of in x out across the model."""

    name: str
    in_features: int
    out_features: int
    count: int


@dataclass(frozen=True)
class WeightPart:
    """Weights stored at one width: `params` values of `bits_per_param` bits each, the
    quantisation constants (scales, zero points) included."""

    what: str
    params: int
    bits_per_param: float

    @property
    def bytes(self) -> float:
        return self.params * self.bits_per_param / 8


@dataclass(frozen=True)
class StoredWeights:
    """A quantised checkpoint's weights at the precision its files hold them."""

    method: str  # quantization_config.quant_method
    summary: str  # what is stored how, in words
    parts: tuple[WeightPart, ...]
    checkpoint_extra_bytes: float = 0.0  # in the files but not loaded to serve (an MTP module)
    routed_expert_bytes: float = 0.0  # of weight_bytes: the MoE's routed experts, as stored
    vision_bytes: float = 0.0  # of weight_bytes: a vision tower, idle while text is generated

    @property
    def weight_bytes(self) -> float:
        return sum(part.bytes for part in self.parts)

    @property
    def checkpoint_bytes(self) -> float:
        return self.weight_bytes + self.checkpoint_extra_bytes


@dataclass(frozen=True)
class ModelArchitecture:
    name: str
    family: str
    params_total: int
    params_active: int  # per text token: all of a dense model, the routed share of a MoE
    params_embedding: int  # input and output embeddings: kept 16-bit when weights are quantised
    num_layers: int  # layers holding a KV cache (decoder layers)
    hidden_size: int
    intermediate_size: int  # per-token MLP width (active experts summed for MoE)
    num_attention_heads: int
    kv_dim: int  # K (or V) width per token and layer
    num_kv_heads: int  # how far tensor parallelism can split the KV cache (1: replicated)
    vocab_size: int
    kv_elements_per_token: int  # over all layers, K and V (or the MLA latent)
    # All heads' query (and key) width, and value width, in one layer: what the attention core
    # multiplies per query-key pair. 0: the hidden size (query), the query's (value).
    query_width: int = 0
    value_width: int = 0
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    gated_mlp: bool = True
    encoder_only: bool = False
    encoder_decoder: bool = False
    largest_layer_params: int = 0
    lora_groups: tuple[LinearGroup, ...] = ()
    params_routed_experts: int = 0  # MoE: all routed-expert weights (each token uses a few)
    routed_fraction_per_token: float = 1.0  # MoE: experts per token / routed experts
    moe_layers: int = 0  # MoE: layers whose MLP is routed experts
    experts_per_token: int = 0  # MoE: routed experts each token goes through (top-k)
    # A vision tower and projector: loaded with the weights, idle while text is generated.
    params_vision: int = 0
    # MoE: one routed expert's MLP width, where a stack's kernels pad it (kernel_padding.py).
    expert_intermediate_size: int = 0
    max_positions: int | None = None  # the context the model was built or trained for
    absolute_positions: bool = False  # learned position embeddings: no token past max_positions
    stored_weights: StoredWeights | None = None  # a quantised checkpoint's stored weights
    notes: tuple[str, ...] = field(default=())

    @property
    def attention_flops_per_pair(self) -> int:
        """The attention core's FLOPs for one query-key pair in one layer: the query-key dot
        product and the value's weighted sum, a multiply and an add per element, all heads."""
        query = self.query_width or self.hidden_size
        return 2 * (query + (self.value_width or query))

    @property
    def routed_expert_count(self) -> int:
        """Routed experts per MoE layer (top-k over the share of them each token uses); 0 for a
        dense model."""
        if not (self.params_routed_experts and self.moe_layers and self.experts_per_token):
            return 0
        return max(1, round(self.experts_per_token / self.routed_fraction_per_token))

    @property
    def has_kv_cache(self) -> bool:
        return self.kv_elements_per_token > 0

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        return self.kv_elements_per_token * bytes_per_element

    def kv_cache_bytes(
        self, tokens_per_sequence: int, sequences: int, bytes_per_element: float
    ) -> float:
        """KV bytes for `sequences` sequences of `tokens_per_sequence` tokens; sliding-window
        layers keep at most `sliding_window` tokens."""
        if not self.has_kv_cache:
            return 0.0
        per_layer = self.kv_elements_per_token / self.num_layers
        windowed = self.sliding_window_layers
        full = self.num_layers - windowed
        kept_windowed = min(tokens_per_sequence, self.sliding_window or tokens_per_sequence)
        elements = per_layer * (full * tokens_per_sequence + windowed * kept_windowed)
        return elements * sequences * bytes_per_element
