"""The sizing page (/size/): the form, the ranked answer with its charts, errors as 400, htmx
partials; and advisor/charts/'s SVG."""

import json
import math
import re
import xml.etree.ElementTree as ET

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from advisor import charts
from advisor.domain.sizing.bundled_models import MODELS_DIR
from tests.helpers import HOSTILE, assert_chart_markup

URL = "/size/"
SVG = "{http://www.w3.org/2000/svg}"
PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


@pytest.fixture
def client(catalog) -> Client:
    return Client()


def errors_of(html: str, field: str) -> str:
    match = re.search(rf'<ul class="errorlist" id="id_{field}_errors">(.*?)</ul>', html, re.S)
    assert match, f"no errors shown for {field}"
    return match.group(1)


def no_inline_style(html: str) -> None:
    assert "style=" not in html
    assert "<style" not in html


# The form -----------------------------------------------------------------------------------


def test_the_form_renders_with_the_serializer_defaults(client):
    response = client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert '<form id="sizing-form"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'id="id_model" name="model" value="llama-3.1-8b"' in html
    assert '<option value="llama-3.1-70b" label="Llama 3.1 70B"></option>' in html
    # Empty: the model decides (4,096, or its positions when fewer); it showed 4096 before.
    assert 'id="id_context_tokens" name="context_tokens" value=""' in html
    assert '<option value="" selected>As the weights (BF16 for FP8/INT8/INT4)</option>' in html
    assert 'id="id_output_tokens" name="output_tokens" value="256"' in html
    assert '<option value="" selected>Auto (smallest fitting)</option>' in html
    assert '<option value="inference" selected>' in html
    assert '<option value="on_demand" selected>On-demand</option>' in html
    for label in ("Context length", "Batch size", "LoRA rank", "Training tokens", "ZeRO stage"):
        assert label in html
    for unit in ("(tokens)", "(sequences)", "(users)", "(GPUs)"):
        assert unit in html
    for legend in ("<legend>Model</legend>", "<legend>Serving", "<legend>Training"):
        assert legend in html
    # htmx from django-htmx's static files, configured to inject no <style>.
    assert "django_htmx/htmx-2.min.js" in html
    assert '"includeIndicatorStyles":false' in html
    assert "css/advisor.css" in html
    assert 'id="results"' not in html
    no_inline_style(html)


def test_bundled_models_are_listed_by_name_in_natural_order(client):
    html = client.get(URL).content.decode()
    names = re.findall(r'<option value="llama-3\.1-[^"]+" label="([^"]+)">', html)
    assert names == ["Llama 3.1 8B", "Llama 3.1 70B", "Llama 3.1 405B"]


# The answer ---------------------------------------------------------------------------------


def test_serving_70b_shows_the_recommendation_charts_and_rejections(client):
    response = client.get(URL, {"model": "llama-3.1-70b", "task": "inference"})
    assert response.status_code == 200
    html = response.content.decode()
    headline = re.search(r'<p class="headline">(.*?)</p>', html, re.S).group(1)
    assert re.fullmatch(r"\d× .+ on .+ at \$[\d,.]+/h — [\d.]+ of [\d.]+ GiB per GPU", headline), (
        headline
    )
    assert "Llama 3.1 70B" in html
    # Both charts, as inline SVG.
    assert re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="chart memory-chart"', html)
    assert re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="chart cost-chart"', html)
    # 140 GB of bf16 weights do not fit on one H100: the reason is spelled out.
    assert re.search(
        r"needs [\d.]+ GiB per GPU, H100 SXM has 71\.3 GiB usable at gpu_memory_utilization 0\.90",
        html,
    )
    assert '<details class="rejected">' in html
    assert "Configurations that fit, best first" in html
    assert "tokens/s" in html and "$/h" in html.replace("$/H", "$/h")
    assert "Assumptions" in html and "gpu_memory_utilization 0.90 of the memory CUDA" in html
    assert 'href="/size/?model=llama-3.1-70b"' in html  # shareable: defaults left out
    no_inline_style(html)


