"""`manage.py load_catalog`: bundled seed data, loaded idempotently, nothing dropped silently,
a short summary and the full lists on request."""

import json
import re
import shutil
from io import StringIO

import pytest
from django.core.management import call_command

from catalog.domain.specs import parse_gpu_specs
from catalog.management.commands.load_catalog import TOP_REASONS
from catalog.models import Gpu, Offer, PriceHistory
from catalog.services import BUNDLED_DATA_DIR, catalog_load_bundled

# The bar: at most 1% of the GPU quotes read may stay unmatched.
MIN_MATCHED_SHARE = 0.99


def run_command(*args: str) -> str:
    out = StringIO()
    call_command("load_catalog", *args, stdout=out)
    return out.getvalue()


def bundled_gpu_count() -> int:
    with (BUNDLED_DATA_DIR / "gpus.csv").open(newline="") as specs:
        return len(parse_gpu_specs(specs))


@pytest.mark.django_db
def test_first_load_brings_every_bundled_gpu_and_thousands_of_offers_each_with_history():
    report = catalog_load_bundled()
    assert report.gpus.created == Gpu.objects.count() == bundled_gpu_count()
    assert report.refresh.status == "succeeded"
    assert report.refresh.new == Offer.objects.count() > 5000
    assert PriceHistory.objects.count() == Offer.objects.count()
    assert not Offer.objects.filter(history__isnull=True).exists()


@pytest.mark.django_db
def test_second_load_changes_nothing():
    first = catalog_load_bundled().refresh
    history_before = PriceHistory.objects.count()
    prices_before = dict(Offer.objects.values_list("id", "usd_per_hour"))
    output = run_command()
    assert f"GPUs: 0 created, 0 updated, {bundled_gpu_count()} unchanged" in output
    assert f"Offers: 0 created, 0 price changes, {first.accepted} unchanged" in output
    assert PriceHistory.objects.count() == history_before
    assert dict(Offer.objects.values_list("id", "usd_per_hour")) == prices_before


@pytest.mark.django_db
def test_every_quote_is_loaded_or_reported_as_unmatched_with_its_reason():
    report = json.loads(run_command("--json"))
    offers = report["offers"]
    assert offers["seen"] == offers["accepted"] + offers["unmatched"] + offers["rejected"]
    assert offers["new"] == offers["accepted"] == report["offers_loaded"] == Offer.objects.count()
    assert offers["unmatched"] == len(report["unmatched"])
    assert offers["unmatched"] == sum(e["count"] for e in report["unmatched_by_reason"])
    assert all(row["reason"] for row in report["unmatched"])


@pytest.mark.django_db
def test_json_document_has_stable_field_names():
    report = json.loads(run_command("--json"))
    assert set(report) == {
        "status",
        "reason",
        "gpus",
        "rows_read",
        "quotes_read",
        "offers_loaded",
        "matched_share",
        "offers",
        "skipped",
        "unmatched",
        "unmatched_by_reason",
        "excluded_files",
    }
    # A row gives an on-demand and a spot quote, so quotes may outnumber rows.
    assert report["rows_read"] > 0 and report["quotes_read"] >= report["offers_loaded"] > 0
    assert all(set(entry) == {"reason", "count"} for entry in report["skipped"])
    row_fields = {
        "provider",
        "instance_type",
        "region",
        "zone",
        "accelerator",
        "gpu_description",
        "gpu_count",
        "gpu_memory_gib",
        "pricing_model",
        "usd_per_hour",
        "reason",
    }
    assert all(set(row) == row_fields for row in report["unmatched"])
    assert report["excluded_files"] == {
        "mithril_vms.csv": "known-bad prices upstream (skypilot-org/skypilot issue 9156)"
    }


@pytest.mark.django_db
def test_at_least_99_percent_of_the_bundled_gpu_quotes_are_matched():
    report = json.loads(run_command("--json"))
    offers = report["offers"]
    quotes = offers["accepted"] + offers["unmatched"]
    share = offers["accepted"] / quotes
    print(f"matched {offers['accepted']} of {quotes} bundled GPU quotes: {share:.2%}")
    assert report["matched_share"] == round(share, 4)
    assert share >= MIN_MATCHED_SHARE, report["unmatched_by_reason"][:10]


@pytest.mark.django_db
def test_the_summary_is_short_and_points_to_the_full_lists():
    output = run_command()
    lines = output.splitlines()
    assert re.search(r"^Matched: [\d,]+ of [\d,]+ GPU quotes \(\d+\.\d%\)", output, re.M)
    assert "Excluded mithril_vms.csv: known-bad prices" in output
    assert lines[-1] == "Every reason and every unmatched quote: load_catalog -v 2 or --json"
    reason_lines = [line for line in lines if re.match(r"^ +[\d,]+  ", line)]
    # At most TOP_REASONS per list, plus one "(n more reasons)" line each.
    assert len(reason_lines) <= 2 * (TOP_REASONS + 1)
    assert not any(line.startswith("  unmatched ") for line in lines)
    assert len(lines) < 25


