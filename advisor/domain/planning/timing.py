"""A candidate replica's step times from the sizing engine: the decode step at a concurrency,
the prefill of a run of prompt tokens, and what the two share when one iteration does both,
each at the low, expected and high end of the engine's ranges (inference_speed), for the
queueing model (queueing.py)."""

from collections.abc import Callable

from advisor.domain.devices import Device
from advisor.domain.planning.queueing import StepTimes
from advisor.domain.ranges import Range
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.speed import inference_speed
from advisor.domain.sizing.speed.inference import (
    ForwardPassParts,
    forward_pass_parts,
    prefill_seconds,
)
from advisor.domain.sizing.speed.moe import decode_expert_seconds, prefill_expert_seconds
from advisor.domain.sizing.workload import Workload

ENDS = ("low", "expected", "high")
# Above this many running requests the decode step is read from the engine every this many
# and drawn straight between: it grows with the KV cache it reads, close to linearly, and a
# queue's concurrency spreads over hundreds of values.
DECODE_EXACT_UP_TO = 32
# From this many on, the grid's spacing doubles with each doubling of the concurrency (at most
# 1/32 of it apart): a saturation search past the KV pool asks for millions.
DECODE_GRID_DOUBLES_FROM = 1024


class ReplicaTimes:
    """The engine's step times for one workload on one layout of one GPU type, asked once per
    concurrency and per prompt length."""

    def __init__(self, workload: Workload, device: Device, parallelism: Parallelism) -> None:
        self.workload = workload.with_changes(batch_size=1)
        self.device = device
        self.parallelism = parallelism
        self._decode: dict[int, Range] = {}
        self._prefill: dict[tuple[int, int, float], Range] = {}
        self._parts: dict[int, ForwardPassParts] = {}

    def decode_step(self, concurrency: int) -> Range:
        """One decode step with `concurrency` requests running, each reading the KV cache at
        its average length (the prompt plus half the output); above DECODE_EXACT_UP_TO, drawn
        straight between the engine's steps at multiples of it (of a larger power of two times
        it from DECODE_GRID_DOUBLES_FROM)."""
        return _on_grid(concurrency, self._engine_decode_step)

    def _engine_decode_step(self, concurrency: int) -> Range:
        if concurrency not in self._decode:
            speed = inference_speed(
                self.workload.with_changes(batch_size=concurrency), self.device, self.parallelism
            )
            self._decode[concurrency] = speed.decode_tokens_per_s_per_sequence.inverted(1.0)
        return self._decode[concurrency]

    def prefill(self, tokens: int, prompts: int = 1, prefix: float = 0.0) -> Range:
        """One forward pass over `prompts` prompts (or chunks) of `tokens` tokens, each past
        `prefix` tokens of its prompt already cached: the engine's prefill of that batch."""
        key = (tokens, prompts, prefix)
        if key not in self._prefill:
            batch = self.workload.with_changes(
                context_tokens=tokens, output_tokens=0, batch_size=prompts
            )
            self._prefill[key] = prefill_seconds(batch, self.device, self.parallelism, prefix)
        return self._prefill[key]

    def shared(self, tokens: int, concurrency: int) -> Range:
        """What a prefill of `tokens` prompt tokens and a decode step of `concurrency` requests
        share when one iteration runs both (vLLM V1 and SGLang batch them into one forward
        pass; Sarathi-Serve's hybrid batches): the weights are read once and the matmuls run
        over both tokens together, so the iteration is max(weights, compute of all its tokens)
        where apart each paid its own max(weights, compute); a MoE's fixed expert cost is paid
        once, the larger of the two passes' (the decode's is per MoE layer, the prefill's per
        expert its tokens touch: larger past a dozen or so tokens). An approximation: the fused
        pass touches the union of both passes' experts, which a short prefill chunk may make
        costlier than either alone.
        Attention, all-reduces and per-layer costs are the two passes' own and stay."""
        if tokens <= 0 or concurrency <= 0:
            return Range(0.0, 0.0, 0.0)
        alone = self._parts_at(1)
        # A MoE's decode step reads more experts the more requests run: between the grid's
        # points, drawn straight as the decode step is.
        decoding = _on_grid(concurrency, lambda at: self._parts_at(at).decode_weight_seconds)
        per_token = alone.compute_seconds_per_token
        arch = self.workload.architecture
        decode_experts = decode_expert_seconds(arch)
        prefill_experts = prefill_expert_seconds(arch, tokens)
        ends = []
        for end in ("low", "expected", "high"):
            prefill_weights = getattr(alone.prefill_weight_seconds, end)
            decode_weights = getattr(decoding, end)
            prefill_compute = getattr(per_token, end) * tokens
            decode_compute = getattr(per_token, end) * concurrency
            apart = max(prefill_weights, prefill_compute) + max(decode_weights, decode_compute)
            together = max(prefill_weights, decode_weights, prefill_compute + decode_compute)
            experts = min(getattr(decode_experts, end), getattr(prefill_experts, end))
            ends.append(apart - together + experts)
        return Range(*ends)

    def _parts_at(self, concurrency: int) -> ForwardPassParts:
        if concurrency not in self._parts:
            self._parts[concurrency] = forward_pass_parts(
                self.workload.with_changes(batch_size=concurrency), self.device, self.parallelism
            )
        return self._parts[concurrency]

    def at(self, end: str) -> StepTimes:
        """The step times at one end of the ranges (low: the fastest)."""
        return StepTimes(
            decode_seconds=lambda concurrency: getattr(self.decode_step(concurrency), end),
            prefill_seconds=lambda tokens, prompts, prefix: getattr(
                self.prefill(tokens, prompts, prefix), end
            ),
            shared_seconds=lambda tokens, concurrency: getattr(
                self.shared(tokens, concurrency), end
            ),
        )


def _on_grid(concurrency: int, exact: Callable[[int], Range]) -> Range:
    """`exact` at this concurrency up to DECODE_EXACT_UP_TO; above, drawn straight between its
    values on the grid (multiples of DECODE_EXACT_UP_TO, spaced wider past
    DECODE_GRID_DOUBLES_FROM)."""
    if concurrency <= DECODE_EXACT_UP_TO:
        return exact(concurrency)
    spacing = DECODE_EXACT_UP_TO * _doublings_past_grid(concurrency)
    below = concurrency - concurrency % spacing
    if below == concurrency:
        return exact(concurrency)
    share = (concurrency - below) / spacing
    return exact(below).scaled(1 - share).plus(exact(below + spacing).scaled(share))


def _doublings_past_grid(concurrency: int) -> int:
    """The grid's spacing over DECODE_EXACT_UP_TO at this concurrency: 1 below twice
    DECODE_GRID_DOUBLES_FROM, then 2, 4, 8... per doubling."""
    return 1 << max(0, (concurrency // DECODE_GRID_DOUBLES_FROM).bit_length() - 1)
