"""GPU names as nvidia-smi, the CUDA runtime and rocm-smi report them -> the catalogue's parts:
look-alike names go to the right part, and parts the catalogue lacks are said, not guessed."""

import pytest

from catalog.domain.device_names import match_device_name
from catalog.domain.specs import parse_gpu_specs
from catalog.services import BUNDLED_DATA_DIR

GIB = 2**30


@pytest.fixture(scope="module")
def memory_by_key():
    with (BUNDLED_DATA_DIR / "gpus.csv").open(newline="") as specs_file:
        return {spec.canonical_key: spec.memory_gib for spec in parse_gpu_specs(specs_file)}


@pytest.mark.parametrize(
    ("name", "memory_gib", "expected"),
    [
        ("NVIDIA GH200 480GB", 95, "GH200"),  # not the H200 its name contains
        ("NVIDIA H200", 141, "H200-SXM"),
        ("NVIDIA H20", 96, "H20"),
        ("NVIDIA A100-PCIE-40GB", 40, "A100-40GB-PCIE"),
        ("NVIDIA A100 80GB PCIe", 80, "A100-80GB-PCIE"),
        ("NVIDIA A100-SXM4-40GB", 40, "A100-40GB-SXM"),
        ("NVIDIA A10G", 24, "A10G"),
        ("NVIDIA A40", 48, "A40"),
        ("NVIDIA A2", 16, "A2"),
        ("NVIDIA L20", 48, "L20"),
        ("NVIDIA T4G", 16, "T4G"),
        ("Tesla P100-PCIE-16GB", 16, "P100"),
        ("Tesla P4", 8, "P4"),
        ("Quadro RTX 6000", 24, "QuadroRTX6000"),
        ("NVIDIA RTX 6000 Ada Generation", 48, "RTX6000Ada"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 96, "RTXPRO6000-Server"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 96, "RTXPRO6000-WS"),
        ("NVIDIA RTX A2000 12GB", 12, "RTXA2000-12GB"),
        ("NVIDIA GeForce RTX 3060 Ti", 8, "RTX3060Ti"),
        ("NVIDIA GeForce RTX 4070 Ti SUPER", 16, "RTX4070TiSuper"),
        ("NVIDIA GB300", 278, "GB300"),
        ("NVIDIA B300 SXM6 AC", 262, "B300-SXM"),
        ("AMD Instinct MI300A", 128, "MI300A"),
        ("AMD Instinct MI210", 64, "MI210"),
    ],
)
def test_reported_names_match_the_right_part(memory_by_key, name, memory_gib, expected):
    match = match_device_name(name, memory_gib * GIB, memory_by_key)
    assert match.canonical_key == expected, match.reason


@pytest.mark.parametrize(
    "name",
    [
        "Tesla P100-SXM2-16GB",
        "NVIDIA GeForce RTX 3080 Ti",
        "NVIDIA GeForce RTX 4080 SUPER",
        "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
        "Tesla P40",
    ],
)
def test_parts_the_catalogue_lacks_are_said_not_matched_to_a_sibling(memory_by_key, name):
    match = match_device_name(name, 16 * GIB, memory_by_key)
    assert match.canonical_key is None
    assert "not a GPU in the catalogue" in match.reason
