"""The load detector run by the real analysis (`analysis.runner.analyse`) over a lake written by the real
writers (`snapshot_batch`, `group_batch`), then judged by the health gates and turned into alerts."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kafka_ops.alerting.alert import Links
from kafka_ops.alerting.from_findings import gate_alerts
from kafka_ops.analysis.runner import analyse
from kafka_ops.capacities import Capacities
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.model.cluster import ClusterSnapshot, LogDir, ReplicaSize
from kafka_ops.report.digest import render_findings
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.gates import run_gates
from tests.unit.snapshots import AT, group_snapshot, small_snapshot

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RATES = {("orders", 0): 1000, ("orders", 1): 100, ("orders", 2): 0}
"""Bytes per second each partition grows by; orders-0 on brokers 1, 2 (3 is down), led by 1."""
REPLICAS = {("orders", 0): (1, 2), ("orders", 1): (2, 1), ("orders", 2): (1, 2)}


def snapshot(snapshot_id: str, minutes_ago: int) -> ClusterSnapshot:
    snap = small_snapshot(snapshot_id)
    snap.captured_at = AT - timedelta(minutes=minutes_ago)
    elapsed = (20 - minutes_ago) * 60
    snap.replica_sizes = [
        ReplicaSize(topic, p, b, "/data", 1_000_000 + rate * elapsed)
        for (topic, p), rate in RATES.items()
        for b in REPLICAS[(topic, p)]
    ]
    snap.log_dirs = [
        LogDir(1, "/data", None, 100 * 10**9, 60 * 10**9),
        LogDir(2, "/data", None, 100 * 10**9, 90 * 10**9),
        LogDir(2, "/data2", "KAFKA_STORAGE_ERROR"),
    ]
    return snap


def test_rates_disk_and_problems_from_real_batches_reach_the_gates(spark: SparkSession, tmp_path: Path) -> None:
    lake = open_lake(tmp_path)
    for sid, minutes_ago in (("s1", 20), ("s2", 10), ("s3", 0)):
        lake.publish(snapshot_batch(snapshot(sid, minutes_ago)))
    collected = AT - timedelta(minutes=1)
    lake.publish(group_batch(replace(group_snapshot("g1"), captured_at=collected, completed_at=collected)))
    thresholds = Thresholds(hot_partition_min_bytes_per_s=500.0)
    capacity = Capacities.from_mapping({"disk_bytes": 1_000_000_000, "brokers": {"2": {"disk_bytes": 10**12}}}, "test")

    # the gates need the findings of the detectors they always read, besides the load's
    detectors = [DETECTORS[name] for name in ("isr_health", "leader_balance", "controller_health", "load")]
    result = analyse(spark, str(tmp_path), "c1", detectors, thresholds, capacity=capacity, analysed_at=AT)

    assert result.snapshot_id == "s3"
    parts = {(r["topic"], r["partition"]): r for r in lake.read("partition_load", "c1").to_pylist()}
    hot = parts[("orders", 0)]
    assert (hot["bytes_in_per_s"], hot["method"], hot["confidence"], hot["hot"]) == (
        1000.0,
        "size_growth",
        "high",
        True,
    )
    # group `stable` commits on orders-0: it and the follower on broker 2 (broker 3 is down, but assigned) read it
    assert (hot["readers"], hot["followers"], hot["bytes_out_per_s"]) == (1, 2, 3000.0)
    assert parts[("solo", 0)]["method"] == "unknown"  # offline: no replica size anywhere
    brokers = {r["broker_id"]: r for r in lake.read("broker_load", "c1").to_pylist()}
    one = brokers[1]
    assert (one["leader_bytes_in_per_s"], one["replication_bytes_in_per_s"]) == (1000.0, 100.0)
    assert one["disk_growth_bytes_per_s"] == pytest.approx(1100.0)
    # 1 GB of settings, ~3.3 MB used, growing 1100 B/s: 10.5 days, a warning (below 14)
    assert one["days_to_full"] == pytest.approx((10**9 - one["disk_used_bytes"]) / 1100 / 86400)
    assert (brokers[2]["log_dirs"], brokers[2]["offline_log_dirs"]) == (2, 1)
    problems = {
        (r["kind"], r["broker_id"], r["log_dir"], r["topic"]) for r in lake.read("load_problems", "c1").to_pylist()
    }
    assert problems == {
        ("disk_full_soon", 1, None, None),
        ("log_dir_error", 2, "/data2", None),
        ("hot_partition", None, None, "orders"),
    }

    alerts = {a.key: a for a in gate_alerts(run_gates(lake, "c1", "s3", data_docs=False), Links(), AT)}
    assert alerts["disk_within_limits"].title == "disk use beyond its limits or skewed: 2 brokers or log dirs"
    assert alerts["no_hot_spots"].affected[0].text.startswith("orders-0: partition orders-0 takes 1.0 kB/s in")
    digest = render_findings(lake, "c1")
    assert "\nDisk and traffic (load)\n" in digest
    assert "warning  log dir /data2 of broker 2 reports KAFKA_STORAGE_ERROR; do: replace or repair the disk" in digest
