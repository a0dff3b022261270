"""MIG slices in the sizing answer: a served model that fits a slice is offered it, with how many
copies one GPU serves, the cost per copy and the slice's speed; never for training, for more
than one GPU, or on a GPU without MIG."""

import pytest

from advisor.domain.devices import MigProfile
from advisor.domain.sizing.slices import slice_device
from advisor.selectors import device_list
from catalog.models import MigProfile as MigProfileRow

URL = "/api/v1/advice/sizing"


def _answer(api, **payload) -> dict:
    """The answer for Llama 2 7B (4,096-token context, one sequence) served on vLLM unless the
    payload says otherwise."""
    payload = {"model": "llama-2-7b", "max_candidates": 0, "include_rejected": True, **payload}
    if payload.get("task", "inference") == "inference":
        payload.setdefault("stack", "vllm")
    response = api.post(URL, payload, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _one(body: dict, gpu: str) -> dict:
    (candidate,) = [c for c in body["candidates"] if c["gpu"] == gpu and c["gpu_count"] == 1]
    return candidate


def test_a_4bit_7b_model_fits_a_1g_10gb_h100_slice_seven_copies_a_gpu(api):
    candidate = _one(_answer(api, weight_dtype="int4"), "H100-SXM")
    mig = candidate["mig_slice"]
    assert mig["profile"] == "1g.10gb"
    assert mig["summary"] == "fits a 1g.10gb slice: one H100 SXM serves 7 copies"
    assert mig["copies_per_gpu"] == 7
    assert mig["memory_per_copy_gib"] <= mig["usable_gib"] < mig["memory_gib"] == 9.75
    assert mig["memory_per_copy_gib"] == candidate["memory_per_gpu_gib"]
    # The whole GPU's price, shared by the copies it serves.
    assert mig["usd_per_hour_per_copy"] == pytest.approx(candidate["usd_per_hour"] / 7, abs=1e-6)
    assert mig["compute_fraction"] == pytest.approx(1 / 7, abs=1e-4)
    # Decode reads memory (an eighth of the memory slices) and dequantises 4-bit weights on
    # the SMs (a seventh of them); prefill computes on a seventh; the per-layer launch costs do
    # not shrink with the slice: the sustained rate is at most a seventh of the whole GPU's,
    # and not much below an eighth.
    whole = candidate["output_tokens_per_s_total"]["expected"]
    assert whole / 9 <= mig["tokens_per_second"]["expected"] <= whole / 7


def test_an_int8_7b_model_takes_the_slice_the_stacks_memory_fraction_lets_it_into(api):
    # vLLM at gpu_memory_utilization 0.90 may use 0.90 x 9.75 x 0.99 = 8.69 GiB of a 1g.10gb
    # slice: the 9.48 GiB copy needs a 1g.20gb one (four a GPU). At 0.99 it may use 9.56 GiB:
    # the copy fits a 1g.10gb slice and one H100 serves seven.
    at_90 = _one(_answer(api, weight_dtype="int8", gpu_memory_utilization=0.9), "H100-SXM")
    at_99 = _one(_answer(api, weight_dtype="int8", gpu_memory_utilization=0.99), "H100-SXM")
    assert 8.69 < at_90["memory_per_gpu_gib"] <= 9.56
    assert (at_90["mig_slice"]["profile"], at_90["mig_slice"]["copies_per_gpu"]) == ("1g.20gb", 4)
    assert at_90["mig_slice"]["usable_gib"] == pytest.approx(0.9 * 19.62 * 0.99, abs=0.01)
    assert (at_99["mig_slice"]["profile"], at_99["mig_slice"]["copies_per_gpu"]) == ("1g.10gb", 7)
    for candidate in (at_90, at_99):
        mig = candidate["mig_slice"]
        assert mig["usd_per_hour_per_copy"] == pytest.approx(
            candidate["usd_per_hour"] / mig["copies_per_gpu"], abs=1e-6
        )


def test_a_bf16_7b_model_needs_a_20gb_slice_and_runs_at_its_share_of_the_bandwidth(api):
    bf16 = _one(_answer(api, weight_dtype="bf16"), "H100-SXM")
    assert bf16["memory_per_gpu_gib"] > 9.75 * 0.99  # too big for a 1g.10gb slice
    assert (bf16["mig_slice"]["profile"], bf16["mig_slice"]["copies_per_gpu"]) == ("1g.20gb", 4)
    # bf16 decode only reads memory (a quarter of the memory slices); each request's prefill
    # computes on a seventh of the SMs: the sustained rate lies between those shares.
    whole = bf16["output_tokens_per_s_total"]["expected"]
    assert whole / 7 < bf16["mig_slice"]["tokens_per_second"]["expected"] < whole / 4


def test_a_model_that_fits_the_gpu_but_no_shared_slice_gets_none(api):
    candidate = _one(_answer(api, model="gemma-2-27b", weight_dtype="bf16"), "H100-SXM")
    assert candidate["fits"] and candidate["memory_per_gpu_gib"] > 39.5
    assert candidate["mig_slice"] is None  # only 7g.80gb holds it: that is the whole GPU


@pytest.mark.parametrize("task", ["lora", "qlora", "full"])
def test_a_training_workload_never_gets_a_slice(api, task):
    body = _answer(api, task=task)
    assert any(c["fits"] and c["gpu_count"] == 1 for c in body["candidates"])
    assert all(c["mig_slice"] is None for c in body["candidates"])


def test_a_gpu_without_mig_never_gets_a_slice(api):
    body = _answer(api, weight_dtype="int4", kv_dtype="fp16")  # the T4 has no bf16
    for gpu in ("T4", "L4", "A10G"):
        candidate = _one(body, gpu)
        assert candidate["fits"] and candidate["mig_slice"] is None
    without = {
        c["gpu"] for c in body["candidates"] if c["mig_slice"] and c["gpu"] not in _mig_gpus()
    }
    assert without == set()


def _mig_gpus() -> set[str]:
    return set(MigProfileRow.objects.values_list("gpu__canonical_key", flat=True))


def test_a_multi_gpu_layout_never_gets_a_slice(api):
    body = _answer(api, weight_dtype="int8")
    several = [c for c in body["candidates"] if c["gpu_count"] > 1 and c["fits"]]
    assert several and all(c["mig_slice"] is None for c in several)
    assert any(c["mig_slice"] for c in body["candidates"] if c["gpu_count"] == 1)


def test_a_slice_device_has_its_share_of_bandwidth_and_of_every_peak(catalog):
    (h100,) = [d for d in device_list() if d.key == "H100-SXM"]
    profile = MigProfile(
        name="3g.40gb", compute_fraction=3 / 7, memory_fraction=0.5, memory_gib=39.5, max_count=2
    )
    part = slice_device(h100, profile)
    assert part.memory_gib == 39.5
    assert part.bandwidth_gb_s == pytest.approx(h100.bandwidth_gb_s / 2)
    assert part.bf16_tflops == pytest.approx(h100.bf16_tflops * 3 / 7)
    assert part.fp8_tflops == pytest.approx(h100.fp8_tflops * 3 / 7)
    assert part.fp64_tflops == pytest.approx(h100.fp64_tflops * 3 / 7)
    assert {p.name for p in h100.mig_profiles} >= {"1g.10gb", "3g.40gb", "7g.80gb"}


def test_the_sizing_page_offers_the_slice_that_is_cheapest_per_copy(web, api):
    query = {"model": "llama-2-7b", "task": "inference", "weight_dtype": "int4"}
    slices = [
        c["mig_slice"]
        for c in _answer(api, weight_dtype="int4")["candidates"]
        if c["mig_slice"] and c["mig_slice"]["usd_per_hour_per_copy"] is not None
    ]
    cheapest = min(slices, key=lambda mig: mig["usd_per_hour_per_copy"])
    page = web.get("/size/", query).content.decode()
    panel = page[page.index('id="mig-slices"') :]
    assert panel.index(cheapest["summary"]) < panel.index("</ul>")
    training = web.get("/size/", {"model": "llama-2-7b", "task": "lora"}).content.decode()
    assert 'id="mig-slices"' not in training
