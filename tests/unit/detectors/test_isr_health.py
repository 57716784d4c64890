from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.detectors.isr_health import detect_isr_health
from tests.unit.detectors.frames import AT, BROKERS, CONFIGS, PARTITIONS, frame, partition

COLUMNS = [
    "topic",
    "partition",
    "replicas",
    "isr",
    "leader",
    "min_isr",
    "min_isr_source",
    "status",
    "severity",
]


def brokers(spark: SparkSession, ids: list[int]):  # type: ignore[no-untyped-def]
    return frame(spark, BROKERS, [("s1", AT, b, f"rack-{b}") for b in ids])


def test_every_status(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("a", 0, [1, 2, 3], [1, 2, 3]),           # ok (min ISR 2 from topic, ISR 3)
        partition("a", 1, [1, 2, 3], [1, 2]),              # under-replicated, at min ISR 2
        partition("a", 2, [1, 2, 3], [1]),                 # under min ISR
        partition("a", 3, [3], [3], leader=-1),            # offline: no leader
        partition("a", 4, [2, 3], [3], leader=3),          # offline: leader 3 not registered
        partition("b", 0, [1, 2], [1, 2], adding=[2]),     # reassignment adding 2: RF counts as 1
        partition("b", 1, [1, 2], [1]),                    # broker default min ISR 2 → under
        partition("c", 0, [1], [1]),                       # kafka default 1 → at min ISR
    ])  # fmt: skip
    configs = frame(spark, CONFIGS, [
        ("s1", AT, "topic", "a", "min.insync.replicas", "2"),
        ("s1", AT, "topic", "a", "retention.ms", "1000"),
        ("s1", AT, "broker", "<default>", "min.insync.replicas", "2"),
        ("s1", AT, "topic", "c", "min.insync.replicas", "1"),
    ])  # fmt: skip
    result = detect_isr_health(parts, brokers(spark, [1, 2]), configs).select(COLUMNS)
    expected = spark.createDataFrame(
        [
            ("a", 0, [1, 2, 3], [1, 2, 3], 1, 2, "topic", "ok", "ok"),
            ("a", 1, [1, 2, 3], [1, 2], 1, 2, "topic", "under_replicated", "warning"),
            ("a", 2, [1, 2, 3], [1], 1, 2, "topic", "under_min_isr", "critical"),
            ("a", 3, [3], [3], -1, 2, "topic", "offline", "critical"),
            ("a", 4, [2, 3], [3], 3, 2, "topic", "offline", "critical"),
            ("b", 0, [1], [1, 2], 1, 2, "broker_default", "at_min_isr", "info"),
            ("b", 1, [1, 2], [1], 1, 2, "broker_default", "under_min_isr", "critical"),
            ("c", 0, [1], [1], 1, 1, "topic", "at_min_isr", "info"),
        ],
        result.schema,
    )
    assertDataFrameEqual(result, expected)


def test_empty_snapshot(spark: SparkSession) -> None:
    result = detect_isr_health(frame(spark, PARTITIONS, []), brokers(spark, []), frame(spark, CONFIGS, []))
    assert result.count() == 0
    assert "severity" in result.columns and "status" in result.columns
