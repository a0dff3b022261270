from decimal import ROUND_HALF_UP, Decimal

from django import template
from django.http import HttpRequest
from django.utils.html import format_html

register = template.Library()


@register.simple_tag(takes_context=True)
def sort_header(context: template.Context, field: str, label: str) -> str:
    """A column header that sorts by `field`, toggling direction, keeping the other filters."""
    request: HttpRequest = context["request"]
    current = request.GET.get("ordering", "")
    query = request.GET.copy()
    query.pop("page", None)
    if current == field:
        query["ordering"], arrow, state = f"-{field}", " ▲", "ascending"
    elif current == f"-{field}":
        query["ordering"], arrow, state = field, " ▼", "descending"
    else:
        query["ordering"], arrow, state = field, "", "none"
    return format_html(
        '<a href="?{}" class="sort" aria-sort="{}">{}{}</a>', query.urlencode(), state, label, arrow
    )


@register.filter
def usd(value: float | Decimal | None, digits: int = 2) -> str:
    """Dollars, rounded half-up the same way whether the value is a Decimal or a float."""
    if value is None:
        return "—"
    rounded = Decimal(str(value)).quantize(Decimal(10) ** -digits, rounding=ROUND_HALF_UP)
    return f"${rounded:,}"


@register.filter
def number(value: object) -> str:
    """A spec figure without trailing zeros; a dash where the datasheet gives none."""
    if value is None or value == "":
        return "—"
    text = f"{value:,f}" if not isinstance(value, int) else f"{value:,}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@register.filter
def get_item(mapping, key: str):
    """A query-dict value in a template: `request.GET|get_item:"field"`."""
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def get_list(mapping, key: str) -> list:
    return mapping.getlist(key) if hasattr(mapping, "getlist") else []
