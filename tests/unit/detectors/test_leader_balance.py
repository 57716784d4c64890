from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.leader_balance import DETECTOR, detect_leader_balance
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import ADMIN_REQUESTS, AT, BROKERS, PARTITIONS, frame, partition

SNAPSHOTS = "snapshot_id string, captured_at timestamp, source string"

ACTION = "run kafka_preferred_leader_election"
REASSIGNING = "partition is being reassigned"
DOWN = "preferred replica is down"
NOT_IN_ISR = "preferred replica is not in the ISR"


def brokers(spark: SparkSession, ids: list[int], snapshot: str = "s1") -> DataFrame:
    return frame(spark, BROKERS, [(snapshot, AT, b, None) for b in ids])


def no_state(topic: str, p: int, replicas: list[int]) -> tuple[Any, ...]:
    """A partition whose state znode is missing (has_state false)."""
    return ("s1", AT, topic, p, replicas, [], [], False, None, None, None, None, None, None)


def detect(
    parts: DataFrame,
    registered: DataFrame,
    percent: float = 10.0,
    deleting: tuple[str, ...] = (),
    source: str | None = "zookeeper",
) -> dict[str, DataFrame]:
    spark = parts.sparkSession
    requests = frame(spark, ADMIN_REQUESTS, [("s1", AT, "delete_topic", t, None) for t in deleting])
    snapshots = frame(spark, SNAPSHOTS, [("s0", AT, "kraft"), ("s1", AT, source)])
    return detect_leader_balance(parts, registered, requests, snapshots, snapshot_id="s1", imbalance_percent=percent)


def expect(spark: SparkSession, result: DataFrame, rows: list[tuple[Any, ...]]) -> None:
    assertDataFrameEqual(result, spark.createDataFrame(rows, result.schema))


def test_every_status(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("a", 0, [1, 2, 3], [1, 2, 3]),                 # led by preferred 1
        partition("a", 1, [1, 2, 3], [1, 2, 3], leader=2),       # fixable
        partition("a", 2, [1, 2, 3], [2, 3], leader=2),          # preferred 1 not in ISR
        partition("a", 3, [4, 1], [1], leader=1),                # preferred 4 down (and not in ISR)
        partition("a", 4, [1, 2, 3], [2, 3, 1], leader=3,        # reassigning [2,3] → [1,2]:
                  adding=[1], removing=[3]),                     #   preferred 2 (adding 1 dropped)
        partition("a", 5, [4], [4], leader=-1),                  # led by nobody, preferred 4 down
        no_state("b", 0, [5, 1]),                                # preferred of 5, never judged
        partition("b", 1, [], [], leader=-1),                    # no preferred leader: never judged
        *[partition("c", p, [3, 2], [3, 2], leader=2 if p == 0 else 3) for p in range(10)],
        partition("d", 0, [1, 7], [7], leader=7),                # led by 7, which is not registered
        partition("e", 0, [2, 1], [1, 2], leader=1, removing=[1]),  # reassigning (removing only)
    ])  # fmt: skip
    found = detect(parts, brokers(spark, [1, 2, 3, 5, 6]))
    assert set(found) == {"leader_balance_brokers", "leader_balance_partitions", "leader_balance_cluster"}

    expect(spark, found["leader_balance_brokers"], [
        # snapshot, broker, registered, leaders, preferred, led_by_other, ratio, imbalanced, severity
        ("s1", 1, True, 3, 4, 3, 0.75, True, "warning"),
        ("s1", 2, True, 3, 2, 2, 1.0, True, "warning"),
        ("s1", 3, True, 10, 10, 1, 0.1, False, "ok"),      # exactly 10 %: not above the threshold
        ("s1", 4, False, 0, 2, 2, 1.0, True, "warning"),   # unregistered preferred leader
        ("s1", 5, True, 0, 1, 0, 0.0, False, "ok"),        # its one partition has no state
        ("s1", 6, True, 0, 0, 0, 0.0, False, "ok"),        # registered, nothing preferred: ratio 0.0
        ("s1", 7, False, 1, 0, 0, 0.0, False, "ok"),       # leads only
    ])  # fmt: skip
    expect(spark, found["leader_balance_partitions"], [
        ("s1", "a", 1, 1, 2, [1, 2, 3], [1, 2, 3], True, None, ACTION, "warning"),
        ("s1", "a", 2, 1, 2, [1, 2, 3], [2, 3], False, NOT_IN_ISR, None, "info"),
        ("s1", "a", 3, 4, 1, [4, 1], [1], False, DOWN, None, "info"),
        ("s1", "a", 4, 2, 3, [2, 3], [2, 3, 1], False, REASSIGNING, None, "info"),
        ("s1", "a", 5, 4, -1, [4], [4], False, DOWN, None, "info"),
        ("s1", "c", 0, 3, 2, [3, 2], [3, 2], True, None, ACTION, "warning"),
        ("s1", "d", 0, 1, 7, [1, 7], [7], False, NOT_IN_ISR, None, "info"),
        ("s1", "e", 0, 2, 1, [2, 1], [1, 2], False, REASSIGNING, None, "info"),
    ])  # fmt: skip
    # registered leaders 3, 3, 10, 0, 0: max 10, mean 3.2
    expect(spark, found["leader_balance_cluster"], [
        ("s1", 5, 20, 8, 2, 3, 10, 3.2, 3.125, "zookeeper", True, True, "warning"),
    ])  # fmt: skip


