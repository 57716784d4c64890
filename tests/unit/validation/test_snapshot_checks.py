"""The checks that page straight from a snapshot agree with the analysis' own detectors
(`isr_health`, `broker_attribution`) on the same snapshot, and compose the catalogue's problems."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pyspark.sql import SparkSession

from kafka_ops.detectors.broker_attribution import detect_broker_attribution
from kafka_ops.detectors.isr_health import detect_isr_health
from kafka_ops.problems import partitions as catalogue
from kafka_ops.validation.snapshot_checks import problems, snapshot_findings
from tests.unit.detectors.frames import ADMIN_REQUESTS, AT, BROKERS, CONFIGS, PARTITIONS, frame, partition, stateless

FLAGS = ("replicas", "isr", "leader", "min_isr", "offline", "under_min_isr", "under_replicated", "at_min_isr", "status")
PARTITION_COLUMNS = [
    "topic", "partition", "replicas", "adding_replicas", "removing_replicas", "has_state", "leader", "leader_epoch",
    "controller_epoch", "isr", "state_version", "elr",
]  # fmt: skip


def random_snapshot(seed: int) -> dict[str, list[tuple[Any, ...]]]:
    """A snapshot of 5 brokers (some not registered), 7 topics, with reassignments, leaderless and
    stateless partitions, a topic pending deletion, and min ISR set at every level (and once not a number)."""
    rng = random.Random(seed)
    ids = [1, 2, 3, 4, 5]
    live = sorted(rng.sample(ids, rng.randint(2, 5)))
    rows: list[tuple[Any, ...]] = []
    for topic in ("a", "b", "c", "d", "e", "f", "gone"):
        for p in range(rng.randint(1, 8)):
            replicas = rng.sample(ids, rng.randint(1, 4))
            if rng.random() < 0.1:
                rows.append(stateless(topic, p, replicas))
                continue
            isr = [b for b in replicas if b in live or rng.random() < 0.2][: rng.randint(0, len(replicas))]
            leader = rng.choice([*isr, -1]) if isr else -1
            adding = [replicas[-1]] if len(replicas) > 1 and rng.random() < 0.2 else []
            rows.append(partition(topic, p, replicas, isr, leader, adding=adding))
    configs = [("s1", AT, "topic", "a", "min.insync.replicas", str(rng.randint(1, 3)))]
    configs.append(("s1", AT, "broker", str(rng.choice(ids)), "min.insync.replicas", str(rng.randint(1, 3))))
    if rng.random() < 0.5:
        configs.append(("s1", AT, "broker", "<default>", "min.insync.replicas", str(rng.randint(1, 3))))
    configs.append(("s1", AT, "topic", "c", "min.insync.replicas", "two"))  # not a number: skipped by both
    return {
        "partitions": rows,
        "brokers": [("s1", AT, b, f"rack-{b}") for b in live],
        "configs": configs,
        "admin_requests": [("s1", AT, "delete_topic", "gone", None)],
    }


def as_rows(snapshot: dict[str, list[tuple[Any, ...]]]) -> dict[str, list[dict[str, Any]]]:
    """The snapshot's tables as the lake's rows (what `snapshot_checks.look` reads)."""
    return {
        "partitions": [dict(zip(PARTITION_COLUMNS, r[2:], strict=True)) for r in snapshot["partitions"]],
        "brokers": [{"broker_id": r[2], "rack": r[3]} for r in snapshot["brokers"]],
        "configs": [
            dict(zip(("entity_type", "entity_name", "config_key", "config_value"), r[2:], strict=True))
            for r in snapshot["configs"]
        ],
        "admin_requests": [{"request": r[2], "topic": r[3], "partition": r[4]} for r in snapshot["admin_requests"]],
    }


@pytest.mark.parametrize("seed", range(4))
def test_the_same_flags_and_down_brokers_as_the_spark_detectors(spark: SparkSession, seed: int) -> None:
    snapshot = random_snapshot(seed)
    parts = frame(spark, PARTITIONS, snapshot["partitions"])
    brokers = frame(spark, BROKERS, snapshot["brokers"])
    requests = frame(spark, ADMIN_REQUESTS, snapshot["admin_requests"])
    static = 1 + seed % 2
    spark_health = detect_isr_health(parts, brokers, frame(spark, CONFIGS, snapshot["configs"]), requests, static)
    spark_brokers = detect_broker_attribution(parts, brokers, parts, "s1", requests)

    findings = snapshot_findings("s1", AT, as_rows(snapshot), static)

    expected = {(r["topic"], r["partition"]): tuple(r[f] for f in FLAGS) for r in spark_health.collect()}
    mine = {(r["topic"], r["partition"]): tuple(r[f] for f in FLAGS) for r in findings.rows("isr_health") or []}
    assert mine == expected
    down = [r.asDict() for r in spark_brokers.collect() if not r["registered"] and r["severity"] == "critical"]
    keys = ("broker_id", "assigned_replicas", "missing_from_isr", "cause", "severity")
    assert [{k: r[k] for k in keys} for r in findings.rows("broker_attribution") or []] == sorted(
        ({k: r[k] for k in keys} for r in down), key=lambda r: r["broker_id"]
    )


def test_a_dead_broker_pages_even_when_every_partition_keeps_min_isr() -> None:
    """RF 3, min ISR 2, broker 3 dead: no partition is offline or under min ISR, and broker 3 still pages."""
    snapshot = {
        "partitions": [partition("orders", p, [1, 2, 3], [1, 2]) for p in range(4)],
        "brokers": [("s1", AT, b, None) for b in (1, 2)],
        "configs": [("s1", AT, "broker", "<default>", "min.insync.replicas", "2")],
        "admin_requests": [],
    }
    (problem,) = problems(snapshot_findings("s1", AT, as_rows(snapshot), 1))
    assert (problem.key, problem.severity, problem.title) == (catalogue.BROKER_DOWN, "critical", "Broker 3 is down")
    assert problem.cause == "broker 3 is down: 4 partitions under-replicated"
    assert problem.action is not None and problem.action.startswith("bring broker 3 back")
    assert problem.since == AT  # a snapshot alone knows no streak: its capture time


def test_offline_and_under_min_isr_read_as_the_analysis_gates_do() -> None:
    """The catalogue's composers over the snapshot's rows: the analysis' titles, down brokers named."""
    snapshot = {
        "partitions": [
            partition("orders", 0, [2, 3], [3], leader=3),  # leader 3 not registered: offline
            partition("orders", 1, [1, 3], [1]),  # ISR 1 < min ISR 2: under min ISR, broker 3 down
            partition("orders", 2, [1, 2], [1, 2]),
        ],
        "brokers": [("s1", AT, b, None) for b in (1, 2)],
        "configs": [("s1", AT, "topic", "orders", "min.insync.replicas", "2")],
        "admin_requests": [],
    }
    found = problems(snapshot_findings("s1", AT, as_rows(snapshot), 1))
    assert [p.key for p in found] == [catalogue.OFFLINE, catalogue.UNDER_MIN_ISR, catalogue.BROKER_DOWN]
    titles = {p.key: p.title for p in found}
    assert titles[catalogue.OFFLINE] == "1 partition offline (no leader): produce and consume fail on them"
    assert titles[catalogue.UNDER_MIN_ISR] == "1 partition under min ISR: producers with acks=all are refused"
    assert "broker 3 is down" in next(p.cause for p in found if p.key == catalogue.UNDER_MIN_ISR)
