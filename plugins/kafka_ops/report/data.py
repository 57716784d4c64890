"""Gather everything the health report shows for one cluster and run, from the lake.

Which batches: the ZooKeeper snapshot `snapshot_id` (default: the latest analysed one, else the
latest one) and the group collection `group_snapshot_id` (default: the latest analysed one, else
the latest one, captured no later than the snapshot when the snapshot was named). A `GateReport`
names both. Only committed batches count, as everywhere in the lake.

Nothing here fails for want of data, except a cluster with neither a snapshot nor a group
collection (there is nothing to name the report after): every part whose input is missing says
why in its `missing`, and the status is `unknown` while the snapshot is not analysed. A batch
that was named but is not committed is an error (`LakeError`), not a missing input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc
import pyarrow.dataset as ds

from kafka_ops.errors import LakeError
from kafka_ops.lake.names import check_name
from kafka_ops.lake.schema import (
    ANALYSIS_COMMIT_TABLE,
    COMMIT_TABLE,
    GROUP_COMMIT_TABLE,
    VALIDATION_COMMIT_TABLE,
)
from kafka_ops.lake.store import Lake
from kafka_ops.problems import probe
from kafka_ops.problems.problem import BatchFindings
from kafka_ops.problems.words import SEVERITY_RANK
from kafka_ops.report import findings as fx
from kafka_ops.report import reads
from kafka_ops.report.group_types import group_types
from kafka_ops.report.model import (
    Collected,
    GroupLag,
    OffenderTable,
    Part,
    Point,
    Problem,
    ReportData,
    ReportLinks,
    Source,
    Status,
)
from kafka_ops.report.tiered import tiered_table
from kafka_ops.silences import Silence
from kafka_ops.validation.lake_batches import find_commit, read_batch_table

if TYPE_CHECKING:
    from kafka_ops.validation.gates import GateReport

Row = dict[str, Any]
WINDOW = timedelta(hours=24)
"""How far back the history charts look from the batch's capture time."""
STALE_AFTER = timedelta(minutes=30)
"""A snapshot older than this when the report is made gets a warning note (snapshots run every few minutes)."""
MAX_LAG_GROUPS = 8
"""Lines in the lag chart: more are unreadable. The worst groups by Burrow's status, then by lag."""
_ZK_FIGURES = (
    "broker_count",
    "topic_count",
    "partition_count",
    "under_replicated_count",
    "offline_count",
    "controller_id",
    "controller_epoch",
    "issue_count",
    "source",
    "metadata_version",
)
_GROUP_FIGURES = (
    "group_count",
    "member_count",
    "offset_count",
    "partition_count",
    "total_lag",
    "issue_count",
    "reconciling_member_count",
)