def test_every_status_on_kraft_flags_every_broker_with_a_partition_off_its_preferred_leader(
    spark: SparkSession,
) -> None:
    parts = frame(spark, PARTITIONS, [
        *[partition("c", p, [3, 2], [3, 2], leader=2 if p == 0 else 3) for p in range(10)],  # 10 % of 3's
        partition("a", 0, [1, 2], [1, 2]),
        partition("a", 1, [2, 1], [2, 1]),
    ])  # fmt: skip
    found = detect(parts, brokers(spark, [1, 2, 3]), source="kraft")
    expect(spark, found["leader_balance_brokers"], [
        ("s1", 1, True, 1, 1, 0, 0.0, False, "ok"),
        ("s1", 2, True, 2, 1, 0, 0.0, False, "ok"),
        ("s1", 3, True, 9, 10, 1, 0.1, False, "warning"),  # within 10 %, yet off its preferred leader
    ])  # fmt: skip
    (cluster,) = found["leader_balance_cluster"].collect()
    assert (cluster["imbalanced_brokers"], cluster["non_preferred"], cluster["fixable"]) == (0, 1, 1)
    assert (cluster["source"], cluster["zk_rule_triggered"], cluster["severity"]) == ("kraft", False, "warning")


def test_columns(spark: SparkSession) -> None:
    found = detect(frame(spark, PARTITIONS, []), brokers(spark, []))
    assert {name: df.columns for name, df in found.items()} == {
        "leader_balance_brokers": [
            "snapshot_id", "broker_id", "registered", "leaders", "preferred", "preferred_led_by_other",
            "imbalance_ratio", "imbalanced", "severity",
        ],
        "leader_balance_partitions": [
            "snapshot_id", "topic", "partition", "preferred_leader", "leader", "replicas", "isr",
            "fixable", "blocked_reason", "action", "severity",
        ],
        "leader_balance_cluster": [
            "snapshot_id", "registered_brokers", "partitions", "non_preferred", "fixable",
            "imbalanced_brokers", "max_leaders", "mean_leaders", "skew", "source", "zk_rule_triggered",
            "kraft_rule_triggered", "severity",
        ],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("source", "percent", "imbalanced", "severity"),
    [
        ("zookeeper", 10.0, False, "info"),
        ("zookeeper", 5.0, True, "warning"),
        ("kraft", 10.0, False, "warning"),
        ("kraft", 5.0, True, "warning"),
    ],
    ids=["zookeeper-only-kraft-rule", "zookeeper-both-rules", "kraft-only-kraft-rule", "kraft-both-rules"],
)
def test_rules_against_threshold(
    spark: SparkSession, source: str, percent: float, imbalanced: bool, severity: str
) -> None:
    # broker 1 is preferred for 10 partitions and leads 9 of them: 10 % imbalance; on KRaft the
    # controller counts that one partition whatever the percentage, so broker 1 is flagged either way
    parts = frame(spark, PARTITIONS, [
        partition("t", p, [1, 2], [1, 2], leader=2 if p == 0 else 1) for p in range(10)
    ])  # fmt: skip
    found = detect(parts, brokers(spark, [1, 2]), percent, source=source)
    broker_severity = "warning" if imbalanced or source == "kraft" else "ok"
    expect(spark, found["leader_balance_brokers"], [
        ("s1", 1, True, 9, 10, 1, 0.1, imbalanced, broker_severity),
        ("s1", 2, True, 1, 0, 0, 0.0, False, "ok"),
    ])  # fmt: skip
    expect(spark, found["leader_balance_cluster"], [
        ("s1", 2, 10, 1, 1, 1 if imbalanced else 0, 9, 5.0, 1.8, source, imbalanced, True, severity),
    ])  # fmt: skip


