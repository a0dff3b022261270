"""`manage.py load_catalog`: bundled seed data, loaded idempotently, nothing dropped silently."""

import json
import shutil
from io import StringIO

import pytest
from django.core.management import call_command

from catalog.models import Gpu, Offer, PriceHistory
from catalog.services import BUNDLED_DATA_DIR, catalog_load_bundled


def run_command(*args: str) -> str:
    out = StringIO()
    call_command("load_catalog", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_first_load_brings_30_gpus_and_well_over_1000_offers_each_with_a_history_row():
    report = catalog_load_bundled()
    assert report.gpus.created == Gpu.objects.count() == 30
    assert report.refresh.status == "succeeded"
    assert report.refresh.new == Offer.objects.count() > 1000
    assert PriceHistory.objects.count() == Offer.objects.count()
    assert not Offer.objects.filter(history__isnull=True).exists()


@pytest.mark.django_db
def test_second_load_changes_nothing():
    catalog_load_bundled()
    history_before = PriceHistory.objects.count()
    prices_before = dict(Offer.objects.values_list("id", "usd_per_hour"))
    output = run_command()
    assert "GPUs: 0 created, 0 updated, 30 unchanged" in output
    assert "Offers: 0 created, 0 price changes, 1067 unchanged" in output
    assert PriceHistory.objects.count() == history_before
    assert dict(Offer.objects.values_list("id", "usd_per_hour")) == prices_before


@pytest.mark.django_db
def test_every_quote_is_loaded_or_reported_as_unmatched():
    report = json.loads(run_command("--json"))
    offers = report["offers"]
    assert offers["seen"] == offers["accepted"] + offers["unmatched"] + offers["rejected"]
    assert offers["new"] == offers["accepted"] == Offer.objects.count()
    assert offers["unmatched"] == sum(entry["count"] for entry in report["unmatched"])


@pytest.mark.django_db
def test_unmatched_provider_names_are_printed_with_the_reason():
    output = run_command()
    assert "Offers not loaded because their GPU could not be matched" in output
    assert "lambda 'RTX6000': Lambda RTX6000 is the Turing Quadro RTX 6000" in output
    assert "vast 'RTX4090': 'RTX4090' reports 48.0 GiB per GPU" in output
    assert "Excluded mithril_vms.csv: known-bad prices" in output


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
    assert not Offer.objects.filter(provider__key="lambda", accelerator_name="RTX6000").exists()
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
