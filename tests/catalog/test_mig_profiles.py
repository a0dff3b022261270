"""MIG profiles are catalogue facts: the bundled table against NVIDIA's published one, its
loading, and where it shows (the GPU page and the GPU API detail)."""

import io
import re
from dataclasses import replace
from decimal import Decimal

import pytest

from catalog.domain.mig import MigProfileError, parse_mig_profiles
from catalog.domain.specs import parse_gpu_specs
from catalog.models import MigProfile
from catalog.services import BUNDLED_DATA_DIR
from catalog.services.mig import mig_profiles_upsert

MIG_GUIDE = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html"
HEADER = (
    "gpu_key,profile,compute_slices,compute_slices_total,memory_fraction,memory_gib,"
    "memory_basis,max_count,confidence,source_url,memory_source_url,notes\n"
)


def _bundled() -> dict[tuple[str, str], object]:
    with (BUNDLED_DATA_DIR / "mig_profiles.csv").open(newline="") as table:
        return {(spec.gpu_key, spec.profile): spec for spec in parse_mig_profiles(table)}


# Rows quoted from the MIG User Guide, "Supported MIG Profiles" (MIG_GUIDE): profile, fraction
# of memory, fraction of SMs, number of instances available.
PUBLISHED_ROWS = [
    # Table 6, A100-SXM4-40GB
    ("A100-40GB-SXM", "1g.5gb", "1/8", (1, 7), 7),
    ("A100-40GB-SXM", "2g.10gb", "2/8", (2, 7), 3),
    ("A100-40GB-SXM", "3g.20gb", "4/8", (3, 7), 2),
    ("A100-40GB-SXM", "7g.40gb", "8/8", (7, 7), 1),
    # Table 7, H100 (80GB)
    ("H100-SXM", "1g.10gb", "1/8", (1, 7), 7),
    ("H100-SXM", "1g.20gb", "1/4", (1, 7), 4),
    ("H100-SXM", "2g.20gb", "2/8", (2, 7), 3),
    ("H100-SXM", "3g.40gb", "4/8", (3, 7), 2),
    ("H100-SXM", "4g.40gb", "4/8", (4, 7), 1),
    # Table 8, H200
    ("H200-SXM", "1g.18gb", "1/8", (1, 7), 7),
    ("H200-SXM", "2g.35gb", "2/8", (2, 7), 3),
    ("H200-SXM", "3g.71gb", "4/8", (3, 7), 2),
    # the A30-24GB table: four slices of each
    ("A30", "1g.6gb", "1/4", (1, 4), 4),
    ("A30", "2g.12gb", "2/4", (2, 4), 2),
    ("A30", "4g.24gb", "4/4", (4, 4), 1),
    # Table 11, RTX PRO 6000 Blackwell
    ("RTXPRO6000-Server", "1g.24gb", "1/4", (1, 4), 4),
    ("RTXPRO6000-Server", "2g.48gb", "1/2", (2, 4), 2),
    ("RTXPRO6000-WS", "4g.96gb", "4/4", (4, 4), 1),
    # Table 9, B200
    ("B200-SXM", "1g.23gb", "1/8", (1, 7), 7),
    ("B200-SXM", "1g.45gb", "2/8", (1, 7), 4),
    ("B200-SXM", "2g.45gb", "2/8", (2, 7), 3),
    ("B200-SXM", "4g.90gb", "4/8", (4, 7), 1),
]


@pytest.mark.parametrize(("gpu", "profile", "memory", "compute", "count"), PUBLISHED_ROWS)
def test_bundled_profiles_match_nvidias_published_table(gpu, profile, memory, compute, count):
    spec = _bundled()[(gpu, profile)]
    numerator, denominator = memory.split("/")
    assert spec.memory_fraction == (Decimal(numerator) / Decimal(denominator)).quantize(
        Decimal("0.0001")
    )
    assert (spec.compute_slices, spec.compute_slices_total) == compute
    assert spec.max_count == count
    assert spec.source_url == MIG_GUIDE


def test_the_h100_memory_per_slice_is_what_nvidia_smi_reports():
    # nvidia-smi mig -lgip on an H100 80GB (https://jbarrow.ai/field_notes/nvidia-mig/):
    # 1g.10gb 9.75 GiB, 2g.20gb 19.62 GiB, 3g.40gb 39.50 GiB, 7g.80gb 79.25 GiB.
    bundled = _bundled()
    reported = {"1g.10gb": "9.75", "2g.20gb": "19.62", "3g.40gb": "39.50", "7g.80gb": "79.25"}
    for profile, gib in reported.items():
        spec = bundled[("H100-SXM", profile)]
        assert (spec.memory_gib, spec.memory_basis) == (Decimal(gib), "nvidia-smi")


