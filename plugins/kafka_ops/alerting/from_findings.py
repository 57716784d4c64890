"""Turn health-gate results and integrity validations into `Alert`s (one per problem).

Identity decides how many incidents an on-call engineer gets: a cluster-wide gate (offline
partitions, under-min-ISR, leader imbalance, controller churn) is one alert however many
partitions it covers; a consumer-group gate is one alert per group (each group has its own
owner); an untrusted snapshot is one alert per source. Keys are stable across runs so that a
problem that keeps failing stays one incident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from kafka_ops.alerting.alert import Affected, AffectedKind, Alert, Detail, Links
from kafka_ops.alerting.render import duration
from kafka_ops.analysis.lag_estimates import group_method, time_behind
from kafka_ops.validation.gates import GateReport, GateResult

GROUP_GATES = frozenset({"no_group_in_err", "no_group_in_warn"})
TITLES = {
    "no_offline_partitions": "{partitions} offline (no leader): produce and consume fail on them",
    "no_under_min_isr_partitions": "{partitions} under min ISR: producers with acks=all are refused",
    "leader_imbalance_within_threshold": "leader imbalance beyond the threshold on {brokers}",
    "controller_elections_within_threshold": "controller churn: {elections} in the last hour",
    "quorum_has_a_majority": "the KRaft controller quorum has lost its majority: {replicas}",
    "quorum_replicas_keep_up": "KRaft metadata replication is behind on {replicas}",
    "no_fenced_brokers": "{brokers} fenced by the KRaft controller: they lead nothing and are out of every ISR",
    "migration_dual_write_runs": "the ZooKeeper-to-KRaft migration stopped writing to ZooKeeper",
    "migration_not_stalled": "the ZooKeeper-to-KRaft migration is stalled: controllers still wait for brokers",
    "migration_views_agree": "ZooKeeper and the KRaft metadata disagree on {fields} during the migration",
    "snapshots_read_live_metadata": "the migration is finalized but kafka-ops still reads the cluster from ZooKeeper",
    "no_group_in_err": "consumer group {group} is in ERR",
    "no_group_in_warn": "consumer group {group} is falling behind (WARN)",
    "no_hanging_transactions": "{transactions} hanging or open too long: read_committed consumers are stalled",
    "no_long_open_transactions": "{transactions} open for long: read_committed consumers wait behind them",
    "no_disk_running_out": "disk running out: {disks} full or filling up within days",
    "disk_within_limits": "disk use beyond its limits or skewed: {disks}",
    "no_hot_spots": "{hot_spots} far above their peers or near network capacity",
}
KRAFT_TITLES = {
    # the KRaft controller has no imbalance percentage: every partition off its preferred replica counts
    "leader_imbalance_within_threshold": "partitions not led by their preferred replica on {brokers}",
}


def gate_alerts(
    report: GateReport, links: Links, seen_at: datetime, behind: Mapping[str, Mapping[str, Any]] | None = None
) -> list[Alert]:
    """An alert for every failed gate (per group for the group gates); `seen_at` (the analysed
    snapshot's capture time) is `since` when a gate cannot tell when its problem began. `behind`:
    the group collection's `lag_time_groups` rows by group id, whose time behind a group alert
    states with how it was obtained (`~45 s (extrapolated)`, `≥ 30 s`)."""
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
    titles = {**TITLES, **KRAFT_TITLES} if report.source == "kraft" else TITLES
    return Alert(
        cluster=report.cluster,
        key=gate.name,
        severity=gate.severity,
        title=titles.get(gate.name, "{n} failing: " + gate.name).format(
            n=gate.count,
            partitions=_plural(gate.count, "partition"),
            brokers=_plural(gate.count, "broker"),
            elections=_plural(gate.count, "election"),
            replicas=_plural(gate.count, "replica"),
            fields=_plural(gate.count, "partition field"),
            transactions=_plural(gate.count, "transaction"),
            disks=_plural(gate.count, "broker or log dir", "brokers or log dirs"),
            hot_spots=_plural(gate.count, "hot partition or broker", "hot partitions or brokers"),
        ),
        since=gate.since or seen_at,
        affected=tuple(_affected(row) for row in gate.rows[:10]),
        affected_total=gate.count,
        cause=gate.cause or gate.meaning,
        action=gate.action or "",
        links=links,
        details={"gate": gate.name, "snapshot_id": gate.snapshot_id},
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
    cause = str(row.get("problem") or gate.cause or gate.meaning)
    details: dict[str, Detail] = {"gate": gate.name, "group_id": group, "snapshot_id": gate.snapshot_id}
    time = behind.get(group)
    if time is not None and time.get("max_lag_seconds") is not None:
        method = group_method(time)
        figure = time_behind(time["max_lag_seconds"], method, lambda s: duration(timedelta(seconds=s)))
        cause += f"; {figure} behind on {time.get('max_lag_topic')}-{time.get('max_lag_partition')}"
        details |= {"lag_seconds": float(time["max_lag_seconds"]), "lag_seconds_method": method}
    return Alert(
        cluster=report.cluster,
        key=f"{gate.name}:{group}",
        severity=gate.severity,
        title=TITLES[gate.name].format(n=1, group=group),
        since=gate.since or seen_at,
        affected=(_affected(row),),
        cause=cause,
        action=gate.action or f"check consumer group {group}",
        links=links,
        details=details,
    )


def _plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {words or word + 's'}"


def _affected(row: Mapping[str, Any]) -> Affected:
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
