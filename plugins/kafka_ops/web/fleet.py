"""`GET /ui`: the fleet on one page, the index of the kafka-ops pages in the Airflow UI.

One row per configured cluster, in the settings' order:

* cluster, `tier` and `owner` (the settings'), and its kind: ZooKeeper, KRaft with the Kafka release of its
  finalized `metadata.version`, or migrating to KRaft (the snapshot holds a `/migration` phase);
* health: the worst open incident (critical before warning, one not silenced before a silenced one), its
  title; "healthy" with none open; "unknown" with none open while the latest metadata snapshot is missing
  or stale (no incident because nothing looked is not health); "unreadable" with why, for a cluster whose
  lake could not be read (its other cells empty, never a crash);
* how old the latest snapshot (metadata, group collection) and the data of the latest analyses are, a stale
  one standing out: stale is the metrics' rule (`figures.parts_of`, `[web] metrics_max_age_minutes`);
* open incidents (how many silenced), silences in force;
* remediation plans: how many (a link to them), those awaiting an approval, those executing or stuck, by
  their lifecycles (`remediation.lifecycle`);
* the worst lagging consumer groups of the latest group analysis, at most three, by Burrow's status then
  seconds behind (`figures.group_lag`); none shown from a stale analysis, as in the metrics.

`?sort=<column>` orders the rows by a column, the worst first where there is a worst (health, ages,
incidents, plans, lag), else alphabetically (tiers that are numbers by their number); `-<column>` reverses.
Rows without a value for the column stay last; ties keep the settings' order. The headers are the links
that sort, so the page needs no script. Everything read from the lake or the settings is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Annotated, Any
from urllib.parse import quote

import pyarrow as pa
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from kafka_ops.alerting.alert import rank
from kafka_ops.errors import KafkaOpsError
from kafka_ops.kafka_types import metadata_release
from kafka_ops.lake.store import Lake
from kafka_ops.problems.words import duration, plural
from kafka_ops.remediation.lifecycle import lifecycles
from kafka_ops.settings import ClusterConfig, WebSettings
from kafka_ops.web.figures import STATUS_CODES, Part, alerts_of, group_lag, parts_of
from kafka_ops.web.lake_cache import Batch, ClusterView, LakeCache
from kafka_ops.web.pages import link, render_page

Clock = Callable[[], datetime]
WORST_GROUPS = 3
SHOWN_PLANS = 3
"""Plan ids listed per state in a row; the rest are counted."""
IN_FLIGHT = ("executing", "stuck")
STYLE = """
.stale,.critical,.unreadable{color:#a4161a;font-weight:600}.warning,.unknown{color:#8a5a00;font-weight:600}
.healthy{color:#1e7b34}th a{color:inherit}td small{display:block}
"""
HEALTH_RANK = {"unreadable": 4, "critical": 3, "warning": 2, "unknown": 1, "healthy": 0}
"""Worst first when the rows are sorted by health."""


@dataclass(frozen=True)
class Health:
    state: str
    """One of `HEALTH_RANK`: unreadable, critical, warning, unknown, healthy."""
    text: str


@dataclass(frozen=True)
class Lagging:
    group: str
    status: str | None
    seconds: float | None


@dataclass(frozen=True)
class Plans:
    """A cluster's remediation plans needing an eye: ids newest first."""

    count: int = 0
    awaiting: tuple[tuple[str, datetime], ...] = ()
    """(plan id, when the approval was requested) of each plan whose latest approve row is `requested`."""
    in_flight: tuple[tuple[str, str], ...] = ()
    """(plan id, lifecycle state) of each plan `executing` or `stuck`."""
    error: str | None = None


@dataclass(frozen=True)
class FleetRow:
    """What the page shows of one cluster (see the module docstring)."""

    cluster: str
    tier: str | None
    owner: str | None
    health: Health
    error: str | None = None
    kind: str | None = None
    snapshots: dict[str, Part] = field(default_factory=dict)
    """`metadata` and `groups`: the latest snapshot and group collection."""
    analyses: dict[str, Part] = field(default_factory=dict)
    """`metadata` and `groups`: the data of the latest metadata and group analyses."""
    incidents: int | None = None
    silenced: int = 0
    silences: int | None = None
    plans: Plans = field(default_factory=Plans)
    lagging: tuple[Lagging, ...] | None = None
    """None: no group analysis to show (none yet, or stale)."""
    lag_note: str = ""


# -- reading --------------------------------------------------------------------------------------


def fleet_row(view: ClusterView, config: ClusterConfig, plans: Plans, now: datetime, max_age: timedelta) -> FleetRow:
    """The row of `view` as of `now`; `max_age` is when a part turns stale (the metrics' rule)."""
    if view.error is not None:
        return FleetRow(
            config.name, config.tier, config.owner, Health("unreadable", view.error), view.error, plans=plans
        )
    parts = parts_of(view, now, max_age)
    row = FleetRow(
        config.name,
        config.tier,
        config.owner,
        Health("unknown", "no snapshot yet"),
        kind=kind_of(view.metadata),
        snapshots={"metadata": parts["metadata"], "groups": parts["groups"]},
        analyses={"metadata": parts["metadata_analysis"], "groups": parts["group_analysis"]},
        plans=plans,
    )
    health = row.health
    if view.incidents is not None:
        alerts, silences = alerts_of(view.incidents, now)
        silenced = sum(a.silenced for a in alerts)
        worst = max(alerts, key=lambda a: (rank(a.severity), not a.silenced), default=None)
        if worst is not None:
            health = Health(worst.severity, worst.title + (" (silenced)" if worst.silenced else ""))
        elif parts["metadata"].shown:
            health = Health("healthy", "healthy")
        elif parts["metadata"].stale:
            health = Health("unknown", "no open incident, but the latest snapshot is stale")
        row = replace(row, health=health, incidents=len(alerts), silenced=silenced, silences=silences)
    analysis = parts["group_analysis"]
    if view.group_analysis is None or analysis.captured_at is None:
        return replace(row, lag_note="not analysed yet")
    if analysis.stale:
        return replace(row, lag_note="not shown: the group analysis is stale")
    return replace(row, lagging=worst_groups(view.group_analysis))


def kind_of(snapshot: Batch | None) -> str | None:
    """ZooKeeper, KRaft (with the Kafka release of its `metadata.version`) or migrating to KRaft (with its
    phase), from the latest metadata snapshot; None without one."""
    if snapshot is None:
        return None
    migration = snapshot.rows("migration")
    if migration:
        return f"migrating to KRaft ({migration[0]['phase']})"
    if snapshot.commit.get("source") != "kraft":
        return "ZooKeeper"
    level = snapshot.commit.get("metadata_version")
    release = metadata_release(level)
    if release is not None:
        return f"KRaft, Kafka {release}"
    return "KRaft" if level is None else f"KRaft, metadata.version {level}"


def worst_groups(analysis: Batch, limit: int = WORST_GROUPS) -> tuple[Lagging, ...]:
    """The groups of a group analysis that lag (a status worse than OK, or seconds behind), worst first:
    by Burrow's status, then seconds behind, then name."""
    status, seconds = group_lag(analysis)
    lagging = [
        Lagging(g, status.get(g), seconds.get(g))
        for g in sorted(set(status) | set(seconds))
        if STATUS_CODES.get(status.get(g) or "", 0) > STATUS_CODES["OK"] or (seconds.get(g) or 0) > 0
    ]
    lagging.sort(key=lambda g: (-STATUS_CODES.get(g.status or "", 0), -(g.seconds or 0), g.group))
    return tuple(lagging[:limit])


def plans_of(lake: Lake, view: ClusterView) -> Plans:
    """The cluster's plans awaiting an approval or in flight, by their lifecycles (`remediation.lifecycle`): the
    view's, which the lake cache re-reads only when plans, audit or progress change; read here only when the
    view has none, so a lake error becomes `Plans.error`."""
    found = view.lifecycles
    if found is None:
        try:
            found = tuple(lifecycles(lake, view.cluster))
        except (OSError, pa.ArrowException, KafkaOpsError) as e:
            return Plans(error=f"cannot read the plans of cluster {view.cluster!r}: {e}")
    awaiting = tuple((c.plan_id, c.since) for c in found if c.state == "awaiting_approval")
    in_flight = tuple((c.plan_id, c.state) for c in found if c.state in IN_FLIGHT)
    return Plans(len(found), awaiting, in_flight)


# -- sorting --------------------------------------------------------------------------------------


def _age(parts: dict[str, Part], now: datetime) -> float:
    """Seconds since the oldest part was captured; infinite when none was (the worst)."""
    times = [p.captured_at for p in parts.values() if p.captured_at is not None]
    return float("inf") if not times else (now - min(times)).total_seconds()


def _tier(tier: str | None) -> tuple[int, float, str] | None:
    if tier is None:
        return None
    return (0, float(tier), "") if tier.isascii() and tier.isdigit() else (1, 0.0, tier.casefold())


def _lag(row: FleetRow) -> tuple[int, float] | None:
    if row.lagging is None:
        return None
    if not row.lagging:
        return (0, 0.0)
    worst = row.lagging[0]
    return (-STATUS_CODES.get(worst.status or "", 0), -(worst.seconds or 0.0))


def _incidents(row: FleetRow) -> tuple[int, int] | None:
    return None if row.incidents is None else (row.silenced - row.incidents, -row.incidents)


def _plan_key(row: FleetRow) -> tuple[int, int, int] | None:
    plans = row.plans
    return None if plans.error else (-len(plans.awaiting), -len(plans.in_flight), -plans.count)


def sort_keys(now: datetime) -> dict[str, Callable[[FleetRow], Any]]:
    """Per column, the key that puts the worst (or the first alphabetically) first; None: the row has no value."""
    return {
        "cluster": lambda r: r.cluster,
        "tier": lambda r: _tier(r.tier),
        "owner": lambda r: None if r.owner is None else r.owner.casefold(),
        "kind": lambda r: r.kind,
        "health": lambda r: (-HEALTH_RANK[r.health.state], r.health.text),
        "snapshot": lambda r: -_age(r.snapshots, now),
        "analysis": lambda r: -_age(r.analyses, now),
        "incidents": _incidents,
        "silences": lambda r: None if r.silences is None else -r.silences,
        "plans": _plan_key,
        "lag": _lag,
    }


COLUMNS = (
    "cluster",
    "tier",
    "owner",
    "kind",
    "health",
    "snapshot",
    "analysis",
    "incidents",
    "silences",
    "plans",
    "lag",
)
SETTINGS_COLUMNS = frozenset({"cluster", "tier", "owner", "health", "plans"})
"""What an unreadable cluster's row still has a value for (the others: sorted last)."""
HEADINGS = {"snapshot": "last snapshot", "analysis": "last analysis", "lag": "worst lagging groups"}


def sorted_rows(rows: Sequence[FleetRow], sort: str | None, now: datetime) -> list[FleetRow]:
    """`rows` ordered by `sort` (a column, `-column` reversed; None: as given); `KeyError` for another."""
    if not sort:
        return list(rows)
    column = sort.removeprefix("-")
    by = sort_keys(now)[column]

    def key(row: FleetRow) -> Any:
        return None if row.error is not None and column not in SETTINGS_COLUMNS else by(row)

    present = [r for r in rows if key(r) is not None]
    return sorted(present, key=key, reverse=sort.startswith("-")) + [r for r in rows if key(r) is None]


# -- rendering ------------------------------------------------------------------------------------


def render(rows: Sequence[FleetRow], root: str, sort: str | None, now: datetime, max_age: timedelta) -> str:
    """The page's body: what it shows, then the table."""
    note = (
        f"<p class='muted'>{escape(plural(len(rows), 'cluster'))} as of {now:%Y-%m-%d %H:%M:%S} UTC. Data older "
        f"than {escape(duration(max_age))} is stale (<code>[web] metrics_max_age_minutes</code>). Sort by a "
        "column with its heading; again for the reverse order.</p>"
    )
    head = "<tr>" + "".join(_heading(root, c, sort) for c in COLUMNS) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in _cells(r, root, now)) + "</tr>" for r in rows)
    return f"{note}<table>{head}{body}</table>"


