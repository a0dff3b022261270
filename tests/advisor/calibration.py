"""The calibration set (tests/fixtures/calibration/published.json) read through the advisor.

Each row is a published measurement with the input it was measured at. `ours(row)` sizes that
input the way `recommend` does (`rank_candidates` for the row's GPU and count, with no offers)
and returns our low / expected / high for the row's figure, or our fit verdict.
`tests/advisor/test_calibration.py` and `bench/accuracy.py` both read the rows through here;
the bench also runs this module against an older engine (its own checkout on `sys.path`), so
it imports only what that engine has and passes an input field to `Workload` only when
`Workload` has a field of that name.

Rows carry the marks of what they can show (advisor/domain/provenance.py): `"sample": "in"` on
a row some calibrated constant was fitted on (held out is the default), `duplicate_of` on one
measurement entered again in another unit, `identity` on a row equal to another row or to a
constant by construction, saying why. Medians are per category over the held-out rows and over
the in-sample ones apart; duplicate and identity rows are in neither.
"""

import dataclasses
import enum
import hashlib
import importlib
import json
import math
import statistics
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from advisor.domain.ranges import Range
from advisor.domain.sizing.architecture import architecture_from_params
from advisor.domain.sizing.precision import BYTES_PER_VALUE
from advisor.domain.sizing.recommend import Candidate, rank_candidates
from advisor.domain.sizing.speed import inference_speed, training_time
from advisor.domain.sizing.workload import Workload
from tests.advisor.devices import GPUS

try:  # this engine: the breakdown and the serving lines (the KV pool) in modules of their own
    from advisor.domain.sizing import serving_memory as kv_model
    from advisor.domain.sizing.bundled_models import bundled_models
    from advisor.domain.sizing.memory_breakdown import GIB, MEMORY_COMPONENTS
except ImportError:  # an older engine (the bench's BEFORE): memory.py holds them, models.py
    from advisor.domain.sizing.models import bundled_models

    from advisor.domain.sizing import memory as kv_model
    from advisor.domain.sizing.memory import GIB, MEMORY_COMPONENTS

CALIBRATION_PATH = (
    Path(__file__).resolve().parents[1] / "fixtures" / "calibration" / "published.json"
)
MEMORY_CATEGORIES = ("serving_memory", "finetune_memory")
SPEED_CATEGORIES = ("decode_speed", "prefill", "serving_throughput", "training_throughput")
# The limits: a range wider than this (high / low) is a defect, not a calibration. The
# longest context that fits ("max_context") is not held to them: its range is what the memory
# range, already held to 2x, becomes when the context alone has to absorb it.
MAX_RANGE_RATIO = {
    **dict.fromkeys(MEMORY_CATEGORIES, 2.0),
    **dict.fromkeys(SPEED_CATEGORIES, 2.5),
}
# Input keys read here to build the architecture, the device and the layout; every other key
# is a Workload field, converted to the enum its type names (Task, Dtype, a stack's
# Checkpointing...), found from the type hints so that an older engine needs no new import.
_LAYOUT_KEYS = {"model", "params", "gpu", "gpu_count"}
# Bisection bounds for the longest context that fits, in tokens.
_MAX_CONTEXT_SEARCH = (1, 2**21)
# The engine modules that declare calibrated constants (advisor/domain/provenance.py), imported
# before the declarations are read so that none is missing.
FITTING_MODULES = (
    "advisor.domain.devices",
    "advisor.domain.planning.assumptions",
    "advisor.domain.planning.ownership",
    "advisor.domain.sizing.memory_breakdown",
    "advisor.domain.sizing.memory_spread",
    "advisor.domain.sizing.phases",
    "advisor.domain.sizing.serving_memory",
    "advisor.domain.sizing.stacks",
    "advisor.domain.sizing.speed.cluster",
    "advisor.domain.sizing.speed.communication",
    "advisor.domain.sizing.speed.efficiency",
    "advisor.domain.sizing.speed.moe",
    "advisor.domain.sizing.speed.serving_load",
    "advisor.domain.sizing.training_memory",
)
HELD_OUT, IN_SAMPLE = "held_out", "in_sample"
SAMPLES = (HELD_OUT, IN_SAMPLE)


@dataclass(frozen=True)
class Ours:
    """Our answer for one row: a numeric range, or a fit verdict (low = expected = high = None)."""

    low: float | None
    expected: float | None
    high: float | None
    fits: bool
    ignored_inputs: tuple[str, ...]  # input keys this engine has no field for

    @property
    def range_ratio(self) -> float | None:
        """high / low; infinite when the range reaches down to zero (a pool that may be empty)."""
        if self.low is None or self.high is None or self.high <= 0:
            return None
        return self.high / self.low if self.low > 0 else math.inf


