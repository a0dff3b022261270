"""Every bundled model is sized in the format its Hub checkpoint stores (issue 23).

The DeepSeek-V3, DeepSeek-R1 and Kimi K2 configs once dropped their fp8 quantization_config,
so they were sized in bf16 unless the user said fp8: DeepSeek-V3 on 8x H200 read "needs
159 GiB per GPU, does not fit" where it serves at about 81 GiB. Here each bundled model's
computed checkpoint is held to the `metadata.total_size` its publisher's
model.safetensors.index.json states, where that figure is quoted publicly.
"""

import pytest

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.memory_breakdown import GIB
from advisor.domain.sizing.recommend import rank_candidates
from advisor.domain.sizing.stored_weights import stored_weights_compare
from advisor.domain.sizing.workload import Task, Workload
from tests.advisor.devices import GPUS
from tests.helpers import bundled_config

# slug: (metadata.total_size in bytes, where it was read). Public quotes of the Hub files
# (find_string on the exact figure finds them).
PUBLISHED_TOTAL_SIZE = {
    "llama-3.1-8b": (
        16_060_522_496,
        "meta-llama/Llama-3.1-8B model.safetensors.index.json, quoted in Hugging Face's "
        "model-loading docs and several index parsers (find_string '\"total_size\": 16060522496')",
    ),
    "llama-3.1-70b": (
        141_107_412_992,
        "a public model-inventory fixture of meta-llama/Llama-3.1-70B-Instruct's index "
        "(find_string '\"total_size\": 141107412992')",
    ),
    "qwen2.5-7b": (
        15_231_233_024,
        "Qwen/Qwen2.5-7B-Instruct model.safetensors.index.json, quoted with its link "
        "(find_string '\"total_size\": 15231233024')",
    ),
    "mistral-7b-v0.1": (
        14_483_464_192,
        "mistralai/Mistral-7B-Instruct-v0.2's index (the same 7.24B architecture), quoted "
        "in index parsers (find_string '\"total_size\": 14483464192')",
    ),
    "gpt-oss-20b": (
        13_761_264_768,
        "openai/gpt-oss-20b model.safetensors.index.json (find_string '13761264768')",
    ),
    "gpt-oss-120b": (
        65_248_815_744,
        "openai/gpt-oss-120b tensor bytes in a public inventory test (find_string '65248815744')",
    ),
    "deepseek-v3": (
        688_586_727_753,
        "deepseek-ai/DeepSeek-V3 weight files, a public model-facts record (artifact_bytes; "
        "find_string '688586727753'): 671B main + 14B multi-token-prediction module in fp8",
    ),
    "kimi-k2-instruct": (
        round(958.49 * GIB),
        "moonshotai/Kimi-K2-Instruct: 958.49 GiB of tensors in a public model-inspection "
        "report of the checkpoint (its tensor list: experts in float8_e4m3fn with float32 "
        "128x128 block scales)",
    ),
}
# The Hub checkpoints stored quantised, and the method their quantization_config names.
STORED_QUANTISED = {
    "deepseek-v3": "fp8",
    "deepseek-r1": "fp8",
    "kimi-k2-instruct": "fp8",
    "gpt-oss-20b": "mxfp4",
    "gpt-oss-120b": "mxfp4",
}


@pytest.mark.parametrize("slug", sorted(PUBLISHED_TOTAL_SIZE))
def test_the_computed_checkpoint_matches_the_published_total_size(slug):
    total_size, _source = PUBLISHED_TOTAL_SIZE[slug]
    architecture = bundled_models()[slug].architecture()
    check = stored_weights_compare(architecture, bundled_config(slug), total_size)
    assert not check.differs, check.note()


def test_every_bundled_model_stored_quantised_carries_its_quantization_config():
    for slug, model in bundled_models().items():
        stored = model.architecture().stored_weights
        method = stored.method if stored else None
        assert method == STORED_QUANTISED.get(slug), slug


def test_deepseek_v3_serves_on_eight_h200_by_default_at_about_81_gib_per_gpu():
    workload = Workload(
        architecture=bundled_models()["deepseek-v3"].architecture(),
        task=Task.INFERENCE,
        context_tokens=4096,
    )
    workload.validate()
    (candidate,) = rank_candidates(workload, [GPUS["H200-SXM"]], {}, counts=(8,))
    assert candidate.fits
    weights_gib = candidate.memory.weights / GIB
    assert 76 < weights_gib < 80, weights_gib  # 671B at 1 byte + block scales, over 8
