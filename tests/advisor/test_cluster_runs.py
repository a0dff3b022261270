"""The engine's multi-node training against published cluster runs
(tests/fixtures/calibration/cluster_runs.json): held-out rows, which no constant saw, are held to
a band stated before the rows were read; in-sample rows are reported apart, not tested for
accuracy (fit quality is not accuracy)."""

from tests.advisor.calibration import fitted_constants
from tests.advisor.cluster_runs import (
    HELD_OUT,
    IN_SAMPLE,
    NOT_MODELLED,
    cluster_excluded,
    cluster_rows,
    judged_rows,
    sample_of,
    summary,
)

ROWS = cluster_rows()
# The band, stated before the rows were sized: the median held-out error within 25%, and four
# in five held-out published figures inside our low-high range; on the configurations the
# engine models (a row whose published layout it has no way to take says `not_modelled`).
MAX_MEDIAN_ABS_ERROR_PCT = 25.0
MIN_INSIDE_SHARE = 0.8


def test_the_cluster_set_has_sourced_rows_at_multi_node_counts():
    assert len(ROWS) >= 20
    assert len({row["id"] for row in ROWS}) == len(ROWS)
    assert sum(row["input"]["gpu_count"] > 8 for row in ROWS) >= 20
    for row in ROWS:
        source = row["source"]
        assert source["url"].startswith("https://") and source["where"] and source["retrieved"]
        assert row["published"]["quantity"] in {"training_tokens_per_s_per_gpu", "gpu_hours"}


def test_every_excluded_figure_says_why():
    assert all(item["why"] and item["url"].startswith("https://") for item in cluster_excluded())


def test_a_row_is_in_sample_exactly_when_a_constant_cites_it():
    cited = {row_id for fit in fitted_constants().values() for row_id in fit.fitted_on}
    for row in ROWS:
        assert (sample_of(row) == IN_SAMPLE) == (row["id"] in cited), row["id"]


def test_a_row_is_not_modelled_only_for_a_layout_the_source_states():
    for row in ROWS:
        if "not_modelled" in row:
            where = row["source"]["where"]
            assert " EP " in where or " PP " in where, row["id"]
            assert "expert" in row["not_modelled"] or "pipelines" in row["not_modelled"]


def test_held_out_cluster_runs_are_within_the_stated_band(capsys):
    result = summary(judged_rows())
    held_out = result[HELD_OUT]
    with capsys.disabled():
        print(
            f"\ncluster runs: held out {held_out}; not modelled {result[NOT_MODELLED]}; "
            f"in sample {result[IN_SAMPLE]}"
        )
    assert held_out["rows"] >= 20
    assert held_out["median_abs_error_pct"] <= MAX_MEDIAN_ABS_ERROR_PCT
    assert held_out["inside_share"] >= MIN_INSIDE_SHARE
