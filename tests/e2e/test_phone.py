"""Every app page on a phone (390 x 844, issue 24): nothing scrolls sideways, the navigation is
a menu that opens, and signing in is reachable without scrolling."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from accounts.models import Membership, Team
from catalog.services import catalog_load_bundled
from tests.helpers import PASSWORD, sign_in

PHONE = {"width": 390, "height": 844}
PLAN_ANSWER = (
    "/plan/?model=llama-3.1-8b&requests_per_second=40&prompt_tokens=2000&output_tokens=300"
    "&ttft_p95_ms=500&hourly_requests_per_second=5,4,3,3,3,4,8,15,25,32,36,40,40,38,36,35,33,30,"
    "26,22,18,14,10,7"
)
SIGNED_OUT_PAGES = (
    "/",
    "/gpus/H100-SXM/",
    "/offers/",
    "/offers/?gpu=H100-SXM",
    "/gpus/compare/?gpu=H100-SXM&gpu=MI300X&gpu=H200-SXM&gpu=B200-SXM",
    "/size/",
    "/size/?model=llama-3.1-8b&task=inference",
    "/size/?model=llama-3.1-70b&task=lora",
    "/plan/",
    PLAN_ANSWER,
    "/portability/",
    "/account/login/",
)
SIGNED_IN_PAGES = (
    *SIGNED_OUT_PAGES[:-1],
    "/jobs/",
    "/jobs/new/",
    "/jobs/new/code/",
    "/account/tokens/",
    "/account/password_change/",
)


@pytest.fixture
def site(live_server, transactional_db) -> str:
    catalog_load_bundled()
    team = Team.objects.create(name="Alpha", slug="alpha")
    user = get_user_model().objects.create_user("ada", password=PASSWORD)
    Membership.objects.create(team=team, user=user, role=Membership.Role.ADMIN)
    return live_server.url


@pytest.fixture
def phone(page: Page) -> Page:
    page.set_viewport_size(PHONE)
    return page


# The elements that reach past the screen's right edge, outermost first, for the failure message.
_WIDE_ELEMENTS = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  const clipped = (element) => {
    for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (["auto", "scroll", "hidden", "clip"].includes(overflow)) return true;
    }
    return false;
  };
  for (const element of document.body.querySelectorAll("*")) {
    if (clipped(element)) continue;
    const right = element.getBoundingClientRect().right;
    if (right > width + 1 && !wide.some((outer) => outer.contains(element))) {
      const name = element.tagName.toLowerCase() + (element.id ? "#" + element.id : "")
        + (element.className && typeof element.className === "string"
           ? "." + element.className.trim().split(/\\s+/).join(".") : "");
      wide.push(element);
      wide[name] = Math.round(right - width);
    }
  }
  return Object.fromEntries(Object.entries(wide).filter(([key]) => isNaN(key)));
}"""


def _sideways_overflow(page: Page) -> int | dict:
    """0 when the page fits the screen, else how far each outermost wide element reaches."""
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    return page.evaluate(_WIDE_ELEMENTS) if overflow > 0 else 0


def _wide_pages(page: Page, site: str, paths: tuple[str, ...]) -> dict:
    """Each page that scrolls sideways, with the elements that reach past the screen."""
    wide = {}
    for path in paths:
        response = page.goto(f"{site}{path}")
        assert response.status == 200, path
        overflow = _sideways_overflow(page)
        if overflow:
            wide[path] = overflow
    return wide


def test_no_page_scrolls_sideways_on_a_phone_signed_out(phone: Page, site: str):
    assert _wide_pages(phone, site, SIGNED_OUT_PAGES) == {}


def test_no_page_scrolls_sideways_on_a_phone_signed_in(phone: Page, site: str):
    sign_in(phone, site)
    assert _wide_pages(phone, site, SIGNED_IN_PAGES) == {}


def test_the_navigation_is_a_menu_on_a_phone_and_a_bar_on_a_desktop(page: Page, site: str):
    page.set_viewport_size(PHONE)
    page.goto(f"{site}/size/")
    sign_in_link = page.get_by_role("link", name="Sign in", exact=True)
    expect(sign_in_link).to_be_hidden()
    page.get_by_role("button", name="Menu").click()
    expect(sign_in_link).to_be_visible()
    box = sign_in_link.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"]
    expect(page.get_by_role("link", name="Offers")).to_be_visible()

    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{site}/size/")
    expect(page.get_by_role("button", name="Menu")).to_be_hidden()
    expect(page.get_by_role("link", name="Sign in", exact=True)).to_be_visible()


def test_a_shared_answer_opens_on_the_answer_with_the_inputs_folded_above(phone: Page, site: str):
    phone.goto(f"{site}/size/?model=llama-3.1-8b&task=inference")
    headline = phone.locator(".recommendation .headline")
    expect(headline).to_be_visible()
    assert headline.bounding_box()["y"] < PHONE["height"]  # on the first screen, no scrolling
    expect(phone.get_by_label("Task")).to_be_hidden()
    phone.get_by_text("Change inputs").click()
    expect(phone.get_by_label("Task")).to_be_visible()
    expect(phone.get_by_label("Task")).to_have_value("inference")


# The smallest chart text (11 px in the chart's own units) as the screen draws it.
_SMALLEST_CHART_TEXT_PX = """(selector) => Math.min(...[...document.querySelectorAll(selector)]
  .filter((svg) => svg.getBoundingClientRect().width > 0)
  .flatMap((svg) => [...svg.querySelectorAll("text")])
  .map((text) => text.getBoundingClientRect().height)
  .filter((height) => height > 0))"""


@pytest.mark.parametrize("task", ["inference", "lora"])
def test_the_sizing_charts_keep_their_text_legible_on_a_phone(phone: Page, site: str, task):
    phone.goto(f"{site}/size/?model=llama-3.1-8b&task={task}")
    for chart in ("memory-chart", "cost-chart"):
        expect(phone.locator(f".chart-phone svg.{chart}")).to_be_visible()
        expect(phone.locator(f".chart-wide svg.{chart}")).to_be_hidden()
        smallest = phone.evaluate(_SMALLEST_CHART_TEXT_PX, f"svg.{chart}")
        assert smallest >= 10, (chart, smallest)  # the wide chart drawn at 390 px gives ~6


def test_the_plan_charts_keep_their_text_legible_on_a_phone(phone: Page, site: str):
    phone.goto(f"{site}{PLAN_ANSWER}")
    expect(phone.locator("#plan-headline")).to_be_visible()
    for chart in ("schedule-chart", "cost-chart"):
        expect(phone.locator(f".chart-phone svg.{chart}")).to_be_visible()
        expect(phone.locator(f".chart-wide svg.{chart}")).to_be_hidden()
        smallest = phone.evaluate(_SMALLEST_CHART_TEXT_PX, f"svg.{chart}")
        assert smallest >= 10, (chart, smallest)
