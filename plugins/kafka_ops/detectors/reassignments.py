"""Partition reassignments in flight in the latest snapshot: how long, how far, and whether stuck.

The `reassignments` lake table has one row per partition in flight per snapshot: moving in its
topic znode (`adding_replicas`/`removing_replicas` non-empty), or requested in
`/admin/reassign_partitions` (`requested_in_znode`) and not started yet (target set, nothing
adding or removing: the controller has not picked it up, e.g. because the request znode was
overwritten instead of created). Kafka completes a reassignment once every target replica is in
the ISR, so progress is measured as adding replicas joining the ISR. Snapshots are ordered by
(captured_at, snapshot_id) over every snapshot of the window (from both input tables); "now" is
the context's capture time.

Findings table `reassignments_in_flight`, one row per partition in flight in the latest snapshot:
snapshot_id, topic, partition, replicas, target_replicas, adding_replicas, removing_replicas,
requested_in_znode, `started` (anything adding or removing), `isr` (the latest partition state's;
null without one), `adding_in_isr` (the adding replicas now in the ISR),
`first_seen` (capture time of the first snapshot of the current streak: in flight in every
snapshot since), `age_seconds` (now - first_seen), `since_window_start` (the streak reaches the
window's oldest snapshot, so the real age is longer), `last_progress_at` (the latest snapshot of
the streak where more adding replicas were in the ISR than in the snapshot before, else
first_seen), `stuck` (age or time without progress above thresholds.stuck_reassignment_minutes),
`stuck_reason` and `severity` (stuck: warning, else info). `stuck_reason`, the first that holds:

* "requested in /admin/reassign_partitions but not started for N minutes" (not started);
* "no new replica joined the ISR for N minutes" (no progress for longer than the threshold);
* "in flight for N minutes (threshold T)" (progressing, but for too long);
* null when not stuck.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis import partition_runs
from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.analysis.partition_runs import RUNS_TABLE, runs_of

KEY = ["topic", "partition"]


def _isr() -> Column:
    """The ISR, empty when the partition has no state."""
    return F.coalesce(F.col("isr"), F.array().cast("array<int>"))


def _seconds_since(now: datetime, earlier: str) -> Column:
    return (F.unix_micros(F.lit(now)) - F.unix_micros(F.col(earlier))) / 1e6


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)


def snapshot_order(*tables: DataFrame) -> DataFrame:
    """Every snapshot in `tables` as (snapshot_id, captured_at, idx), idx = 1, 2, … by (captured_at,
    snapshot_id)."""
    snapshots = tables[0].select("snapshot_id", "captured_at")
    for table in tables[1:]:
        snapshots = snapshots.union(table.select("snapshot_id", "captured_at"))
    return partition_runs.snapshot_order(snapshots)


def streaks(moving: DataFrame, isr: DataFrame, order: DataFrame) -> DataFrame:
    """Per partition in `moving` (history rows of the partitions still in flight): the current
    streak's start (streak_idx, first_seen) and its latest progress (progress_at, null if none).

    `isr`: (snapshot_id, topic, partition, isr) of the same snapshots; `order`: `snapshot_order`.
    """
    in_order = Window.partitionBy(*KEY).orderBy("idx")
    rows = (
        moving.join(F.broadcast(order), "snapshot_id")
        .join(isr, ["snapshot_id", *KEY], "left")
        .select(
            *KEY,
            "idx",
            "captured_at",
            F.size(F.array_intersect("adding_replicas", _isr())).alias("in_isr"),
        )
        .select(
            "*",
            F.lag("idx").over(in_order).alias("previous_idx"),
            F.lag("in_isr").over(in_order).alias("previous_in_isr"),
        )
    )
    # A streak starts where the partition was not in flight in the snapshot before.
    starts = F.coalesce(F.col("previous_idx") < F.col("idx") - 1, F.lit(True))
    rose = ~starts & (F.col("in_isr") > F.col("previous_in_isr"))
    return rows.groupBy(*KEY).agg(
        F.max(F.when(starts, F.col("idx"))).alias("streak_idx"),
        F.max(F.when(starts, F.col("captured_at"))).alias("first_seen"),
        F.max(F.when(rose, F.col("captured_at"))).alias("progress_at"),
    )


def detect_reassignments(reassignments: DataFrame, partitions: DataFrame, context: Context) -> DataFrame:
    """Pure: the window's reassignments and partitions → the `reassignments` findings."""
    order = snapshot_order(partitions, reassignments)
    now = latest(partitions, context)
    return reassignments_in_flight(reassignments, runs_of(partitions, order), order, now, context)


