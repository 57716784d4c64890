"""The report's charts, each answering one question an on-call engineer asks, as inline SVG.

A chart whose input is missing is not drawn: `Chart.empty` says why (the page shows that sentence
where the chart would be). A chart whose input is there but shows nothing wrong is still drawn,
because a flat line at zero is an answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from kafka_ops.report import svg
from kafka_ops.report.model import (
    BrokerDisk,
    BrokerLoad,
    BrokerShrinks,
    GroupLag,
    Part,
    Point,
    ReportData,
    SkewedGroup,
)

BLUE, ORANGE, GREEN, VERMILLION, GREY = svg.PALETTE[0], svg.PALETTE[1], svg.PALETTE[2], svg.PALETTE[5], svg.PALETTE[6]
_MIN_SPAN = timedelta(minutes=1)
_MOST_DAYS = 90.0
"""Days to full are drawn up to this many: a broker that fills in years would flatten the others."""
_BYTES = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B"))
_SEVERITY_COLOR = {"critical": VERMILLION, "warning": ORANGE}


@dataclass(frozen=True)
class Panel:
    svg: str
    caption: str | None = None
    heading: str | None = None


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    question: str
    """What the chart answers, in the words of someone on call."""
    source: str
    """The lake tables it is drawn from."""
    panels: tuple[Panel, ...] = ()
    empty: str | None = None
    """Why nothing is drawn (missing input, or nothing of the kind to show)."""


def charts(data: ReportData) -> list[Chart]:
    end = data.snapshot.captured_at if data.snapshot else None
    group_end = data.groups.captured_at if data.groups else None
    return [
        leaders_and_replicas(data.brokers),
        under_replicated(data.under_replicated, data.offline, end, data.window),
        isr_shrinks(data.shrinks),
        group_lag(data.lag, group_end, data.window),
        skewed_members(data.skewed),
        disk_used(data.disks),
        days_to_full(data.disks),
        broker_traffic(data.disks),
    ]


def leaders_and_replicas(part: Part[BrokerLoad]) -> Chart:
    """Per broker, the partitions it should lead (preferred: first replica) next to those it leads,
    and the replicas it holds next to those in sync. A gap between an outlined bar and its solid
    twin is work for a preferred-leader election (leaders) or a broker to fix (replicas)."""
    chart = Chart(
        key="leaders-replicas",
        title="Leaders and replicas per broker",
        question="Does every broker lead what it should, and which broker holds replicas that are out of sync?",
        source="leader_balance_brokers, broker_attribution",
    )
    if part.missing or not part.items:
        return _empty(chart, part.missing or "no broker is registered or named in an assignment")
    brokers = part.items
    names = [f"broker {b.broker_id}" + ("" if b.registered else " (down)") for b in brokers]
    titles = [
        f"broker {b.broker_id}, rack {b.rack or 'unknown'}, {'registered' if b.registered else 'NOT registered'}"
        for b in brokers
    ]
    series = [
        svg.BarSeries("preferred leader of", tuple(b.preferred_leaders for b in brokers), BLUE, "outline"),
        svg.BarSeries("leads", tuple(b.leaders for b in brokers), BLUE),
        svg.BarSeries("replicas assigned", tuple(b.replicas for b in brokers), ORANGE, "outline"),
        svg.BarSeries("replicas in sync", tuple(b.in_sync_replicas for b in brokers), ORANGE),
    ]
    drawing = svg.bar_chart(names, series, label=chart.title, y_label="partitions", category_titles=titles)
    caption = "Outlined: what Kafka wants (preferred leaders, assigned replicas); solid: what is."
    return _with(chart, Panel(drawing, caption))


def under_replicated(under: Part[Point], offline: Part[Point], end: datetime | None, window: timedelta) -> Chart:
    """Under-replicated and offline partitions in every snapshot of the last day: when it started,
    whether it is getting better, and whether it comes and goes."""
    chart = Chart(
        key="under-replicated",
        title="Under-replicated partitions over the last day",
        question="Since when are partitions under-replicated or offline, and is it getting better?",
        source="snapshots (under_replicated_count, offline_count)",
    )
    if under.missing or end is None:
        return _empty(chart, under.missing or "no snapshot")
    lines = [svg.LineSeries("under-replicated", _pairs(under.items), ORANGE)]
    if offline.items:
        lines.append(svg.LineSeries("offline", _pairs(offline.items), VERMILLION))
    start = _start([*under.items, *offline.items], end, window)
    drawing = svg.line_chart(lines, label=chart.title, y_label="partitions", start=start, end=end, step=True)
    snapshots = len(under.items)
    caption = (
        f"{snapshots} snapshot{'s' if snapshots != 1 else ''} since {start:%Y-%m-%d %H:%M} UTC; "
        "each value holds until the next snapshot."
    )
    return _with(chart, Panel(drawing, caption))


def isr_shrinks(part: Part[BrokerShrinks]) -> Chart:
    """ISR shrinks (the broker's replica left a partition's ISR) and expands (it rejoined) per broker
    over the analysis window: a broker that keeps leaving is flaky even when it is in sync now."""
    chart = Chart(
        key="isr-shrinks",
        title="ISR shrink events per broker",
        question="Which broker keeps falling out of ISRs, even if it is back in sync now?",
        source="isr_events",
    )
    if part.missing or not part.items:
        return _empty(chart, part.missing or "no broker in the snapshot")
    names = [f"broker {b.broker_id}" for b in part.items]
    series = [
        svg.BarSeries("left an ISR (shrink)", tuple(b.shrinks for b in part.items), VERMILLION),
        svg.BarSeries("rejoined (expand)", tuple(b.expands for b in part.items), GREEN),
    ]
    drawing = svg.bar_chart(names, series, label=chart.title, y_label="partition ISR changes")
    total = sum(b.shrinks for b in part.items)
    caption = (
        "No replica left an ISR in the analysis window."
        if total == 0
        else "Counted between consecutive snapshots in the analysis window; one per partition and replica."
    )
    return _with(chart, Panel(drawing, caption))


def group_lag(part: Part[GroupLag], end: datetime | None, window: timedelta) -> Chart:
    """Summed lag (messages) of each consumer group in every collection of the last day, one line
    per group (the worst groups first): who falls behind, since when, and whether they catch up."""
    chart = Chart(
        key="group-lag",
        title="Lag per consumer group over the last day",
        question="Which consumer groups fall behind, since when, and are they catching up?",
        source="group_offsets (sum of lag per group and collection), lag_status_groups",
    )
    if part.missing or end is None:
        return _empty(chart, part.missing or "no group collection")
    if not part.items:
        return _empty(chart, "no group has a known lag in the window (no committed offsets)")
    lines = [
        svg.LineSeries(
            g.group_id + (f" ({g.status})" if g.status else ""), _pairs(g.points), svg.PALETTE[i % len(svg.PALETTE)]
        )
        for i, g in enumerate(part.items)
    ]
    start = _start([p for g in part.items for p in g.points], end, window)
    drawing = svg.line_chart(lines, label=chart.title, y_label="messages behind", start=start, end=end)
    caption = "In brackets: the group's status by Burrow's rules (OK, WARN, ERR) in the latest analysis."
    return _with(chart, Panel(drawing, caption))


def skewed_members(part: Part[SkewedGroup]) -> Chart:
    """For each skewed group: partitions per member (the overloaded in vermillion), with the band the
    recommended assignor would keep every member in, and the recommendation beside it."""
    chart = Chart(
        key="skewed-groups",
        title="Partitions per member of skewed groups",
        question="Which members of a skewed group carry too many partitions, and what would fix it?",
        source="assignor_skew_groups, assignor_skew_members, assignor_recommendations, assignor_whatif",
    )
    if part.missing:
        return _empty(chart, part.missing)
    if not part.items:
        return _empty(chart, "no consumer group is skewed: every group's members hold about as many partitions")
    return _with(chart, *(_skew_panel(g) for g in part.items))


def _skew_panel(g: SkewedGroup) -> Panel:
    names = [m.client_id or m.member_id for m in g.members]
    titles = [
        f"{m.member_id} on {m.host or 'unknown host'}, lag {m.lag if m.lag is not None else 'unknown'}"
        for m in g.members
    ]
    colors = tuple(VERMILLION if m.overloaded else None for m in g.members)
    series = [svg.BarSeries("partitions", tuple(m.partitions for m in g.members), BLUE, colors=colors)]
    bands = []
    if g.recommended and g.whatif_min is not None and g.whatif_max is not None:
        bands.append(
            svg.Band(
                g.whatif_min, g.whatif_max, f"with {g.recommended}: {_range(g.whatif_min, g.whatif_max)} per member"
            )
        )
    label = f"Partitions per member of group {g.group_id}"
    drawing = svg.bar_chart(names, series, label=label, y_label="partitions", bands=bands, category_titles=titles)
    shown = (
        "" if g.member_count <= len(g.members) else f" (the {len(g.members)} most loaded of {g.member_count} members)"
    )
    if g.recommended:
        moved = f"; {g.moved_partitions} partitions would change owner" if g.moved_partitions is not None else ""
        advice = f"Recommended: {g.recommended}{moved}. {g.reason or ''}".strip()
    else:
        advice = f"No recommendation: {g.reason}" if g.reason else "No assignor what-if for this group."
    heading = f"group {g.group_id} ({g.assignor or 'unknown assignor'}){shown}"
    cause = (g.cause or "").strip()
    if cause and not cause.endswith((".", "!", "?")):
        cause += "."
    return Panel(drawing, f"{cause} {advice}".strip(), heading)


def _pairs(points: Sequence[Point]) -> tuple[tuple[datetime, float], ...]:
    return tuple((p.at, float(p.value)) for p in points)


def _start(points: Sequence[Point], end: datetime, window: timedelta) -> datetime:
    """The x axis starts at the first observation in the window (not a day back when history is
    shorter), and spans at least a few minutes."""
    first = min((p.at for p in points), default=end)
    return min(max(first, end - window), end - _MIN_SPAN)


def _range(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def _empty(chart: Chart, why: str) -> Chart:
    return Chart(chart.key, chart.title, chart.question, chart.source, (), why)


def _with(chart: Chart, *panels: Panel) -> Chart:
    return Chart(chart.key, chart.title, chart.question, chart.source, tuple(panels), None)


def unit_of_bytes(top: float) -> tuple[float, str]:
    """The largest byte unit `top` reaches (B when it reaches none)."""
    return next(((size, name) for size, name in _BYTES if top >= size), _BYTES[-1])


def _broker_names(disks: Sequence[BrokerDisk]) -> list[str]:
    return [f"broker {d.broker_id}" + ("" if d.registered else " (down)") for d in disks]


def disk_used(part: Part[BrokerDisk]) -> Chart:
    """Per broker: the bytes its replicas take next to its disk capacity (settings, else its log dirs')."""
    chart = Chart(
        key="disk-used",
        title="Disk used and capacity per broker",
        question="Which broker's disk is fullest, and how much room is left?",
        source="broker_load",
    )
    if part.missing or not part.items:
        return _empty(chart, part.missing or "no broker holds a replica")
    disks = part.items
    size, unit = unit_of_bytes(max([d.used_bytes for d in disks] + [d.capacity_bytes or 0 for d in disks]))
    colors = tuple(_SEVERITY_COLOR.get(d.severity) for d in disks)
    series = [
        svg.BarSeries("capacity", tuple(None if d.capacity_bytes is None else d.capacity_bytes / size for d in disks),
                      GREY, "outline"),
        svg.BarSeries("used by replicas", tuple(d.used_bytes / size for d in disks), BLUE, colors=colors),
    ]  # fmt: skip
    titles = [
        f"broker {d.broker_id}: capacity "
        + (f"from {d.capacity_source}" if d.capacity_source else "unknown (set [clusters.capacity] disk_bytes)")
        for d in disks
    ]
    drawing = svg.bar_chart(_broker_names(disks), series, label=chart.title, y_label=unit, category_titles=titles)
    unknown = [str(d.broker_id) for d in disks if d.capacity_bytes is None]
    caption = "Solid: bytes of its replicas (orange or vermillion: a disk problem); outline: its capacity."
    if unknown:
        caption += f" No capacity known for broker {', '.join(unknown)}: set [clusters.capacity] disk_bytes."
    return _with(chart, Panel(drawing, caption))


def days_to_full(part: Part[BrokerDisk]) -> Chart:
    """Per broker: days until its disk is full at the growth of the history (no bar: not growing, or no
    capacity known)."""
    chart = Chart(
        key="days-to-full",
        title="Days until the disk is full, per broker",
        question="Which broker runs out of disk first at the current growth?",
        source="broker_load",
    )
    if part.missing or not part.items:
        return _empty(chart, part.missing or "no broker holds a replica")
    disks = part.items
    if all(d.days_to_full is None for d in disks):
        return _empty(chart, "no broker's disk is filling up (or no capacity is known to count the days against)")
    days = tuple(None if d.days_to_full is None else min(d.days_to_full, _MOST_DAYS) for d in disks)
    colors = tuple(_SEVERITY_COLOR.get(d.severity) for d in disks)
    titles = [
        f"broker {d.broker_id}: "
        + ("not filling up, or capacity unknown" if d.days_to_full is None else f"{d.days_to_full:,.1f} days")
        for d in disks
    ]
    series = [svg.BarSeries("days to full", days, BLUE, colors=colors)]
    drawing = svg.bar_chart(_broker_names(disks), series, label=chart.title, y_label="days", category_titles=titles)
    caption = (
        f"At the disk growth over the history (net of retention); bars stop at {_MOST_DAYS:g} days; no bar: not "
        "filling up or no capacity known. Orange or vermillion: a disk problem."
    )
    return _with(chart, Panel(drawing, caption))


def broker_traffic(part: Part[BrokerDisk]) -> Chart:
    """Per broker: bytes in (as leader, and with replication) and bytes out per second, with the network
    capacities where set."""
    chart = Chart(
        key="broker-traffic",
        title="Bytes in and out per broker",
        question="Which broker moves the most bytes, and how near is it to its network capacity?",
        source="broker_load (from partition_load's rates)",
    )
    if part.missing or not part.items:
        return _empty(chart, part.missing or "no broker holds a replica")
    disks = part.items
    figures = [v for d in disks for v in (d.bytes_in_per_s, d.bytes_out_per_s, d.network_in_capacity or 0,
                                          d.network_out_capacity or 0)]  # fmt: skip
    size, unit = unit_of_bytes(max(figures))
    series = [
        svg.BarSeries("in as leader (produce)", tuple(d.leader_bytes_in_per_s / size for d in disks), BLUE, "outline"),
        svg.BarSeries("in (produce + replication)", tuple(d.bytes_in_per_s / size for d in disks), BLUE),
        svg.BarSeries("out (consumers + followers)", tuple(d.bytes_out_per_s / size for d in disks), ORANGE),
    ]
    if any(d.network_in_capacity or d.network_out_capacity for d in disks):
        ins = tuple(None if d.network_in_capacity is None else d.network_in_capacity / size for d in disks)
        outs = tuple(None if d.network_out_capacity is None else d.network_out_capacity / size for d in disks)
        series.append(svg.BarSeries("network in capacity", ins, GREY, "outline"))
        series.append(svg.BarSeries("network out capacity", outs, GREEN, "outline"))
    drawing = svg.bar_chart(_broker_names(disks), series, label=chart.title, y_label=f"{unit}/s")
    caption = (
        "Rates over the load window from partition sizes and end offsets (partition_load's method says how); "
        "out counts each consumer group with a committed offset and each follower's fetch."
    )
    return _with(chart, Panel(drawing, caption))
