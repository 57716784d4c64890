"""Turn health-gate results and integrity validations into `Alert`s (one per problem).

Identity decides how many incidents an on-call engineer gets: a cluster-wide gate (offline
partitions, under-min-ISR, leader imbalance, controller churn) is one alert however many
partitions it covers; a consumer-group gate is one alert per group (each group has its own
owner); an untrusted snapshot is one alert per source. Keys are stable across runs so that a
problem that keeps failing stays one incident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kafka_ops.alerting.alert import Affected, AffectedKind, Alert, Detail, Links
from kafka_ops.analysis.lag_estimates import group_method
from kafka_ops.problems.groups import time_behind_text
from kafka_ops.problems.problem import subjects
from kafka_ops.validation.gates import GROUP_GATES, GateReport, GateResult

FALLBACK_TITLE = "{n} failing: {gate}"
"""A gate the catalogue has no composer for (a result built by hand, or from an older gate)."""


def gate_alerts(
    report: GateReport, links: Links, seen_at: datetime, behind: Mapping[str, Mapping[str, Any]] | None = None
) -> list[Alert]:
    """An alert for every failed gate (per group for the group gates), in the words `kafka_ops.problems`
    composed for the gate (title, cause, action, since); `seen_at` (the analysed snapshot's capture
    time) is `since` only for a result built without them. `behind`: the group collection's
    `lag_time_groups` rows by group id, whose time behind and its method a group alert carries in its
    details (the catalogue's cause already says it: `~45 s (extrapolated)`, `≥ 30 s`)."""
    alerts: list[Alert] = []
    for gate in report.failed():
        gate_links = Links(gate.data_docs or links.data_docs, links.airflow_run, links.report)
        if gate.name in GROUP_GATES:
            alerts += [_group_alert(report, gate, row, gate_links, seen_at, behind=behind or {}) for row in gate.rows]
        else:
            alerts.append(_cluster_alert(report, gate, gate_links, seen_at))
    return alerts


def untrusted_alert(
    cluster: str, source: str, snapshot_id: str, failed: Sequence[str], *, since: datetime, links: Links
) -> Alert:
    """A snapshot that failed integrity: nothing may act on it (remediation refuses it)."""
    what = "consumer-group collection" if source == "group_snapshots" else "ZooKeeper snapshot"
    return Alert(
        cluster=cluster,
        key=f"untrusted:{source}",
        severity="warning",
        title=f"the latest {what} of {cluster} failed integrity validation",
        since=since,
        affected=tuple(Affected("cluster", f"expectation {name}") for name in failed[:10]),
        affected_total=len(failed),
        cause=f"{what} {snapshot_id} broke: {', '.join(failed)}",
        action="open the Data Docs for the offending rows; remediation is refused on this snapshot until one passes",
        links=links,
        details={"snapshot_id": snapshot_id, "source": source},
    )


def _cluster_alert(report: GateReport, gate: GateResult, links: Links, seen_at: datetime) -> Alert:
    return Alert(
        cluster=report.cluster,
        key=gate.name,
        severity=gate.severity,
        title=gate.title or FALLBACK_TITLE.format(n=gate.count, gate=gate.name),
        since=gate.since or seen_at,
        affected=tuple(affected_item(row) for row in gate.rows[:10]),
        affected_total=gate.count,
        cause=gate.cause or gate.meaning,
        action=gate.action or "",
        links=links,
        details={"gate": gate.name, "snapshot_id": gate.snapshot_id},
        **subjects_of(gate.rows, gate.count),
    )


def _group_alert(
    report: GateReport,
    gate: GateResult,
    row: Mapping[str, Any],
    links: Links,
    seen_at: datetime,
    *,
    behind: Mapping[str, Mapping[str, Any]],
) -> Alert:
    group = str(row.get("group_id"))
    problem = next((p for p in gate.problems if p.rows and str(p.rows[0].get("group_id")) == group), None)
    cause = problem.cause if problem else str(row.get("problem") or gate.cause or gate.meaning)
    details: dict[str, Detail] = {"gate": gate.name, "group_id": group, "snapshot_id": gate.snapshot_id}
    time = behind.get(group)
    if time is not None and time.get("max_lag_seconds") is not None:
        if problem is None:  # a result built without the catalogue: say the time behind here
            cause += f"; {time_behind_text(time)}"
        details |= {"lag_seconds": float(time["max_lag_seconds"]), "lag_seconds_method": group_method(time)}
    if problem is None:
        title, since, action = FALLBACK_TITLE.format(n=1, gate=f"{gate.name} ({group})"), gate.since or seen_at, None
    else:
        title, since, action = problem.title, problem.since, problem.action
    return Alert(
        cluster=report.cluster,
        key=f"{gate.name}:{group}",
        severity=gate.severity,
        title=title,
        since=since,
        affected=(affected_item(row),),
        cause=cause,
        action=action or gate.action or f"check consumer group {group}",
        links=links,
        details=details,
    )


def subjects_of(rows: Sequence[Mapping[str, Any]], total: int) -> dict[str, Any]:
    """`Alert`'s `topics`, `partitions` and `brokers` of an alert about `rows` (`total` in all)."""
    about = subjects(rows, total)
    return {"topics": about["topics"], "partitions": about["partitions"], "brokers": about["brokers"]}


def affected_item(row: Mapping[str, Any]) -> Affected:
    """A findings row as the affected item an alert lists (a group, a partition, a broker, a controller)."""
    kind: AffectedKind
    if row.get("group_id") is not None:
        kind, name = "group", str(row["group_id"])
    elif row.get("topic") is not None and row.get("partition") is not None:
        kind, name = "partition", f"{row['topic']}-{row['partition']}"
    elif row.get("broker_id") is not None:
        kind, name = "broker", f"broker {row['broker_id']}"
    elif row.get("kind") in ("voter", "observer", "fenced_broker"):  # quorum_health
        kind = "broker"
        name = f"{'controller' if row['kind'] == 'voter' else 'broker'} {row['replica_id']}"
    else:
        kind, name = "cluster", "cluster"
    problem = row.get("problem")
    return Affected(kind, f"{name}: {problem}" if problem else name)
