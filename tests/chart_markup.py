"""What every chart's markup must be (catalog, jobs and advisor charts alike): a SafeString of
well-formed SVG with its text auto-escaped, no inline style (the pages' CSP refuses it), and
colour only through classes static/css/app.css defines."""

import re
import xml.etree.ElementTree as ET

from django.conf import settings
from django.utils.safestring import SafeString

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(\"x\")</script> & 'q'"
APP_CSS = (settings.BASE_DIR / "static" / "css" / "app.css").read_text()
PAINTED = {"text", "rect", "circle", "line", "path", "polyline"}


def assert_chart_markup(svg: str, *, hostile: str = HOSTILE) -> ET.Element:
    """Checks `svg`, drawn with `hostile` as some of its text, and returns its parsed root."""
    assert isinstance(svg, SafeString)  # templates may show it as {{ chart }} or {{ chart|safe }}
    assert "<script" not in svg
    assert "style=" not in svg and "<style" not in svg
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b", svg), "a colour in the markup, not in app.css"
    root = ET.fromstring(svg)  # well-formed, so the escaped text reads back unchanged
    assert root.tag == f"{SVG}svg" and "chart" in root.get("class").split()
    assert any(hostile in (element.text or "") for element in root.iter())
    for element in root.iter():
        tag = element.tag.removeprefix(SVG)
        assert element.get("fill") in (None, "none") and element.get("stroke") is None, tag
        if tag not in PAINTED:
            continue
        classes = (element.get("class") or "").split()
        assert classes or tag == "text", f"an uncoloured <{tag}>"  # text defaults to ink
        for name in classes:
            assert re.search(rf"\.{re.escape(name)}(?![\w-])", APP_CSS), f".{name} not in app.css"
    return root