def _heading(root: str, column: str, sort: str | None) -> str:
    text = HEADINGS.get(column, column)
    order, arrow = "none", ""
    if sort == column:
        order, arrow = "ascending", " ▲"
    elif sort == f"-{column}":
        order, arrow = "descending", " ▼"
    target = f"-{column}" if sort == column else column
    return f'<th aria-sort="{order}">{link(f"{root}?sort={quote(target)}", text)}{arrow}</th>'


def _cells(row: FleetRow, root: str, now: datetime) -> list[str]:
    name = quote(row.cluster)
    report = link(f"{root}/reports/{name}", "latest report")
    plans = link(f"{root}/plans/{name}", f"{row.plans.count} plan(s)") + _plans(row.plans, root, name, now)
    labels = [escape(row.cluster), escape(row.tier or ""), escape(row.owner or "")]
    health = f"<span class='{row.health.state}'>{escape(row.health.text)}</span><small>{report}</small>"
    if row.error is not None:
        return [*labels, "", health, "", "", "", "", plans, ""]
    incidents = ""
    if row.incidents is not None:
        silenced = f", {row.silenced} silenced" if row.silenced else ""
        incidents = f"{row.incidents} open{silenced}" if row.incidents else "none"
    silences = "" if row.silences is None else str(row.silences)
    return [*labels, escape(row.kind or "no snapshot yet"), health, _ages(row.snapshots, now),
            _ages(row.analyses, now), incidents, silences, plans, _lagging(row)]  # fmt: skip


