"""Two small chart shapes as self-contained inline SVG: grouped bars and lines over time.

No JavaScript, no fonts or scripts from elsewhere: the health report is opened from the lake on
machines without internet, so the SVG is the whole chart. Every bar and point carries a `<title>`
(the browser's own tooltip) with its exact value; every chart is `role="img"` with an
`aria-label`. Every text is escaped. Times are drawn in UTC.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Literal

WIDTH = 640
PLOT_HEIGHT = 200
_LEFT, _RIGHT, _TOP = 52, 12, 14
_AXIS_BELOW = 38
_LEGEND_ROW = 18
_CHAR_PX = 6.6
"""Rough width of one character at the 11-12 px sans-serif the report uses."""

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#000000")
"""Okabe-Ito: told apart by colour-blind readers too."""

BarStyle = Literal["solid", "outline"]
_TIME_STEPS = (
    timedelta(seconds=10),
    timedelta(seconds=30),
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=3),
    timedelta(hours=6),
    timedelta(hours=12),
    timedelta(days=1),
)


@dataclass(frozen=True)
class BarSeries:
    """One bar per category; `outline` draws what should be (preferred), `solid` what is."""

    name: str
    values: tuple[float | None, ...]
    color: str
    style: BarStyle = "solid"
    colors: tuple[str | None, ...] = ()
    """Per-bar colours overriding `color` (e.g. to flag one member), by category index."""


@dataclass(frozen=True)
class Band:
    """A horizontal band (or line, when low == high) across the plot, e.g. a what-if's range."""

    low: float
    high: float
    label: str
    color: str = "#009E73"


@dataclass(frozen=True)
class LineSeries:
    name: str
    points: tuple[tuple[datetime, float], ...]
    color: str


def bar_chart(
    categories: Sequence[str],
    series: Sequence[BarSeries],
    *,
    label: str,
    y_label: str,
    bands: Sequence[Band] = (),
    category_titles: Sequence[str] | None = None,
) -> str:
    """Grouped bars: one group per category, one bar per series, with a value over each bar
    that is wide enough to carry one. `category_titles` (one per category) become tooltips of the
    category labels, for names too long to print."""
    top = max([v or 0 for s in series for v in s.values] + [b.high for b in bands] + [1])
    ticks = nice_ticks(top)
    y_max = ticks[-1]
    legend, legend_height = _legend(
        [(s.name, s.color, s.style) for s in series] + [(b.label, b.color, "band") for b in bands]
    )
    height = _TOP + PLOT_HEIGHT + _AXIS_BELOW + legend_height
    plot_w = WIDTH - _LEFT - _RIGHT
    band_w = plot_w / max(len(categories), 1)
    bar_w = min(36.0, band_w * 0.8 / max(len(series), 1))
    parts = [_open(height, label), *_y_axis(ticks, y_max, y_label)]
    for b in bands:
        y1, y2 = _y(b.high, y_max), _y(b.low, y_max)
        parts.append(
            f'<rect class="band" x="{_LEFT}" y="{y1 - 1:.1f}" width="{plot_w}" height="{max(y2 - y1, 0) + 2:.1f}" '
            f'fill="{b.color}" fill-opacity="0.18" stroke="{b.color}" stroke-dasharray="4 3">'
            f"<title>{escape(b.label)}</title></rect>"
        )
    for i, category in enumerate(categories):
        group_x = _LEFT + band_w * i + (band_w - bar_w * len(series)) / 2
        for j, s in enumerate(series):
            value = s.values[i] if i < len(s.values) else None
            if value is None:
                continue
            x, y = group_x + bar_w * j, _y(value, y_max)
            h = _TOP + PLOT_HEIGHT - y
            color = (s.colors[i] if i < len(s.colors) else None) or s.color
            fill = color if s.style == "solid" else "#ffffff"
            tip = escape(f"{category}: {s.name} {_number(value)}")
            parts.append(
                f'<rect class="bar" x="{x + 1:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
                f'fill="{fill}" stroke="{color}" stroke-width="1.5"><title>{tip}</title></rect>'
            )
            if bar_w >= 14:
                parts.append(
                    f'<text class="value" x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle">'
                    f"{escape(_number(value))}</text>"
                )
        cx = _LEFT + band_w * (i + 0.5)
        text = _fit(category, band_w)
        title = category_titles[i] if category_titles is not None and i < len(category_titles) else category
        parts.append(
            f'<text class="tick" x="{cx:.1f}" y="{_TOP + PLOT_HEIGHT + 16}" text-anchor="middle">'
            f"<title>{escape(title)}</title>{escape(text)}</text>"
        )
    parts += [_baseline(), _place(legend, height - legend_height), "</svg>"]
    return "".join(parts)


