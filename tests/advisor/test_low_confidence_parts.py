"""A sizing answer that leans on a part whose figures the catalogue could not source (confidence
low) says so, with the catalogue's note on what is missing; sourced parts carry no such warning."""

from advisor.domain.sizing.architecture import architecture_from_params
from advisor.domain.sizing.recommend import recommend
from advisor.domain.sizing.workload import Task, Workload
from tests.advisor.devices import made_up_device, offer

URL = "/api/v1/advice/sizing"
NOTE = "memory and FP32 from one secondary source; tensor figures unknown"


def _sized(devices):
    workload = Workload(architecture=architecture_from_params(1e9), task=Task.INFERENCE)
    offers = {device.key: [offer("p", f"{device.key}.1x", 1, 1.0)] for device in devices}
    return recommend(workload, devices, offers).candidates


def test_every_candidate_on_a_low_confidence_part_warns_with_the_catalogues_note():
    shaky = made_up_device(
        "SHAKY", bf16_tflops=100, supports_bf16=True, confidence="low", spec_notes=NOTE
    )
    candidates = [c for c in _sized([shaky]) if c.device.key == "SHAKY"]
    assert candidates
    for candidate in candidates:
        assert f"SHAKY's specs are low confidence: {NOTE}" in candidate.warnings


def test_high_and_medium_confidence_parts_carry_no_low_confidence_warning():
    sourced = [
        made_up_device(key, bf16_tflops=100, supports_bf16=True, confidence=confidence)
        for key, confidence in (("HIGH", "high"), ("MEDIUM", "medium"))
    ]
    for candidate in _sized(sourced):
        assert not any("low confidence" in warning for warning in candidate.warnings)


def test_the_sizing_api_says_the_a10gs_specs_are_low_confidence(api):
    """AWS's A10G has no NVIDIA datasheet: the catalogue marks it low, and every A10G
    candidate of the answer carries the warning; an H100 (datasheet) carries none."""
    body = api.post(
        URL, {"model": "llama-3.2-3b", "task": "inference", "max_candidates": 0}, format="json"
    ).json()
    a10g = [c for c in body["candidates"] if c["gpu"] == "A10G"]
    h100 = [c for c in body["candidates"] if c["gpu"] == "H100-SXM"]
    assert a10g and h100
    for candidate in a10g:
        assert any(
            w.startswith("A10G's specs are low confidence: AWS-exclusive")
            for w in candidate["warnings"]
        )
    for candidate in h100:
        assert not any("low confidence" in w for w in candidate["warnings"])


def test_a_part_whose_bf16_figure_is_unknown_could_not_be_sized_and_is_not_said_to_lack_bf16():
    """A part that supports BF16 but publishes no figure for it is "could not size", with
    what is missing, never "does not fit" nor "has no BF16"."""
    unknown = made_up_device("UNKNOWN", supports_bf16=True, confidence="low", spec_notes=NOTE)
    for candidate in _sized([unknown]):
        assert not candidate.fits and candidate.rejection == "could_not_size"
        assert candidate.missing == ["BF16 TFLOPS"]
        assert candidate.reason == (
            "could not size: the catalogue has no BF16 TFLOPS figure for UNKNOWN"
        )


def test_a_part_without_bf16_units_is_still_said_to_lack_them():
    turing = made_up_device("TURING", fp16_tflops=65, confidence="high")
    for candidate in _sized([turing]):  # the workload's weights are bf16 by default
        assert candidate.reason == "TURING has no BF16 support: choose fp16"
