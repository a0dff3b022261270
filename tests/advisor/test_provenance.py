"""Which calibration rows each calibrated constant was fitted on (advisor/domain/provenance.py),
held to the rows' marks in tests/fixtures/calibration/published.json: a row is in-sample exactly
when some constant cites it, a duplicate or identity row points at a real row (or a constant)
and is in no median."""

import importlib
import re
from pathlib import Path

import pytest

from advisor.domain.provenance import fitted
from tests.advisor.calibration import (
    FITTING_MODULES,
    HELD_OUT,
    IN_SAMPLE,
    calibration_rows,
    fitted_constants,
    is_duplicate,
    medians_by_sample,
    sample_of,
)
from tests.advisor.cluster_runs import cluster_rows

# The cluster runs' rows are calibration rows too: a constant may cite them.
ROWS = calibration_rows() + cluster_rows()
ROW_IDS = {row["id"] for row in ROWS}
DOMAIN = Path(__file__).resolve().parents[2] / "advisor" / "domain"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _engine_names() -> set[str]:
    return {name for module in FITTING_MODULES for name in vars(importlib.import_module(module))}


def test_every_module_that_declares_constants_is_collected():
    declaring = {
        ".".join(path.relative_to(DOMAIN.parent.parent).with_suffix("").parts)
        for path in DOMAIN.rglob("*.py")
        if "fitted(" in path.read_text() and path.name != "provenance.py"
    }
    assert declaring <= set(FITTING_MODULES), declaring - set(FITTING_MODULES)


def test_every_declaration_names_a_constant_of_its_engine():
    names = _engine_names()
    for name in fitted_constants():
        assert _NAME.match(name)[0] in names, name


def test_every_cited_row_exists_and_is_marked_in_sample():
    for name, fit in fitted_constants().items():
        for row_id in fit.fitted_on:
            assert row_id in ROW_IDS, f"{name} cites {row_id}, which is not a calibration row"
            row = next(row for row in ROWS if row["id"] == row_id)
            assert row.get("sample") == "in", f"{name} was fitted on {row_id}: mark it in"


def test_every_row_marked_in_sample_is_cited_by_a_constant():
    cited = {row_id for fit in fitted_constants().values() for row_id in fit.fitted_on}
    for row in ROWS:
        assert row.get("sample", "in") == "in", f"{row['id']}: sample is 'in' or absent"
        if row.get("sample") == "in":
            assert row["id"] in cited, f"{row['id']} is marked in-sample, but no constant cites it"


def test_a_constant_fitted_on_no_row_names_its_source():
    assert all(fit.fitted_on or fit.source for fit in fitted_constants().values())
    with pytest.raises(ValueError, match="must name its source"):
        fitted("NOT_A_CONSTANT", fitted_on=())


def test_a_constant_is_declared_once():
    name, fit = next(iter(fitted_constants().items()))
    with pytest.raises(ValueError, match="declared twice"):
        fitted(name, fitted_on=(*fit.fitted_on, "another-row"), source=fit.source)
    assert fitted_constants()[name] == fit


def test_duplicate_and_identity_rows_point_at_a_real_row_or_constant():
    names = _engine_names()
    for row in ROWS:
        if "duplicate_of" in row:
            target = row["duplicate_of"]
            assert target in ROW_IDS and target != row["id"], row["id"]
            original = next(r for r in ROWS if r["id"] == target)
            assert not is_duplicate(original), f"{row['id']}: point at the original row"
        if "identity" in row:
            why = row["identity"]
            assert len(why) > 20, row["id"]
            named = {row_id for row_id in ROW_IDS - {row["id"]} if row_id in why}
            named |= set(_NAME.findall(why)) & {n for n in names if n.isupper()}
            assert named, f"{row['id']}: say which row or constant it is equal to"


def test_duplicate_and_identity_rows_are_left_out_of_every_median():
    duplicates = [row for row in ROWS if is_duplicate(row)]
    assert duplicates
    assert all(sample_of(row) is None for row in duplicates)
    medians = medians_by_sample(ROWS, lambda row: 1.0)
    for sample, marked in ((IN_SAMPLE, "in"), (HELD_OUT, None)):
        counted = [r for r in ROWS if not is_duplicate(r) and r.get("sample") == marked]
        assert medians[sample]["all"]["rows"] == len(counted)