def _isr_history(runs: DataFrame, keys: DataFrame, order: DataFrame) -> DataFrame:
    """(snapshot_id, topic, partition, isr) of `keys`' partitions in each snapshot their runs span."""
    spans = runs.join(keys, KEY, "left_semi").select(*KEY, "isr", F.explode(F.sequence("first", "last")).alias("idx"))
    return (
        spans.groupBy(*KEY, "idx")
        .agg(F.max("isr").alias("isr"))  # runs overlap only where a state recurs: either is that snapshot's
        .join(F.broadcast(order.select("snapshot_id", "idx")), "idx")
        .select("snapshot_id", *KEY, "isr")
    )


def reassignments_in_flight(
    reassignments: DataFrame, runs: DataFrame, order: DataFrame, now_partitions: DataFrame, context: Context
) -> DataFrame:
    """Pure: the window's reassignments, partition runs (`analysis.partition_runs`) and snapshot order,
    and the latest snapshot's partitions → the `reassignments` findings."""
    now = latest(reassignments, context)
    keys = F.broadcast(now.select(*KEY))
    moving = reassignments.join(keys, KEY, "left_semi")
    history = streaks(moving, _isr_history(runs, keys, order), order.select("snapshot_id", "idx"))
    progress = F.when(F.col("progress_at") > F.col("first_seen"), F.col("progress_at"))
    found = (
        now.join(history, KEY)
        .join(now_partitions.where(F.col("has_state")).select(*KEY, "isr"), KEY, "left")
        .select(
            "*",
            (F.size("adding_replicas") + F.size("removing_replicas") > 0).alias("started"),
            F.array_intersect("adding_replicas", _isr()).alias("adding_in_isr"),
            _seconds_since(context.captured_at, "first_seen").alias("age_seconds"),
            (F.col("streak_idx") == 1).alias("since_window_start"),
            F.coalesce(progress, F.col("first_seen")).alias("last_progress_at"),
        )
        .withColumn("idle_seconds", _seconds_since(context.captured_at, "last_progress_at"))
    )
    limit_minutes = context.thresholds.stuck_reassignment_minutes
    too_old = F.col("age_seconds") > limit_minutes * 60
    idle = F.col("idle_seconds") > limit_minutes * 60
    age_minutes = F.floor(F.col("age_seconds") / 60).cast("string")
    idle_minutes = F.floor(F.col("idle_seconds") / 60).cast("string")
    reason = (
        F.when(
            idle & ~F.col("started"),
            F.concat(F.lit("requested in /admin/reassign_partitions but not started for "), idle_minutes,
                     F.lit(" minutes")),
        )
        .when(idle, F.concat(F.lit("no new replica joined the ISR for "), idle_minutes, F.lit(" minutes")))
        .when(
            too_old,
            F.concat(F.lit("in flight for "), age_minutes,
                     F.lit(f" minutes (threshold {_number(limit_minutes)})")),
        )
    )  # fmt: skip
    return found.select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        *KEY, "replicas", "target_replicas", "adding_replicas", "removing_replicas", "requested_in_znode",
        "started", "isr", "adding_in_isr", "first_seen", "age_seconds", "since_window_start",
        "last_progress_at",
        (too_old | idle).alias("stuck"),
        reason.alias("stuck_reason"),
        F.when(too_old | idle, "warning").otherwise("info").alias("severity"),
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    order = partition_runs.snapshot_order(inputs["snapshots"])
    now = latest(inputs["partitions"], context)
    found = reassignments_in_flight(inputs["reassignments"], inputs[RUNS_TABLE], order, now, context)
    return {"reassignments_in_flight": found}


DETECTOR = Detector(
    name="reassignments",
    tables=("reassignments", "partitions", RUNS_TABLE, "snapshots"),
    detect=_detect,
    outputs=("reassignments_in_flight",),
    latest_only=("partitions",),
)