def gather(
    lake: Lake,
    cluster: str,
    *,
    snapshot_id: str | None = None,
    group_snapshot_id: str | None = None,
    gates: GateReport | None = None,
    links: ReportLinks | None = None,
    now: datetime | None = None,
    window: timedelta = WINDOW,
    as_of: datetime | None = None,
    silences: Sequence[Silence] = (),
) -> ReportData:
    """Everything the report of `cluster` shows (see the module docstring for which batches).
    `as_of`: the report is of an analysis as of that past time (a run's `as_of` Param); the batches
    are then named (by `gates` or the ids), and their age is counted from `as_of`. `silences`: the cluster's
    (`alerting.silence_store`), shown beside the problems they keep from paging now."""
    check_name("cluster", cluster)
    if gates is not None:
        snapshot_id, group_snapshot_id = _from_gates(gates, cluster, snapshot_id, group_snapshot_id)
    generated_at = (now or datetime.now(UTC)).astimezone(UTC)
    snapshot, zk_analysis = _zookeeper(lake, cluster, snapshot_id)
    until = snapshot.captured_at if snapshot is not None and snapshot_id is not None else None
    groups, group_analysis = _groups(lake, cluster, group_snapshot_id, until)
    kinds = group_types(lake, cluster, groups, fx.TOP_ROWS)
    if groups is not None:
        groups = replace(groups, figures={**groups.figures, "group_types": kinds.counts})
    if snapshot is None and groups is None:
        raise LakeError(
            f"nothing to report for cluster {cluster!r}: no snapshot and no group collection in {lake.root}"
        )

    zk = fx.Findings(lake, cluster, zk_analysis) if zk_analysis is not None else None
    gf = fx.Findings(lake, cluster, group_analysis) if group_analysis is not None else None
    zk_missing = _why_not_analysed(snapshot, "ZooKeeper snapshot", cluster)
    group_missing = _why_not_analysed(groups, "consumer-group collection", cluster)

    problems = [*(fx.zookeeper_problems(zk) if zk else []), *(fx.group_problems(gf) if gf else [])]
    problems += _probe_problems(lake, cluster, snapshot)
    problems.sort(key=lambda p: SEVERITY_RANK.get(p.severity, 9))
    brokers = fx.broker_loads(zk) if zk else Part(missing=zk_missing)
    shrinks = fx.broker_shrinks(zk, [b.broker_id for b in brokers.items]) if zk else Part(missing=zk_missing)
    under, offline = _under_replicated(lake, cluster, snapshot, window)
    offenders: list[OffenderTable] = []
    offenders += fx.zookeeper_offenders(zk) if zk else []
    offenders += fx.group_offenders(gf, kinds.types) if gf else []
    offenders += [kinds.reconciling] if kinds.reconciling is not None else []
    tiered = tiered_table(lake, cluster, snapshot, fx.TOP_ROWS)
    offenders += [tiered] if tiered is not None else []
    status, reason = _status(snapshot, gates, problems)
    return ReportData(
        cluster=cluster,
        generated_at=generated_at,
        window=window,
        snapshot=snapshot,
        groups=groups,
        status=status,
        status_reason=reason,
        gates=gates,
        problems=Part(tuple(problems), zk_missing if zk is None and gf is None else None),
        brokers=brokers,
        shrinks=shrinks,
        under_replicated=under,
        offline=offline,
        lag=_group_lag(lake, cluster, groups, gf, window),
        skewed=fx.skewed_groups(gf) if gf else Part(missing=group_missing),
        offenders=tuple(offenders),
        links=links or ReportLinks(),
        notes=tuple(_notes(snapshot, groups, zk_missing, group_missing, as_of or generated_at)),
        disks=fx.broker_disks(zk) if zk else Part(missing=zk_missing),
        as_of=as_of.astimezone(UTC) if as_of is not None else None,
        silences=() if as_of is not None else tuple(s for s in silences if s.active(generated_at)),
    )


def _from_gates(
    gates: GateReport, cluster: str, snapshot_id: str | None, group_snapshot_id: str | None
) -> tuple[str, str | None]:
    if gates.cluster != cluster:
        raise LakeError(f"the gate report is about cluster {gates.cluster!r}, not {cluster!r}")
    if snapshot_id is not None and snapshot_id != gates.snapshot_id:
        raise LakeError(f"the gate report judged snapshot {gates.snapshot_id}, not {snapshot_id}")
    if group_snapshot_id is not None and gates.group_snapshot_id not in (None, group_snapshot_id):
        raise LakeError(f"the gate report judged group collection {gates.group_snapshot_id}, not {group_snapshot_id}")
    return gates.snapshot_id, group_snapshot_id or gates.group_snapshot_id


def _is_zookeeper(row: Row) -> bool:
    return (row.get("source") or COMMIT_TABLE) == COMMIT_TABLE


def _is_groups(row: Row) -> bool:
    return row.get("source") == GROUP_COMMIT_TABLE


def _zookeeper(lake: Lake, cluster: str, snapshot_id: str | None) -> tuple[Collected | None, Row | None]:
    """The snapshot's commit row and its analysis, as named or the latest (analysed) one."""
    commit: Row | None
    if snapshot_id is not None:
        commit = _named(lake, COMMIT_TABLE, cluster, snapshot_id)
        analysis = _analysis_of(lake, cluster, snapshot_id, _is_zookeeper)
    else:
        analysis = reads.latest_commit_row(lake, ANALYSIS_COMMIT_TABLE, cluster, keep=_is_zookeeper)
        if analysis is not None:
            commit = _named(lake, COMMIT_TABLE, cluster, str(analysis["snapshot_id"]))
        else:
            commit = reads.latest_commit_row(lake, COMMIT_TABLE, cluster)
    if commit is None:
        return None, None
    return _collected(lake, cluster, "snapshots", commit, analysis, figures=_ZK_FIGURES), analysis


def _probe_problems(lake: Lake, cluster: str, snapshot: Collected | None) -> list[Problem]:
    """The brokers that failed the snapshot's end-to-end probe (`problems.probe`): a fact of the snapshot
    alone, paged from it, so not in the analysis' findings."""
    batch = find_commit(lake, COMMIT_TABLE, cluster, snapshot.snapshot_id) if snapshot is not None else None
    probes = read_batch_table(lake, batch, "probe_results") if batch is not None else None
    if batch is None or probes is None or probes.num_rows == 0:
        return []
    brokers = read_batch_table(lake, batch, "brokers")
    serving = set(brokers.column("broker_id").to_pylist()) if brokers is not None else set()
    rows = probe.refusing_rows(probes.to_pylist(), serving)
    findings = BatchFindings(batch.batch_id, batch.captured_at.astimezone(UTC), {"probe_refusing": rows})
    return [probe.refusing(rows, findings)] if rows else []


