"""A person sizes a workload: fills the form, gets the ranked answer with its charts; a bad
value shows its error next to the field; an uploaded config.json is sized. No page breaks its
Content Security Policy on the way (htmx injects no inline style)."""

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from advisor.domain.sizing.bundled_models import MODELS_DIR
from catalog.services import catalog_load_bundled


@pytest.fixture
def site(live_server, transactional_db) -> str:
    catalog_load_bundled()
    return live_server.url


@pytest.fixture
def csp_violations(page: Page) -> list[str]:
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return violations


def test_size_qlora_on_llama_70b_and_read_the_answer(page: Page, site: str, csp_violations):
    page.goto(f"{site}/")
    page.get_by_role("link", name="Size a workload").click()
    expect(page.get_by_role("heading", name="Size a workload")).to_be_visible()

    page.get_by_label("Bundled model").fill("llama-3.1-70b")
    page.get_by_label("Task").select_option("qlora")
    page.get_by_label("Context length").fill("4096")
    with page.expect_request(lambda r: r.method == "POST" and "/size/" in r.url) as posted:
        page.get_by_role("button", name="Size it").click()
    assert posted.value.headers.get("hx-request") == "true"  # htmx swapped in the answer

    headline = page.locator(".recommendation .headline")
    expect(headline).to_be_visible()
    expect(headline).to_have_text(re.compile(r"^\d× .+ on .+ at \$[\d,.]+/h — .+ GiB per GPU$"))
    expect(page.get_by_role("heading", name=re.compile("Llama 3.1 70B · QLoRA"))).to_be_visible()
    expect(page.locator(".chart-wide svg.memory-chart")).to_be_visible()
    expect(page.locator(".chart-wide svg.cost-chart")).to_be_visible()
    expect(page.locator(".chart-wide svg.cost-chart polyline.frontier")).to_have_count(1)
    expect(page.locator("table.candidates tbody tr").first).to_be_visible()
    expect(page.get_by_role("heading", name="Assumptions")).to_be_visible()
    expect(page.locator("ul.assumptions li").first).to_contain_text("usable memory")

    # The answer has its own URL (htmx pushed it); opening it again gives the same answer.
    expect(page).to_have_url(re.compile(r"/size/\?model=llama-3\.1-70b&task=qlora"))
    first = headline.inner_text()
    page.reload()
    expect(page.locator(".recommendation .headline")).to_have_text(first)
    expect(page.get_by_label("Task")).to_have_value("qlora")

    # The rejected configurations are there, folded away, each with its reason.
    page.get_by_text(re.compile(r"configurations? that do not run, and why")).click()
    expect(page.locator("details.rejected table")).to_contain_text("GiB usable")
    assert csp_violations == []


def test_a_bad_value_shows_its_error_then_a_fix_clears_it(page: Page, site: str, csp_violations):
    page.goto(f"{site}/size/")
    page.get_by_label("Context length").fill("-5")
    page.get_by_role("button", name="Size it").click()
    expect(page.locator("#id_context_tokens_errors")).to_contain_text("greater than or equal to 1")
    expect(page.locator(".error-summary")).to_be_visible()
    expect(page.locator(".recommendation")).to_have_count(0)

    page.get_by_label("Context length").fill("8192")
    page.get_by_role("button", name="Size it").click()
    expect(page.locator(".recommendation .headline")).to_be_visible()
    expect(page.locator("#id_context_tokens_errors")).to_have_count(0)
    assert csp_violations == []


def test_an_uploaded_config_json_is_sized(page: Page, site: str, csp_violations):
    page.goto(f"{site}/size/")
    page.get_by_label("Bring a config.json").check()
    page.get_by_label("config.json, uploaded").set_input_files(MODELS_DIR / "mistral-7b-v0.1.json")
    page.get_by_role("button", name="Size it").click()
    expect(page.locator(".recommendation .headline")).to_be_visible()
    expect(page.locator(".summary")).to_contain_text("7,241,732,096 parameters")
    # The config now sits in the textarea, so the next question needs no second upload.
    expect(page.get_by_label("config.json, pasted")).to_have_value(re.compile('"mistral"'))
    assert csp_violations == []


def test_without_javascript_the_form_still_works(browser: Browser, site: str):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{site}/size/")
    page.get_by_label("Bundled model").fill("llama-3.1-70b")
    page.get_by_label("Task").select_option("inference")
    page.get_by_label("Concurrent users").fill("16")
    page.get_by_role("button", name="Size it").click()
    # Posted, then redirected to the answer's shareable URL.
    expect(page).to_have_url(
        re.compile(r"/size/\?model=llama-3\.1-70b&concurrent_users=16#results")
    )
    expect(page.locator(".recommendation .headline")).to_be_visible()
    expect(page.locator(".chart-wide svg.memory-chart")).to_be_visible()
    expect(page.locator(".chart-wide svg.cost-chart")).to_be_visible()
    context.close()


def test_the_form_shows_only_the_knobs_the_chosen_task_uses(page: Page, site: str):
    page.goto(f"{site}/size/")
    serving = page.locator("fieldset.serving-group")
    training = page.locator("fieldset.training-group")
    expect(serving).to_be_visible()  # inference is the default task
    expect(training).to_be_hidden()
    expect(page.get_by_text("share of each GPU's memory the server may take")).to_be_visible()

    page.get_by_label("Task").select_option("lora")
    expect(serving).to_be_hidden()
    expect(training).to_be_visible()
    expect(page.get_by_text("1 the optimizer states, 2 also the gradients")).to_be_visible()

    page.get_by_label("Task").select_option("inference")
    expect(serving).to_be_visible()
    expect(training).to_be_hidden()


def test_tick_two_configurations_and_compare_them_side_by_side(page: Page, site: str):
    page.goto(f"{site}/size/?model=llama-3.1-8b&task=inference")
    boxes = page.locator('table.candidates input[name="compare"]')
    boxes.nth(0).check()
    boxes.nth(1).check()
    page.get_by_role("button", name="Compare the ticked configurations").click()
    expect(page).to_have_url(re.compile(r"compare=.+&compare=.+#comparison$"))
    table = page.locator("table.compared")
    expect(table).to_be_visible()
    expect(table.locator("thead th")).to_have_count(3)
    expect(table.get_by_role("rowheader", name="$ per M tokens")).to_be_visible()
