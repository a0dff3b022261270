"""The bundled specs (catalog/data/gpus.csv): every part the issue and the bundled price files
name, each row with its source and a confidence, and published figures copied as published."""

from decimal import Decimal

import pytest

from catalog.domain.specs import GpuSpec, parse_gpu_specs
from catalog.services import BUNDLED_DATA_DIR

NEURON = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/"


@pytest.fixture(scope="module")
def specs() -> dict[str, GpuSpec]:
    with (BUNDLED_DATA_DIR / "gpus.csv").open(newline="") as specs_file:
        return {spec.canonical_key: spec for spec in parse_gpu_specs(specs_file)}


def test_the_catalogue_has_at_least_55_accelerators(specs):
    assert len(specs) >= 55


# Issue 16's list, by catalogue key.
ISSUE_PARTS = [
    "A100-40GB-PCIE",
    "A40",
    "A30",
    "A16",
    "A2",
    "L20",
    "L40",
    "GH200",
    "GB200",
    "GB300",
    "B300-SXM",
    "H20",
    "H800-SXM",
    "A800-80GB-PCIE",
    "RTXPRO6000-Server",
    "RTXPRO6000-WS",
    "RTX6000Ada",
    "QuadroRTX6000",
    "QuadroRTX8000",
    "RTXA2000",
    "RTXA4000",
    "RTXA4500",
    "RTXA5000",
    "RTXA5500",
    "RTX3060",
    "RTX3070",
    "RTX3080",
    "RTX3090Ti",
    "RTX4060Ti",
    "RTX4070",
    "RTX4070Ti",
    "RTX4080",
    "RTX5080",
    "RTX5090",
    "P100",
    "P4000",
    "M4000",
    "MI355X",
    "MI300A",
    "MI210",
    "MI100",
    "Gaudi2",
    "Gaudi3",
    "TPUv4",
    "TPUv5e",
    "TPUv5p",
    "TPUv6e",
    "Trainium2",
    "Inferentia2",
]


def test_every_part_the_issue_lists_is_in_the_catalogue(specs):
    assert sorted(set(ISSUE_PARTS) - set(specs)) == []


def test_trainium_and_inferentia_are_aws_accelerators_with_their_own_precisions(specs):
    for key in ("Trainium", "Trainium2", "Inferentia", "Inferentia2"):
        spec = specs[key]
        assert spec.vendor == "AWS"
        assert spec.supports_bf16 and spec.bf16_tflops_dense
        assert spec.source_url.startswith(NEURON)
    assert specs["Trainium2"].fp8_tflops_dense == 1299
    assert not specs["Inferentia"].supports_fp8


def test_every_row_names_its_source_and_a_confidence(specs):
    for spec in specs.values():
        assert spec.source_url.startswith("https://"), spec.canonical_key
        assert spec.confidence in {"high", "medium", "low"}, spec.canonical_key


def test_rows_below_high_confidence_say_what_is_unsure(specs):
    for spec in specs.values():
        if spec.confidence != "high":
            assert len(spec.notes) > 20, spec.canonical_key


def test_a_high_confidence_row_gives_a_figure_for_every_precision_it_supports(specs):
    """Refuse to guess: a supported precision without its figure is a low/medium row."""
    for spec in specs.values():
        if spec.confidence != "high":
            continue
        for supported, figure in (
            (spec.supports_bf16, spec.bf16_tflops_dense),
            (spec.supports_tf32, spec.tf32_tflops_dense),
            (spec.supports_fp8, spec.fp8_tflops_dense),
        ):
            assert figure if supported else True, spec.canonical_key


# Parts that were "not sized" for lack of a BF16 figure: each now has one, with its source in
# the notes and the confidence its source earns (vendor-derived: medium; third party: low).
FILLED = {
    "RTXPRO6000-Server": "medium",
    "RTXPRO6000-WS": "medium",
    "A800-80GB-PCIE": "low",
    "H800-SXM": "low",
    "L20": "low",
    "RTX4080": "medium",
    "RTX5080": "medium",
    "RTX4060Ti": "medium",
    "RTX4070TiSuper": "medium",
}


@pytest.mark.parametrize(("key", "confidence"), sorted(FILLED.items()))
def test_filled_tensor_figures_carry_their_source_and_confidence(specs, key, confidence):
    spec = specs[key]
    assert spec.bf16_tflops_dense and spec.fp16_tflops_dense, key
    assert spec.confidence == confidence
    assert "https://" in spec.notes and "read 2026-12-01" in spec.notes


# NVIDIA's GeForce headline "AI TOPS": on Ada FP8/INT8 with sparsity at FP16 accumulate (2 x
# the dense INT8 figure), on Blackwell FP4 with sparsity (4 x the dense INT8 figure). The
# catalogue's figures for these cards are derived from SM counts and clocks; the headline,
# published per card, checks them.
AI_TOPS = {
    "RTX4080": (780, 2),
    "RTX4070TiSuper": (706, 2),
    "RTX4070Ti": (641, 2),
    "RTX4070": (466, 2),
    "RTX4060Ti": (353, 2),
    "RTX5080": (1801, 4),
    "RTX4090": (1321, 2),
    "RTX5090": (3352, 4),
}


