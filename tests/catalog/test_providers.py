"""Providers carry a sourced kind (hyperscaler, GPU cloud, marketplace) and a pricing-page
template; offers show both and the offers API filters by kind."""

import csv

from rest_framework.test import APIClient

from catalog.domain.pricing_urls import instance_family, pricing_url
from catalog.models import Offer, Provider, ProviderKind
from catalog.services.offers import BUNDLED_DATA_DIR


def test_every_bundled_provider_has_a_kind_with_its_source_and_a_pricing_page():
    with (BUNDLED_DATA_DIR / "providers.csv").open(newline="") as table:
        rows = list(csv.DictReader(table))
    assert rows
    for row in rows:
        assert row["kind"] in ProviderKind.values, row["key"]
        assert "http" in row["kind_source"], row["key"]
        assert row["pricing_url"].startswith("https://"), row["key"]


def test_the_marketplaces_are_the_ones_where_hosts_set_prices(catalog):
    marketplaces = set(Provider.objects.filter(kind="marketplace").values_list("key", flat=True))
    assert marketplaces == {"vast", "hyperbolic"}
    assert Provider.objects.get(key="aws").kind == ProviderKind.HYPERSCALER


def test_the_offers_api_filters_by_provider_kind_and_says_each_offers_kind(catalog):
    body = APIClient().get("/api/v1/offers/", {"provider_kind": "marketplace"}).json()
    assert body["count"] == Offer.objects.filter(provider__kind="marketplace").count() > 0
    assert {row["provider_kind"] for row in body["results"]} == {"marketplace"}
    assert {row["provider"] for row in body["results"]} <= {"vast", "hyperbolic"}
    refused = APIClient().get("/api/v1/offers/", {"provider_kind": "bazaar"})
    assert refused.status_code == 400 and "provider_kind" in refused.json()


def test_an_aws_offer_links_its_instance_familys_page():
    assert instance_family("p5.48xlarge") == "p5"
    assert instance_family("Standard_ND96isr_H100_v5") == "Standard_ND96isr_H100_v5"
    template = "https://aws.amazon.com/ec2/instance-types/{family}/"
    assert pricing_url(template, "p5.48xlarge") == "https://aws.amazon.com/ec2/instance-types/p5/"
    assert pricing_url("", "p5.48xlarge") is None


def test_the_api_gives_every_offer_its_pricing_url(catalog):
    row = APIClient().get("/api/v1/offers/", {"provider": "aws", "page_size": 1}).json()
    offer = row["results"][0]
    family = offer["instance_type"].split(".")[0]
    assert offer["pricing_url"] == f"https://aws.amazon.com/ec2/instance-types/{family}/"


def test_loading_the_catalogue_again_keeps_a_staff_correction(catalog):
    from catalog.services.refresh import catalog_load_bundled

    Provider.objects.filter(key="runpod").update(kind="marketplace")
    Provider.objects.filter(key="lambda").update(pricing_url_template="")
    catalog_load_bundled()
    assert Provider.objects.get(key="runpod").kind == "marketplace"
    assert Provider.objects.get(key="lambda").pricing_url_template == "https://lambda.ai/pricing"