def test_training_shows_hours_and_cost_per_job(client):
    response = client.get(URL, {"model": "llama-3.1-70b", "task": "qlora", "context_tokens": 4096})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Cost per job" in html and "Training time" in html
    assert "Cost against training time" in html  # the scatter's title
    assert "QLoRA fine-tune" in html


def test_when_nothing_fits_the_remedies_are_shown(client):
    response = client.get(URL, {"model": "llama-3.1-405b", "task": "full", "context_tokens": 8192})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Nothing fits" in html
    assert '<table class="data remedies">' in html
    assert '<p class="headline">' not in html


def test_a_bare_parameter_count_is_sized(client):
    response = client.get(URL, {"params": "13000000000", "num_layers": "40", "task": "lora"})
    assert response.status_code == 200
    html = response.content.decode()
    assert '<p class="headline">' in html
    assert 'name="source" value="params" checked' in html


def test_a_posted_bundled_model_redirects_to_its_shareable_url(client):
    response = client.post(
        URL,
        {
            "source": "model",
            "model": "llama-3.1-70b",
            "task": "qlora",
            "context_tokens": "",
            "output_tokens": "256",
            "gradient_checkpointing": "true",
            "config": "",
        },
    )
    assert response.status_code == 303
    # (An explicit context_tokens of 4096 is kept in the URL now: the default depends on the
    # model, 4,096 being only the default for long-context ones.)
    assert response["Location"] == "/size/?model=llama-3.1-70b&task=qlora#results"
    assert client.get(response["Location"]).status_code == 200


def test_a_pasted_config_is_answered_directly_and_kept_in_the_form(client):
    config = (MODELS_DIR / "qwen2.5-7b.json").read_text()
    response = client.post(URL, {"source": "config", "config": config, "task": "inference"})
    assert response.status_code == 200
    html = response.content.decode()
    assert '<p class="headline">' in html
    assert "7,615,616,512 parameters" in html
    assert "&quot;model_type&quot;: &quot;qwen2&quot;" in html  # still in the textarea


def test_an_uploaded_config_is_sized_and_moves_into_the_textarea(client):
    upload = SimpleUploadedFile(
        "config.json", (MODELS_DIR / "mistral-7b-v0.1.json").read_bytes(), "application/json"
    )
    response = client.post(URL, {"source": "config", "config_file": upload})
    assert response.status_code == 200
    html = response.content.decode()
    assert '<p class="headline">' in html
    assert "&quot;model_type&quot;: &quot;mistral&quot;" in html


def test_the_form_post_needs_its_csrf_token():
    client = Client(enforce_csrf_checks=True)
    response = client.post(URL, {"source": "model", "model": "llama-3.1-8b"})
    assert response.status_code == 403


# Errors: 400 with the message next to its field, never 500 ---------------------------------


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"model": "llama-3.1-8b", "context_tokens": "-5"}, "context_tokens", "greater than"),
        ({"model": "nope"}, "model", "is not a bundled model"),
        ({"model": "llama-3.1-8b", "task": "fly"}, "task", "is not a valid choice"),
        ({"model": "llama-3.1-8b", "batch_size": "many"}, "batch_size", "valid integer"),
        ({"source": "params", "params": ""}, "params", "Enter the parameter count"),
        ({"params": "12"}, "params", "greater than"),
        (
            {"model": "llama-3.1-8b", "task": "lora", "lora_targets": "nonsense"},
            "lora_targets",
            "are not modules of",
        ),
        ({"model": "llama-3.1-8b", "lora_targets": "x" * 70}, "lora_targets", "64 characters"),
        ({"model": "llama-3.1-8b", "zero_stage": "5"}, "zero_stage", "is not a valid choice"),
    ],
)
def test_invalid_values_are_a_400_with_the_fields_error(client, query, field, message):
    response = client.get(URL, query)
    assert response.status_code == 400
    html = response.content.decode()
    assert message in errors_of(html, field)
    assert 'class="notice error-summary"' in html
    assert '<p class="headline">' not in html


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2, 3]", "must be a JSON object"),
        ('{"model_type": "rwkv"}', "is not supported"),
        ('{"model_type": "llama"}', "config.json has no"),
        # Fields of the wrong type must be an error too, not a crash of the reader.
        ('{"model_type": ["llama"]}', ""),
        ('{"model_type": "t5", "d_model": 512, "feed_forward_proj": 7}', ""),
    ],
)
def test_a_bad_pasted_config_is_a_400_next_to_the_textarea(client, config, message):
    response = client.post(URL, {"source": "config", "config": config})
    assert response.status_code == 400
    assert message in errors_of(response.content.decode(), "config")


