from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pyspark.sql import SparkSession

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.migration_health import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, frame

MIGRATION = (
    "snapshot_id string, captured_at timestamp, phase string, zookeeper_written_at timestamp, "
    "zookeeper_writes_stopped boolean, zookeeper_brokers array<int>, waiting_brokers array<int>, divergences int"
)
DIVERGENCES = (
    "snapshot_id string, captured_at timestamp, topic string, partition int, field string, zookeeper string, "
    "kraft string"
)


def at(minutes_ago: float) -> datetime:
    return AT - timedelta(minutes=minutes_ago)


def row(sid: str, minutes_ago: float, phase: str, *, written_ago: float = 0, zk: list[int] | None = None,
        waiting: list[int] | None = None, divergences: int | None = 0) -> tuple[Any, ...]:  # fmt: skip
    return (sid, at(minutes_ago), phase, at(written_ago), False, [1, 2, 3] if zk is None else zk, waiting, divergences)


def health(
    spark: SparkSession, migration: list[tuple[Any, ...]], divergences: list[tuple[Any, ...]] = ()
) -> list[dict[str, Any]]:
    inputs = {
        "migration": frame(spark, MIGRATION, migration),
        "migration_divergences": frame(spark, DIVERGENCES, list(divergences)),
    }
    latest = migration[-1][0]
    (table,) = DETECTOR.detect(inputs, Context("c1", latest, migration[-1][1], Thresholds())).values()
    return [r.asDict() for r in table.orderBy("kind", "topic", "partition", "field").collect()]


def test_not_migrating_finds_nothing(spark: SparkSession) -> None:
    inputs = {"migration": frame(spark, MIGRATION, []), "migration_divergences": frame(spark, DIVERGENCES, [])}
    (table,) = DETECTOR.detect(inputs, Context("c1", "s1", AT, Thresholds())).values()
    assert table.count() == 0


def test_dual_write_keeping_up_is_ok_since_its_first_snapshot(spark: SparkSession) -> None:
    found = health(spark, [
        row("s1", 50, "pre_migration", written_ago=50, waiting=[1, 2, 3], divergences=None),
        row("s2", 40, "dual_write", written_ago=40),
        row("s3", 0, "dual_write", written_ago=0),
    ])  # fmt: skip
    (phase,) = found
    assert (phase["kind"], phase["phase"], phase["status"], phase["severity"]) == ("phase", "dual_write", "ok", "ok")
    assert phase["phase_since"] == at(40).replace(tzinfo=None) and phase["problem"] is None


def test_waiting_for_brokers_too_long_is_stalled_and_names_them(spark: SparkSession) -> None:
    found = health(spark, [
        row("s1", 45, "pre_migration", waiting=[1, 2, 3], divergences=None),
        row("s2", 0, "pre_migration", waiting=[2, 3], divergences=None),
    ])  # fmt: skip
    (phase,) = found
    assert (phase["status"], phase["severity"]) == ("stalled", "warning")
    assert phase["problem"] == (
        "the KRaft controllers have waited 45 min for brokers to register with them (still waiting for: 2, 3); "
        "the metadata is not migrated until every broker has"
    )
    assert phase["action"].startswith("restart brokers 2, 3 with zookeeper.metadata.migration.enable=true")
    # a shorter wait is only a migration in progress
    (early,) = health(spark, [row("s2", 0, "pre_migration", waiting=[2, 3], divergences=None)])
    assert early["status"] == "ok"


def test_dual_write_that_stopped_writing_to_zookeeper_is_critical(spark: SparkSession) -> None:
    (phase,) = health(
        spark,
        [row("s1", 90, "dual_write", written_ago=85, zk=[2, 3]), row("s2", 0, "dual_write", written_ago=85, zk=[2, 3])],
    )
    assert (phase["status"], phase["severity"]) == ("stalled", "critical")
    assert "while brokers 2, 3 still run on ZooKeeper" in phase["problem"]
    # the same silence with every broker on KRaft is not a stall (the migration is being finalized)
    (done,) = health(spark, [row("s1", 0, "dual_write", written_ago=85, zk=[])])
    assert done["status"] == "ok"


def test_finalized_says_to_read_from_kraft(spark: SparkSession) -> None:
    (phase,) = health(spark, [row("s1", 0, "post_migration", written_ago=20, zk=[])])
    assert (phase["status"], phase["severity"]) == ("finalized", "warning")
    assert phase["action"].startswith('set this cluster\'s metadata_source to "kraft"')


def test_only_divergences_that_persist_are_findings(spark: SparkSession) -> None:
    migration = [row("s1", 30, "dual_write"), row("s2", 20, "dual_write"), row("s3", 12, "dual_write"),
                 row("s4", 0, "dual_write")]  # fmt: skip
    divergences = [
        # orders-0 isr: diverged in s1, agreed in s2, diverges since s3 (12 min >= 10): a finding since s3
        ("s1", at(30), "orders", 0, "isr", "[1, 2]", "[1, 2, 3]"),
        ("s3", at(12), "orders", 0, "isr", "[1, 2]", "[1, 2, 3]"),
        ("s4", at(0), "orders", 0, "isr", "[1, 2]", "[1, 2, 3]"),
        # orders-1 leader: only in the latest snapshot: a change half applied, not (yet) a finding
        ("s4", at(0), "orders", 1, "leader", "2", "3"),
        # a topic ZooKeeper does not have, for 30 min
        *[(s, at(m), "ghost", None, "topic", None, "present")
          for s, m in (("s1", 30), ("s2", 20), ("s3", 12), ("s4", 0))],
    ]  # fmt: skip
    found = [r for r in health(spark, migration, divergences) if r["kind"] == "divergence"]
    assert [(r["topic"], r["partition"], r["field"]) for r in found] == [("ghost", None, "topic"), ("orders", 0, "isr")]
    ghost, isr = found
    assert isr["diverging_since"] == at(12).replace(tzinfo=None) and ghost["diverging_since"] == at(30).replace(
        tzinfo=None
    )
    assert isr["problem"].startswith("orders-0 isr: ZooKeeper has [1, 2], the KRaft metadata [1, 2, 3], since ")
    assert ghost["problem"].startswith("ghost topic: ZooKeeper has nothing, the KRaft metadata present")
    assert {r["severity"] for r in found} == {"warning"}
