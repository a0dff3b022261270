"""Staff correct an offer's price in the Django admin; the price history records who and what."""

from datetime import timedelta
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from catalog.models import Offer, PriceHistory
from catalog.services import catalog_load_bundled


class FormFields(HTMLParser):
    """The values a browser would submit from the form with the given id."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.in_form = False
        self.select_name: str | None = None
        self.textarea_name: str | None = None
        self.data: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.in_form = a.get("id") == self.form_id
        if not self.in_form or "name" not in a:
            if tag == "option" and self.select_name and "selected" in a:
                self.data[self.select_name] = a.get("value", "")
            return
        if tag == "input":
            kind = a.get("type", "text")
            if kind in ("submit", "button", "image", "reset", "file"):
                return
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            self.data[a["name"]] = a.get("value", "on" if kind == "checkbox" else "")
        elif tag == "select":
            self.select_name = a["name"]
            self.data.setdefault(a["name"], "")
        elif tag == "textarea":
            self.textarea_name = a["name"]
            self.data[a["name"]] = ""

    def handle_data(self, data: str) -> None:
        if self.textarea_name:
            self.data[self.textarea_name] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.in_form = False
        elif tag == "select":
            self.select_name = None
        elif tag == "textarea":
            self.textarea_name = None


def change_url(offer: Offer) -> str:
    return f"/admin/catalog/offer/{offer.id}/change/"


def change_form_data(client, offer: Offer) -> dict[str, str]:
    """GET the change form and return what submitting it unchanged would POST."""
    response = client.get(change_url(offer))
    assert response.status_code == 200
    parser = FormFields("offer_form")
    parser.feed(response.content.decode())
    assert "usd_per_hour" in parser.data, "the price should be the editable field"
    return {**parser.data, "_save": "Save"}


@pytest.fixture
def offer(db) -> Offer:
    catalog_load_bundled()
    # A multi-GPU offer with its feed history row, so the read-only history inline is rendered.
    offer = Offer.objects.filter(gpu_count=8, history__isnull=False).order_by("id").first()
    assert offer.history.count() == 1
    return offer


@pytest.fixture
def price_editor(db):
    """A staff member (not a superuser) allowed to edit offers and see their price history."""
    user = get_user_model().objects.create_user(username="pat", password=None, is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="catalog",
            codename__in=["view_offer", "change_offer", "view_pricehistory"],
        )
    )
    return user


@pytest.fixture
def editor_client(client, price_editor):
    client.force_login(price_editor)
    return client


def test_change_form_offers_only_the_price_and_a_reason_as_editable_fields(editor_client, offer):
    data = change_form_data(editor_client, offer)

    offer_fields = {name for name in data if not name.startswith(("history-", "csrf", "_"))}
    assert offer_fields == {"usd_per_hour", "reason"}
    assert Decimal(data["usd_per_hour"]) == offer.usd_per_hour


def test_staff_price_edit_changes_the_offer_price_and_records_who_changed_it(
    editor_client, price_editor, offer
):
    old_price = offer.usd_per_hour
    new_price = old_price + Decimal("1.250000")
    data = change_form_data(editor_client, offer)
    data["usd_per_hour"] = str(new_price)
    data["reason"] = "the provider's page lists the new price"

    before = timezone.now()
    response = editor_client.post(change_url(offer), data)
    after = timezone.now()

    assert response.status_code == 302, response.content.decode()[:2000]
    offer.refresh_from_db()
    assert offer.usd_per_hour == new_price
    assert offer.usd_per_gpu_hour == pytest.approx(float(new_price) / offer.gpu_count)
    edit = offer.history.get(source="admin edit")
    assert edit.changed_by == price_editor
    assert edit.previous_usd_per_hour == old_price
    assert edit.usd_per_hour == new_price
    assert edit.reason == "the provider's page lists the new price"
    assert before <= edit.observed_at <= after
    assert timezone.now() - edit.observed_at < timedelta(minutes=1)
    assert offer.history.count() == 2


def test_staff_price_edit_history_row_is_shown_on_the_change_form(
    editor_client, price_editor, offer
):
    data = change_form_data(editor_client, offer)
    data["usd_per_hour"] = "12.340000"
    data["reason"] = "quoted by the provider's sales team"
    editor_client.post(change_url(offer), data)

    page = editor_client.get(change_url(offer)).content.decode()

    assert "admin edit" in page
    assert price_editor.get_username() in page
    assert "quoted by the provider&#x27;s sales team" in page


def test_a_staff_price_edit_without_a_reason_is_refused_and_changes_nothing(editor_client, offer):
    old_price = offer.usd_per_hour
    data = change_form_data(editor_client, offer)
    data["usd_per_hour"] = str(old_price + Decimal("1"))

    response = editor_client.post(change_url(offer), data)

    assert response.status_code == 200
    assert "Say why the price changes" in response.content.decode()
    offer.refresh_from_db()
    assert offer.usd_per_hour == old_price
    assert not offer.history.filter(source="admin edit").exists()


@pytest.mark.parametrize("resubmitted_as", ["as rendered", "written differently"])
def test_saving_the_change_form_without_changing_the_price_writes_no_history(
    editor_client, offer, resubmitted_as
):
    old_price = offer.usd_per_hour
    history_before = list(PriceHistory.objects.values_list("id", flat=True))
    data = change_form_data(editor_client, offer)
    if resubmitted_as == "written differently":
        data["usd_per_hour"] = f"{old_price.normalize():f}"
        assert data["usd_per_hour"] != f"{old_price}"

    response = editor_client.post(change_url(offer), data)

    assert response.status_code == 302, response.content.decode()[:2000]
    offer.refresh_from_db()
    assert offer.usd_per_hour == old_price
    assert list(PriceHistory.objects.values_list("id", flat=True)) == history_before
    assert not PriceHistory.objects.filter(source="admin edit").exists()


@pytest.mark.parametrize("bad_price", ["0", "-3.5", "abc"])
def test_staff_price_edit_with_a_non_positive_or_non_numeric_price_is_rejected(
    editor_client, offer, bad_price
):
    old_price = offer.usd_per_hour
    data = change_form_data(editor_client, offer)
    data["usd_per_hour"] = bad_price
    data["reason"] = "a typo fixed"

    response = editor_client.post(change_url(offer), data)

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors and "reason" not in errors
    offer.refresh_from_db()
    assert offer.usd_per_hour == old_price
    assert not PriceHistory.objects.filter(source="admin edit").exists()


def test_staff_without_change_permission_cannot_edit_a_price(editor_client, price_editor, offer):
    old_price = offer.usd_per_hour
    data = change_form_data(editor_client, offer)
    price_editor.user_permissions.remove(Permission.objects.get(codename="change_offer"))
    data["usd_per_hour"] = str(old_price + 1)

    response = editor_client.post(change_url(offer), data)

    assert response.status_code == 403
    offer.refresh_from_db()
    assert offer.usd_per_hour == old_price
    assert not PriceHistory.objects.filter(source="admin edit").exists()
