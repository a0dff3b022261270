"""The memory each GPU shows on a real card (gpus.csv `visible_memory_mib`): read with its
source, checked against the datasheet, loaded into the catalogue and handed to the advisor."""

import csv
import io
from dataclasses import replace

import pytest
from django.core.exceptions import ValidationError

from advisor.domain.devices import DRIVER_RESERVED_MIB, MIB
from advisor.selectors import device_list
from catalog.domain.specs import SpecError, parse_gpu_specs
from catalog.models import Gpu
from catalog.services import BUNDLED_DATA_DIR
from tests.advisor.devices import GPUS

MODAL = "https://github.com/modal-labs/modal-client/pull/2797"

# What nvidia-smi reports, as the source prints it.
PUBLISHED = [
    ("H100-SXM", 81559, MODAL),
    ("A100-80GB-SXM", 81920, MODAL),
    ("A100-40GB-SXM", 40960, MODAL),
    ("A10", 23028, MODAL),
    ("L40S", 46068, MODAL),
    ("L4", 23034, MODAL),
    ("T4", 15360, MODAL),
    ("A10G", 23028, "https://github.com/NVIDIA/DCGM/issues/232"),
    ("RTX4090", 24564, "https://github.com/RLinf/RLinf/issues/255"),
    ("RTX3090", 24576, "https://github.com/noonghunna/club-3090/issues/1127"),
    ("B200-SXM", 183359, "https://github.com/NVIDIA/TensorRT-LLM/issues/10278"),
]


def _bundled_rows() -> list[dict[str, str]]:
    with (BUNDLED_DATA_DIR / "gpus.csv").open(newline="") as specs_file:
        return list(csv.DictReader(specs_file))


def _parse(rows: list[dict[str, str]]):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return parse_gpu_specs(io.StringIO(out.getvalue()))


@pytest.mark.parametrize(("key", "mib", "url"), PUBLISHED)
def test_the_published_total_is_read_with_its_source(key, mib, url):
    (spec,) = [spec for spec in _parse(_bundled_rows()) if spec.canonical_key == key]
    assert spec.visible_memory_mib == mib
    assert spec.visible_memory_source_url == url


def test_parts_with_nothing_published_keep_no_figure():
    specs = _parse(_bundled_rows())
    unpublished = [spec for spec in specs if spec.visible_memory_mib is None]
    assert {spec.canonical_key for spec in specs} - {s.canonical_key for s in unpublished} == {
        key for key, _, _ in PUBLISHED
    }
    assert all(spec.visible_memory_source_url == "" for spec in unpublished)


def _l4_with(**cells: str) -> list[dict[str, str]]:
    rows = _bundled_rows()
    (l4,) = [row for row in rows if row["canonical_key"] == "L4"]
    l4.update(cells)
    return rows


@pytest.mark.parametrize(
    "cells",
    [
        {"visible_memory_source_url": ""},  # a figure without its source
        {"visible_memory_mib": ""},  # a source without its figure
        {"visible_memory_mib": "24577"},  # above the datasheet's 24 GiB
        {"visible_memory_mib": "21000"},  # below 90% of it: another card's figure
        {"visible_memory_mib": "23034.5"},  # not a whole MiB figure
    ],
)
def test_a_figure_that_cannot_be_the_cards_is_refused(cells):
    with pytest.raises(SpecError, match="L4"):
        _parse(_l4_with(**cells))


def test_the_catalogue_and_the_advisor_carry_the_figure(catalog):
    assert Gpu.objects.get(canonical_key="L4").visible_memory_mib == 23034
    assert Gpu.objects.get(canonical_key="L4").visible_memory_source_url == MODAL
    devices = {device.key: device for device in device_list()}
    assert devices["L4"].cuda_visible_bytes == (23034 - DRIVER_RESERVED_MIB) * MIB
    assert devices["H100-SXM"].cuda_visible_bytes == pytest.approx(79.19 * 2**30, abs=0.01 * 2**30)
    assert devices["L40"].cuda_visible_bytes is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("visible_mib", "source", "message"),
    [
        (30000, MODAL, "between 90% and 100%"),
        (400, MODAL, "between 90% and 100%"),
        (23034, "", "needs a visible_memory_source_url"),
    ],
)
def test_an_admin_edit_is_held_to_the_same_rule(catalog, visible_mib, source, message):
    l4 = Gpu.objects.get(canonical_key="L4")
    l4.visible_memory_mib, l4.visible_memory_source_url = visible_mib, source
    with pytest.raises(ValidationError, match=message):
        l4.full_clean()


def test_a_total_no_larger_than_the_drivers_share_falls_back_to_the_datasheet_rule():
    l4 = replace(GPUS["L4"], visible_memory_mib=DRIVER_RESERVED_MIB)
    assert l4.cuda_visible_bytes is None
    assert l4.usable_memory_bytes == pytest.approx(0.99 * 24 * 2**30)