def test_an_empty_config_source_says_what_to_do(client):
    response = client.post(URL, {"source": "config", "config": "  "})
    assert response.status_code == 400
    assert "Paste a config.json or upload one" in errors_of(response.content.decode(), "config")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (PNG_BYTES, "not a text file"),
        (b"garbage, not json at all", "not valid JSON"),
        (b'{"model_type": "llama", "hidden_size": "big"}', "hidden_size must be a positive"),
        (b"{}" + b" " * (256 * 1024), "at most 256 KiB"),
    ],
    ids=["png", "garbage", "wrong-type", "over-256-KiB"],
)
def test_a_bad_upload_is_a_400_next_to_the_file_field(client, content, message):
    upload = SimpleUploadedFile("config.json", content, "application/octet-stream")
    response = client.post(URL, {"source": "config", "config_file": upload})
    assert response.status_code == 400
    html = response.content.decode()
    assert message in errors_of(html, "config_file")
    assert 'id="id_config_file"' in html


def test_a_very_large_upload_is_refused_without_reading_it_all(client):
    upload = SimpleUploadedFile("config.json", b"x" * (5 * 1024 * 1024), "application/json")
    response = client.post(URL, {"source": "config", "config_file": upload})
    assert response.status_code == 400
    assert "5,120 KiB" in errors_of(response.content.decode(), "config_file")


def test_an_unknown_source_is_an_error_not_a_guess(client):
    response = client.get(URL, {"source": "telepathy", "model": "llama-3.1-8b"})
    assert response.status_code == 400
    assert "Choose a bundled model" in response.content.decode()


# htmx ---------------------------------------------------------------------------------------


