"""Each price adapter parses recorded responses served over real HTTP (or httpx's transport)."""

import json
from decimal import Decimal
from io import StringIO
from pathlib import Path

import httpx
import pytest
from django.core.management import call_command

from catalog.domain.quotes import PricingModel
from catalog.feeds.azure import fetch_azure, parse_sku_table
from catalog.feeds.csv_import import CsvFormatError, parse_price_csv
from catalog.feeds.gpuhunt_catalog import fetch_gpuhunt
from catalog.feeds.http import FeedError, TransientFeedError, fetch_bytes, new_client
from catalog.feeds.skypilot import fetch_skypilot
from catalog.models import Offer, PriceRefresh
from catalog.services import BUNDLED_DATA_DIR
from tests.catalog.feed_server import FeedServer, Route

PRICES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"


@pytest.fixture
def server():
    feed_server = FeedServer()
    yield feed_server
    feed_server.stop()


def azure_skus():
    with (BUNDLED_DATA_DIR / "azure_gpu_skus.csv").open() as table:
        return parse_sku_table(table)


def azure_transport(
    pages: list[dict], base: str = "https://prices.example/api"
) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        index = int(request.url.params.get("page", "1")) - 1
        page = json.loads(json.dumps(pages[index]).replace("{base}", base))
        return httpx.Response(200, json=page)

    return httpx.MockTransport(handler)


def recorded_azure_pages() -> list[dict]:
    return [json.loads((PRICES / f"azure_page{n}.json").read_text()) for n in (1, 2)]


def test_gpuhunt_catalogue_is_read_through_gpuhunt_from_a_served_mirror(server):
    server.serve_directory(PRICES / "gpuhunt_v3_mirror")
    base = server.start()
    with new_client() as client:
        quotes = fetch_gpuhunt(client, base, max_bytes=10**7)
    providers = {q.provider for q in quotes}
    assert providers == {"aws", "lambda", "nebius", "runpod", "verda"}  # lambdalabs -> lambda
    p4d = next(q for q in quotes if q.instance_type == "p4d.24xlarge" and q.zone == "use1-az1")
    assert (p4d.accelerator_name, p4d.gpu_count, p4d.gpu_memory_gib) == ("A100", 8, Decimal("40.0"))
    assert all(q.gpu_count >= 1 for q in quotes)  # CPU-only instances are left out
    assert {q.pricing_model for q in quotes} == {PricingModel.ON_DEMAND, PricingModel.SPOT}
    # Only the offline providers' catalogues were requested; nothing else went out.
    assert all(path.endswith(("/version", "/catalog.zip")) for path in server.requests)


def test_azure_pages_through_next_page_link_and_skips_windows_low_priority_and_devtest():
    transport = azure_transport(recorded_azure_pages())
    with new_client(transport=transport) as client:
        quotes = fetch_azure(
            client, "https://prices.example/api", azure_skus(), max_bytes=10**6
        ).quotes
    keys = {(q.instance_type, q.region, q.pricing_model) for q in quotes}
    assert len(quotes) == len(keys) == 11  # 14 rows less Windows, Low Priority and DevTest
    a100 = next(
        q
        for q in quotes
        if q.instance_type == "Standard_NC24ads_A100_v4"
        and q.region == "eastus"
        and q.pricing_model == PricingModel.ON_DEMAND
    )
    assert (a100.accelerator_name, a100.gpu_count, a100.usd_per_hour) == (
        "A100-80GB-PCIE",
        1,
        Decimal("3.673000"),
    )
    spot = next(
        q
        for q in quotes
        if q.instance_type == "Standard_NC4as_T4_v3" and q.pricing_model == PricingModel.SPOT
    )
    assert spot.usd_per_hour == Decimal("0.105200")
    assert next(q for q in quotes if q.instance_type == "Standard_ND96isr_H100_v5").gpu_count == 8


def test_azure_request_asks_for_usd_virtual_machine_consumption_prices_of_gpu_skus():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, json={"Items": [], "NextPageLink": None})

    with new_client(transport=httpx.MockTransport(handler)) as client:
        fetch_azure(client, "https://prices.example/api", azure_skus(), max_bytes=10**6)
    query = seen[0].params
    assert query["currencyCode"] == "USD"
    assert "priceType eq 'Consumption'" in query["$filter"]
    assert "armSkuName eq 'Standard_ND96isr_H100_v5'" in query["$filter"]


def test_the_recorded_azure_sample_parses():
    sample = json.loads((PRICES / "azure_retail_prices_sample.json").read_text())
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=sample))
    with new_client(transport=transport) as client:
        quotes = fetch_azure(
            client, "https://prices.example/api", azure_skus(), max_bytes=10**6
        ).quotes
    assert sorted((q.region, q.pricing_model.value, str(q.usd_per_hour)) for q in quotes) == [
        ("eastus", "on_demand", "3.673000"),
        ("eastus", "spot", "0.734500"),
        ("westeurope", "on_demand", "3.672000"),
    ]


def test_skypilot_csvs_are_fetched_per_cloud_and_parsed_by_header(server):
    server.serve_directory(BUNDLED_DATA_DIR / "skypilot", prefix="/v8")
    base = server.start()
    files = {"lambda": "v8/lambda_vms.csv", "gcp": "v8/gcp_vms.GPU.csv"}
    with new_client() as client:
        feed = fetch_skypilot(client, base, files, max_bytes=10**7)
    assert {q.provider for q in feed.quotes} == {"lambda", "gcp"}
    gcp = next(q for q in feed.quotes if q.instance_type == "a2-highgpu-1g")
    assert gcp.accelerator_name == "A100"  # host and GPU rows summed into one offer
    assert feed.rows_read == sum(
        len((BUNDLED_DATA_DIR / "skypilot" / name).read_text().splitlines()) - 1
        for name in ("lambda_vms.csv", "gcp_vms.GPU.csv")
    )


