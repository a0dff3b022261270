"""C++ and Python read alike: one detector pair for MEM005/MEM006 and one NVLink handler
(codescan/common.py) serve both languages, where each had its own copy before."""

from jobs.domain.codescan.common import sku_and_sm_count_detectors
from jobs.domain.codescan.cxx import CXX_DETECTORS
from jobs.domain.codescan.python import PYTHON_DETECTORS
from tests.helpers import findings_of as of
from tests.helpers import scan_files as scan


def _shape(detector):
    return (detector.name, detector.pattern, detector.where, detector.needles, detector.gpu_only)


def test_both_languages_register_the_same_sku_and_sm_count_detectors():
    shared = [_shape(d) for d in sku_and_sm_count_detectors(print, print)]
    for detectors in (CXX_DETECTORS, PYTHON_DETECTORS):
        assert [_shape(d) for d in detectors.detectors if d.name in ("mem005", "mem006")] == shared


def test_an_nvlink_path_behind_a_setting_is_re_tune_in_cxx_and_python_alike(tmp_path):
    report = scan(
        tmp_path,
        {
            "peer.cu": """
                void pick(int use_custom_allreduce, int* ok) {
                    if (use_custom_allreduce) {
                        cudaDeviceCanAccessPeer(ok, 0, 1);
                    }
                }
            """,
            "peer.py": """
                def pick(args, ids):
                    if args.use_custom_allreduce and is_full_nvlink(ids):
                        return "custom"
                    return "nccl"
            """,
        },
    )
    nvlink = {f.file: f for f in of(report, "COMM003")}
    assert set(nvlink) == {"peer.cu", "peer.py"}
    for finding in nvlink.values():
        assert finding.severity == "re-tune"
        assert finding.context.startswith("a setting selects it (")
        assert "use_custom_allreduce" in finding.context


def test_an_unswitched_nvlink_path_keeps_its_default_in_both_languages(tmp_path):
    report = scan(
        tmp_path,
        {
            "peer.cu": "void f(int* ok) { cudaDeviceCanAccessPeer(ok, 0, 1); }\n",
            "peer.py": "def f(ids):\n    return is_full_nvlink(ids)\n",
        },
    )
    nvlink = of(report, "COMM003")
    assert sorted(f.file for f in nvlink) == ["peer.cu", "peer.py"]
    assert {(f.severity, f.context) for f in nvlink} == {("rewrite-risk", "")}
