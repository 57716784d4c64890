"""A plan's before → after per broker, as inline SVG bar charts (the plan page of the Airflow UI):
disk bytes against capacity for a load-aware plan, replicas and leaders for every plan. Input: the
`brokers` rows of `Plan.to_document()`, so a stored plan is charted without re-planning."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_ops.report import svg
from kafka_ops.report.charts import BLUE, GREY, ORANGE, unit_of_bytes

Row = Mapping[str, Any]


def plan_charts(brokers: Sequence[Row]) -> list[tuple[str, str]]:
    """(caption, svg) per chart; none without brokers."""
    if not brokers:
        return []
    names = [f"broker {b['broker_id']}" + ("" if b.get("registered", True) else " (down)") for b in brokers]
    out = []
    if any(b.get("disk_bytes_before") is not None for b in brokers):
        out.append(_disk(names, brokers))
    for what in ("replicas", "leaders"):
        series = [
            svg.BarSeries(f"{what} before", tuple(float(b[f"{what}_before"]) for b in brokers), GREY),
            svg.BarSeries(f"{what} after", tuple(float(b[f"{what}_after"]) for b in brokers), BLUE),
        ]
        drawing = svg.bar_chart(names, series, label=f"{what.capitalize()} per broker", y_label=what)
        out.append((f"{what.capitalize()} per broker before (grey) and after (blue) the plan.", drawing))
    return out


def _disk(names: list[str], brokers: Sequence[Row]) -> tuple[str, str]:
    def values(key: str) -> tuple[float | None, ...]:
        return tuple(None if b.get(key) is None else b[key] / size for b in brokers)

    top = max(
        float(b.get(k) or 0) for b in brokers for k in ("disk_bytes_before", "disk_bytes_after", "disk_capacity_bytes")
    )
    size, unit = unit_of_bytes(top)
    series = [
        svg.BarSeries("capacity", values("disk_capacity_bytes"), GREY, "outline"),
        svg.BarSeries("before", values("disk_bytes_before"), ORANGE),
        svg.BarSeries("after", values("disk_bytes_after"), BLUE),
    ]
    drawing = svg.bar_chart(names, series, label="Disk per broker, before and after the plan", y_label=unit)
    caption = "Bytes of each broker's replicas before (orange) and after (blue) the plan; outline: its disk capacity."
    return caption, drawing
