from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.replica_placement import DETECTOR, detect_replica_placement
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, BROKERS, PARTITIONS, frame, partition

OUTPUTS = ("replica_placement_brokers", "replica_placement_racks", "replica_placement_partitions",
           "replica_placement_topics")  # fmt: skip


def brokers(spark: SparkSession, racks: dict[int, str | None], snapshot: str = "s1") -> DataFrame:
    return frame(spark, BROKERS, [(snapshot, AT, b, rack) for b, rack in racks.items()])


def detect(parts: DataFrame, registered: DataFrame) -> dict[str, DataFrame]:
    return detect_replica_placement(parts, registered, snapshot_id="s1")


def expect(spark: SparkSession, result: DataFrame, rows: list[tuple[Any, ...]]) -> None:
    assertDataFrameEqual(result, spark.createDataFrame(rows, result.schema))


def test_every_status(spark: SparkSession) -> None:
    # racks a: 1, 2; b: 3, 5; 4 registered without a rack; 9 holds a replica but is not registered
    registered = brokers(spark, {1: "a", 2: "a", 3: "b", 4: None, 5: "b"})
    parts = frame(spark, PARTITIONS, [
        partition("t", 0, [1, 3], [1, 3]),                        # a, b: spread
        partition("t", 1, [1, 2], [1, 2]),                        # a, a: shares a rack
        partition("t", 2, [1, 2, 3], [2, 1, 3]),                  # a, a, b: 2 distinct = 2 racks: fine
        partition("t", 3, [3, 4], [3, 4]),                        # b, unknown: one known rack
        partition("t", 4, [9, 1], [1]),                           # unknown (unregistered), a
        partition("u", 0, [2], [2]),                              # RF 1: one rack is enough
        partition("u", 1, [3], [3]),
        partition("v", 0, [3, 1, 2], [1, 2], leader=1, adding=[3]),  # adding 3 dropped: a, a
        partition("w", 0, [1], [1]),                              # RF 1 here, but topic w's is 2
        partition("w", 1, [1, 3], [1, 3]),
    ])  # fmt: skip
    found = detect(parts, registered)
    assert set(found) == set(OUTPUTS)

    # 18 replicas; registered brokers hold 17, mean 3.4: more than 4.08 is info
    expect(spark, found["replica_placement_brokers"], [
        ("s1", 1, "a", True, 7, 6, 7 / 18, "info"),
        ("s1", 2, "a", True, 4, 2, 4 / 18, "ok"),
        ("s1", 3, "b", True, 5, 2, 5 / 18, "info"),
        ("s1", 4, None, True, 1, 0, 1 / 18, "ok"),
        ("s1", 5, "b", True, 0, 0, 0.0, "ok"),
        ("s1", 9, None, False, 1, 0, 1 / 18, "ok"),
    ])  # fmt: skip
    expect(spark, found["replica_placement_racks"], [
        ("s1", "a", 2, 11, 11 / 18, "ok"),
        ("s1", "b", 2, 5, 5 / 18, "ok"),
        ("s1", None, 2, 2, 2 / 18, "ok"),
    ])  # fmt: skip
    expect(spark, found["replica_placement_partitions"], [
        ("s1", "t", 1, [1, 2], ["a", "a"], 1, 2, "warning"),
        ("s1", "t", 3, [3, 4], ["b", None], 1, 2, "warning"),
        ("s1", "t", 4, [9, 1], [None, "a"], 1, 2, "warning"),
        ("s1", "v", 0, [1, 2], ["a", "a"], 1, 2, "warning"),
    ])  # fmt: skip
    expect(spark, found["replica_placement_topics"], [("s1", "u", 2, 1, "warning")])


def test_columns(spark: SparkSession) -> None:
    found = detect(frame(spark, PARTITIONS, []), brokers(spark, {}))
    assert {name: df.columns for name, df in found.items()} == {
        "replica_placement_brokers": [
            "snapshot_id", "broker_id", "rack", "registered", "replicas", "leaders", "share_of_replicas",
            "severity",
        ],
        "replica_placement_racks": ["snapshot_id", "rack", "brokers", "replicas", "share_of_replicas", "severity"],
        "replica_placement_partitions": [
            "snapshot_id", "topic", "partition", "replicas", "racks", "distinct_racks", "racks_available",
            "severity",
        ],
        "replica_placement_topics": ["snapshot_id", "topic", "partitions", "replication_factor", "severity"],
    }  # fmt: skip


def test_overload_is_strictly_above_120_percent_of_the_mean(spark: SparkSession) -> None:
    # broker 1 holds 6, broker 2 holds 4: mean 5, and 6 is exactly 1.2 × 5
    parts = frame(spark, PARTITIONS, [
        *[partition("t", p, [1, 2], [1, 2]) for p in range(4)],
        *[partition("t", p, [1], [1]) for p in (4, 5)],
    ])  # fmt: skip
    found = detect(parts, brokers(spark, {1: "a", 2: "b"}))
    expect(spark, found["replica_placement_brokers"], [
        ("s1", 1, "a", True, 6, 6, 0.6, "ok"),
        ("s1", 2, "b", True, 4, 0, 0.4, "ok"),
    ])  # fmt: skip
    # RF 1 partitions sit on one rack of two, but min(RF, racks) = 1: not flagged
    assert found["replica_placement_partitions"].count() == 0


