"""A small lake for the report tests: four ZooKeeper snapshots and four group collections over the
last three hours (plus one of each two days earlier, outside the report's window), built with the
real snapshot and group builders, and hand-made findings for the newest of each, published the way
`analysis.runner` publishes them.

The story: broker 3 stops between 03:00 and 04:00 (its replicas leave the ISRs, `solo-0`, held only
by broker 3, goes offline); group `stable` (range assignor) stops committing while its lag grows;
group `analytics` is skewed (3 partitions on one member, none on the other), where
cooperative-sticky would give each 1 or 2.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from kafka_ops.lake.schema import SNAPSHOT_VALIDATIONS
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.model.groups import Commit, ConsumerGroup, GroupMember, GroupSnapshot, offset_rows
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from tests.unit.snapshots import GROUP_PARTITIONS, broker, small_snapshot, state

NOW = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
SNAPSHOTS = {  # id: (captured_at, broker 3 up)
    "s-old": (NOW - timedelta(days=2), True),
    "s1": (NOW - timedelta(hours=3), True),
    "s2": (NOW - timedelta(hours=2), False),
    "s3": (NOW - timedelta(hours=1), False),
    "s4": (NOW - timedelta(minutes=2), False),
}
COLLECTIONS = {  # id: (captured_at, end offset of orders-0, committed offset of stable on orders-0)
    "g-old": (NOW - timedelta(days=2), 10, 10),
    "g1": (NOW - timedelta(hours=3), 100, 90),
    "g2": (NOW - timedelta(hours=2), 200, 120),
    "g3": (NOW - timedelta(hours=1), 300, 120),
    "g4": (NOW - timedelta(minutes=1), 400, 120),
}


def snapshot(snapshot_id: str) -> ClusterSnapshot:
    """`small_snapshot` at the scenario's time; with broker 3 up, every ISR is full and `solo-0` led.

    Under-replicated then: broker 3 up: none (orders-2's third replica is still being added, which
    does not count); down: orders-0 (isr [1, 2] of [1, 2, 3]). Offline: solo-0 whenever broker 3 is down."""
    at, up = SNAPSHOTS[snapshot_id]
    snap = dataclasses.replace(small_snapshot(snapshot_id), captured_at=at)
    if up:
        snap.brokers = {**snap.brokers, 3: broker(3, "rack-c")}
        snap.partition_states = {
            **snap.partition_states,
            ("orders", 0): state("orders", 0, 1, (1, 2, 3), version=3),
            ("solo", 0): state("solo", 0, 3, (3,), version=2),
        }
    return snap


def collection(snapshot_id: str) -> GroupSnapshot:
    """`stable` (two members, range; broker 2 coordinates it) commits on orders-0 only; `analytics` has
    two members, one of them holding nothing;
    `fresh`, a consumer-protocol group (KIP-848), has one of its two members still reconciling."""
    at, end, committed = COLLECTIONS[snapshot_id]
    ends = {("orders", 0): end, ("orders", 1): 50, ("orders", 2): 0}
    stable = (
        GroupMember("m-a", None, "client-a", "/10.0.0.1", (("orders", 0), ("orders", 1))),
        GroupMember("m-b", "static-b", "client-b", "/10.0.0.2", (("orders", 2),)),
    )
    analytics = (
        GroupMember("a-0", None, "analytics-0", "/10.0.0.3", (("orders", 0), ("orders", 1), ("orders", 2))),
        GroupMember("a-1", None, "analytics-1", "/10.0.0.4", ()),
    )
    fresh = (
        GroupMember("f-0", None, "fresh-0", "/10.0.0.5", (("orders", 0), ("orders", 1)), member_epoch=5,
                    subscribed_topics=("orders",), target_assignment=(("orders", 0),)),
        GroupMember("f-1", None, "fresh-1", "/10.0.0.6", (), member_epoch=6, subscribed_topics=("orders",),
                    target_assignment=()),
    )  # fmt: skip
    assigned = [("orders", 0), ("orders", 1), ("orders", 2)]
    offsets = [
        *offset_rows("stable", {("orders", 0): Commit(committed), ("orders", 1): Commit(50)}, assigned,
                     GROUP_PARTITIONS, ends),
        *offset_rows("analytics", {tp: Commit(e) for tp, e in ends.items()}, assigned, GROUP_PARTITIONS, ends),
    ]  # fmt: skip
    return GroupSnapshot(
        cluster="c1",
        snapshot_id=snapshot_id,
        captured_at=at,
        bootstrap_servers="k1:9092",
        groups=(
            ConsumerGroup("stable", "Stable", "consumer", "range", stable, coordinator_id=2),
            ConsumerGroup("analytics", "Stable", "consumer", "range", analytics),
            ConsumerGroup("fresh", "Reconciling", "consumer", "uniform", fresh, "consumer", 6, 6),
        ),
        offsets=tuple(offsets),
        end_offsets=ends,
        completed_at=at,
    )


def publish_findings(
    lake: Lake, snapshot_id: str, source: str, tables: dict[str, list[dict[str, Any]]], *, cluster: str = "c1"
) -> None:
    """Publish `tables` as the findings of the analysis of batch `snapshot_id` (one of the scenario's)."""
    at = (SNAPSHOTS if source == "snapshots" else COLLECTIONS)[snapshot_id][0]
    counts = {t: {s: sum(r["severity"] == s for r in rows) for s in ("critical", "warning", "info", "ok")}
              for t, rows in tables.items()}  # fmt: skip
    run = pa.table({
        "snapshot_id": [snapshot_id],
        "captured_at": pa.array([at], pa.timestamp("us", tz="UTC")),
        "analysed_at": pa.array([at + timedelta(seconds=30)], pa.timestamp("us", tz="UTC")),
        "source": [source],
        "detectors": [sorted(tables)],
        "findings": [json.dumps(counts, sort_keys=True)],
    })  # fmt: skip
    arrow = {t: pa.Table.from_pylist([{"snapshot_id": snapshot_id, **r} for r in rows]) for t, rows in tables.items()}
    lake.publish(Batch(f"{snapshot_id}.analysis", cluster, at, {"analysis_runs": run, **arrow}, "analysis_runs"))


def publish_validation(
    lake: Lake, snapshot_id: str, *, trusted: bool, failed: list[str], data_docs: str | None, cluster: str = "c1"
) -> None:
    """An integrity validation row for ZooKeeper snapshot `snapshot_id`, as `validation.integrity` writes it."""
    at = SNAPSHOTS[snapshot_id][0]
    row = {"snapshot_id": snapshot_id, "captured_at": at, "validated_at": at + timedelta(seconds=10),
           "source": "snapshots", "trusted": trusted, "failed": failed, "details": "{}", "data_docs": data_docs,
           "suite_version": "1"}  # fmt: skip
    table = pa.Table.from_pylist([row], schema=SNAPSHOT_VALIDATIONS)
    batch = Batch(f"{snapshot_id}.validation", cluster, at, {"snapshot_validations": table}, "snapshot_validations")
    lake.publish(batch)


def zookeeper_findings() -> dict[str, list[dict[str, Any]]]:
    """What the detectors say about s4: broker 3 down since s2."""
    since = SNAPSHOTS["s2"][0]

    def health(topic: str, p: int, replicas: list[int], isr: list[int], leader: int, status: str) -> dict[str, Any]:
        severity = {"offline": "critical", "under_replicated": "warning"}.get(status, "ok")
        return {"topic": topic, "partition": p, "replicas": replicas, "isr": isr, "leader": leader, "min_isr": 1,
                "offline": status == "offline", "under_min_isr": status == "offline",
                "under_replicated": status == "under_replicated", "status": status, "severity": severity}  # fmt: skip

    def attribution(b: int, registered: bool, missing: int, shrinks: int, cause: str | None) -> dict[str, Any]:
        return {"broker_id": b, "registered": registered, "rack": f"rack-{'abc'[b - 1]}" if registered else None,
                "assigned_replicas": 3, "missing_from_isr": missing, "leaders": {1: 2, 2: 1, 3: 0}[b],
                "shrinks_in_window": shrinks, "cause": cause, "severity": "critical" if cause else "ok"}  # fmt: skip

    def event(p: int, kind: str, replica: int, at: datetime) -> dict[str, Any]:
        severity = "warning" if kind == "shrink" else "info"
        return {"observed_at": at, "topic": "orders", "partition": p, "event": kind, "replica": replica,
                "isr_before": [1, 2], "isr_after": [1, 2], "severity": severity}  # fmt: skip

    return {
        "broker_attribution": [
            attribution(1, True, 0, 0, None),
            attribution(2, True, 0, 1, None),
            attribution(3, False, 2, 1, "broker 3 is down: 2 partitions under-replicated"),
        ],
        "leader_balance_brokers": [
            {"broker_id": 1, "registered": True, "leaders": 2, "preferred": 2, "severity": "ok"},
            {"broker_id": 2, "registered": True, "leaders": 1, "preferred": 1, "severity": "ok"},
            {"broker_id": 3, "registered": False, "leaders": 0, "preferred": 1, "severity": "warning"},
        ],
        "isr_health": [
            health("orders", 0, [1, 2, 3], [1, 2], 1, "under_replicated"),
            health("orders", 1, [2, 1], [2, 1], 2, "ok"),
            health("solo", 0, [3], [3], -1, "offline"),
        ],
        "isr_under_replicated": [
            {
                "topic": "orders",
                "partition": 0,
                "missing": [3],
                "under_replicated_since": since,
                "duration_seconds": 6600.0,
                "severity": "warning",
            },
        ],
        "isr_events": [
            event(0, "shrink", 3, since),
            event(0, "expand", 2, since - timedelta(minutes=30)),
            event(0, "shrink", 2, since - timedelta(minutes=40)),
        ],
        "controller_health": [
            {
                "controller_id": 1,
                "controller_epoch": 4,
                "no_controller": False,
                "elections_last_hour": 0,
                "last_change_at": NOW - timedelta(days=3),
                "zombie_partitions": 0,
                "churn": False,
                "severity": "ok",
            },
        ],
        "broker_load": [
            load(1, 400e9, None, 10e6, "ok"),
            load(2, 900e9, 10.0, 30e6, "warning"),
            load(3, 100e9, 80.0, 0.0, "ok"),
        ],
        "load_problems": [
            {
                "kind": "disk_full_soon",
                "broker_id": 2,
                "log_dir": None,
                "topic": None,
                "partition": None,
                "value": 10.0,
                "problem": "broker 2 fills up in 10.0 days at its current growth of 10.0 GB/day",
                "action": "move partitions off broker 2 (load-aware replica balance)",
                "since": NOW - timedelta(hours=20),
                "severity": "warning",
            },
        ],
    }


def load(broker: int, used: float, days: float | None, bytes_in: float, severity: str) -> dict[str, Any]:
    """A broker_load row: 1 TB disks from settings, 125 MB/s network in."""
    return {"broker_id": broker, "registered": broker != 3, "disk_used_bytes": int(used), "disk_capacity_bytes": 1e12,
            "capacity_source": "settings", "days_to_full": days, "bytes_in_per_s": bytes_in,
            "leader_bytes_in_per_s": bytes_in / 2, "bytes_out_per_s": bytes_in * 2, "network_in_capacity": 125e6,
            "network_out_capacity": None, "severity": severity}  # fmt: skip


def group_findings(evil_group: str = "stable") -> dict[str, list[dict[str, Any]]]:
    """What the group detectors say about g4: `stable` stopped (ERR), `analytics` skewed."""
    last_commit = COLLECTIONS["g2"][0]
    return {
        "lag_status_groups": [
            {"group_id": evil_group, "state": "Stable", "status": "ERR", "total_lag": 280, "max_lag_topic": "orders",
             "max_lag_partition": 0, "max_lag": 280, "stop_partitions": 1, "stall_partitions": 0,
             "rewind_partitions": 0, "severity": "critical", "cause": "1 partition STOP: no new commit for 2 h"},
            {"group_id": "analytics", "state": "Stable", "status": "OK", "total_lag": 0, "max_lag_topic": "orders",
             "max_lag_partition": 0, "max_lag": 0, "stop_partitions": 0, "stall_partitions": 0,
             "rewind_partitions": 0, "severity": "ok", "cause": "3 partitions OK: total lag 0"},
        ],
        "lag_status_partitions": [
            {"group_id": evil_group, "topic": "orders", "partition": 0, "status": "STOP", "last_commit_at": last_commit,
             "severity": "critical"},
        ],
        "lag_time_groups": [
            {"group_id": evil_group, "max_lag_seconds": 7200.0, "max_lag_topic": "orders", "max_lag_partition": 0,
             "max_lag_method": "extrapolated", "max_is_lower_bound": False, "severity": "critical"},
        ],
        "assignor_skew_groups": [
            {"group_id": "analytics", "assignor": "range", "spread": 3, "skewed": True, "severity": "warning",
             "cause": "3-0 partitions per member"},
        ],
        "assignor_skew_members": [
            {"group_id": "analytics", "member_id": "a-0", "client_id": "analytics-0", "host": "/10.0.0.3",
             "partitions": 3, "lag": 0, "severity": "warning"},
            {"group_id": "analytics", "member_id": "a-1", "client_id": "analytics-1", "host": "/10.0.0.4",
             "partitions": 0, "lag": 0, "severity": "ok"},
        ],
        "assignor_recommendations": [
            {"group_id": "analytics", "recommended": "cooperative-sticky", "prediction_matches": True,
             "prediction_moves": 0, "reason": "switch analytics from range to cooperative-sticky", "error": None,
             "severity": "warning"},
        ],
        "assignor_whatif": [
            {"group_id": "analytics", "assignor": "cooperative-sticky", "min_partitions": 1, "max_partitions": 2,
             "moved_partitions": 1, "severity": "info"},
        ],
    }  # fmt: skip


def build(lake: Lake, *, analyse: bool = True, groups: bool = True) -> Lake:
    """The scenario's lake: every snapshot and (with `groups`) collection, and (with `analyse`) the
    findings of the newest of each."""
    for sid in SNAPSHOTS:
        lake.publish(snapshot_batch(snapshot(sid)))
    if groups:
        for gid in COLLECTIONS:
            lake.publish(group_batch(collection(gid)))
    if analyse:
        publish_findings(lake, "s4", "snapshots", zookeeper_findings())
        if groups:
            publish_findings(lake, "g4", "group_snapshots", group_findings())
    return lake
