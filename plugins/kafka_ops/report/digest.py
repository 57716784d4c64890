"""A plain-text digest of one cluster's latest findings, for terminals (CLI, demo).

Reads only published findings (`analysis_runs` commit log) from the lake; no Spark needed.
Shows the latest analysis of each source: ZooKeeper snapshots, then consumer-group collections; for
each, its problems first (title, since, cause and action, in the words of `kafka_ops.problems`, as the
page and the report say them), then the findings tables row by row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kafka_ops.errors import LakeError
from kafka_ops.lake.store import Lake
from kafka_ops.problems.groups import behind_figure
from kafka_ops.problems.problem import Problem
from kafka_ops.problems.registry import group_problems, metadata_problems
from kafka_ops.problems.retention import partition_text
from kafka_ops.problems.words import SEVERITY_RANK, duration, when
from kafka_ops.report.findings import Findings

Row = dict[str, Any]
MAX_LINES = 8
_RANK = {"critical": 0, "warning": 1, "info": 2}


def render_findings(lake: Lake, cluster: str, snapshot_id: str | None = None) -> str:
    """What is wrong, where, and what to do: the latest analysis of each source (ZooKeeper
    snapshots, then consumer-group collections), or the analysis of batch `snapshot_id`."""
    runs = lake.read("analysis_runs", cluster).to_pylist()
    if snapshot_id is not None:
        runs = [r for r in runs if r["snapshot_id"] == snapshot_id]
    if not runs:
        raise LakeError(f"no published findings for cluster {cluster!r} in {lake.root}")
    latest: dict[str, Row] = {}
    for run in runs:
        source = run["source"] or "snapshots"
        if source not in latest or (run["captured_at"], run["analysed_at"]) > _run_order(latest[source]):
            latest[source] = run
    blocks = [_render_run(lake, cluster, latest[s]) for s in sorted(latest, key=lambda s: s != "snapshots")]
    return "\n\n".join(blocks)


def _run_order(run: Row) -> tuple[Any, Any]:
    return run["captured_at"], run["analysed_at"]


def _render_run(lake: Lake, cluster: str, run: Row) -> str:
    sid = run["snapshot_id"]
    what = "consumer groups, collection" if run["source"] == "group_snapshots" else "snapshot"
    counts: dict[str, dict[str, int]] = json.loads(run["findings"])
    lines = [f"findings for cluster {cluster}, {what} {sid} (captured {run['captured_at']:%Y-%m-%d %H:%M:%S} UTC)"]
    for table in sorted(counts):
        shown = ", ".join(f"{n} {s}" for s, n in counts[table].items() if n and s != "ok") or "all ok"
        lines.append(f"  {table:<30} {shown}")
    problems = _problems(lake, cluster, run)
    if problems:
        lines.append("\nProblems (worst first)")
        for p in problems[:MAX_LINES]:
            lines += _problem(p, run["captured_at"])
        if len(problems) > MAX_LINES:
            lines.append(f"  ... and {len(problems) - MAX_LINES} more (kafka-ops report)")
    for title, table, describe in _SECTIONS:
        if table not in counts:
            continue
        # time behind is worth reading even below the thresholds: `_lag_time` skips caught-up groups
        rows = [r for r in lake.read(table, cluster, [sid]).to_pylist() if r["severity"] != "ok" or table in _ALL_ROWS]
        rows.sort(key=lambda r: _RANK.get(r["severity"], 9))
        picked = [text for r in rows if (text := describe(r))]
        if picked:
            lines.append(f"\n{title}")
            lines += [f"  - {text}" for text in picked[:MAX_LINES]]
            if len(picked) > MAX_LINES:
                lines.append(f"  ... and {len(picked) - MAX_LINES} more (lake table {table})")
    return "\n".join(lines)


def _problems(lake: Lake, cluster: str, run: Row) -> list[Problem]:
    findings = Findings(lake, cluster, run)
    found = group_problems(findings) if run["source"] == "group_snapshots" else metadata_problems(findings)
    return sorted(found, key=lambda p: SEVERITY_RANK.get(p.severity, 9))


def _problem(p: Problem, captured_at: Any) -> list[str]:
    """`critical 1 partition offline ...`, then since (and how long before the capture), cause, action."""
    lines = [
        f"  - {p.severity:<8} {p.title}",
        f"      since {when(p.since)} ({duration(captured_at - p.since)} before the capture)",
        f"      cause: {p.cause}",
    ]
    return lines + ([f"      do: {p.action}"] if p.action else [])


def _tp(r: Row) -> str:
    return f"{r['topic']}-{r['partition']}"


def _isr_health(r: Row) -> str:
    assumed = " (assumed: static)" if r.get("min_isr_source") == "static" else ""
    return (
        f"{r['severity']:<8} {_tp(r):<22} {r['status']:<17} isr {r['isr']} of {r['replicas']}, "
        f"min ISR {r['min_isr']}{assumed}"
    )


def _broker(r: Row) -> str | None:
    return f"{r['severity']:<8} {r['cause']}" if r.get("cause") else None


def _under(r: Row) -> str:
    longer = "+" if r["since_window_start"] else ""
    return f"{_tp(r):<22} missing {r['missing']} for {duration(r['duration_seconds'])}{longer}"


def _event(r: Row) -> str:
    change = f"isr {r['isr_before']} -> {r['isr_after']}"
    return f"{r['observed_at']:%H:%M:%S} {_tp(r):<22} {r['event']:<6} replica {r['replica']} ({change})"


def _flap(r: Row) -> str:
    return f"{_tp(r):<22} ISR changed and changed back {r['flaps']}x between snapshots (seen only in the epoch)"


def _leader_cluster(r: Row) -> str:
    return (
        f"{r['non_preferred']} partitions not on their preferred leader ({r['fixable']} fixable now), "
        f"leaders per broker max {r['max_leaders']} / mean {r['mean_leaders']:.1f}"
        + (": run kafka_preferred_leader_election" if r["fixable"] else "")
    )


def _leader_partition(r: Row) -> str:
    why = r["action"] or f"blocked: {r['blocked_reason']}"
    return f"{_tp(r):<22} led by {r['leader']}, preferred {r['preferred_leader']}: {why}"


def _rf1(r: Row) -> str:
    return f"topic {r['topic']}: replication factor 1 on {r['partitions']} partitions (no redundancy)"


def _rack(r: Row) -> str:
    return f"{_tp(r):<22} replicas {r['replicas']} span {r['distinct_racks']} of {r['racks_available']} racks"


def _controller(r: Row) -> str:
    if r["no_controller"]:
        return "no active controller"
    return (
        f"controller broker {r['controller_id']}, epoch {r['controller_epoch']}, "
        f"{r['elections_last_hour']} elections in the last hour, {r['zombie_partitions']} zombie-epoch partitions"
    )


def _quorum(r: Row) -> str | None:
    if r["severity"] == "ok":
        return None
    return f"{r['severity']:<8} {r['problem']}"


def _migration(r: Row) -> str:
    if r["kind"] == "phase":
        since = f" since {r['phase_since']:%Y-%m-%d %H:%M} UTC" if r["phase_since"] else ""
        return f"{r['severity']:<8} phase {r['phase']}{since}" + (f": {r['problem']}" if r["problem"] else "")
    return f"{r['severity']:<8} {r['problem']}"


def _reassignment(r: Row) -> str:
    state = f"STUCK: {r['stuck_reason']}" if r["stuck"] else f"in flight {duration(r['age_seconds'])}"
    return f"{_tp(r):<22} {r['replicas']} -> {r['target_replicas']}: {state}"


def _lag_group(r: Row) -> str:
    return f"{r['severity']:<8} group {r['group_id']} ({r['state'] or 'not described'}): {r['status']}, {r['cause']}"


def _lag_time(r: Row) -> str | None:
    unknown = f"; {r['unknown_partitions']} lagging partitions with no estimate" if r["unknown_partitions"] else ""
    if not r["total_lag"]:
        return None
    if r["max_lag_seconds"] is None:
        return f"{r['severity']:<8} group {r['group_id']}: time behind unknown{unknown}" if unknown else None
    where = f"{r['max_lag_topic']}-{r['max_lag_partition']}"
    behind = behind_figure(r)
    return f"{r['severity']:<8} group {r['group_id']}: {behind} behind on {where}{unknown}"


def _skew(r: Row) -> str:
    return f"{r['severity']:<8} group {r['group_id']} ({r['assignor']}): {r['cause']}"


def _recommendation(r: Row) -> str | None:
    if r["error"]:
        return f"group {r['group_id']}: {r['error']}"
    return f"group {r['group_id']}: {r['reason']}" if r["reason"] else None


_ALL_ROWS = frozenset({"lag_time_groups"})
_SECTIONS: list[tuple[str, str, Callable[[Row], str | None]]] = [
    ("Which broker is sick", "broker_attribution", _broker),
    ("Partitions at risk", "isr_health", _isr_health),
    ("Under-replicated since", "isr_under_replicated", _under),
    ("ISR shrinks in the window", "isr_events", lambda r: _event(r) if r["event"] == "shrink" else None),
    ("Flapping ISRs", "isr_flapping", _flap),
    ("Leader balance", "leader_balance_cluster", _leader_cluster),
    ("Partitions off their preferred leader", "leader_balance_partitions", _leader_partition),
    ("Redundancy", "replica_placement_topics", _rf1),
    ("Rack spread", "replica_placement_partitions", _rack),
    ("Controller", "controller_health", _controller),
    ("KRaft quorum and fenced brokers", "quorum_health", _quorum),
    ("Migration to KRaft", "migration_health", _migration),
    ("Reassignments", "reassignments_in_flight", _reassignment),
    ("Topics pending deletion", "topic_deletions", lambda r: f"{r['severity']:<8} {r['cause']}"),
    ("Disk and traffic (load)", "load_problems", lambda r: f"{r['severity']:<8} {r['problem']}; do: {r['action']}"),
    ("Consumer lag (Burrow's rules)", "lag_status_groups", _lag_group),
    (
        "Time behind (exact: the first unconsumed record's time; ~ estimate, ≥ lower bound)",
        "lag_time_groups",
        _lag_time,
    ),
    (
        "Retention (lost: deleted before the group read them; retention.ms: at the earliest; retention.bytes: ~ at "
        "the current rate)",
        "retention_risk_partitions",
        lambda r: f"{r['severity']:<8} {partition_text(r)}",
    ),
    (
        "Open transactions (read_committed consumers wait at the last stable offset)",
        "transactions",
        lambda r: f"{r['severity']:<8} {r['problem']}; do: {r['action']}",
    ),
    ("Assignor skew", "assignor_skew_groups", _skew),
    ("Assignor what-if (Kafka's own assignors on the real members)", "assignor_recommendations", _recommendation),
]