def _groups(
    lake: Lake, cluster: str, group_snapshot_id: str | None, until: datetime | None
) -> tuple[Collected | None, Row | None]:
    """The group collection's commit row and its analysis, as named or the latest (analysed) one."""
    commit: Row | None
    if group_snapshot_id is not None:
        commit = _named(lake, GROUP_COMMIT_TABLE, cluster, group_snapshot_id)
        analysis = _analysis_of(lake, cluster, group_snapshot_id, _is_groups)
    else:
        analysis = reads.latest_commit_row(lake, ANALYSIS_COMMIT_TABLE, cluster, keep=_is_groups, until=until)
        if analysis is not None:
            commit = _named(lake, GROUP_COMMIT_TABLE, cluster, str(analysis["snapshot_id"]))
        else:
            commit = reads.latest_commit_row(lake, GROUP_COMMIT_TABLE, cluster, until=until)
    if commit is None:
        return None, None
    return _collected(lake, cluster, "group_snapshots", commit, analysis, figures=_GROUP_FIGURES), analysis


def _analysis_of(lake: Lake, cluster: str, snapshot_id: str, source: reads.Match) -> Row | None:
    row = reads.commit_row_of(lake, ANALYSIS_COMMIT_TABLE, cluster, f"{snapshot_id}.analysis")
    return row if row is not None and source(row) else None


def _named(lake: Lake, commit_table: str, cluster: str, snapshot_id: str) -> Row:
    row = reads.commit_row_of(lake, commit_table, cluster, snapshot_id)
    if row is None:
        raise LakeError(f"{snapshot_id!r} of cluster {cluster!r} is not committed in {commit_table!r} in {lake.root}")
    return row


def _collected(
    lake: Lake, cluster: str, source: Source, commit: Row, analysis: Row | None, *, figures: tuple[str, ...]
) -> Collected:
    sid = str(commit["snapshot_id"])
    validation = reads.commit_row_of(lake, VALIDATION_COMMIT_TABLE, cluster, f"{sid}.validation")
    if validation is not None and (validation.get("source") or COMMIT_TABLE) != source:
        validation = None
    return Collected(
        source=source,
        snapshot_id=sid,
        captured_at=commit["captured_at"].astimezone(UTC),
        figures={k: commit.get(k) for k in figures},
        analysed_at=analysis["analysed_at"] if analysis is not None else None,
        findings=json.loads(str(analysis.get("findings") or "{}")) if analysis is not None else {},
        trusted=validation["trusted"] if validation is not None else None,
        failed_expectations=tuple(validation["failed"] or ()) if validation is not None else (),
        data_docs=validation["data_docs"] if validation is not None else None,
    )


def _why_not_analysed(batch: Collected | None, what: str, cluster: str) -> str | None:
    if batch is None:
        return f"no {what} of cluster {cluster} is in the lake yet"
    if batch.analysed_at is None:
        return f"{what} {batch.snapshot_id} is not analysed yet (no analysis_runs row): findings will show once it is"
    return None


def _under_replicated(
    lake: Lake, cluster: str, snapshot: Collected | None, window: timedelta
) -> tuple[Part[Point], Part[Point]]:
    """Under-replicated and offline partitions of every snapshot in the window (`snapshots` commit log)."""
    if snapshot is None:
        missing = f"no ZooKeeper snapshot of cluster {cluster} is in the lake yet"
        return Part(missing=missing), Part(missing=missing)
    rows = reads.commit_rows(lake, COMMIT_TABLE, cluster, snapshot.captured_at - window, snapshot.captured_at)
    under = tuple(
        Point(r["captured_at"], r["under_replicated_count"]) for r in rows if r["under_replicated_count"] is not None
    )
    offline = tuple(Point(r["captured_at"], r["offline_count"]) for r in rows if r["offline_count"] is not None)
    return Part(under), Part(offline)