@dataclass(frozen=True)
class Judged:
    row: dict
    ours: Ours

    @property
    def published(self) -> float | bool:
        return self.row["published"]["value"]

    @property
    def is_verdict(self) -> bool:
        return self.row["published"]["quantity"] == "fits"

    @property
    def inside(self) -> bool:
        """The verdict matches; or our range meets the published figure as printed (31.4 GB
        covers 31.35-31.45 GB: a rounded figure is not more exact than its last digit)."""
        if self.is_verdict:
            return self.ours.fits == self.published
        half = self.row["published"].get("resolution", 0) / 2
        return self.ours.low <= self.published + half and self.published - half <= self.ours.high

    @property
    def error_pct(self) -> float | None:
        """(ours expected - published) / published, in percent; None for a verdict."""
        if self.is_verdict:
            return None
        return 100 * (self.ours.expected - self.published) / self.published

    @property
    def too_wide(self) -> bool:
        limit = MAX_RANGE_RATIO.get(self.row["category"])
        ratio = self.ours.range_ratio
        return limit is not None and ratio is not None and ratio > limit


def inputs_sha256() -> str:
    """What stored records depend on besides the engine: the rows and this reader. A stored
    BEFORE (bench/results/accuracy_baseline.json) with another digest is out of date."""
    digest = hashlib.sha256()
    for path in (CALIBRATION_PATH, Path(__file__)):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def calibration_rows(path: Path = CALIBRATION_PATH) -> list[dict]:
    return json.loads(path.read_text())["rows"]


def excluded_rows(path: Path = CALIBRATION_PATH) -> list[dict]:
    """Published figures left out of the set, each with its source and why."""
    return json.loads(path.read_text()).get("excluded", [])


def fitted_constants() -> dict:
    """Every calibrated constant's declaration (name -> provenance.Fit: the rows it was fitted
    on). Imported when called, never at import: the bench runs this reader against an older
    engine, which has no provenance module."""
    for name in FITTING_MODULES:
        importlib.import_module(name)
    from advisor.domain.provenance import FITTED

    return dict(FITTED)


def is_duplicate(row: dict) -> bool:
    """A measurement entered twice, or a figure equal to another or to a constant by
    construction: in no median."""
    return "duplicate_of" in row or "identity" in row


def sample_of(row: dict) -> str | None:
    """HELD_OUT (no constant was fitted on it), IN_SAMPLE, or None for a duplicate."""
    if is_duplicate(row):
        return None
    return IN_SAMPLE if row.get("sample") == "in" else HELD_OUT


def medians_by_sample(
    rows: Iterable[dict], error_of: Callable[[dict], float | None]
) -> dict[str, dict[str, dict]]:
    """median_abs_error_pct over the held-out rows and over the in-sample rows, each apart;
    `error_of(row)` gives a row's error (None: left out)."""
    rows = list(rows)
    return {
        sample: median_abs_error_pct(
            (row["category"], error_of(row)) for row in rows if sample_of(row) == sample
        )
        for sample in SAMPLES
    }


def _enum_type(annotation: object) -> type[enum.Enum] | None:
    for candidate in typing.get_args(annotation) or (annotation,):
        if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
            return candidate
    return None