def test_gpuhunt_reads_a_file_url_mirror_through_the_same_code_path_as_http(server):
    mirror = PRICES / "gpuhunt_v3_mirror"
    server.serve_directory(mirror)
    with new_client() as client:
        over_http = fetch_gpuhunt(client, server.start(), max_bytes=10**7)
        from_file = fetch_gpuhunt(client, mirror.as_uri(), max_bytes=10**7)
    assert len(from_file) > 0
    assert sorted(map(repr, from_file)) == sorted(map(repr, over_http))


def test_skypilot_reads_a_file_url_mirror(tmp_path):
    (tmp_path / "v8").mkdir()
    (tmp_path / "v8" / "lambda_vms.csv").write_bytes(
        (BUNDLED_DATA_DIR / "skypilot" / "lambda_vms.csv").read_bytes()
    )
    with new_client() as client:
        feed = fetch_skypilot(
            client, tmp_path.as_uri(), {"lambda": "v8/lambda_vms.csv"}, max_bytes=10**6
        )
    assert feed.quotes and {q.provider for q in feed.quotes} == {"lambda"}


def test_a_gpuhunt_refresh_reads_a_file_url_set_in_gpuhunt_catalog_url(catalog, settings):
    """The README's claim: GPUHUNT_CATALOG_URL may be a file:// URL (a local mirror)."""
    settings.GPUHUNT_CATALOG_URL = (PRICES / "gpuhunt_v3_mirror").as_uri()
    out = StringIO()
    call_command("refresh_prices", "--source", "gpuhunt", stdout=out)
    assert "gpuhunt refresh succeeded" in out.getvalue()
    run = PriceRefresh.objects.get(source="gpuhunt")
    assert run.accepted > 0
    assert Offer.objects.filter(source__startswith="gpuhunt ").count() > 0


def test_a_file_url_keeps_the_size_cap_and_says_what_is_missing(tmp_path):
    big = tmp_path / "big.zip"
    big.write_bytes(b"x" * 2048)
    with new_client() as client:
        with pytest.raises(FeedError, match="over the 1,024-byte cap"):
            fetch_bytes(client, big.as_uri(), max_bytes=1024)
        assert fetch_bytes(client, big.as_uri(), max_bytes=2048) == b"x" * 2048
        with pytest.raises(FeedError, match="does not exist") as missing:
            fetch_bytes(client, (tmp_path / "nope").as_uri())
        assert not isinstance(missing.value, TransientFeedError)
        with pytest.raises(FeedError, match="is a directory"):
            fetch_bytes(client, tmp_path.as_uri())
        with pytest.raises(FeedError, match="must name a local path"):
            fetch_bytes(client, "file://example.com/etc/passwd")


def test_skypilot_file_without_the_expected_columns_is_refused(server):
    server.routes["/v8/x.csv"] = Route(b"name,price\nfoo,1\n")
    base = server.start()
    with new_client() as client, pytest.raises(FeedError, match="missing columns"):
        fetch_skypilot(client, base, {"x": "v8/x.csv"}, max_bytes=10**6)


def test_http_errors_say_whether_a_retry_could_help(server):
    server.routes["/500"] = Route(b"oops", 500)
    server.routes["/404"] = Route(b"gone", 404)
    server.routes["/slow"] = Route(b"late", delay_s=2)
    base = server.start()
    with new_client(timeout_s=0.5) as client:
        with pytest.raises(TransientFeedError, match="HTTP 500"):
            fetch_bytes(client, f"{base}/500")
        with pytest.raises(FeedError, match="HTTP 404") as not_found:
            fetch_bytes(client, f"{base}/404")
        assert not isinstance(not_found.value, TransientFeedError)
        with pytest.raises(TransientFeedError, match="timed out"):
            fetch_bytes(client, f"{base}/slow")


def test_a_body_over_the_cap_is_refused_before_it_is_read_whole(server):
    server.routes["/big"] = Route(b"x" * (2 * 1024 * 1024))
    base = server.start()
    with new_client() as client, pytest.raises(FeedError, match="cap"):
        fetch_bytes(client, f"{base}/big", max_bytes=1024 * 1024)


def test_csv_import_reads_the_documented_columns_and_reports_bad_lines():
    lines = [
        "provider,instance_type,region,zone,gpu,gpu_count,pricing_model,usd_per_hour,currency\n",
        "acme,gpu-8x-h100,us-east,,H100-SXM,8,on_demand,20.00,USD\n",
        "acme,gpu-1x-h100,us-east,,H100-SXM,1.5,on_demand,2.5,USD\n",
        "acme,gpu-1x-l4,us-east,,L4,1,reserved,0.5,USD\n",
        "acme,gpu-1x-l4,us-west,,L4,1,spot,abc,USD\n",
    ]
    parsed = parse_price_csv(lines, source="test")
    assert [(q.instance_type, q.gpu_count, str(q.usd_per_hour)) for q in parsed.quotes] == [
        ("gpu-8x-h100", 8, "20.000000")
    ]
    assert parsed.errors == [
        "line 3: gpu_count must be a whole number of GPUs",
        "line 4: pricing_model must be on_demand or spot",
        "line 5: usd_per_hour 'abc' is not a number",
    ]
    with pytest.raises(CsvFormatError, match="missing columns: currency"):
        parse_price_csv(
            ["provider,instance_type,region,gpu,gpu_count,pricing_model,usd_per_hour\n"],
            source="test",
        )