def line_chart(
    series: Sequence[LineSeries],
    *,
    label: str,
    y_label: str,
    start: datetime,
    end: datetime,
    step: bool = False,
) -> str:
    """Lines over time from `start` to `end`, a dot per observation. `step` holds each value until
    the next observation (a count per snapshot is true until the next snapshot says otherwise)."""
    start, end = start.astimezone(UTC), end.astimezone(UTC)
    top = max([v for s in series for _, v in s.points] + [1])
    ticks = nice_ticks(top)
    y_max = ticks[-1]
    span = max((end - start).total_seconds(), 1.0)
    plot_w = WIDTH - _LEFT - _RIGHT

    def x_of(at: datetime) -> float:
        return _LEFT + plot_w * min(max((at - start).total_seconds() / span, 0.0), 1.0)

    legend, legend_height = _legend([(s.name, s.color, "line") for s in series])
    height = _TOP + PLOT_HEIGHT + _AXIS_BELOW + legend_height
    parts = [_open(height, label), *_y_axis(ticks, y_max, y_label), *_time_axis(start, end, x_of)]
    for s in series:
        points = sorted(s.points)
        coords = [(x_of(at), _y(v, y_max)) for at, v in points]
        if step:
            path = []
            for k, (x, y) in enumerate(coords):
                if k:
                    path.append(f"{x:.1f},{coords[k - 1][1]:.1f}")
                path.append(f"{x:.1f},{y:.1f}")
        else:
            path = [f"{x:.1f},{y:.1f}" for x, y in coords]
        if len(coords) > 1:
            parts.append(
                f'<polyline class="line" fill="none" stroke="{s.color}" stroke-width="2" points="{" ".join(path)}">'
                f"<title>{escape(s.name)}</title></polyline>"
            )
        radius = 2.5 if len(coords) <= 120 else 1.5
        for (at, v), (x, y) in zip(points, coords, strict=True):
            tip = escape(f"{s.name}: {_number(v)} at {at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC")
            parts.append(
                f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{s.color}">'
                f"<title>{tip}</title></circle>"
            )
    parts += [_baseline(), _place(legend, height - legend_height), "</svg>"]
    return "".join(parts)


def nice_ticks(top: float, most: int = 5) -> list[float]:
    """0, then round steps (1, 2 or 5 × 10^k, at least 1) up to the first tick >= `top`."""
    top = max(top, 1.0)
    raw = top / most
    magnitude = 10 ** math.floor(math.log10(raw))
    step = max(1.0, next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw))
    count = math.ceil(top / step - 1e-9)
    return [step * k for k in range(count + 1)]


def time_ticks(start: datetime, end: datetime, most: int = 8) -> list[datetime]:
    """Round UTC times (every 10 s ... 1 day) inside [start, end], at most `most` of them."""
    span = end - start
    step = next((s for s in _TIME_STEPS if span / s <= most), _TIME_STEPS[-1])
    seconds = step.total_seconds()
    first = datetime.fromtimestamp(math.ceil(start.timestamp() / seconds) * seconds, tz=UTC)
    out = []
    at = first
    while at <= end:
        out.append(at)
        at += step
    return out


def _open(height: float, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {height:.0f}" '
        f'role="img" aria-label="{escape(label, quote=True)}"><title>{escape(label)}</title>'
    )


def _y(value: float, y_max: float) -> float:
    return _TOP + PLOT_HEIGHT * (1 - min(max(value, 0.0), y_max) / y_max)