def _field_value(annotation: object, value: object) -> object:
    enum_type = _enum_type(annotation)
    if enum_type is not None:
        return enum_type(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def is_moe_row(row: dict) -> bool:
    """Whether the row's model is a mixture of experts (routed experts in some layers)."""
    given = row["input"]
    if "model" not in given:
        return False
    arch = bundled_models()[given["model"]].architecture()
    return bool(arch.params_routed_experts) and arch.moe_layers > 0


def workload_for(row: dict) -> tuple[Workload, tuple[str, ...]]:
    """The row's Workload, and the input keys this engine's Workload has no field for."""
    given = row["input"]
    if "model" in given:
        architecture = bundled_models()[given["model"]].architecture()
    else:
        architecture = architecture_from_params(int(given["params"]))
    hints = typing.get_type_hints(Workload)
    fields = {f.name for f in dataclasses.fields(Workload)}
    values, ignored = {}, []
    for name, value in given.items():
        if name in _LAYOUT_KEYS:
            continue
        if name not in fields:
            ignored.append(name)
            continue
        values[name] = _field_value(hints.get(name), value)
    return Workload(architecture, **values), tuple(ignored)


def _longest_fitting_context(workload: Workload, row: dict, end: int) -> int:
    """The longest context whose memory per GPU (the `end` of our range: 0 low, 1 expected,
    2 high) stays within what the GPU lets the workload use."""
    serving = not workload.task.trains

    def fits(context: int) -> bool:
        candidate = _candidate(workload.with_changes(context_tokens=context), row)
        needed = _lines(candidate.memory, MEMORY_COMPONENTS, 1, serving=serving)[end]
        return needed <= candidate.usable_bytes

    shortest, longest = _MAX_CONTEXT_SEARCH
    if not fits(shortest):
        return 0
    while longest - shortest > 1:
        middle = (shortest + longest) // 2
        shortest, longest = (middle, longest) if fits(middle) else (shortest, middle)
    return shortest


def _candidate(workload: Workload, row: dict) -> Candidate:
    device = GPUS[row["input"]["gpu"]]
    workload.validate()
    (candidate,) = rank_candidates(workload, [device], {}, counts=(row["input"]["gpu_count"],))
    return candidate


def _lines(memory, names: tuple[str, ...], scale: float, serving: bool) -> tuple[float, ...]:
    """Low / expected / high of the sum of breakdown lines, in bytes / scale. An engine whose
    breakdown has no spread (before issue 15) gives its point three times."""
    if not hasattr(memory, "component_range"):
        value = sum(getattr(memory, name) for name in names) / scale
        return value, value, value
    ranges = [memory.component_range(name, serving=serving) for name in names]
    return tuple(
        sum(getattr(r, end) for r in ranges) / scale for end in ("low", "expected", "high")
    )


def _kv_tokens(workload: Workload, candidate: Candidate) -> tuple[float, float, float]:
    """The KV pool in tokens; a range where the engine sizes one (kv_capacity_range)."""
    ranged = getattr(kv_model, "kv_capacity_range", None)
    if ranged is None:
        tokens = kv_model.kv_capacity_tokens(
            workload, candidate.parallelism, candidate.usable_bytes
        )
        return tokens, tokens, tokens
    tokens = ranged(workload, candidate.parallelism, candidate.usable_bytes)
    return tokens.low, tokens.expected, tokens.high


# Figures that are lines of the memory breakdown: (lines summed, bytes per unit).
_MEMORY_FIGURES = {
    "weights_gib_per_gpu": (("weights",), GIB),
    "activation_peak_gib_per_gpu": (("activations",), GIB),
    "non_torch_gib_per_gpu": (("runtime_overhead",), GIB),
    "model_states_gb_per_gpu": (("weights", "gradients", "optimizer_states"), 1e9),
    "peak_memory_gib_per_gpu": (MEMORY_COMPONENTS, GIB),
    "peak_memory_mib_per_gpu": (MEMORY_COMPONENTS, 2**20),
    "peak_memory_gb_per_gpu": (MEMORY_COMPONENTS, 1e9),
}


def _allocated_peak_gib(workload: Workload, candidate: Candidate) -> tuple[float, float, float]:
    """PyTorch's allocated peak (torchtune's peak_memory_active): the largest phase of the step
    where the engine has them (phases.py); an engine without, every line but what is outside
    PyTorch's allocator (CUDA context, NCCL) or cached beyond what is allocated (headroom)."""
    try:
        from advisor.domain.sizing.phases import allocated_peak
    except ImportError:
        names = tuple(
            name
            for name in MEMORY_COMPONENTS
            if name not in {"runtime_overhead", "allocator_headroom"}
        )
        return _lines(candidate.memory, names, GIB, serving=False)
    peak = allocated_peak(workload, candidate.parallelism, candidate.memory)
    return peak.low / GIB, peak.expected / GIB, peak.high / GIB


def _decode_rate(speed, workload: Workload, gpus: int) -> tuple[float, float, float]:
    rate = speed.decode_tokens_per_s_per_sequence
    return rate.low, rate.expected, rate.high


def _output_rate_per_gpu(speed, workload: Workload, gpus: int) -> tuple[float, float, float]:
    """The answer's sustained output rate at the row's concurrency (prefill included), per
    GPU; an engine without one (before issue 23): batch x output over seconds_per_request."""
    rate = getattr(speed, "output_tokens_per_s_total", None) or speed.seconds_per_request.inverted(
        workload.batch_size * workload.output_tokens
    )
    return rate.low / gpus, rate.expected / gpus, rate.high / gpus


def _inflight_output_rate(
    workload: Workload, candidate: Candidate, row: dict
) -> tuple[float, float, float]:
    """In-flight batching at maximum load (trtllm-bench throughput), as the answer's
    max_load_output_tokens_per_s computes it (speed/serving_load.py). The pool is the row's
    own workload's (one sequence unless it says): its activation peak is a prefill chunk of
    one request's context, where trtllm-bench sizes the engine's for its max num tokens."""
    from advisor.domain.sizing.speed.serving_load import max_load_output_rate

    pool = Range(*_kv_tokens(workload, candidate))
    rate = max_load_output_rate(workload, candidate.device, candidate.parallelism, pool)
    return (0.0, 0.0, 0.0) if rate is None else (rate.low, rate.expected, rate.high)


def _first_token_ms(speed, workload: Workload, gpus: int) -> tuple[float, float, float]:
    # An engine without a time-to-first-token figure (before issue 15) answers with prefill.
    seconds = getattr(speed, "time_to_first_token_seconds", None) or speed.prefill_seconds
    return seconds.low * 1000, seconds.expected * 1000, seconds.high * 1000


_SERVING_SPEEDS = {
    "decode_tokens_per_s_per_sequence": _decode_rate,
    "serving_output_tokens_per_s_per_gpu": _output_rate_per_gpu,
    "time_to_first_token_ms": _first_token_ms,
}


def _figure(
    quantity: str, workload: Workload, candidate: Candidate, row: dict
) -> tuple[float, float, float]:
    memory, parallelism = candidate.memory, candidate.parallelism
    device = candidate.device
    if quantity == "max_context_tokens":
        # Our low is where the most memory we expect runs out, our high where the least does.
        high_memory, expected, low_memory = (
            _longest_fitting_context(workload, row, end) for end in (2, 1, 0)
        )
        return high_memory, expected, low_memory
    if quantity == "peak_memory_active_gib_per_gpu":
        return _allocated_peak_gib(workload, candidate)
    if quantity in _MEMORY_FIGURES:
        names, scale = _MEMORY_FIGURES[quantity]
        return _lines(memory, names, scale, serving=not workload.task.trains)
    if quantity == "kv_cache_tokens":
        return _kv_tokens(workload, candidate)
    if quantity == "kv_cache_gib_per_gpu":
        arch = workload.architecture
        per_token = arch.kv_bytes_per_token(BYTES_PER_VALUE[workload.kv_dtype]) / min(
            parallelism.tensor_parallel, arch.num_kv_heads
        )
        low, expected, high = _kv_tokens(workload, candidate)
        return low * per_token / GIB, expected * per_token / GIB, high * per_token / GIB
    if quantity == "inflight_output_tokens_per_s":
        return _inflight_output_rate(workload, candidate, row)
    if quantity in _SERVING_SPEEDS:
        speed = candidate.speed or inference_speed(workload, device, parallelism)
        return _SERVING_SPEEDS[quantity](speed, workload, parallelism.gpu_count)
    hours = (candidate.training or training_time(workload, device, parallelism)).hours
    gpus = parallelism.gpu_count
    if quantity == "gpu_hours":
        return hours.low * gpus, hours.expected * gpus, hours.high * gpus
    per_second = hours.inverted(workload.tokens_to_train / 3600)
    if quantity == "training_tokens_per_s":
        return per_second.low, per_second.expected, per_second.high
    if quantity == "training_tokens_per_s_per_gpu":
        return per_second.low / gpus, per_second.expected / gpus, per_second.high / gpus
    raise ValueError(f"unknown quantity {quantity!r}")


def ours(row: dict) -> Ours:
    workload, ignored = workload_for(row)
    candidate = _candidate(workload, row)
    quantity = row["published"]["quantity"]
    if quantity == "fits":
        return Ours(None, None, None, candidate.fits, ignored)
    low, expected, high = _figure(quantity, workload, candidate, row)
    return Ours(low, expected, high, candidate.fits, ignored)


def record(row: dict) -> dict:
    """One row's answer as plain JSON (what bench/accuracy.py stores, also for an older
    engine): our range, verdict, error and whether the published figure is inside; or the
    error this engine raised on the row's input."""
    try:
        item = Judged(row, ours(row))
    except (KeyError, ValueError, TypeError, ImportError) as error:
        # ImportError: an older engine lacks the model the figure needs (the max-load rate).
        return {"id": row["id"], "error": f"{type(error).__name__}: {error}"}
    ratio = item.ours.range_ratio
    return {
        "id": row["id"],
        "low": item.ours.low,
        "expected": item.ours.expected,
        "high": item.ours.high,
        "fits": item.ours.fits,
        "inside": item.inside,
        "error_pct": item.error_pct,
        # JSON has no infinity: a range down to zero is stored as None and too_wide.
        "range_ratio": None if ratio is None or math.isinf(ratio) else ratio,
        "too_wide": item.too_wide,
        "ignored_inputs": list(item.ours.ignored_inputs),
    }


def median_abs_error_pct(errors: Iterable[tuple[str, float | None]]) -> dict[str, dict]:
    """Median |error| per category and over all ("all"), from (category, error %) pairs; a
    None error (a verdict, or a row the engine could not size) is left out. Each category:
    {"median_abs_error_pct", "rows"}."""
    by_category: dict[str, list[float]] = {}
    for category, error in errors:
        if error is not None:
            by_category.setdefault(category, []).append(abs(error))
            by_category.setdefault("all", []).append(abs(error))
    return {
        category: {"median_abs_error_pct": round(statistics.median(values), 2), "rows": len(values)}
        for category, values in sorted(by_category.items())
    }
