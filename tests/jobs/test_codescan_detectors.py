"""The detector plumbing: needles never hide a match, and hits at one offset go to the first
detector that counts there."""

from pathlib import Path

import pytest

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
