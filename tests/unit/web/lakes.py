"""The web tests' lake: the report scenario's snapshots and group collections (real writers), with
findings for the newest of each published as `analysis.runner` publishes them, shaped as the
detectors write them (`lag_status`, `lag_time`, `isr_health`, `leader_balance`, `controller_health`,
`reassignments`).

At `NOW` (the scenario's): group `stable` lags 280 on orders-0 (committed 120, end 400; STOP, 7,200 s
behind, extrapolated) and 0 on orders-1; `analytics` is caught up everywhere.

Beside the scenario, what KMinion's broker, topic and log-dir series read (`kminion_state`): the
cluster's id, `solo` compacted, the replicas' bytes on disk, and the partitions' log start offsets
(retention removed orders-0's first 100 records).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot, ConfigOverride, LogDir, ReplicaSize
from kafka_ops.model.groups import GroupSnapshot
from kafka_ops.settings import ClusterConfig, LakeFormat, Settings, WebSettings
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from tests.unit.report import scenario

NOW = scenario.NOW
CLUSTER = "c1"


def _partition(
    group: str, p: int, committed: int, end: int, status: str, seconds: float, method: str, complete: float = 0.4
) -> dict[str, Any]:
    return {"group_id": group, "topic": "orders", "partition": p, "status": status, "committed_offset": committed,
            "end_offset": end, "lag": end - committed, "lag_start": 10, "lag_end": end - committed, "samples": 4,
            "complete": complete, "last_commit_at": scenario.COLLECTIONS["g2"][0], "owner": None,
            "severity": "critical" if status != "OK" else "ok",
            # Burrow's start and end: the window's first and last commits, the lag at each one's time
            "first_commit_at": scenario.COLLECTIONS["g1"][0], "first_commit_offset": committed - 30,
            "last_commit_offset": committed, "last_commit_lag": 80 if end > committed else 0,
            "_seconds": seconds, "_method": method}  # fmt: skip


PARTITIONS = [
    _partition("stable", 0, 120, 400, "STOP", 7200.0, "extrapolated"),
    _partition("stable", 1, 50, 50, "OK", 0.0, "caught_up"),
    *(_partition("analytics", p, e, e, "OK", 0.0, "caught_up", 1.0) for p, e in ((0, 400), (1, 50), (2, 0))),
]


def group_findings() -> dict[str, list[dict[str, Any]]]:
    status = [{k: v for k, v in r.items() if not k.startswith("_")} for r in PARTITIONS]
    times = [
        {"group_id": r["group_id"], "topic": "orders", "partition": r["partition"],
         "committed_offset": r["committed_offset"], "end_offset": r["end_offset"], "lag": r["lag"],
         "lag_seconds": r["_seconds"], "method": r["_method"],
         "points": 4, "severity": "ok"}
        for r in PARTITIONS
    ]  # fmt: skip
    groups = [
        {"group_id": "stable", "state": "Stable", "status": "ERR", "partition_count": 2, "total_lag": 280,
         "complete": 0.0, "severity": "critical", "cause": "1 partition STOP"},
        {"group_id": "analytics", "state": "Stable", "status": "OK", "partition_count": 3, "total_lag": 0,
         "complete": 0.0, "severity": "ok", "cause": "3 partitions OK"},
    ]  # fmt: skip
    lag_time_groups = [
        {"group_id": "stable", "max_lag_seconds": 7200.0, "max_lag_method": "extrapolated", "severity": "critical"},
        {"group_id": "analytics", "max_lag_seconds": 0.0, "max_lag_method": "caught_up", "severity": "ok"},
    ]
    return {"lag_status_partitions": status, "lag_status_groups": groups, "lag_time_partitions": times,
            "lag_time_groups": lag_time_groups}  # fmt: skip


def metadata_findings() -> dict[str, list[dict[str, Any]]]:
    tables = scenario.zookeeper_findings()
    for row in tables["isr_health"]:
        status = row["status"]
        row.update(offline=status == "offline", under_min_isr=status == "offline",
                   under_replicated=status in ("under_replicated", "offline"), at_min_isr=False)  # fmt: skip
    tables["leader_balance_cluster"] = [
        {"registered_brokers": 2, "partitions": 3, "non_preferred": 1, "fixable": 0, "imbalanced_brokers": 1,
         "severity": "warning"}
    ]  # fmt: skip
    tables["reassignments_in_flight"] = [
        {"topic": "orders", "partition": 2, "stuck": True, "severity": "warning"},
    ]
    return tables


CLUSTER_ID = "E8KyUHmGSnyMvoo_7rulDw"
BROKER_BYTES = {1: 1450, 2: 1350}
"""orders-0, -1, -2 hold 1,000, 300 and 50 bytes on each of brokers 1 and 2; broker 1 also holds a future
replica of orders-1 (100 bytes, moving to its second log dir). Broker 3, down, is not asked."""
START_OFFSETS = {("orders", 0): 100, ("orders", 1): 0, ("orders", 2): 0}


def kminion_state(snap: ClusterSnapshot) -> ClusterSnapshot:
    """`snap` with a cluster id, `solo` compacted, and the replica bytes of `BROKER_BYTES`."""
    sizes = {0: 1000, 1: 300, 2: 50}
    replicas = [ReplicaSize("orders", p, b, "/data/a", size) for p, size in sizes.items() for b in (1, 2)]
    return dataclasses.replace(
        snap,
        cluster_id=CLUSTER_ID,
        configs=[*snap.configs, ConfigOverride("topic", "solo", {"cleanup.policy": "compact"})],
        log_dirs=[LogDir(1, "/data/a"), LogDir(1, "/data/b"), LogDir(2, "/data/a")],
        replica_sizes=[*replicas, ReplicaSize("orders", 1, 1, "/data/b", 100, 0, is_future=True)],
    )


def with_start_offsets(collection: GroupSnapshot) -> GroupSnapshot:
    return dataclasses.replace(collection, start_offsets=START_OFFSETS)


def publish_collection(lake: Lake, snapshot_id: str, at: datetime) -> None:
    """A new commit: g4's groups and offsets collected again at `at` as `snapshot_id`."""
    again = dataclasses.replace(scenario.collection("g4"), snapshot_id=snapshot_id, captured_at=at, completed_at=at)
    lake.publish(group_batch(with_start_offsets(again)))


def build(root: Path, lake_format: str = "parquet") -> Lake:
    lake = open_lake(root, lake_format)
    for sid in scenario.SNAPSHOTS:
        lake.publish(snapshot_batch(kminion_state(scenario.snapshot(sid))))
    for gid in scenario.COLLECTIONS:
        lake.publish(group_batch(with_start_offsets(scenario.collection(gid))))
    scenario.publish_findings(lake, "s4", "snapshots", metadata_findings())
    scenario.publish_findings(lake, "g4", "group_snapshots", group_findings())
    return lake


def settings(
    root: Path,
    profile: str = "kafka-lag-exporter",
    max_age: timedelta = timedelta(minutes=30),
    lake_format: LakeFormat = "parquet",
) -> Settings:
    web = WebSettings(profile, max_age.total_seconds() / 60)  # type: ignore[arg-type]
    return Settings(lake_root=str(root), clusters=(ClusterConfig(CLUSTER),), web=web, lake_format=lake_format)
