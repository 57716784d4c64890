from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pyspark.sql import SparkSession

from kafka_ops.detectors.registry import DETECTORS
from tests.unit.detectors.frames import AT
from tests.unit.detectors.load_frames import at, committed, end_offset, leader_of, log_dir, run, size


def only(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    (row,) = [r for r in rows if all(r[k] == v for k, v in match.items())]
    return row


def kinds(out: dict[str, list[dict[str, Any]]]) -> set[tuple[Any, ...]]:
    return {(p["kind"], p["broker_id"], p["log_dir"], p["topic"], p["partition"], p["severity"])
            for p in out["load_problems"]}  # fmt: skip


def test_size_growth_between_snapshots_is_the_leader_bytes_in(spark: SparkSession) -> None:
    sizes = [size(s, "a", 0, b, n) for s, n in (("s1", 0), ("s2", 600_000), ("s3", 1_200_000)) for b in (1, 2, 3)]
    out = run(spark, partitions=[leader_of("a", 0, [1, 2, 3])], sizes=sizes, groups=[committed("g1", "a", 0, 5)])
    row = only(out["partition_load"], topic="a")
    assert (row["bytes_in_per_s"], row["method"], row["confidence"]) == (1000.0, "size_growth", "high")
    # one group reads it, two followers fetch it: all served by the leader
    assert (row["readers"], row["followers"], row["bytes_out_per_s"]) == (1, 2, 3000.0)
    assert row["window_start"] == at("s1").replace(tzinfo=None)
    leader, follower = only(out["broker_load"], broker_id=1), only(out["broker_load"], broker_id=2)
    assert (leader["leader_bytes_in_per_s"], leader["replication_bytes_in_per_s"], leader["bytes_out_per_s"]) == (
        1000.0, 0.0, 3000.0)  # fmt: skip
    assert (follower["bytes_in_per_s"], follower["replication_bytes_in_per_s"], follower["bytes_out_per_s"]) == (
        1000.0, 1000.0, 0.0)  # fmt: skip


def test_a_retention_drop_is_left_out_not_counted_as_negative_traffic(spark: SparkSession) -> None:
    # +600 kB, then retention deletes a 1 MB segment while 600 kB more arrive (net -400 kB), then +600 kB
    steps = (("s0", 0), ("s1", 600_000), ("s2", 200_000), ("s3", 800_000))
    sizes = [(s, at(s) if s != "s0" else AT - timedelta(minutes=30), "a", 0, 1, "/d1", n, 0, False) for s, n in steps]
    out = run(spark, partitions=[leader_of("a", 0, [1])], sizes=sizes)
    row = only(out["partition_load"], topic="a")
    assert (row["bytes_in_per_s"], row["method"], row["confidence"]) == (1000.0, "size_growth", "medium")
    # disk growth is net of retention: the broker's fit sees the drop
    assert only(out["broker_load"], broker_id=1)["disk_growth_bytes_per_s"] < 1000.0


def test_end_offsets_give_the_rate_where_sizes_have_no_history(spark: SparkSession) -> None:
    sizes = [size("s3", "a", 0, 1, 1_000_000), size("s3", "b", 0, 1, 5_000)]
    offsets = [end_offset("s1", "a", 0, 0), end_offset("s3", "a", 0, 10_000)]  # b: no end offsets (no group reads it)
    out = run(spark, partitions=[leader_of("a", 0, [1]), leader_of("b", 0, [1])], sizes=sizes, offsets=offsets)
    a, b = only(out["partition_load"], topic="a"), only(out["partition_load"], topic="b")
    # 10,000 records in 1200 s, 100 bytes each (1 MB over 10,000 offsets)
    assert (a["method"], a["confidence"], a["bytes_per_offset"]) == ("offsets", "low", 100.0)
    assert a["bytes_in_per_s"] == pytest.approx(10_000 / 1200 * 100)
    assert (b["method"], b["confidence"], b["bytes_in_per_s"], b["severity"]) == ("unknown", None, None, "info")
    assert only(out["broker_load"], broker_id=1)["unknown_rate_replicas"] == 1


def test_without_capacities_or_log_dirs_disk_is_judged_by_bytes_only(spark: SparkSession) -> None:
    sizes = [size("s3", "a", p, 1 + p % 3, n) for p, n in enumerate((9_000_000_000, 1_000_000_000, 1_000_000_000))]
    parts = [leader_of("a", p, [1 + p % 3]) for p in range(3)]
    out = run(spark, partitions=parts, sizes=sizes)
    one = only(out["broker_load"], broker_id=1)
    assert (one["disk_capacity_bytes"], one["capacity_source"], one["disk_used_share"], one["days_to_full"]) == (
        None, None, None, None)  # fmt: skip
    # 9 GB against a mean of 3.67 GB: skewed by bytes; nothing can be over a share nobody knows
    assert kinds(out) == {("disk_skew", 1, None, None, None, "warning")}
    assert only(out["load_problems"])["problem"] == "broker 1 holds 9.0 GB, 2.5x the brokers' mean"


def test_a_log_dir_with_an_error_is_its_own_finding_and_no_capacity(spark: SparkSession) -> None:
    sizes = [size("s3", "a", 0, 1, 1_000, "/d1")]
    dirs = [log_dir(1, "/d1", 10**9, 9 * 10**8), log_dir(1, "/d2", error="KAFKA_STORAGE_ERROR")]
    out = run(spark, partitions=[leader_of("a", 0, [1])], sizes=sizes, dirs=dirs, brokers=[1])
    broker = only(out["broker_load"], broker_id=1)
    assert (broker["log_dirs"], broker["offline_log_dirs"], broker["disk_capacity_bytes"]) == (2, 1, 10.0**9)
    assert (broker["capacity_source"], broker["disk_free_bytes"]) == ("log_dirs", 9.0 * 10**8)
    assert kinds(out) == {("log_dir_error", 1, "/d2", None, None, "warning")}
    assert only(out["log_dir_load"], log_dir="/d2")["severity"] == "warning"
    assert only(out["load_problems"])["problem"] == "log dir /d2 of broker 1 reports KAFKA_STORAGE_ERROR"


def test_days_to_full_at_the_current_growth(spark: SparkSession) -> None:
    # 1000 B/s = 86.4 MB/day on broker 1; settings give it 100 MB + used: 1.16 days left
    sizes = [size(s, "a", 0, 1, n) for s, n in (("s1", 0), ("s2", 600_000), ("s3", 1_200_000))]
    capacity = {"disk_bytes": 101_200_000, "brokers": {"2": {"disk_bytes": 10**12}}}
    out = run(spark, partitions=[leader_of("a", 0, [1])], sizes=sizes, capacity=capacity, brokers=[1, 2])
    broker = only(out["broker_load"], broker_id=1)
    assert broker["capacity_source"] == "settings"
    assert broker["days_to_full"] == pytest.approx(100_000_000 / 1000 / 86400)
    assert kinds(out) == {("disk_full_soon", 1, None, None, None, "critical")}
    assert only(out["load_problems"])["since"] == at("s1").replace(tzinfo=None)
    warned = run(spark, partitions=[leader_of("a", 0, [1])], sizes=sizes, capacity=capacity, brokers=[1, 2],
                 thresholds={"disk_days_critical": 1.0})  # fmt: skip
    assert kinds(warned) == {("disk_full_soon", 1, None, None, None, "warning")}


def test_a_disk_or_log_dir_above_its_share_since_its_run_began(spark: SparkSession) -> None:
    # broker 1 at 85% in every snapshot; broker 2 at 96%, sized only in the latest; broker 1's volume
    # 50% full in s1, then 90%
    sizes = [size(s, "a", 0, 1, 850) for s in ("s1", "s2", "s3")] + [size("s3", "a", 1, 2, 960)]
    dirs = [log_dir(1, "/d1", 1000, 500, snapshot="s1"), log_dir(1, "/d1", 1000, 100, snapshot="s2"),
            log_dir(1, "/d1", 1000, 100), log_dir(2, "/d1", 1000, 900)]  # fmt: skip
    out = run(spark, partitions=[leader_of("a", 0, [1]), leader_of("a", 1, [2])], sizes=sizes, dirs=dirs,
              capacity={"disk_bytes": 1000}, brokers=[1, 2])  # fmt: skip
    assert kinds(out) == {
        ("disk_over_share", 1, None, None, None, "warning"),  # 85% > max_disk_share 0.8
        ("disk_over_share", 2, None, None, None, "critical"),  # 96% > disk_share_critical 0.95
        ("log_dir_over_share", 1, "/d1", None, None, "warning"),  # the volume: 90% used
    }
    broker_1 = only(out["load_problems"], kind="disk_over_share", broker_id=1)
    assert broker_1["problem"] == "broker 1 is 85% full (850 B of 1.0 kB, capacity from settings)"
    assert broker_1["since"] == at("s1").replace(tzinfo=None)
    assert only(out["load_problems"], kind="disk_over_share", broker_id=2)["since"] == AT.replace(tzinfo=None)
    assert only(out["load_problems"], kind="log_dir_over_share")["since"] == at("s2").replace(tzinfo=None)


def test_disk_skew_by_share_and_across_the_log_dirs_of_a_broker(spark: SparkSession) -> None:
    sizes = [size("s3", "a", 0, 1, 6 * 10**9, "/d1"), size("s3", "a", 1, 1, 10**9, "/d2"),
             size("s3", "a", 2, 1, 10**9, "/d3"), size("s3", "a", 3, 2, 10**9),
             size("s3", "a", 4, 3, 10**9)]  # fmt: skip
    parts = [leader_of("a", p, [1 if p < 3 else p - 1]) for p in range(5)]
    # broker 1 has 16 GB, the others 2 GB: shares 50%, 50%, 50% -> no skew by share though bytes differ
    capacity = {"disk_bytes": 4 * 10**9, "brokers": {"1": {"disk_bytes": 16 * 10**9}}}
    dirs = [log_dir(1, d) for d in ("/d1", "/d2", "/d3")] + [log_dir(b) for b in (2, 3)]
    out = run(spark, partitions=parts, sizes=sizes, capacity=capacity, dirs=dirs)
    assert kinds(out) == {("log_dir_skew", 1, "/d1", None, None, "warning")}  # 6 GB vs a mean of 2.67 GB
    skewed = run(spark, partitions=parts, sizes=sizes, capacity={"disk_bytes": 16 * 10**9}, dirs=dirs)
    assert ("disk_skew", 1, None, None, None, "warning") in kinds(skewed)


def test_hot_partitions_against_their_topic_or_the_cluster(spark: SparkSession) -> None:
    rates = {("t", 0): 50, ("t", 1): 1, ("t", 2): 1, ("t", 3): 1, ("solo", 0): 20}
    sizes = [size(s, t, p, 1, r * 600 * i) for (t, p), r in rates.items() for i, s in enumerate(("s1", "s2", "s3"))]
    parts = [leader_of(t, p, [1]) for t, p in rates]
    out = run(spark, partitions=parts, sizes=sizes, brokers=[1], thresholds={"hot_partition_min_bytes_per_s": 10})
    # t-0: 50 B/s against its topic's median 1; solo-0 (one partition): 20 against the cluster's median 1
    assert {(p["topic"], p["partition"]) for p in out["partition_load"] if p["hot"]} == {("t", 0), ("solo", 0)}
    assert only(out["partition_load"], topic="t", partition=0)["severity"] == "warning"
    assert {k for k in kinds(out) if k[0] == "hot_partition"} == {
        ("hot_partition", None, None, "t", 0, "warning"),
        ("hot_partition", None, None, "solo", 0, "warning"),
    }
    floor = run(spark, partitions=parts, sizes=sizes, brokers=[1], thresholds={"hot_partition_min_bytes_per_s": 30})
    assert {(p["topic"], p["partition"]) for p in floor["partition_load"] if p["hot"]} == {("t", 0)}


def test_hot_brokers_near_network_capacity_or_far_above_the_mean(spark: SparkSession) -> None:
    rates = {0: 9000, 1: 1000, 2: 1000}  # partition p led by broker p + 1, no followers
    sizes = [size(s, "a", p, p + 1, r * 600 * i) for p, r in rates.items() for i, s in enumerate(("s1", "s2", "s3"))]
    parts = [leader_of("a", p, [p + 1]) for p in rates]
    limits = {"hot_broker_min_bytes_per_s": 100, "hot_partition_min_bytes_per_s": 10**9}
    out = run(spark, partitions=parts, sizes=sizes, thresholds=limits)
    assert {k for k in kinds(out) if k[0].startswith("hot_broker")} == {
        ("hot_broker_in", 1, None, None, None, "warning")
    }
    capacity = {"network_in_bytes_per_s": 10_000, "brokers": {"2": {"network_in_bytes_per_s": 1200}}}
    capped = run(
        spark, partitions=parts, sizes=sizes, thresholds={**limits, "hot_broker_factor": 10}, capacity=capacity
    )
    hot = {k[1] for k in kinds(capped) if k[0] == "hot_broker_in"}
    assert hot == {1, 2}  # 90% of 10 kB/s; 83% of 1.2 kB/s
    problem = only(capped["load_problems"], kind="hot_broker_in", broker_id=2)["problem"]
    assert problem == "broker 2 moves in (produce + replication) 1.0 kB/s, 83% of its network capacity 1.2 kB/s"


def test_the_detector_is_registered_with_its_tables() -> None:
    detector = DETECTORS["load"]
    assert detector.outputs == ("partition_load", "broker_load", "log_dir_load", "load_problems")
    assert {"replica_sizes", "log_dirs", "partition_end_offsets", "group_offsets"} <= set(detector.tables)
