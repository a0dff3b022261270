"""The sizing and plan pages' charts as inline SVG: this package computes the geometry (small
dataclasses of coordinates), the templates charts/memory.svg and charts/scatter.svg draw it
(auto-escaped), and app.css colours it by class (the page's Content Security Policy refuses
inline `style`).

What lives here: geometry.py (coordinates, text boxes, the drawn primitives), axes.py (scales,
ticks, axis numbers), memory.py (the memory chart), scatter.py (the cost scatter chart),
points.py (its points, Pareto frontier and label placement) and schedule.py (a capacity plan's
replicas per hour). Callers import from this package, not its modules. It may import Django's
template loader and nothing else of the app: what to draw arrives as plain values
(advisor/presenters.py and advisor/plan_presenter.py turn reports into them).
"""

from advisor.charts.axes import Axis, format_number, linear_ticks, log_ticks, nice_step
from advisor.charts.memory import MEMORY_COMPONENTS, MemoryBar, memory_chart
from advisor.charts.points import Point, pareto_frontier
from advisor.charts.scatter import scatter_chart
from advisor.charts.schedule import schedule_chart

__all__ = [
    "MEMORY_COMPONENTS",
    "Axis",
    "MemoryBar",
    "Point",
    "format_number",
    "linear_ticks",
    "log_ticks",
    "memory_chart",
    "nice_step",
    "pareto_frontier",
    "scatter_chart",
    "schedule_chart",
]
