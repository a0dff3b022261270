"""What every sizing chart is drawn from: coordinates to a tenth of a pixel, text boxes sized
without a font, and the labels, rules and rectangles the templates charts/*.svg draw."""

from dataclasses import dataclass

CHAR_WIDTH = 0.56  # average glyph width, in em, for sizing text boxes without a font

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 of a space a label must keep clear


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def coord(value: float) -> float:
    """A coordinate, to a tenth of a pixel."""
    return round(value, 1)


@dataclass
class Label:
    """A text at (x, y); `css_class` picks its colour in app.css (ink when empty)."""

    x: float
    y: float
    text: str
    css_class: str = ""
    size: float = 12
    anchor: str = "start"
    weight: str = ""  # a font-weight, when not the normal one

    def __post_init__(self) -> None:
        self.x, self.y = coord(self.x), coord(self.y)


@dataclass
class Rule:
    """A straight line from (x1, y1) to (x2, y2)."""

    x1: float
    y1: float
    x2: float
    y2: float

    def __post_init__(self) -> None:
        self.x1, self.y1, self.x2, self.y2 = map(coord, (self.x1, self.y1, self.x2, self.y2))


@dataclass(frozen=True)
class LabelledRule:
    rule: Rule
    label: Label


@dataclass
class Rect:
    x: float
    y: float
    width: float
    height: float
    css_class: str
    tooltip: str = ""

    def __post_init__(self) -> None:
        self.x, self.y, self.width = coord(self.x), coord(self.y), round(self.width, 2)


def frame(width: float, height: float, title: str, desc: str, css_class: str) -> dict:
    """What charts/_sizing_frame.svg needs: size, accessible title and description."""
    return {
        "width": coord(width),
        "height": coord(height),
        "title": title,
        "desc": desc,
        "css_class": css_class,
        # The page may hold a chart twice (wide and phone): the width keeps the ids apart.
        "ident": f"{css_class.replace(' ', '-')}-{round(width)}",
    }