@pytest.mark.django_db
def test_verbose_summary_lists_every_skipped_reason_and_every_unmatched_quote():
    report = json.loads(run_command("--json"))
    output = run_command("-v", "2")
    for entry in report["skipped"]:
        assert f"{entry['count']:6,d}  {entry['reason']}" in output
    unmatched_lines = [line for line in output.splitlines() if line.startswith("  unmatched ")]
    assert len(unmatched_lines) == len(report["unmatched"])
    assert "more reasons)" not in output


@pytest.mark.django_db
def test_the_most_rented_cloud_gpus_have_offers_on_their_pages(client):
    catalog_load_bundled()
    for key in ("T4", "A10G", "L4", "H100-SXM", "A100-40GB-SXM"):
        assert Offer.objects.filter(gpu__canonical_key=key).exists(), key
        page = client.get(f"/gpus/{key}/")
        assert page.status_code == 200
        assert page.context["offer_count"] > 0, key


@pytest.mark.django_db
def test_skypilot_a100_offers_are_40gb_and_a100_80gb_offers_are_80gb():
    catalog_load_bundled()
    p4d = Offer.objects.filter(provider__key="aws", instance_type="p4d.24xlarge")
    p4de = Offer.objects.filter(provider__key="aws", instance_type="p4de.24xlarge")
    assert p4d.exists() and p4de.exists()
    assert set(p4d.values_list("gpu__canonical_key", flat=True)) == {"A100-40GB-SXM"}
    assert set(p4de.values_list("gpu__canonical_key", flat=True)) == {"A100-80GB-SXM"}


@pytest.mark.django_db
def test_lambda_rtx6000_is_not_loaded_as_the_rtx_6000_ada():
    catalog_load_bundled()
    assert not Offer.objects.filter(
        provider__key="lambda", gpu__canonical_key="RTX6000Ada"
    ).exists()
    # The Ada card itself is still offered elsewhere under its own spellings.
    assert Offer.objects.filter(gpu__canonical_key="RTX6000Ada").exists()


@pytest.fixture
def data_copy(tmp_path):
    data_dir = tmp_path / "data"
    shutil.copytree(BUNDLED_DATA_DIR, data_dir)
    return data_dir


def change_lambda_a10_price(data_dir, new_price: str, observed_at: str) -> None:
    feed = data_dir / "skypilot" / "lambda_vms.csv"
    lines = feed.read_text().splitlines(keepends=True)
    target = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("gpu_1x_a10,") and ",us-east-1," in line
    )
    fields = lines[target].split(",")
    fields[5] = new_price  # Lambda's columns: InstanceType, ..., MemoryGiB, Price, ...
    lines[target] = ",".join(fields)
    feed.write_text("".join(lines))
    manifest_file = data_dir / "skypilot" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["observed_at"] = observed_at
    manifest_file.write_text(json.dumps(manifest))


def lambda_a10() -> Offer:
    return Offer.objects.get(
        provider__key="lambda",
        instance_type="gpu_1x_a10",
        region="us-east-1",
        pricing_model="on_demand",
    )


@pytest.mark.django_db
def test_a_newer_snapshot_with_one_changed_price_writes_exactly_one_history_row(data_copy):
    catalog_load_bundled(data_dir=data_copy)
    old_price = lambda_a10().usd_per_hour
    change_lambda_a10_price(data_copy, "0.99", "2026-02-01T00:00:00+00:00")
    history_before = PriceHistory.objects.count()

    report = catalog_load_bundled(data_dir=data_copy)

    assert (report.refresh.changed, report.refresh.new) == (1, 0)
    assert PriceHistory.objects.count() == history_before + 1
    row = lambda_a10().history.order_by("-id").first()
    assert (row.previous_usd_per_hour, str(row.usd_per_hour)) == (old_price, "0.990000")
    assert lambda_a10().usd_per_gpu_hour == pytest.approx(0.99)


@pytest.mark.django_db
def test_an_older_snapshot_never_reverts_a_newer_price(data_copy):
    catalog_load_bundled(data_dir=data_copy)
    Offer.objects.filter(pk=lambda_a10().pk).update(
        usd_per_hour="0.80", price_observed_at="2026-06-01T00:00:00Z"
    )
    report = catalog_load_bundled(data_dir=data_copy)  # the January snapshot again
    assert report.refresh.changed == 0
    assert str(lambda_a10().usd_per_hour) == "0.800000"
