from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.reassignments import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, PARTITIONS, REASSIGNMENTS, frame, partition, with_runs

# snapshot → minutes before AT (the latest snapshot, "now")
SNAPSHOTS = {"s1": 100, "s2": 95, "s3": 70, "s4": 30, "s5": 0}
MOVE_12_TO_34 = ([3, 4, 1, 2], [3, 4], [3, 4], [1, 2])
MOVE_123_TO_456 = ([4, 5, 6, 1, 2, 3], [4, 5, 6], [4, 5, 6], [1, 2, 3])


def at(snapshot: str) -> datetime:
    return AT - timedelta(minutes=SNAPSHOTS[snapshot])


def history(
    topic: str, p: int, move: tuple[list[int], ...], isr: dict[str, list[int]], in_flight: str = "",
    requested: bool = False,
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:  # fmt: skip
    """(reassignments rows, partitions rows): the partition's ISR in each snapshot of `isr`, in
    flight in the snapshots of `in_flight` (default: all of them)."""
    replicas, target, adding, removing = move
    moving = [(s, at(s), topic, p, replicas, target, adding, removing, requested) for s in (in_flight.split() or isr)]
    states = [partition(topic, p, replicas, i, snapshot=s, at=at(s), adding=adding) for s, i in isr.items()]
    return moving, states


def detect(
    spark: SparkSession, *histories: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]],
    thresholds: Thresholds | None = None, latest: str = "s5",
) -> DataFrame:  # fmt: skip
    context = Context("c1", latest, at(latest), thresholds or Thresholds())
    inputs = {
        "reassignments": frame(spark, REASSIGNMENTS, [row for h in histories for row in h[0]]),
        "partitions": frame(spark, PARTITIONS, [row for h in histories for row in h[1]]),
    }
    (table,) = DETECTOR.detect(with_runs(inputs), context).values()
    return table


def expect(spark: SparkSession, result: DataFrame, rows: list[tuple[Any, ...]]) -> None:
    assertDataFrameEqual(result, spark.createDataFrame(rows, result.schema))


NOT_STARTED = ([1, 2], [3, 1], [], [])


def test_every_status(spark: SparkSession) -> None:
    found = detect(
        spark,
        # progressing, young: replica 3 joined the ISR just now
        history("a", 0, MOVE_12_TO_34, {"s4": [1, 2], "s5": [1, 2, 3]}, requested=True),
        # progressing but too old: 4 joined 70 minutes ago, 5 now; seen since 95 minutes
        history(
            "a",
            1,
            MOVE_123_TO_456,
            {
                "s2": [1, 2, 3],
                "s3": [1, 2, 3, 4],
                "s4": [1, 2, 3, 4],
                "s5": [1, 2, 3, 4, 5],
            },
        ),
        # no progress since replica 3 joined 70 minutes ago; in flight since the window's start
        history(
            "b",
            0,
            MOVE_12_TO_34,
            {
                "s1": [1, 2],
                "s2": [1, 2],
                "s3": [1, 2, 3],
                "s4": [1, 2, 3],
                "s5": [1, 2, 3],
            },
        ),
        # cancelled at s3 and requested again: the streak restarts at s4; the earlier streak's
        # progress (3 joined at s2) does not count
        history(
            "b",
            1,
            MOVE_12_TO_34,
            {
                "s1": [1, 2],
                "s2": [1, 2, 3],
                "s3": [1, 2],
                "s4": [1, 2, 3],
                "s5": [1, 2, 3],
            },
            in_flight="s1 s2 s4 s5",
        ),
        # requested in /admin/reassign_partitions 70 minutes ago, never picked up
        history("c", 0, NOT_STARTED, {"s3": [1, 2], "s4": [1, 2], "s5": [1, 2]}, requested=True),
        # requested just now for a partition without state: not started, no ISR
        history("c", 1, NOT_STARTED, {}, in_flight="s5", requested=True),
        # finished before the latest snapshot: not reported
        history("d", 0, MOVE_12_TO_34, {"s1": [1, 2], "s2": [1, 2, 3], "s3": [1, 2, 3, 4]}),
    )
    expect(spark, found, [
        ("s5", "a", 0, [3, 4, 1, 2], [3, 4], [3, 4], [1, 2], True, True, [1, 2, 3], [3],
         at("s4"), 1800.0, False, AT, False, None, "info"),
        ("s5", "a", 1, [4, 5, 6, 1, 2, 3], [4, 5, 6], [4, 5, 6], [1, 2, 3], False, True,
         [1, 2, 3, 4, 5], [4, 5], at("s2"), 5700.0, False, AT, True,
         "in flight for 95 minutes (threshold 60)", "warning"),
        ("s5", "b", 0, [3, 4, 1, 2], [3, 4], [3, 4], [1, 2], False, True, [1, 2, 3], [3],
         at("s1"), 6000.0, True, at("s3"), True, "no new replica joined the ISR for 70 minutes", "warning"),
        ("s5", "b", 1, [3, 4, 1, 2], [3, 4], [3, 4], [1, 2], False, True, [1, 2, 3], [3],
         at("s4"), 1800.0, False, at("s4"), False, None, "info"),
        ("s5", "c", 0, [1, 2], [3, 1], [], [], True, False, [1, 2], [], at("s3"), 4200.0, False,
         at("s3"), True, "requested in /admin/reassign_partitions but not started for 70 minutes", "warning"),
        ("s5", "c", 1, [1, 2], [3, 1], [], [], True, False, None, [], AT, 0.0, False, AT, False, None, "info"),
    ])  # fmt: skip


def test_stuck_reason_follows_the_threshold(spark: SparkSession) -> None:
    found = detect(
        spark,
        history(
            "a",
            1,
            MOVE_123_TO_456,
            {
                "s2": [1, 2, 3],
                "s3": [1, 2, 3, 4],
                "s4": [1, 2, 3, 4],
                "s5": [1, 2, 3, 4, 5],
            },
        ),
        history(
            "b",
            0,
            MOVE_12_TO_34,
            {
                "s1": [1, 2],
                "s2": [1, 2],
                "s3": [1, 2, 3],
                "s4": [1, 2, 3],
                "s5": [1, 2, 3],
            },
        ),
        thresholds=Thresholds(stuck_reassignment_minutes=97.5),
    ).select("topic", "partition", "stuck", "stuck_reason", "severity")
    # 95 minutes old: fine now; 100 minutes old and idle for 70 (< 97.5): too old
    expect(spark, found, [
        ("a", 1, False, None, "info"),
        ("b", 0, True, "in flight for 100 minutes (threshold 97.5)", "warning"),
    ])  # fmt: skip


def test_single_snapshot(spark: SparkSession) -> None:
    found = detect(spark, history("a", 0, MOVE_12_TO_34, {"s5": [1, 2]}))
    expect(spark, found, [
        ("s5", "a", 0, [3, 4, 1, 2], [3, 4], [3, 4], [1, 2], False, True, [1, 2], [], AT, 0.0, True, AT,
         False, None, "info"),
    ])  # fmt: skip


def test_nothing_in_flight(spark: SparkSession) -> None:
    # finished at s2; s4 and s5 are quiet snapshots
    past = history("a", 0, MOVE_12_TO_34, {"s1": [1, 2], "s2": [1, 2, 3]})
    quiet = [partition("a", 0, [3, 4], [3, 4], snapshot=s, at=at(s)) for s in ("s4", "s5")]
    found = detect(spark, past, ([], quiet))
    assert found.count() == 0
    assert {"snapshot_id", "severity"} <= set(found.columns)


def test_empty_history(spark: SparkSession) -> None:
    assert detect(spark).count() == 0
