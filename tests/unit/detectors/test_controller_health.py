from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.controller_health import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, CONTROLLER, PARTITIONS, frame, partition

ELECTED = AT - timedelta(hours=5)


def minutes_ago(m: int) -> datetime:
    return AT - timedelta(minutes=m)


def ctl(
    snapshot: str, at: datetime, controller_id: int | None, epoch: int | None, elected: datetime = ELECTED
) -> tuple[Any, ...]:
    """A controller row; elected_at only when there is a controller."""
    elected_at = elected if controller_id is not None else None
    return (snapshot, at, controller_id, elected_at, None, -1, epoch, None)


def detect(
    spark: SparkSession, controller_rows: list[tuple[Any, ...]], partition_rows: list[tuple[Any, ...]] | None = None
) -> dict[str, DataFrame]:
    latest = max(controller_rows, key=lambda r: (r[1], r[0]), default=("s0", AT))
    context = Context("c1", latest[0], latest[1], Thresholds())
    inputs = {
        "controller": frame(spark, CONTROLLER, controller_rows),
        "partitions": frame(spark, PARTITIONS, partition_rows or []),
    }
    return DETECTOR.detect(inputs, context)


def expect(spark: SparkSession, result: DataFrame, rows: list[tuple[Any, ...]]) -> None:
    assertDataFrameEqual(result, spark.createDataFrame(rows, result.schema))


def test_elections_re_elections_loss_and_churn(spark: SparkSession) -> None:
    found = detect(spark, [
        ctl("s1", minutes_ago(120), 1, 5),
        ctl("s2", minutes_ago(90), 2, 6),          # elected, over an hour ago
        ctl("s3", minutes_ago(60), 2, 8),          # re-elected twice, exactly an hour ago: not counted
        ctl("s4", minutes_ago(30), None, 8),       # lost
        ctl("s5", minutes_ago(20), 3, 9, minutes_ago(25)),   # elected
        ctl("s6", minutes_ago(10), 3, 11, minutes_ago(12)),  # re-elected twice
        ctl("s7", AT, 3, 11, minutes_ago(12)),     # unchanged
    ])  # fmt: skip
    expect(spark, found["controller_changes"], [
        ("s7", minutes_ago(90), minutes_ago(120), 1, 2, 5, 6, 1, "elected", "info"),
        ("s7", minutes_ago(60), minutes_ago(90), 2, 2, 6, 8, 2, "re_elected", "info"),
        ("s7", minutes_ago(30), minutes_ago(60), 2, None, 8, 8, 0, "lost", "info"),
        ("s7", minutes_ago(20), minutes_ago(30), None, 3, 8, 9, 1, "elected", "info"),
        ("s7", minutes_ago(10), minutes_ago(20), 3, 3, 9, 11, 2, "re_elected", "info"),
    ])  # fmt: skip
    # last hour: 1 + 2 elections > 2 per hour; window: 6 elections in 2 hours
    expect(spark, found["controller_health"], [
        ("s7", 3, 11, minutes_ago(12), False, 3, 6, 3.0, minutes_ago(10), 600.0, 0, True, "warning"),
    ])  # fmt: skip
    assert found["controller_zombie_partitions"].count() == 0


def test_quiet_cluster_at_the_churn_threshold_and_an_impossible_change(spark: SparkSession) -> None:
    found = detect(spark, [
        ctl("s1", minutes_ago(90), 1, 5),
        ctl("s2", minutes_ago(40), 1, 7),          # re-elected twice: 2 in the last hour, not more
        ctl("s3", minutes_ago(20), 4, 7),          # another broker, same epoch
        ctl("s4", AT, 4, 7),
    ], [partition("a", 0, [1, 4], [1, 4], snapshot="s4", controller_epoch=7)])  # fmt: skip
    expect(spark, found["controller_changes"], [
        ("s4", minutes_ago(40), minutes_ago(90), 1, 1, 5, 7, 2, "re_elected", "info"),
        ("s4", minutes_ago(20), minutes_ago(40), 1, 4, 7, 7, 0, "changed_without_election", "info"),
    ])  # fmt: skip
    expect(spark, found["controller_health"], [
        ("s4", 4, 7, ELECTED, False, 2, 2, 2 / 1.5, minutes_ago(20), 1200.0, 0, False, "ok"),
    ])  # fmt: skip


def test_no_change_in_the_window_dates_from_the_election(spark: SparkSession) -> None:
    # /controller_epoch unreadable at s1: an unknown epoch is no election
    found = detect(spark, [ctl("s1", minutes_ago(30), 1, None), ctl("s2", AT, 1, 5)])
    assert found["controller_changes"].count() == 0
    expect(spark, found["controller_health"], [
        ("s2", 1, 5, ELECTED, False, 0, 0, 0.0, ELECTED, 5 * 3600.0, 0, False, "ok"),
    ])  # fmt: skip


def test_single_snapshot(spark: SparkSession) -> None:
    found = detect(spark, [ctl("s1", AT, 2, 3)])
    assert found["controller_changes"].count() == 0
    expect(spark, found["controller_health"], [
        ("s1", 2, 3, ELECTED, False, 0, 0, None, ELECTED, 5 * 3600.0, 0, False, "ok"),
    ])  # fmt: skip


def test_no_controller_in_the_latest_snapshot(spark: SparkSession) -> None:
    found = detect(spark, [ctl("s1", minutes_ago(5), 1, 5), ctl("s2", AT, None, 5)])
    expect(spark, found["controller_changes"], [
        ("s2", AT, minutes_ago(5), 1, None, 5, 5, 0, "lost", "info"),
    ])  # fmt: skip
    expect(spark, found["controller_health"], [
        ("s2", None, 5, None, True, 0, 0, 0.0, AT, 0.0, 0, False, "critical"),
    ])  # fmt: skip


def test_no_controller_ever(spark: SparkSession) -> None:
    found = detect(spark, [ctl("s1", AT, None, None)])
    expect(spark, found["controller_health"], [
        ("s1", None, None, None, True, 0, 0, None, None, None, 0, False, "critical"),
    ])  # fmt: skip


def test_zombie_partitions(spark: SparkSession) -> None:
    found = detect(spark, [
        ctl("s1", minutes_ago(5), 1, 9),
        ctl("s2", AT, 1, 9),
    ], [
        partition("a", 0, [1, 2], [1, 2], snapshot="s1", at=minutes_ago(5), controller_epoch=10),  # past
        partition("a", 0, [1, 2], [1, 2], snapshot="s2", controller_epoch=10),  # zombie
        partition("a", 1, [1, 2], [2], snapshot="s2", controller_epoch=9),       # current controller
        partition("b", 0, [2, 1], [2], snapshot="s2", controller_epoch=3),       # an older controller
    ])  # fmt: skip
    expect(spark, found["controller_zombie_partitions"], [("s2", "a", 0, 10, 9, 1, "critical")])
    expect(spark, found["controller_health"], [
        ("s2", 1, 9, ELECTED, False, 0, 0, 0.0, ELECTED, 5 * 3600.0, 1, False, "critical"),
    ])  # fmt: skip


def test_empty_history(spark: SparkSession) -> None:
    found = detect(spark, [])
    assert sorted(found) == sorted(DETECTOR.outputs)
    assert {name: table.count() for name, table in found.items()} == dict.fromkeys(DETECTOR.outputs, 0)
    assert {"snapshot_id", "severity"} <= set(found["controller_health"].columns)
