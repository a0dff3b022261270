"""Which calibration rows each constant set from measurements was fitted on.

A constant set from published measurements declares, beside its definition, the rows of the
calibration set (tests/fixtures/calibration/published.json) whose figures it was set or checked
from: those rows are in-sample, and accuracy is reported on the rows no constant saw (held
out). A constant set from a source that is not a row declares no rows and names that source.
The calibration tests hold the declarations and the rows' marks to each other.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Fit:
    name: str  # the constant, as its module spells it (a stack's field: STACKS["vllm"].field)
    fitted_on: tuple[str, ...]  # calibration row ids
    source: str  # what set it, when no calibration row did


FITTED: dict[str, Fit] = {}


def fitted(name: str, *, fitted_on: tuple[str, ...], source: str = "") -> None:
    """Declare that the constant `name` was fitted on the calibration rows `fitted_on`; with no
    rows, `source` says what it was set from instead."""
    if not fitted_on and not source:
        raise ValueError(f"{name}: fitted on no calibration row, so it must name its source")
    fit = Fit(name, fitted_on, source)
    if FITTED.setdefault(name, fit) != fit:
        raise ValueError(f"{name} is declared twice")
