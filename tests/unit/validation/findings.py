"""Findings tables as the detectors publish them (columns and types of `kafka_ops.detectors.*`,
as read back from a demo lake), built by hand for the gate tests, and published as an analysis."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa

from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE
from kafka_ops.lake.store import Batch, Lake
from tests.unit.snapshots import AT, GROUPS_AT

TS = pa.timestamp("us", tz="UTC")
INTS = pa.list_(pa.int32())

SCHEMAS: dict[str, pa.Schema] = {
    "isr_health": pa.schema([
        ("snapshot_id", pa.string()), ("topic", pa.string()), ("partition", pa.int32()), ("replicas", INTS),
        ("isr", INTS), ("leader", pa.int32()), ("min_isr", pa.int32()), ("min_isr_source", pa.string()),
        ("offline", pa.bool_()), ("under_min_isr", pa.bool_()), ("under_replicated", pa.bool_()),
        ("at_min_isr", pa.bool_()), ("status", pa.string()), ("severity", pa.string()),
    ]),
    "isr_under_replicated": pa.schema([
        ("snapshot_id", pa.string()), ("topic", pa.string()), ("partition", pa.int32()), ("replicas", INTS),
        ("isr", INTS), ("missing", INTS), ("under_replicated_since", TS), ("duration_seconds", pa.float64()),
        ("since_window_start", pa.bool_()), ("severity", pa.string()),
    ]),
    "broker_attribution": pa.schema([
        ("snapshot_id", pa.string()), ("broker_id", pa.int32()), ("registered", pa.bool_()), ("rack", pa.string()),
        ("assigned_replicas", pa.int64()), ("missing_from_isr", pa.int64()), ("missing_broker_down", pa.int64()),
        ("missing_alive_lagging", pa.int64()), ("leaders", pa.int64()), ("shrinks_in_window", pa.int64()),
        ("cause", pa.string()), ("severity", pa.string()),
    ]),
    "leader_balance_brokers": pa.schema([
        ("snapshot_id", pa.string()), ("broker_id", pa.int32()), ("registered", pa.bool_()), ("leaders", pa.int64()),
        ("preferred", pa.int64()), ("preferred_led_by_other", pa.int64()), ("imbalance_ratio", pa.float64()),
        ("imbalanced", pa.bool_()), ("severity", pa.string()),
    ]),
    "leader_balance_partitions": pa.schema([
        ("snapshot_id", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
        ("preferred_leader", pa.int32()), ("leader", pa.int32()), ("replicas", INTS), ("isr", INTS),
        ("fixable", pa.bool_()), ("blocked_reason", pa.string()), ("action", pa.string()), ("severity", pa.string()),
    ]),
    "leader_balance_cluster": pa.schema([
        ("snapshot_id", pa.string()), ("registered_brokers", pa.int64()), ("partitions", pa.int64()),
        ("non_preferred", pa.int64()), ("fixable", pa.int64()), ("imbalanced_brokers", pa.int64()),
        ("max_leaders", pa.int64()), ("mean_leaders", pa.float64()), ("skew", pa.float64()), ("source", pa.string()),
        ("zk_rule_triggered", pa.bool_()), ("kraft_rule_triggered", pa.bool_()), ("severity", pa.string()),
    ]),
    "controller_health": pa.schema([
        ("snapshot_id", pa.string()), ("controller_id", pa.int32()), ("controller_epoch", pa.int32()),
        ("elected_at", TS), ("no_controller", pa.bool_()), ("elections_last_hour", pa.int64()),
        ("elections_in_window", pa.int64()), ("elections_per_hour", pa.float64()), ("last_change_at", TS),
        ("seconds_since_last_change", pa.float64()), ("zombie_partitions", pa.int64()), ("churn", pa.bool_()),
        ("severity", pa.string()),
    ]),
    "controller_changes": pa.schema([
        ("snapshot_id", pa.string()), ("observed_at", TS), ("previous_observed_at", TS),
        ("from_controller", pa.int32()), ("to_controller", pa.int32()), ("epoch_before", pa.int32()),
        ("epoch_after", pa.int32()), ("elections", pa.int64()), ("change", pa.string()), ("severity", pa.string()),
    ]),
    "quorum_health": pa.schema([
        ("snapshot_id", pa.string()), ("kind", pa.string()), ("replica_id", pa.int32()), ("is_leader", pa.bool_()),
        ("log_end_offset", pa.int64()), ("lag", pa.int64()), ("seconds_since_fetch", pa.int64()),
        ("seconds_since_caught_up", pa.int64()), ("fenced_since", TS), ("status", pa.string()),
        ("problem", pa.string()), ("action", pa.string()), ("severity", pa.string()),
    ]),
    "migration_health": pa.schema([
        ("snapshot_id", pa.string()), ("kind", pa.string()), ("phase", pa.string()), ("phase_since", TS),
        ("zookeeper_written_at", TS), ("zookeeper_brokers", pa.list_(pa.int32())),
        ("waiting_brokers", pa.list_(pa.int32())), ("topic", pa.string()), ("partition", pa.int32()),
        ("field", pa.string()), ("zookeeper", pa.string()), ("kraft", pa.string()), ("diverging_since", TS),
        ("status", pa.string()), ("problem", pa.string()), ("action", pa.string()), ("severity", pa.string()),
    ]),
    "lag_status_groups": pa.schema([
        ("snapshot_id", pa.string()), ("group_id", pa.string()), ("state", pa.string()), ("status", pa.string()),
        ("partition_count", pa.int64()), ("total_lag", pa.int64()), ("max_lag_topic", pa.string()),
        ("max_lag_partition", pa.int32()), ("max_lag", pa.int64()), ("ok_partitions", pa.int64()),
        ("warn_partitions", pa.int64()), ("stop_partitions", pa.int64()), ("stall_partitions", pa.int64()),
        ("rewind_partitions", pa.int64()), ("complete", pa.float64()), ("severity", pa.string()),
        ("cause", pa.string()),
    ]),
    "lag_status_partitions": pa.schema([
        ("snapshot_id", pa.string()), ("group_id", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
        ("status", pa.string()), ("committed_offset", pa.int64()), ("end_offset", pa.int64()), ("lag", pa.int64()),
        ("last_commit_at", TS), ("severity", pa.string()),
    ]),
    "transactions": pa.schema([
        ("snapshot_id", pa.string()), ("transactional_id", pa.string()), ("producer_id", pa.int64()),
        ("producer_epoch", pa.int32()), ("state", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
        ("start_time", TS), ("age_seconds", pa.float64()), ("timeout_ms", pa.int64()), ("start_offset", pa.int64()),
        ("hanging", pa.bool_()), ("overdue", pa.bool_()), ("end_offset", pa.int64()),
        ("last_stable_offset", pa.int64()), ("groups", pa.list_(pa.string())), ("problem", pa.string()),
        ("action", pa.string()), ("severity", pa.string()),
    ]),
    "retention_risk_partitions": pa.schema([
        ("snapshot_id", pa.string()), ("group_id", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
        ("committed_offset", pa.int64()), ("log_start_offset", pa.int64()), ("end_offset", pa.int64()),
        ("lag", pa.int64()), ("state", pa.string()), ("records_lost", pa.int64()), ("lost_since", TS),
        ("lost_since_window_start", pa.bool_()), ("eta_seconds", pa.float64()), ("eta_basis", pa.string()),
        ("eta_is_lower_bound", pa.bool_()), ("time_eta_seconds", pa.float64()), ("size_eta_seconds", pa.float64()),
        ("first_unconsumed_at", TS), ("retention_ms", pa.int64()), ("retention_ms_source", pa.string()),
        ("retention_bytes", pa.int64()), ("retention_bytes_source", pa.string()), ("cleanup_policy", pa.string()),
        ("size_bytes", pa.int64()), ("produce_rate", pa.float64()), ("log_start_rate", pa.float64()),
        ("reason", pa.string()), ("severity", pa.string()),
    ]),
    "retention_risk_groups": pa.schema([
        ("snapshot_id", pa.string()), ("group_id", pa.string()), ("state", pa.string()), ("partitions", pa.int32()),
        ("lost_partitions", pa.int32()), ("at_risk_partitions", pa.int32()), ("unknown_partitions", pa.int32()),
        ("records_lost", pa.int64()), ("lost_since", TS), ("lost_since_window_start", pa.bool_()),
        ("lost_topic", pa.string()), ("lost_partition", pa.int32()), ("eta_seconds", pa.float64()),
        ("eta_topic", pa.string()), ("eta_partition", pa.int32()), ("eta_basis", pa.string()),
        ("eta_is_lower_bound", pa.bool_()), ("severity", pa.string()),
    ]),
    "load_problems": pa.schema([
        ("snapshot_id", pa.string()), ("kind", pa.string()), ("broker_id", pa.int32()), ("log_dir", pa.string()),
        ("topic", pa.string()), ("partition", pa.int32()), ("value", pa.float64()), ("problem", pa.string()),
        ("action", pa.string()), ("since", TS), ("severity", pa.string()),
    ]),
}  # fmt: skip


def isr(topic: str, p: int, replicas: list[int], isr_: list[int], leader: int, min_isr: int = 1) -> dict[str, Any]:
    """An isr_health row, flags and status as the detector derives them."""
    offline = leader == -1
    under_min = offline or len(isr_) < min_isr
    under_rep = len(isr_) < len(replicas)
    status = "offline" if offline else "under_min_isr" if under_min else "under_replicated" if under_rep else "ok"
    severity = {"offline": "critical", "under_min_isr": "critical", "under_replicated": "warning"}.get(status, "ok")
    return {"topic": topic, "partition": p, "replicas": replicas, "isr": isr_, "leader": leader, "min_isr": min_isr,
            "min_isr_source": "topic" if min_isr > 1 else "kafka_default", "offline": offline,
            "under_min_isr": under_min, "under_replicated": under_rep, "at_min_isr": len(isr_) == min_isr,
            "status": status, "severity": severity}  # fmt: skip


def healthy_zk() -> dict[str, list[dict[str, Any]]]:
    """A healthy 3-broker cluster: every partition in sync and led by its preferred leader."""
    return {
        "isr_health": [isr("orders", p, [1, 2, 3], [1, 2, 3], 1, min_isr=2) for p in range(3)],
        "isr_under_replicated": [],
        "broker_attribution": [
            {"broker_id": b, "registered": True, "rack": f"rack-{b}", "assigned_replicas": 3, "missing_from_isr": 0,
             "missing_broker_down": 0, "missing_alive_lagging": 0, "leaders": 1, "shrinks_in_window": 0,
             "cause": None, "severity": "ok"}
            for b in (1, 2, 3)
        ],
        "leader_balance_brokers": [
            {"broker_id": b, "registered": True, "leaders": 1, "preferred": 1, "preferred_led_by_other": 0,
             "imbalance_ratio": 0.0, "imbalanced": False, "severity": "ok"}
            for b in (1, 2, 3)
        ],
        "leader_balance_partitions": [],
        "leader_balance_cluster": [leader_cluster()],
        "controller_health": [
            {"controller_id": 1, "controller_epoch": 4, "elected_at": AT - timedelta(days=1), "no_controller": False,
             "elections_last_hour": 0, "elections_in_window": 0, "elections_per_hour": 0.0,
             "last_change_at": AT - timedelta(days=1), "seconds_since_last_change": 86400.0, "zombie_partitions": 0,
             "churn": False, "severity": "ok"}
        ],
        "controller_changes": [],
    }  # fmt: skip


def leader_cluster(
    source: str = "zookeeper", *, non_preferred: int = 0, fixable: int = 0, imbalanced_brokers: int = 0
) -> dict[str, Any]:
    """A leader_balance_cluster row of a 3-broker cluster, rules and severity as the detector derives them."""
    zk_rule, kraft_rule = imbalanced_brokers > 0, non_preferred > 0
    own = kraft_rule if source == "kraft" else zk_rule
    severity = "warning" if own else "info" if zk_rule or kraft_rule else "ok"
    return {"registered_brokers": 3, "partitions": 30, "non_preferred": non_preferred, "fixable": fixable,
            "imbalanced_brokers": imbalanced_brokers, "max_leaders": 10, "mean_leaders": 10.0, "skew": 1.0,
            "source": source, "zk_rule_triggered": zk_rule, "kraft_rule_triggered": kraft_rule,
            "severity": severity}  # fmt: skip


def healthy_groups() -> dict[str, list[dict[str, Any]]]:
    return {
        "lag_status_groups": [group("billing", "OK", None, max_lag=0)],
        "lag_status_partitions": [],
    }


def group(group_id: str, status: str, cause: str | None, *, max_lag: int) -> dict[str, Any]:
    severity = {"OK": "ok", "WARN": "warning", "ERR": "critical"}[status]
    return {"group_id": group_id, "state": "Stable", "status": status, "partition_count": 2, "total_lag": max_lag,
            "max_lag_topic": "orders", "max_lag_partition": 0, "max_lag": max_lag, "ok_partitions": 0,
            "warn_partitions": 0, "stop_partitions": 0, "stall_partitions": 0, "rewind_partitions": 0,
            "complete": 1.0, "severity": severity, "cause": cause}  # fmt: skip


def retention_partition(
    group_id: str, topic: str, p: int, state: str, *, committed: int, start: int, end: int, severity: str,
    lost_since: datetime | None = None, eta: float | None = None, basis: str | None = None,
    written: datetime | None = None, retention_ms: int = 3_600_000, retention_bytes: int = -1,
    size_bytes: int | None = None, produce_rate: float | None = None,
) -> dict[str, Any]:  # fmt: skip
    """A retention_risk_partitions row, the figures the detector derives from those given."""
    lost = state == "lost"
    return {"group_id": group_id, "topic": topic, "partition": p, "committed_offset": committed,
            "log_start_offset": start, "end_offset": end, "lag": end - committed, "state": state,
            "records_lost": start - committed if lost else None, "lost_since": lost_since if lost else None,
            "lost_since_window_start": False if lost else None, "eta_seconds": eta, "eta_basis": basis,
            "eta_is_lower_bound": None if basis is None else basis == "retention.ms",
            "time_eta_seconds": eta if basis == "retention.ms" else None,
            "size_eta_seconds": eta if basis == "retention.bytes" else None, "first_unconsumed_at": written,
            "retention_ms": retention_ms, "retention_ms_source": "topic", "retention_bytes": retention_bytes,
            "retention_bytes_source": "kafka_default" if retention_bytes < 0 else "topic", "cleanup_policy": "delete",
            "size_bytes": size_bytes, "produce_rate": produce_rate, "log_start_rate": None, "reason": None,
            "severity": severity}  # fmt: skip


def retention_group(partitions: list[dict[str, Any]]) -> dict[str, Any]:
    """The retention_risk_groups row of one group's `retention_partition` rows, rolled up as the detector does."""
    rank = {"critical": 3, "warning": 2, "info": 1, "ok": 0}
    states = ("lost", "at_risk", "unknown", "ok", "not_applicable")
    lost = sorted((r for r in partitions if r["state"] == "lost"),
                  key=lambda r: (-r["records_lost"], r["topic"], r["partition"]))  # fmt: skip
    timed = sorted((r for r in partitions if r["eta_seconds"] is not None),
                   key=lambda r: (r["eta_seconds"], r["topic"], r["partition"]))  # fmt: skip
    since = min((r["lost_since"] for r in lost), default=None)
    first = timed[0] if timed else {}
    return {"group_id": partitions[0]["group_id"], "state": min((r["state"] for r in partitions), key=states.index),
            "partitions": len(partitions), "lost_partitions": len(lost),
            "at_risk_partitions": sum(r["state"] == "at_risk" for r in partitions),
            "unknown_partitions": sum(r["state"] == "unknown" for r in partitions),
            "records_lost": sum(r["records_lost"] for r in lost), "lost_since": since,
            "lost_since_window_start": False if lost else None, "lost_topic": lost[0]["topic"] if lost else None,
            "lost_partition": lost[0]["partition"] if lost else None, "eta_seconds": first.get("eta_seconds"),
            "eta_topic": first.get("topic"), "eta_partition": first.get("partition"),
            "eta_basis": first.get("eta_basis"), "eta_is_lower_bound": first.get("eta_is_lower_bound"),
            "severity": max((r["severity"] for r in partitions), key=rank.__getitem__)}  # fmt: skip


