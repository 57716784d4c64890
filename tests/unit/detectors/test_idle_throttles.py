from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.idle_throttles import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, CONFIGS, REASSIGNMENTS, frame

RATE = {"leader.replication.throttled.rate": "20000", "follower.replication.throttled.rate": "20000"}


def config(entity_type: str, name: str, values: dict[str, str], snapshot: str = "s1") -> list[tuple[Any, ...]]:
    return [(snapshot, AT, entity_type, name, k, v) for k, v in values.items()]


def moving(topic: str, p: int, replicas: list[int], target: list[int], snapshot: str = "s1") -> tuple[Any, ...]:
    adding = [b for b in target if b not in replicas]
    return (snapshot, AT, topic, p, replicas + adding, target, adding, [b for b in replicas if b not in target], False)


def idle(spark: SparkSession, configs: list[tuple[Any, ...]], reassignments: list[tuple[Any, ...]]) -> dict[str, Any]:
    inputs = {"configs": frame(spark, CONFIGS, configs), "reassignments": frame(spark, REASSIGNMENTS, reassignments)}
    (table,) = DETECTOR.detect(inputs, Context("c1", "s1", AT, Thresholds())).values()
    return {f"{r['entity_type']} {r['entity_name']}": r for r in (row.asDict() for row in table.collect())}


def test_throttles_with_nothing_moving_are_each_a_finding_with_the_command(spark: SparkSession) -> None:
    lists = {"leader.replication.throttled.replicas": "0:1", "follower.replication.throttled.replicas": "0:2"}
    found = idle(
        spark,
        config("broker", "1", RATE) + config("broker", "<default>", RATE) + config("topic", "t", lists)
        + config("topic", "other", {"retention.ms": "1000"}) + config("broker", "2", RATE, snapshot="s0"),
        [],
    )  # fmt: skip
    assert sorted(found) == ["broker 1", "broker <default>", "topic t"]
    t = found["topic t"]
    assert t["throttle_keys"] == sorted(lists) and t["severity"] == "warning"
    assert t["throttle_values"] == (
        "follower.replication.throttled.replicas=0:2; leader.replication.throttled.replicas=0:1"
    )
    assert t["command"] == (
        "kafka-configs --bootstrap-server <brokers> --alter --entity-type topics --entity-name t --delete-config "
        "follower.replication.throttled.replicas,leader.replication.throttled.replicas"
    )
    assert "none of its partitions is being reassigned" in t["problem"]
    assert found["broker 1"]["command"].endswith(
        "--entity-type brokers --entity-name 1 --delete-config "
        "follower.replication.throttled.rate,leader.replication.throttled.rate"
    )
    assert "--entity-type brokers --entity-default" in found["broker <default>"]["command"]


def test_throttles_a_move_in_flight_goes_through_are_not_findings(spark: SparkSession) -> None:
    lists = {"follower.replication.throttled.replicas": "0:3"}
    found = idle(
        spark,
        config("broker", "1", RATE) + config("broker", "3", RATE) + config("broker", "4", RATE)
        + config("broker", "<default>", RATE) + config("topic", "t", lists) + config("topic", "idle", lists)
        + config("broker", "5", RATE),
        # t-0 moves [1] -> [1, 3] throttled; u-0 moves through broker 4 unthrottled (u has no lists)
        [moving("t", 0, [1], [1, 3]), moving("u", 0, [2], [4])],
    )  # fmt: skip
    assert sorted(found) == ["broker 4", "broker 5", "topic idle"]
