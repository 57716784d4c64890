from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.detectors.isr_health import detect_isr_health
from tests.unit.detectors.frames import ADMIN_REQUESTS, AT, BROKERS, CONFIGS, PARTITIONS, frame, partition

COLUMNS = [
    "topic",
    "partition",
    "replicas",
    "isr",
    "leader",
    "min_isr",
    "min_isr_configured",
    "min_isr_source",
    "status",
    "severity",
]


def brokers(spark: SparkSession, ids: list[int]) -> DataFrame:
    return frame(spark, BROKERS, [("s1", AT, b, f"rack-{b}") for b in ids])


def no_requests(spark: SparkSession) -> DataFrame:
    return frame(spark, ADMIN_REQUESTS, [])


def min_isr(key: str, entity: str, value: str, kind: str = "broker") -> tuple[object, ...]:
    return ("s1", AT, kind, entity, key, value)


def test_every_status(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("a", 0, [1, 2, 3], [1, 2, 3]),           # ok (min ISR 2 from topic, ISR 3)
        partition("a", 1, [1, 2, 3], [1, 2]),              # under-replicated, at min ISR 2
        partition("a", 2, [1, 2, 3], [1]),                 # under min ISR
        partition("a", 3, [3], [3], leader=-1),            # offline: no leader (min ISR 2 capped at RF 1)
        partition("a", 4, [2, 3], [3], leader=3),          # offline: leader 3 not registered
        partition("b", 0, [1, 2], [1, 2], adding=[2]),     # reassignment adding 2: RF counts as 1
        partition("b", 1, [1, 2], [1]),                    # broker default min ISR 2 → under
        partition("c", 0, [1], [1]),                       # topic min ISR 1 → at min ISR
    ])  # fmt: skip
    configs = frame(spark, CONFIGS, [
        min_isr("min.insync.replicas", "a", "2", "topic"),
        min_isr("retention.ms", "a", "1000", "topic"),
        min_isr("min.insync.replicas", "<default>", "2"),
        min_isr("min.insync.replicas", "c", "1", "topic"),
    ])  # fmt: skip
    result = detect_isr_health(parts, brokers(spark, [1, 2]), configs, no_requests(spark)).select(COLUMNS)
    expected = spark.createDataFrame(
        [
            ("a", 0, [1, 2, 3], [1, 2, 3], 1, 2, 2, "topic", "ok", "ok"),
            ("a", 1, [1, 2, 3], [1, 2], 1, 2, 2, "topic", "under_replicated", "warning"),
            ("a", 2, [1, 2, 3], [1], 1, 2, 2, "topic", "under_min_isr", "critical"),
            ("a", 3, [3], [3], -1, 1, 2, "topic", "offline", "critical"),
            ("a", 4, [2, 3], [3], 3, 2, 2, "topic", "offline", "critical"),
            ("b", 0, [1], [1, 2], 1, 2, 2, "broker_default", "at_min_isr", "info"),
            ("b", 1, [1, 2], [1], 1, 2, 2, "broker_default", "under_min_isr", "critical"),
            ("c", 0, [1], [1], 1, 1, 1, "topic", "at_min_isr", "info"),
        ],
        result.schema,
    )
    assertDataFrameEqual(result, expected)


def test_min_isr_is_the_leaders_topic_then_broker_then_cluster_default_then_static(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("t", 0, [1, 2, 3], [1, 2]),   # leader 1: /config/brokers/1 = 3 → under
        partition("t", 1, [2, 1, 3], [2]),      # leader 2: /config/brokers/2 = 1 → not under min ISR
        partition("t", 2, [3, 1, 2], [3]),      # leader 3: no broker config → <default> 2 → under
        partition("o", 0, [2, 1, 3], [2]),      # topic override 3 beats leader 2's 1 → under
    ])  # fmt: skip
    configs = frame(spark, CONFIGS, [
        min_isr("min.insync.replicas", "1", "3"),
        min_isr("min.insync.replicas", "2", "1"),
        min_isr("min.insync.replicas", "<default>", "2"),
        min_isr("min.insync.replicas", "o", "3", "topic"),
    ])  # fmt: skip
    result = detect_isr_health(parts, brokers(spark, [1, 2, 3]), configs, no_requests(spark), 5)
    found = {(r["topic"], r["partition"]): (r["min_isr"], r["min_isr_source"], r["status"]) for r in result.collect()}
    assert found == {
        ("t", 0): (3, "broker", "under_min_isr"),
        ("t", 1): (1, "broker", "under_replicated"),
        ("t", 2): (2, "broker_default", "under_min_isr"),
        ("o", 0): (3, "topic", "under_min_isr"),
    }
    # nothing dynamic: the settings' static value, marked as assumed
    empty = frame(spark, CONFIGS, [])
    static = detect_isr_health(parts, brokers(spark, [1, 2, 3]), empty, no_requests(spark), 2).collect()
    assert {(r["min_isr"], r["min_isr_source"]) for r in static} == {(2, "static")}
    assert {(r["topic"], r["partition"]) for r in static if r["under_min_isr"]} == {("t", 1), ("t", 2), ("o", 0)}


