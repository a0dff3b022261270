"""Signing in, creating and revoking an API token; and no page breaks its own CSP."""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from accounts.models import ApiToken, Membership, Team
from catalog.services import catalog_load_bundled
from tests.helpers import PASSWORD, sign_in


@pytest.fixture
def site(live_server, transactional_db) -> str:
    catalog_load_bundled()
    team = Team.objects.create(name="Alpha", slug="alpha")
    user = get_user_model().objects.create_user(
        "ada", password=PASSWORD, is_staff=True, is_superuser=True
    )
    Membership.objects.create(team=team, user=user, role=Membership.Role.ADMIN)
    return live_server.url


def test_sign_in_create_a_token_once_and_revoke_it(page: Page, site: str):
    sign_in(page, site)
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    page.get_by_label("Name").fill("CI pipeline")
    page.get_by_role("button", name="Create token").click()

    secret = page.locator("#new-token-secret").inner_text()
    assert secret.startswith("gpua_")
    # A ready curl line for the new token, and buttons that copy each.
    curl = page.locator("#new-token-curl").inner_text()
    assert curl.startswith(f'curl -H "Authorization: Token {secret}" http')
    assert curl.endswith("/api/v1/gpus/")
    expect(page.get_by_role("button", name="Copy token")).to_be_visible()
    expect(page.get_by_role("button", name="Copy curl line")).to_be_visible()
    expect(page.locator("#token-table")).to_contain_text("CI pipeline")

    page.goto(f"{site}/account/tokens/")  # shown once: not on the next visit
    expect(page.locator(".secret")).to_have_count(0)
    assert secret not in page.content()

    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Token 'CI pipeline' revoked.")).to_be_visible()
    assert not ApiToken.objects.exists()


def test_pages_load_no_script_or_style_their_csp_refuses(page: Page, site: str):
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    sign_in(page, site)
    for path in [
        "/",
        "/gpus/H100-SXM/",
        "/offers/?gpu=H100-SXM",
        "/account/tokens/",
        "/account/password_change/",
        "/admin/",
        "/admin/catalog/offer/",
    ]:
        response = page.goto(f"{site}{path}")
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"]
    page.goto(f"{site}/api/docs/")
    expect(page.locator(".swagger-ui")).to_be_visible()
    expect(page.get_by_text(re.compile("/api/v1/offers/")).first).to_be_visible()
    assert violations == []