def _y_axis(ticks: list[float], y_max: float, y_label: str) -> list[str]:
    parts = []
    for t in ticks:
        y = _y(t, y_max)
        parts.append(f'<line class="grid" x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="tick" x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_compact(t)}</text>')
    middle = _TOP + PLOT_HEIGHT / 2
    parts.append(
        f'<text class="axis" transform="translate(12 {middle:.0f}) rotate(-90)" text-anchor="middle">'
        f"{escape(y_label)}</text>"
    )
    return parts


def _time_axis(start: datetime, end: datetime, x_of: Callable[[datetime], float]) -> list[str]:
    parts = []
    ticks = time_ticks(start, end)
    fine = len(ticks) > 1 and ticks[1] - ticks[0] < timedelta(minutes=1)
    for at in ticks:
        x = x_of(at)
        if fine:
            text = f"{at:%H:%M:%S}"
        elif (at.hour, at.minute) == (0, 0) and end - start >= timedelta(hours=12):
            text = f"{at:%m-%d}"
        else:
            text = f"{at:%H:%M}"
        # a label centred on a tick at the plot's edge would be cut off by the drawing's border
        half = len(text) * _CHAR_PX / 2
        anchor = "end" if x + half > WIDTH else "start" if x - half < 0 else "middle"
        parts.append(
            f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{_TOP + PLOT_HEIGHT}"/>'
            f'<text class="tick" x="{x:.1f}" y="{_TOP + PLOT_HEIGHT + 16}" text-anchor="{anchor}">{escape(text)}</text>'
        )
    parts.append(
        f'<text class="axis" x="{WIDTH - _RIGHT}" y="{_TOP + PLOT_HEIGHT + 32}" text-anchor="end">'
        f"{escape(f'{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} UTC')}</text>"
    )
    return parts


def _baseline() -> str:
    y = _TOP + PLOT_HEIGHT
    return f'<line class="baseline" x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y}" y2="{y}"/>'


def _legend(items: list[tuple[str, str, str]]) -> tuple[list[tuple[float, float, str]], int]:
    """Legend entries laid out left to right, wrapping; returns (x, row, svg) and the height."""
    placed: list[tuple[float, float, str]] = []
    x, row = float(_LEFT), 0
    for name, color, kind in items:
        text = _fit(name, 260)
        width = 22 + len(text) * _CHAR_PX + 16
        if x + width > WIDTH - _RIGHT and x > _LEFT:
            x, row = float(_LEFT), row + 1
        if kind == "line":
            swatch = f'<line x1="0" x2="16" y1="-4" y2="-4" stroke="{color}" stroke-width="3"/>'
        elif kind == "band":
            swatch = (
                f'<rect x="0" y="-10" width="16" height="10" fill="{color}" fill-opacity="0.18" '
                f'stroke="{color}" stroke-dasharray="3 2"/>'
            )
        else:
            fill = color if kind == "solid" else "#ffffff"
            swatch = f'<rect x="0" y="-10" width="16" height="10" fill="{fill}" stroke="{color}" stroke-width="1.5"/>'
        placed.append((x, row, f'{swatch}<text class="legend" x="22" y="0">{escape(text)}</text>'))
        x += width
    rows = (row + 1) if items else 0
    return placed, rows * _LEGEND_ROW + (4 if items else 0)


def _place(legend: list[tuple[float, float, str]], y0: float) -> str:
    return "".join(
        f'<g class="legend-item" transform="translate({x:.0f} {y0 + 14 + row * _LEGEND_ROW:.0f})">{svg}</g>'
        for x, row, svg in legend
    )


def _fit(text: str, width_px: float) -> str:
    most = max(int(width_px / _CHAR_PX) - 1, 3)
    return text if len(text) <= most else text[: most - 1] + "…"


def _compact(value: float) -> str:
    """Axis labels: 950, 1.5k, 20k, 3M (the exact values are in the tooltips)."""
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.1f}".removesuffix(".0") + suffix
    return _number(value)


def _number(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.1f}"