def test_no_racks_configured(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("t", 0, [1, 2], [1, 2]), partition("t", 1, [2, 3, 1], [2, 3, 1]),
    ])  # fmt: skip
    found = detect(parts, brokers(spark, {1: None, 2: None, 3: None}))
    assert found["replica_placement_partitions"].count() == 0
    expect(spark, found["replica_placement_racks"], [("s1", None, 3, 5, 1.0, "ok")])
    assert found["replica_placement_topics"].count() == 0


def test_brokers_without_partitions(spark: SparkSession) -> None:
    found = detect(frame(spark, PARTITIONS, []), brokers(spark, {1: "a", 2: "b"}))
    expect(spark, found["replica_placement_brokers"], [
        ("s1", 1, "a", True, 0, 0, 0.0, "ok"),
        ("s1", 2, "b", True, 0, 0, 0.0, "ok"),
    ])  # fmt: skip
    expect(spark, found["replica_placement_racks"], [
        ("s1", "a", 1, 0, 0.0, "ok"),
        ("s1", "b", 1, 0, 0.0, "ok"),
    ])  # fmt: skip


def test_empty_inputs(spark: SparkSession) -> None:
    found = detect(frame(spark, PARTITIONS, []), brokers(spark, {}))
    assert {name: df.count() for name, df in found.items()} == dict.fromkeys(OUTPUTS, 0)


def test_partitions_without_registered_brokers(spark: SparkSession) -> None:
    # every broker is gone: racks unknown, none available, nothing flagged for racks; no mean
    parts = frame(spark, PARTITIONS, [partition("t", 0, [1, 2], [1, 2])])
    found = detect(parts, brokers(spark, {}))
    expect(spark, found["replica_placement_brokers"], [
        ("s1", 1, None, False, 1, 1, 0.5, "ok"),
        ("s1", 2, None, False, 1, 0, 0.5, "ok"),
    ])  # fmt: skip
    assert found["replica_placement_partitions"].count() == 0


def test_detector_reads_the_latest_snapshot(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("t", 0, [1], [1], snapshot="s1"),            # older snapshot: ignored
        partition("t", 0, [1, 2], [1, 2], snapshot="s2"),
    ])  # fmt: skip
    registered = frame(spark, BROKERS, [("s1", AT, 1, "a"), ("s1", AT, 2, "b"),
                                        ("s2", AT, 1, "a"), ("s2", AT, 2, "a"), ("s2", AT, 3, "b")])  # fmt: skip
    found = DETECTOR.detect({"partitions": parts, "brokers": registered}, Context("c", "s2", AT, Thresholds()))
    assert DETECTOR.name == "replica_placement"
    assert DETECTOR.tables == ("partitions", "brokers")
    assert set(found) == set(DETECTOR.outputs) == set(OUTPUTS)
    expect(spark, found["replica_placement_partitions"], [
        ("s2", "t", 0, [1, 2], ["a", "a"], 1, 2, "warning"),
    ])  # fmt: skip
    assert found["replica_placement_topics"].count() == 0
    expect(spark, found["replica_placement_brokers"], [
        ("s2", 1, "a", True, 1, 1, 0.5, "info"),   # mean over 3 registered brokers: 2/3
        ("s2", 2, "a", True, 1, 0, 0.5, "info"),
        ("s2", 3, "b", True, 0, 0, 0.0, "ok"),
    ])  # fmt: skip


def test_a_stopped_broker_keeps_its_last_known_rack(spark: SparkSession) -> None:
    """Broker 2 (rack b) is down in s2: its partitions still span racks a and b."""
    parts = frame(spark, PARTITIONS, [
        partition("t", 0, [1, 2], [1, 2], snapshot="s1"),
        partition("t", 0, [1, 2], [1], snapshot="s2"),
        partition("t", 1, [1, 3], [1, 3], snapshot="s2"),         # 1 and 3 both in rack a
    ])  # fmt: skip
    registered = frame(spark, BROKERS, [("s1", AT, 1, "a"), ("s1", AT, 2, "b"), ("s1", AT, 3, "a"),
                                        ("s2", AT, 1, "a"), ("s2", AT, 3, "a")])  # fmt: skip
    found = DETECTOR.detect({"partitions": parts, "brokers": registered}, Context("c", "s2", AT, Thresholds()))
    expect(spark, found["replica_placement_partitions"], [
        ("s2", "t", 1, [1, 3], ["a", "a"], 1, 2, "warning"),
    ])  # fmt: skip