@pytest.mark.parametrize("source", ["zookeeper", "kraft"])
def test_a_balanced_cluster_is_ok_by_either_rule(spark: SparkSession, source: str) -> None:
    parts = frame(spark, PARTITIONS, [partition("t", p, [1, 2], [1, 2]) for p in range(3)])
    (cluster,) = detect(parts, brokers(spark, [1, 2]), source=source)["leader_balance_cluster"].collect()
    assert (cluster["source"], cluster["kraft_rule_triggered"], cluster["severity"]) == (source, False, "ok")


def test_a_snapshot_without_source_is_judged_as_zookeeper(spark: SparkSession) -> None:
    # commits written before sources existed have a null source: they were all ZooKeeper snapshots
    parts = frame(spark, PARTITIONS, [
        partition("t", p, [1, 2], [1, 2], leader=2 if p == 0 else 1) for p in range(10)
    ])  # fmt: skip
    found = detect(parts, brokers(spark, [1, 2]), source=None)
    (cluster,) = found["leader_balance_cluster"].collect()
    assert (cluster["source"], cluster["zk_rule_triggered"], cluster["severity"]) == ("zookeeper", False, "info")
    assert [r["severity"] for r in found["leader_balance_brokers"].orderBy("broker_id").collect()] == ["ok", "ok"]


def test_balanced(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("t", 0, [1, 2], [1, 2]), partition("t", 1, [2, 1], [2, 1]),
    ])  # fmt: skip
    found = detect(parts, brokers(spark, [1, 2]))
    assert found["leader_balance_partitions"].count() == 0
    expect(spark, found["leader_balance_cluster"], [
        ("s1", 2, 2, 0, 0, 0, 1, 1.0, 1.0, "zookeeper", False, False, "ok"),
    ])  # fmt: skip


def test_no_partitions(spark: SparkSession) -> None:
    found = detect(frame(spark, PARTITIONS, []), brokers(spark, [1, 2]))
    expect(spark, found["leader_balance_brokers"], [
        ("s1", 1, True, 0, 0, 0, 0.0, False, "ok"),
        ("s1", 2, True, 0, 0, 0, 0.0, False, "ok"),
    ])  # fmt: skip
    assert found["leader_balance_partitions"].count() == 0
    # mean 0: skew is null
    expect(spark, found["leader_balance_cluster"], [
        ("s1", 2, 0, 0, 0, 0, 0, 0.0, None, "zookeeper", False, False, "ok"),
    ])  # fmt: skip