def _ages(parts: dict[str, Part], now: datetime) -> str:
    out = []
    for source, part in parts.items():
        if part.captured_at is None:
            out.append(f"<small>{escape(source)}: none</small>")
            continue
        age = escape(f"{source}: {duration(now - part.captured_at)} ago")
        out.append(f"<small class='stale'>{age} (stale)</small>" if part.stale else f"<small>{age}</small>")
    return "".join(out)


def _plans(plans: Plans, root: str, cluster: str, now: datetime) -> str:
    if plans.error is not None:
        return f"<small class='unreadable'>{escape(plans.error)}</small>"
    out = []
    for what, items in (
        ("awaiting approval", [(p, f"requested {duration(now - at)} ago") for p, at in plans.awaiting]),
        ("in flight", list(plans.in_flight)),
    ):
        if not items:
            continue
        shown = ", ".join(
            f"{link(f'{root}/plans/{cluster}/{quote(p)}', p)} ({escape(s)})" for p, s in items[:SHOWN_PLANS]
        )
        more = f" and {len(items) - SHOWN_PLANS} more" if len(items) > SHOWN_PLANS else ""
        out.append(f"<small>{escape(what)}: {shown}{more}</small>")
    return "".join(out)


def _lagging(row: FleetRow) -> str:
    if row.lagging is None:
        return f"<small class='muted'>{escape(row.lag_note)}</small>"
    if not row.lagging:
        return "none"
    return "".join(
        f"<small>{escape(g.group)}: {escape(g.status or 'status unknown')}"
        + (f", {escape(duration(g.seconds))} behind" if g.seconds is not None else "")
        + "</small>"
        for g in row.lagging
    )