def test_every_profile_is_of_a_catalogue_gpu_whose_mig_count_it_agrees_with():
    with (BUNDLED_DATA_DIR / "gpus.csv").open(newline="") as table:
        specs = {spec.canonical_key: spec for spec in parse_gpu_specs(table)}
    most: dict[str, int] = {}
    for (gpu, _), spec in _bundled().items():
        assert gpu in specs
        assert spec.source_url.startswith("https://")
        most[gpu] = max(most.get(gpu, 0), spec.max_count)
    assert {"A100-40GB-SXM", "A100-80GB-SXM", "H100-SXM", "H200-SXM", "B200-SXM"} <= set(most)
    for gpu, count in most.items():
        assert specs[gpu].mig_max_instances == count, gpu


def test_a_slice_never_claims_more_memory_than_its_gpu_has():
    with (BUNDLED_DATA_DIR / "gpus.csv").open(newline="") as table:
        memory = {spec.canonical_key: spec.memory_gib for spec in parse_gpu_specs(table)}
    for (gpu, profile), spec in _bundled().items():
        assert spec.memory_gib <= memory[gpu] * spec.memory_fraction + Decimal("0.5"), profile


@pytest.mark.parametrize(
    ("row", "complaint"),
    [
        ("H100-SXM,1g.10gb,1,7,9/8,9.75,nvidia-smi,7,high,https://x.example,,", "is not in"),
        ("H100-SXM,1g.10gb,8,7,1/8,9.75,nvidia-smi,7,high,https://x.example,,", "8 of 7"),
        ("H100-SXM,1g.10gb,1,7,1/8,9.75,nvidia-smi,0,high,https://x.example,,", "max_count"),
        ("H100-SXM,1g.10gb,1,7,1/8,9.75,guess,7,high,https://x.example,,", "memory_basis"),
        ("H100-SXM,1g.10gb,1,7,1/8,9.75,nvidia-smi,7,high,,,", "source_url"),
    ],
)
def test_a_row_that_cannot_be_trusted_is_refused_with_its_reason(row, complaint):
    with pytest.raises(MigProfileError, match=complaint):
        parse_mig_profiles(io.StringIO(HEADER + row + "\n"))


def test_a_profile_listed_twice_is_refused():
    row = "H100-SXM,1g.10gb,1,7,1/8,9.75,nvidia-smi,7,high,https://x.example,,\n"
    with pytest.raises(MigProfileError, match="listed twice"):
        parse_mig_profiles(io.StringIO(HEADER + row + row))


def test_loading_profiles_of_a_gpu_the_catalogue_lacks_is_refused(catalog):
    row = "NO-SUCH-GPU,1g.10gb,1,7,1/8,9.75,nvidia-smi,7,high,https://x.example,,\n"
    with pytest.raises(MigProfileError, match="NO-SUCH-GPU"):
        mig_profiles_upsert(specs=parse_mig_profiles(io.StringIO(HEADER + row)))


def test_the_loader_writes_every_profile_once_and_a_second_load_changes_nothing(catalog):
    bundled = _bundled()
    assert catalog.mig_profiles.created == len(bundled)
    assert MigProfile.objects.count() == len(bundled)
    again = mig_profiles_upsert(specs=bundled.values())
    assert (again.created, again.updated, again.unchanged) == (0, 0, len(bundled))


def test_a_profile_the_file_drops_is_removed_and_a_changed_one_updated(catalog):
    dropped, changed, *kept = [spec for (gpu, _), spec in _bundled().items() if gpu == "H100-SXM"]
    counts = mig_profiles_upsert(specs=[replace(changed, max_count=6), *kept])
    assert (counts.created, counts.updated) == (0, 1)
    rows = MigProfile.objects.filter(gpu__canonical_key="H100-SXM")
    assert dropped.profile not in set(rows.values_list("profile", flat=True))
    assert rows.count() == 1 + len(kept)
    assert rows.get(profile=changed.profile).max_count == 6


def test_the_gpu_page_lists_its_mig_profiles_with_their_sources(client, catalog):
    page = client.get("/gpus/H100-SXM/").content.decode()
    assert 'id="mig-profiles"' in page
    for profile, share in (("1g.10gb", "1/8"), ("2g.20gb", "1/4"), ("3g.40gb", "1/2")):
        cells = rf"<td>{re.escape(profile)}</td>\s*<td[^>]*>\d/7</td>\s*<td[^>]*>{share}<"
        assert re.search(cells, page), profile
    assert "<td>7g.80gb</td>" in page
    assert MIG_GUIDE in page
    t4 = client.get("/gpus/T4/").content.decode()
    assert 'id="mig-profiles"' not in t4


def test_the_gpu_api_detail_has_mig_profiles(client, catalog):
    body = client.get("/api/v1/gpus/H100-SXM/").json()
    profiles = {row["profile"]: row for row in body["mig_profiles"]}
    assert profiles["3g.40gb"]["compute_fraction"] == pytest.approx(3 / 7)
    assert profiles["3g.40gb"]["max_count"] == 2
    assert profiles["3g.40gb"]["source_url"] == MIG_GUIDE
    assert client.get("/api/v1/gpus/T4/").json()["mig_profiles"] == []