def test_empty_inputs(spark: SparkSession) -> None:
    found = detect(frame(spark, PARTITIONS, []), brokers(spark, []))
    assert found["leader_balance_brokers"].count() == 0
    assert found["leader_balance_partitions"].count() == 0
    expect(spark, found["leader_balance_cluster"], [
        ("s1", 0, 0, 0, 0, 0, 0, 0.0, None, "zookeeper", False, False, "ok"),
    ])  # fmt: skip


def test_detector_reads_the_latest_snapshot_and_threshold(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("t", 0, [1, 2], [1, 2], leader=2, snapshot="s1"),   # older snapshot: ignored
        partition("t", 0, [1, 2], [1, 2], leader=1, snapshot="s2"),
        partition("t", 1, [1, 2], [1, 2], leader=2, snapshot="s2"),
        partition("t", 2, [1, 2], [1, 2], leader=1, snapshot="s2"),
    ])  # fmt: skip
    registered = frame(spark, BROKERS, [("s1", AT, 3, None), ("s2", AT, 1, None), ("s2", AT, 2, None)])
    context = Context("c", "s2", AT, Thresholds(leader_imbalance_percent=50.0))
    requests = frame(spark, ADMIN_REQUESTS, [])
    snapshots = frame(spark, SNAPSHOTS, [("s1", AT, "kraft"), ("s2", AT, "zookeeper")])
    inputs = {"partitions": parts, "brokers": registered, "admin_requests": requests, "snapshots": snapshots}
    found = DETECTOR.detect(inputs, context)
    assert DETECTOR.name == "leader_balance"
    assert DETECTOR.tables == ("partitions", "brokers", "admin_requests", "snapshots")
    assert set(found) == set(DETECTOR.outputs)
    # broker 1: 1 of 3 preferred led by another, 33 % ≤ 50 %
    expect(spark, found["leader_balance_brokers"], [
        ("s2", 1, True, 2, 3, 1, 1 / 3, False, "ok"),
        ("s2", 2, True, 1, 0, 0, 0.0, False, "ok"),
    ])  # fmt: skip
    expect(spark, found["leader_balance_partitions"], [
        ("s2", "t", 1, 1, 2, [1, 2], [1, 2], True, None, ACTION, "warning"),
    ])  # fmt: skip
    expect(spark, found["leader_balance_cluster"], [
        ("s2", 2, 3, 1, 1, 0, 2, 1.5, 2 / 1.5, "zookeeper", False, True, "info"),
    ])  # fmt: skip
    # the same partitions in a KRaft snapshot: its controller's rule counts the one partition
    kraft = frame(spark, SNAPSHOTS, [("s1", AT, "zookeeper"), ("s2", AT, "kraft")])
    on_kraft = DETECTOR.detect({**inputs, "snapshots": kraft}, context)
    expect(spark, on_kraft["leader_balance_cluster"], [
        ("s2", 2, 3, 1, 1, 0, 2, 1.5, 2 / 1.5, "kraft", False, True, "warning"),
    ])  # fmt: skip


def test_a_topic_pending_deletion_is_never_fixable_nor_counted(spark: SparkSession) -> None:
    # Kafka refuses the election ("The topic is being deleted"): not a fixable partition, not imbalance
    parts = frame(spark, PARTITIONS, [
        partition("gone", 0, [1, 2], [1], leader=-1),
        partition("gone", 1, [2, 1], [1, 2], leader=1),
        partition("kept", 0, [1, 2], [1, 2]),
    ])  # fmt: skip
    found = detect(parts, brokers(spark, [1, 2]), deleting=("gone",))
    assert found["leader_balance_partitions"].count() == 0
    (cluster,) = found["leader_balance_cluster"].collect()
    assert (cluster["partitions"], cluster["non_preferred"], cluster["fixable"]) == (1, 0, 0)
    with_it = detect(parts, brokers(spark, [1, 2]))  # the same snapshot without the request
    assert with_it["leader_balance_cluster"].collect()[0]["fixable"] == 2