def test_an_htmx_request_gets_only_the_partial_and_the_url_to_push(client):
    response = client.get(
        URL, {"model": "llama-3.1-70b", "task": "inference"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and 'class="topbar"' not in html and "<h1>" not in html
    assert '<section id="results"' in html
    assert 'class="chart memory-chart"' in html and 'class="chart cost-chart"' in html
    # The form comes along out of band, to clear errors from an earlier try.
    assert 'id="sizing-form"' in html and 'hx-swap-oob="true"' in html
    assert response["HX-Push-Url"] == "/size/?model=llama-3.1-70b"
    assert "HX-Request" in response["Vary"]


def test_an_htmx_post_of_a_config_does_not_push_a_url(client):
    config = (MODELS_DIR / "qwen2.5-7b.json").read_text()
    response = client.post(URL, {"source": "config", "config": config}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Push-Url"] == "false"


def test_an_invalid_htmx_request_is_a_422_partial_with_the_errors(client):
    response = client.get(URL, {"model": "nope"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    html = response.content.decode()
    assert "<html" not in html
    assert "is not a bundled model" in errors_of(html, "model")
    assert response["HX-Push-Url"] == "false"


def test_an_htmx_history_restore_gets_the_whole_page(client):
    response = client.get(
        URL,
        {"model": "llama-3.1-8b"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_HISTORY_RESTORE_REQUEST="true",
    )
    assert response.status_code == 200
    assert "<html" in response.content.decode()


# advisor/charts/ -----------------------------------------------------------------------------


def bar(label: str, weights: float, usable: float, fits: bool = True) -> charts.MemoryBar:
    return charts.MemoryBar(
        label=label,
        components={"weights": weights, "kv_cache": 2.0, "runtime_overhead": 0.75},
        usable_gib=usable,
        fits=fits,
    )


def test_the_memory_chart_is_valid_svg_with_a_bar_per_candidate_and_a_legend():
    svg = charts.memory_chart(
        [bar("H100 SXM ×2", 65.0, 79.2), bar("H100 SXM ×1", 131.0, 79.2, fits=False)]
    )
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}title").text == "Memory per GPU"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {"Weights", "KV cache", "Runtime overhead", "usable memory per GPU"} <= set(texts)
    assert "Gradients" not in texts  # only the components present
    assert "67.8 of 79.2 GiB" in texts and "133.8 of 79.2 GiB" in texts
    assert "Does not fit" in texts
    assert "GiB per GPU" in texts
    bars = [g for g in root.iter(f"{SVG}g") if (g.get("class") or "").startswith("bar")]
    assert [g.get("class") for g in bars] == ["bar", "bar rejected"]
    assert "style" not in svg


def test_the_scatter_is_valid_svg_with_axes_labels_and_dots():
    points = [
        charts.Point("A ×1", 10.0, 20.0, recommended=True),
        charts.Point("B ×2", 40.0, 25.0),
        charts.Point("C ×4", 35.0, 60.0),
    ]
    svg = charts.scatter_chart(
        points,
        x_label="tokens/s",
        y_label="$ per million tokens",
        higher_x_is_better=True,
        title="Cost against speed",
        y_format=lambda v: f"${v:g}",
    )
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "tokens/s" in texts and "$ per million tokens" in texts
    assert {"A ×1", "B ×2", "C ×4"} <= set(texts)
    assert "$0" in texts  # linear axis from zero: these values span less than a decade
    dots = [g for g in root.iter(f"{SVG}g") if g.get("class") in {"point", "point frontier"}]
    assert len(dots) == 3
    assert root.find(f".//{SVG}polyline") is not None


def test_the_pareto_frontier_is_the_cheapest_for_its_speed():
    fast_dear = charts.Point("fast, dear", 100.0, 50.0)
    mid = charts.Point("mid", 50.0, 20.0)
    dominated = charts.Point("slower and dearer than mid", 40.0, 30.0)
    slow_cheap = charts.Point("slow, cheap", 10.0, 5.0)
    tie_slower = charts.Point("as cheap as mid, slower", 45.0, 20.0)
    points = [dominated, fast_dear, slow_cheap, mid, tie_slower]
    assert charts.pareto_frontier(points, higher_x_is_better=True) == [slow_cheap, mid, fast_dear]
    # Training: x is hours, so less is better.
    quick = charts.Point("quick", 2.0, 90.0)
    slow = charts.Point("slow", 20.0, 40.0)
    worse = charts.Point("slower and dearer", 30.0, 95.0)
    same_cost_slower = charts.Point("as cheap as slow, slower", 40.0, 40.0)
    nan = charts.Point("nan", math.nan, 1.0)
    assert charts.pareto_frontier(
        [worse, slow, quick, same_cost_slower, nan], higher_x_is_better=False
    ) == [quick, slow]


def test_frontier_points_are_joined_in_order_in_the_svg():
    points = [charts.Point("a", 1.0, 10.0), charts.Point("b", 2.0, 5.0), charts.Point("c", 3, 9)]
    svg = charts.scatter_chart(
        points, x_label="h", y_label="$", higher_x_is_better=False, title="t"
    )
    polyline = ET.fromstring(svg).find(f".//{SVG}polyline")
    xs = [float(pair.split(",")[0]) for pair in polyline.get("points").split()]
    assert len(xs) == 2 and xs == sorted(xs)  # a and b; c is slower and dearer than b


def test_every_text_in_the_svg_is_escaped():
    nasty = "<script>alert(\"x\")</script> & 'q'"
    memory = charts.memory_chart([bar(nasty, 10.0, 20.0)], title=nasty)
    scatter = charts.scatter_chart(
        [charts.Point(nasty, 1.0, 1.0, note=nasty), charts.Point("b", 2.0, 0.5)],
        x_label=nasty,
        y_label=nasty,
        higher_x_is_better=True,
        title=nasty,
    )
    for svg in (memory, scatter):
        assert "<script" not in svg
        root = ET.fromstring(svg)  # still well-formed, and the text reads back unchanged
        assert root.find(f"{SVG}title").text == nasty
        assert sum(nasty in (element.text or "") for element in root.iter()) >= 2
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;q&#x27;" in scatter


def test_the_sizing_charts_are_coloured_only_by_app_css_classes():
    """Fails before H6: both charts carried hex colours from Python as presentation
    attributes, and were plain strings."""
    memory = charts.memory_chart([bar(HOSTILE, 10.0, 20.0), bar("B ×1", 30.0, 20.0, fits=False)])
    scatter = charts.scatter_chart(
        [charts.Point(HOSTILE, 1.0, 1.0, recommended=True), charts.Point("b", 2.0, 0.5)],
        x_label="x",
        y_label="y",
        higher_x_is_better=True,
        title="t",
    )
    root = assert_chart_markup(memory)
    assert_chart_markup(scatter)
    # Each legend swatch carries the class of the bar segments it names.
    legend = root.find(f"{SVG}g[@class='legend']")
    swatches = [rect.get("class") for rect in legend.iter(f"{SVG}rect")]
    assert swatches == ["part-weights", "part-kv-cache", "part-runtime-overhead"]
    segments = {
        rect.get("class")
        for g in root.iter(f"{SVG}g")
        if g.get("class", "").startswith("bar")
        for rect in g.iter(f"{SVG}rect")
    }
    assert segments == set(swatches)
    empty = charts.scatter_chart(
        [], x_label="x", y_label="y", higher_x_is_better=True, title="t", empty_message=HOSTILE
    )
    assert_chart_markup(empty)


def test_axes_go_logarithmic_when_values_span_decades():
    points = [charts.Point(f"p{i}", 10.0**i, 1.0 + i) for i in range(4)]  # 1 to 1,000
    svg = charts.scatter_chart(
        points, x_label="tokens/s", y_label="$", higher_x_is_better=True, title="t"
    )
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert "tokens/s (log scale)" in texts
    assert {"1", "10", "100", "1,000"} <= set(texts)
    assert charts.Axis.fit([2.0, 3.0, 9.0]).log is False
    assert charts.Axis.fit([2.0, 3.0, 90.0]).log is True


def test_an_empty_scatter_says_so():
    svg = charts.scatter_chart(
        [], x_label="x", y_label="y", higher_x_is_better=True, title="t", empty_message="None."
    )
    assert "None." in [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]


def test_numbers_are_formatted_for_people():
    assert charts.format_number(0) == "0"
    assert charts.format_number(0.05) == "0.05"
    assert charts.format_number(29.63) == "29.6"
    assert charts.format_number(1500) == "1,500"
    assert charts.format_number(169.83) == "170"
    assert charts.linear_ticks(73) == [0, 20, 40, 60, 80]
    assert charts.log_ticks(3, 450) == [2, 5, 10, 20, 50, 100, 200, 500]


def test_the_report_json_is_what_the_page_shows(client):
    """The page renders the API's report: same recommendation as POST /api/v1/advice/sizing."""
    api = client.post(
        "/api/v1/advice/sizing",
        json.dumps({"model": "llama-3.1-70b", "task": "inference"}),
        content_type="application/json",
    ).json()
    best = api["recommendation"]
    html = client.get(URL, {"model": "llama-3.1-70b"}).content.decode()
    headline = re.search(r'<p class="headline">(.*?)</p>', html, re.S).group(1)
    assert headline.startswith(f"{best['gpu_count']}× {best['gpu_name']} on ")
    assert f"{best['memory_per_gpu_gib']:.1f} of {best['usable_per_gpu_gib']:.1f} GiB" in headline


def test_the_answer_says_a_quantised_checkpoint_is_sized_as_stored(client):
    """The summary said "bf16 weights" for gpt-oss while the sizing used its MXFP4 experts."""
    as_stored = client.get("/size/", {"model": "gpt-oss-20b"}).content.decode()
    chosen = client.get("/size/", {"model": "gpt-oss-20b", "weight_dtype": "bf16"})
    assert "weights as stored (mxfp4)" in as_stored
    assert "bf16 weights" in chosen.content.decode()
