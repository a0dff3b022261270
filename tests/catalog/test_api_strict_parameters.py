"""Query parameters the catalogue API refuses with a 400 that says why, instead of ignoring."""

import pytest
from rest_framework.test import APIClient

from catalog.models import Gpu

GPUS_URL = "/api/v1/gpus/"


@pytest.fixture
def api(db) -> APIClient:
    for index, bf16 in enumerate([True, True, False]):
        Gpu.objects.create(
            name=f"GPU {index}",
            canonical_key=f"gpu-{index}",
            vendor="NVIDIA",
            architecture="Test",
            memory_gib=16 * (index + 1),
            memory_type="HBM",
            memory_bandwidth_gb_s=1000,
            supports_bf16=bf16,
            confidence="high",
        )
    return APIClient()


@pytest.mark.parametrize("value", ["abc", "0", "-3", "1.5"])
def test_a_page_size_that_is_not_a_whole_number_from_1_is_a_400(api, value):
    """Before: DRF fell back to the default page size without a word."""
    response = api.get(GPUS_URL, {"page_size": value})
    assert response.status_code == 400
    assert "page_size" in response.json()


def test_a_page_size_over_the_maximum_gives_the_largest_page(api):
    response = api.get(GPUS_URL, {"page_size": 100_000})
    assert response.status_code == 200
    assert len(response.json()["results"]) == 3


def test_an_empty_page_size_gives_the_default_page(api):
    response = api.get(GPUS_URL, {"page_size": "", "page": ""})
    assert response.status_code == 200
    assert response.json()["count"] == 3


@pytest.mark.parametrize(("value", "count"), [("true", 2), ("false", 1), ("", 3)])
def test_supports_filter_takes_true_false_or_nothing(api, value, count):
    response = api.get(GPUS_URL, {"supports_bf16": value})
    assert response.status_code == 200
    assert response.json()["count"] == count


@pytest.mark.parametrize("value", ["1", "yes", "True", "2"])
def test_supports_filter_refuses_anything_else_with_the_reason(api, value):
    response = api.get(GPUS_URL, {"supports_bf16": value})
    assert response.status_code == 400
    assert "not one of the available choices" in response.json()["supports_bf16"][0]