@pytest.mark.parametrize(("key", "headline"), sorted(AI_TOPS.items()))
def test_derived_geforce_figures_agree_with_nvidias_ai_tops(specs, key, headline):
    tops, factor = headline
    assert specs[key].int8_tops_dense * factor == pytest.approx(tops, rel=0.005)
    # FP32 accumulate: FP16/BF16 at a quarter of the dense INT8 rate, FP8 at half.
    assert specs[key].bf16_tflops_dense == pytest.approx(
        specs[key].int8_tops_dense / 4, rel=Decimal("0.01")
    )


# (key, field, value, what the source says, where it says it). Dense figures: where a source
# quotes "dense | sparse" the dense one, where it quotes sparse only, half of it.
PUBLISHED = [
    (
        "T4",
        "fp16_tflops_dense",
        65,
        "Mixed Precision (FP16/FP32) 65 TFLOPS",
        "https://www.nvidia.com/en-us/data-center/tesla-t4/",
    ),
    (
        "T4",
        "memory_bandwidth_gb_s",
        320,
        "GPU Memory Bandwidth 320+ GB/s",
        "https://www.nvidia.com/en-us/data-center/tesla-t4/",
    ),
    (
        "A40",
        "tf32_tflops_dense",
        Decimal("74.8"),
        "Peak TF32 Tensor TFLOPS 74.8 | 149.6*; Memory bandwidth 696 GB/s",
        "https://images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf",
    ),
    (
        "A40",
        "memory_bandwidth_gb_s",
        696,
        "Memory bandwidth 696 GB/s",
        "https://images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf",
    ),
    (
        "A16",
        "tf32_tflops_dense",
        9,
        "FP32 || TF32 || Sparsity (TFLOPS) 4x 4.5 || 4x 9 || 4x 18 (per GPU of the 4)",
        "https://www.nvidia.com/en-us/data-center/products/a16-gpu/",
    ),
    (
        "A100-40GB-PCIE",
        "memory_bandwidth_gb_s",
        1555,
        "A100 40GB PCIe: GPU Memory Bandwidth 1,555GB/s; Max TDP 250W",
        "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
    ),
    (
        "L4",
        "bf16_tflops_dense",
        121,
        "BF16 Tensor Core 242 teraFLOPS* (*with sparsity)",
        "https://www.nvidia.com/en-us/data-center/l4/",
    ),
    (
        "RTXA4000",
        "bf16_tflops_dense",
        Decimal("76.7"),
        "Single-precision performance 19.2 TFLOPS; Tensor performance 153.4 TFLOPS (sparse); "
        "Memory bandwidth 448 GB/s; Total board power 140 W",
        "https://www.nvidia.com/content/dam/en-zz/Solutions/gtcs21/rtx-a4000/"
        "nvidia-rtx-a4000-datasheet.pdf",
    ),
    (
        "QuadroRTX6000",
        "tdp_watts",
        295,
        "16.3 TFLOPS (FP32); 24 GB GDDR6; maximum power 295 W",
        "https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/"
        "quadro-product-literature/quadro-rtx-6000-us-nvidia-704093-r4-web.pdf",
    ),
    (
        "Trainium2",
        "bf16_tflops_dense",
        667,
        "Eight NeuronCore-v3 that collectively deliver: 1,299 FP8 TFLOPS, "
        "667 BF16/FP16/TF32 TFLOPS, 181 FP32 TFLOPS",
        NEURON + "trainium2.html",
    ),
    (
        "Inferentia2",
        "int8_tops_dense",
        380,
        "Two NeuronCore-v2 cores, delivering 380 INT8 TOPS, 190 FP16/BF16/cFP8/TF32 TFLOPS, "
        "and 47.5 FP32 TFLOPS; 32GiB of HBM with 820 GiB/sec of bandwidth",
        NEURON + "inferentia2.html",
    ),
    (
        "Inferentia",
        "memory_bandwidth_gb_s",
        50,
        "Four NeuronCore-v1 cores, delivering 128 INT8 TOPS and 64 FP16/BF16 TFLOPS; "
        "8GiB of device DRAM memory with 50 GiB/sec of bandwidth",
        NEURON + "inferentia.html",
    ),
    (
        "TPUv4",
        "bf16_tflops_dense",
        275,
        "Peak compute per chip 275 teraflops (bf16 or int8); HBM2 32 GiB, 1200 GBps",
        "https://cloud.google.com/tpu/docs/v4",
    ),
    (
        "TPUv6e",
        "memory_bandwidth_gb_s",
        1638,
        "Peak compute per chip (bf16) 918 TFLOPs; HBM capacity per chip 32 GB; "
        "HBM bandwidth per chip 1638 GBps",
        "https://cloud.google.com/tpu/docs/v6e",
    ),
    (
        "TPUv3",
        "bf16_tflops_dense",
        123,
        "Peak compute per chip 123 teraflops (bf16); HBM2 32 GiB, 900 GBps",
        "https://cloud.google.com/tpu/docs/v3",
    ),
]


@pytest.mark.parametrize(("key", "field", "value", "quote", "url"), PUBLISHED)
def test_datasheet_figures_are_the_published_ones(specs, key, field, value, quote, url):
    spec = specs[key]
    assert getattr(spec, field) == value, quote
    # The row cites the page the figure is on (the A16 and T4 rows cite the same family).
    assert spec.source_url == url, url