def _group_lag(
    lake: Lake, cluster: str, groups: Collected | None, gf: fx.Findings | None, window: timedelta
) -> Part[GroupLag]:
    """Summed known lag (`group_offsets.lag`) per group and collection over the window, for the
    worst `MAX_LAG_GROUPS` groups: by Burrow's status in the analysis, else by lag now."""
    if groups is None:
        return Part(missing=f"no consumer-group collection of cluster {cluster} is in the lake yet")
    start, end = groups.captured_at - window, groups.captured_at
    commits = reads.commit_rows(lake, GROUP_COMMIT_TABLE, cluster, start, end)
    at = {str(c["snapshot_id"]): c["captured_at"] for c in commits}
    statuses = {r["group_id"]: r for r in (gf.rows("lag_status_groups") if gf else None) or []}
    if statuses:
        ranked = sorted(
            statuses.values(), key=lambda r: (SEVERITY_RANK[r["severity"]], -(r["total_lag"] or 0), r["group_id"])
        )
        top = [r["group_id"] for r in ranked[:MAX_LAG_GROUPS]]
    else:
        top = _most_lagging(lake, cluster, groups)
    if not top:  # a cluster without consumer groups: nothing to chart (and `isin([])` cannot type its set)
        return Part()
    where = ds.field("snapshot_id").isin(sorted(at)) & ds.field("group_id").isin(top)
    columns = ["snapshot_id", "group_id", "lag"]
    data = reads.read_days(lake, "group_offsets", cluster, reads.days_between(start, end), columns=columns, where=where)
    sums = data.group_by(["group_id", "snapshot_id"]).aggregate([("lag", "sum")]).to_pylist()
    points: dict[str, list[Point]] = {g: [] for g in top}
    for r in sums:
        if r["lag_sum"] is not None:
            points[r["group_id"]].append(Point(at[r["snapshot_id"]], int(r["lag_sum"])))
    lines = [
        GroupLag(g, statuses[g]["status"] if g in statuses else None, tuple(sorted(points[g], key=lambda p: p.at)))
        for g in top
    ]
    return Part(tuple(line for line in lines if line.points))


def _most_lagging(lake: Lake, cluster: str, groups: Collected) -> list[str]:
    """Without an analysis: the groups with the most known lag in the collection."""
    data = reads.read_days(
        lake,
        "group_offsets",
        cluster,
        [f"{groups.captured_at:%Y-%m-%d}"],
        columns=["group_id", "lag"],
        where=ds.field("snapshot_id") == groups.snapshot_id,
    )
    sums = data.group_by("group_id").aggregate([("lag", "sum")])
    sums = sums.sort_by([("lag_sum", "descending"), ("group_id", "ascending")])
    return [str(g) for g in pc.drop_null(sums.column("group_id")).to_pylist()[:MAX_LAG_GROUPS]]


def _status(snapshot: Collected | None, gates: GateReport | None, problems: list[Problem]) -> tuple[Status, str]:
    """The page's verdict: the worst failed gate or problem; `unknown` while the cluster's metadata
    is not analysed (a page never looks green for want of data)."""
    if snapshot is None:
        return "unknown", "no ZooKeeper snapshot of this cluster yet: its health is unknown"
    if snapshot.analysed_at is None and gates is None:
        return "unknown", f"snapshot {snapshot.snapshot_id} is not analysed yet: its health is unknown"
    failed = [r for r in gates.results if not r.passed] if gates is not None else []
    reasons = [(str(r.severity), f"gate {r.name} failed") for r in failed]
    reasons += [(p.severity, p.title) for p in problems if p.severity in ("critical", "warning")]
    if snapshot.trusted is False:
        reasons.append(("warning", "the snapshot failed integrity validation: its findings may be wrong"))
    levels: tuple[Status, ...] = ("critical", "warning")
    for level in levels:
        hits = [text for severity, text in reasons if severity == level]
        if hits:
            more = f" and {len(hits) - 3} more" if len(hits) > 3 else ""
            return level, "; ".join(hits[:3]) + more
    return "ok", "every health gate passed and no finding needs attention" if gates else "no finding needs attention"


def _notes(
    snapshot: Collected | None,
    groups: Collected | None,
    zk_missing: str | None,
    group_missing: str | None,
    now: datetime,
) -> list[str]:
    notes = [m for m in (zk_missing, group_missing) if m]
    for batch, what in ((snapshot, "snapshot"), (groups, "group collection")):
        if batch is None:
            continue
        if batch.trusted is False:
            failed = ", ".join(batch.failed_expectations) or "see Data Docs"
            notes.append(f"{what} {batch.snapshot_id} failed integrity validation ({failed}): do not act on it")
        elif batch.trusted is None:
            notes.append(f"{what} {batch.snapshot_id} has not been validated")
        if now - batch.captured_at > STALE_AFTER:
            notes.append(
                f"the {what} is {fx.duration((now - batch.captured_at).total_seconds())} old: is collection running?"
            )
    return notes
