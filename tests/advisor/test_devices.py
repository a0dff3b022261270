"""The one Device: both readings of the interconnect text, as the sizing engine's Device and
right-sizing's DeviceSpec gave them before they merged, and the other figures it derives.

The expected values are what the two classes returned for every interconnect text and GB/s in
catalog/data/gpus.csv, plus texts that exercise the edges of the PCIe figure's pattern.
"""

import pytest

from advisor.domain.devices import PCIE_FALLBACK_GB_S, Device


def _device(interconnect: str, interconnect_gb_s: float | None, **figures) -> Device:
    values = {
        "key": "X",
        "name": "X",
        "vendor": "NVIDIA",
        "memory_gib": 80.0,
        "bandwidth_gb_s": 3350.0,
        "fp32_tflops": 67.0,
        "tf32_tflops": 494.5,
        "bf16_tflops": 989.0,
        "fp16_tflops": 989.0,
        "fp8_tflops": 1979.0,
        "int8_tops": 1979.0,
        "supports_tf32": True,
        "supports_bf16": True,
        "supports_fp8": True,
        **figures,
    }
    return Device(interconnect=interconnect, interconnect_gb_s=interconnect_gb_s, **values)


@pytest.mark.parametrize(
    ("text", "gb_s", "fast_link_gpus", "pair_gb_s", "four_gb_s"),
    [
        ("24x 100GbE RoCE on-die", 300.0, 8, 300.0, 300.0),
        ("24x 200GbE RoCE on-die", 600.0, 8, 600.0, 600.0),
        ("ICI (3D torus)", 600.0, 8, 600.0, 600.0),
        ("ICI", 200.0, 8, 200.0, 200.0),
        ("Infinity Fabric (7 links x 128 GB/s)", 896.0, 8, 896.0, 896.0),
        ("Infinity Fabric (8 links)", 800.0, 8, 800.0, 800.0),
        ("NVLink 2", 300.0, 8, 300.0, 300.0),
        ("NVLink 3", 600.0, 8, 600.0, 600.0),
        ("NVLink 4", 900.0, 8, 900.0, 900.0),
        ("NVLink 5 (72-GPU domain)", 1800.0, 8, 1800.0, 1800.0),
        ("NVLink 5", 1800.0, 8, 1800.0, 1800.0),
        ("NVLink bridge (2 GPUs)", 112.5, 2, 112.5, 32.0),
        ("NVLink bridge (2 GPUs); PCIe Gen4 64 GB/s", 600.0, 2, 600.0, 64.0),
        ("NVLink bridge (2 GPUs); PCIe Gen5 128 GB/s", 600.0, 2, 600.0, 128.0),
        ("PCIe Gen3 x16", 32.0, 1, 32.0, 32.0),
        ("PCIe Gen4 x16", 64.0, 1, 64.0, 64.0),
        ("PCIe Gen5 x16", 128.0, 1, 128.0, 128.0),
        ("Xe Link", None, 8, 32.0, 32.0),
        # Edges: the PCIe figure is read case-insensitively, before the bridge or after it, and
        # a named 0 GB/s is kept rather than replaced by the fallback.
        ("NVLINK BRIDGE; PCIE 16.5gb/s", 100.0, 2, 100.0, 16.5),
        ("PCIe Gen4 x16 (31.5 GB/s); NVLink bridge", None, 2, 32.0, 31.5),
        ("bridge; pcie 0 gb/s", 50.0, 2, 50.0, 0.0),
        ("PCIe 5.0 128 GB/s", None, 1, 32.0, 32.0),
        ("", None, 1, 32.0, 32.0),
    ],
)
def test_the_interconnect_reads_as_both_old_classes_read_it(
    text, gb_s, fast_link_gpus, pair_gb_s, four_gb_s
):
    device = _device(text, gb_s)
    assert device.fast_link_gpus == fast_link_gpus
    assert device.link_gb_s(1) == device.link_gb_s(2) == pair_gb_s
    assert device.link_gb_s(3) == device.link_gb_s(4) == device.link_gb_s(16) == four_gb_s


def test_the_pcie_fallback_is_gen3_x16():
    assert PCIE_FALLBACK_GB_S == 32.0


def test_usable_memory_is_99_percent_of_the_datasheet_gib():
    assert _device("NVLink 4", 900.0).usable_memory_bytes == 0.99 * 80 * 2**30


@pytest.mark.parametrize(
    ("precision", "figures", "expected"),
    [
        ("fp8", {}, (1979.0, None)),
        ("fp8", {"supports_fp8": False}, (989.0, "X has no FP8 units: assumes 16-bit math")),
        (
            "bf16",
            {"supports_bf16": False, "fp16_tflops": 312.0},
            (312.0, "X has no BF16 units: assumes the job runs fp16"),
        ),
        ("fp16", {"fp16_tflops": None}, (989.0, None)),
        ("tf32", {"supports_tf32": False}, (67.0, "X has no TF32 units: assumes fp32 math")),
        ("fp32", {}, (67.0, None)),
    ],
)
def test_dense_tflops_falls_back_to_the_precision_the_gpu_has(precision, figures, expected):
    assert _device("NVLink 4", 900.0, **figures).dense_tflops(precision) == expected


def test_devices_and_offers_take_keywords_only():
    with pytest.raises(TypeError):
        Device("X", "X")  # type: ignore[misc]