# -- the page -------------------------------------------------------------------------------------


class Fleet:
    """The fleet page of the clusters `cache` watches, configured by `clusters` (their tier and owner)."""

    def __init__(
        self, cache: LakeCache, clusters: Sequence[ClusterConfig], web: WebSettings, clock: Clock | None = None
    ) -> None:
        self.cache = cache
        self.clusters = {c.name: c for c in clusters}
        self.web = web
        self.clock = clock or (lambda: datetime.now(UTC))

    def rows(self, now: datetime) -> list[FleetRow]:
        """Every cluster's row, in the settings' order."""
        views, _ = self.cache.views()
        return [
            fleet_row(v, self.clusters[v.cluster], plans_of(self.cache.lake, v), now, self.web.metrics_max_age)
            for v in views
        ]

    def page(self, root: str, sort: str | None) -> HTMLResponse:
        """The page as of the clock, its links under `root`; an unknown `sort` is a 400 naming the columns."""
        if sort and sort.removeprefix("-") not in COLUMNS:
            known = escape(", ".join(COLUMNS))
            body = (
                f"<p>Cannot sort by {escape(repr(sort))}: sort by one of {known} (<code>-</code> first: reversed).</p>"
            )
            return render_page("kafka-ops", body, 400)
        now = self.clock()
        rows = sorted_rows(self.rows(now), sort, now)
        return render_page("kafka-ops", render(rows, root, sort, now, self.web.metrics_max_age), style=STYLE)


def router(fleet: Fleet, dependencies: Sequence[Any]) -> APIRouter:
    """`GET /ui` (`?sort=<column>`); links are absolute, from the prefix the app is mounted at."""
    api = APIRouter(prefix="/ui", dependencies=list(dependencies), include_in_schema=False)

    @api.get("", response_class=HTMLResponse)
    def index(
        request: Request, sort: Annotated[str | None, Query(description=f"one of {list(COLUMNS)}")] = None
    ) -> HTMLResponse:
        return fleet.page(f"{request.scope.get('root_path', '')}/ui", sort)

    return api
