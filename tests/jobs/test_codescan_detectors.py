"""The detector plumbing: needles never hide a match, and hits at one offset go to the first
detector that counts there."""

from pathlib import Path

import pytest

from jobs.domain.codescan import scan_paths
from jobs.domain.codescan.build import BUILD_DETECTORS
from jobs.domain.codescan.cxx import CXX_DETECTORS
from jobs.domain.codescan.python import PYTHON_DETECTORS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codescan"
SETS = {"python": PYTHON_DETECTORS, "cxx": CXX_DETECTORS} | {
    kind.value: detectors for kind, detectors in BUILD_DETECTORS.items()
}


def corpus() -> bytes:
    return b"\n".join(path.read_bytes() for path in sorted(FIXTURES.rglob("*")) if path.is_file())


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_match_contains_one_of_its_needles(name):
    """A file is searched with a pattern only when it holds one of the pattern's needles, so
    a match without a needle would be missed."""
    text = corpus()
    matched = 0
    for detector in SETS[name].detectors:
        for match in detector.regex.finditer(text):
            matched += 1
            if detector.needles:
                assert any(n in match.group() for n in detector.needles), (detector.name, match)
    assert matched


def test_a_file_without_needles_costs_no_regex_pass():
    assert PYTHON_DETECTORS.hits(b"x = 1\n", gpu_context=True) == []
    assert CXX_DETECTORS.hits(b"int main() { return 0; }\n", gpu_context=True) == []


def test_hits_at_one_offset_are_grouped_in_detector_order_and_overlaps_dropped():
    groups = PYTHON_DETECTORS.hits(
        b'install_requires=["flash_attn==2"]\nx = torch.cuda.amp\n', gpu_context=True
    )
    names = [[detector.name for detector, _ in group] for group in groups]
    assert ["dep001", "dep002"] in names  # DEP001 first; DEP002 takes it inside a string
    assert ["torch_cuda"] in names
    starts = [group[0][1].start() for group in groups]
    assert starts == sorted(starts)


def test_python_and_cxx_read_compute_capability_comparisons_alike(tmp_path):
    """One capability pattern for both languages. Before, C/C++ had its own copy, which
    missed a `device_capability` compared with a number."""
    (tmp_path / "dispatch.cu").write_text(
        "void pick(cudaDeviceProp prop) {\n"
        "  int device_capability = prop.major * 10 + prop.minor;\n"
        "  if (device_capability >= 80) { launch_ampere(); }\n"
        "}\n"
    )
    (tmp_path / "dispatch.py").write_text(
        "import torch\n"
        "device_capability = torch.cuda.get_device_capability()\n"
        "if device_capability >= (8, 0):\n"
        "    use_fast_path()\n"
    )
    found = [(f.rule_id, f.file, f.line) for f in scan_paths(tmp_path).findings]
    assert ("ARCH002", "dispatch.cu", 3) in found
    assert ("ARCH002", "dispatch.py", 3) in found