def publish_analysis(
    lake: Lake,
    snapshot_id: str,
    tables: Mapping[str, list[dict[str, Any]]],
    *,
    cluster: str = "c1",
    captured_at: datetime = AT,
    source: str = "snapshots",
) -> None:
    """Publish `tables` as the findings of the analysis of `snapshot_id`, as `analysis.runner` does."""
    arrow = {
        name: pa.Table.from_pylist([{"snapshot_id": snapshot_id, **row} for row in rows], schema=SCHEMAS[name])
        for name, rows in tables.items()
    }
    counts = {name: dict(sorted(_counts(t).items())) for name, t in arrow.items()}
    arrow[ANALYSIS_COMMIT_TABLE] = pa.table({
        "snapshot_id": [snapshot_id],
        "captured_at": pa.array([captured_at], TS),
        "analysed_at": pa.array([captured_at + timedelta(minutes=1)], TS),
        "source": [source],
        "detectors": [sorted(tables)],
        "findings": [json.dumps(counts, sort_keys=True)],
    })  # fmt: skip
    lake.publish(Batch(f"{snapshot_id}.analysis", cluster, captured_at, arrow, ANALYSIS_COMMIT_TABLE))


def publish_group_analysis(lake: Lake, snapshot_id: str, tables: Mapping[str, list[dict[str, Any]]]) -> None:
    publish_analysis(lake, snapshot_id, tables, captured_at=GROUPS_AT, source="group_snapshots")


def _counts(table: pa.Table) -> dict[str, int]:
    counts = {s: 0 for s in ("ok", "info", "warning", "critical")}
    for severity in table.column("severity").to_pylist():
        counts[severity] += 1
    return counts