def test_min_isr_above_the_replication_factor_is_capped_as_kafka_caps_it(spark: SparkSession) -> None:
    # Kafka 3.9.1 takes acks=all writes on an RF-1 partition with min.insync.replicas 2 (measured in
    # tests/integration/test_min_isr_sandbox.py): the leader enforces min(min ISR, replicas)
    parts = frame(spark, PARTITIONS, [partition("one", 0, [1], [1]), partition("two", 0, [1, 2], [1])])
    configs = frame(spark, CONFIGS, [min_isr("min.insync.replicas", "<default>", "3")])
    found = detect_isr_health(parts, brokers(spark, [1, 2]), configs, no_requests(spark)).collect()
    rows = {r["topic"]: r for r in found}
    assert (rows["one"]["min_isr"], rows["one"]["min_isr_configured"], rows["one"]["status"]) == (1, 3, "at_min_isr")
    assert (rows["two"]["min_isr"], rows["two"]["min_isr_configured"], rows["two"]["status"]) == (2, 3, "under_min_isr")


def test_topics_pending_deletion_are_left_out(spark: SparkSession) -> None:
    # as the sandbox shows them: the controller parks a deleted topic's partitions with leader -1
    parts = frame(spark, PARTITIONS, [
        partition("gone", 0, [1, 2], [1], leader=-1),
        partition("kept", 0, [1, 2], [1, 2]),
    ])  # fmt: skip
    requests = frame(spark, ADMIN_REQUESTS, [("s1", AT, "delete_topic", "gone", None)])
    result = detect_isr_health(parts, brokers(spark, [1]), frame(spark, CONFIGS, []), requests)
    assert [(r["topic"], r["status"]) for r in result.collect()] == [("kept", "ok")]


def test_empty_snapshot(spark: SparkSession) -> None:
    empty = frame(spark, PARTITIONS, [])
    result = detect_isr_health(empty, brokers(spark, []), frame(spark, CONFIGS, []), no_requests(spark))
    assert result.count() == 0
    assert "severity" in result.columns and "status" in result.columns


def test_clean_candidates_come_from_the_isr_and_the_elr_and_unclean_only_when_none_is_alive(
    spark: SparkSession,
) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("k", 0, [1, 2, 3], [1, 2, 3]),                 # healthy: 2 and 3 can take over
        partition("k", 1, [1, 2, 3], [1], elr=[2]),              # under min ISR, ELR 2 alive: clean
        partition("k", 2, [1, 2, 3], [1], elr=[]),               # under min ISR, nobody else: next loss is unclean
        partition("k", 3, [1, 2, 3], [3], leader=-1, elr=[2]),   # offline; ELR 2 alive: clean election possible
        partition("k", 4, [1, 2, 3], [3], leader=-1, elr=[]),    # offline; only dead 3 in ISR: unclean only
        partition("z", 0, [1, 3], [3], leader=-1),               # ZooKeeper (no ELR): same rule on the ISR alone
    ])  # fmt: skip
    result = detect_isr_health(parts, brokers(spark, [1, 2]), frame(spark, CONFIGS, []), no_requests(spark))
    found = {(r.topic, r.partition): (r.elr, sorted(r.clean_candidates), r.unclean_only) for r in result.collect()}
    assert found == {
        ("k", 0): (None, [2], False),  # 3 is not a live broker here
        ("k", 1): ([2], [2], False),
        ("k", 2): ([], [], False),
        ("k", 3): ([2], [2], False),
        ("k", 4): ([], [], True),
        ("z", 0): (None, [], True),
    }
