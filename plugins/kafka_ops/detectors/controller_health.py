"""Controller health over the history window: elections, churn, and zombie-controller symptoms.

In ZooKeeper mode the controller is the broker holding the ephemeral `/controller` znode and
`/controller_epoch` rises by one on every election. The `controller` lake table has one row per
snapshot (`controller_id` null when there is no `/controller`); snapshots are ordered by
(captured_at, snapshot_id) and "now" is the context's capture time. An unknown epoch (null: the
znode could not be read) never counts as an election.

Findings table `controller_changes`, one row per consecutive-snapshot pair in the window where the
epoch rose or the controller changed (no controller counts as a value: losing it is a change):
snapshot_id, observed_at (the later snapshot's capture time), previous_observed_at,
from_controller, to_controller, epoch_before, epoch_after, `elections` (the epoch's rise, else 0),
`change` and `severity` (always info):

* `elected`: the epoch rose and another broker (or one after none) holds `/controller`;
* `re_elected`: the epoch rose and the same broker holds it (it lost and won again in between);
* `lost`: no `/controller` in the later snapshot (an election is pending or failing);
* `changed_without_election`: another broker with the same epoch, impossible in ZooKeeper mode
  (suspect a torn read or a reset `/controller_epoch`); it counts 0 elections.

Findings table `controller_health`, exactly one row (none when the latest snapshot has no
controller row, as with an empty history):
snapshot_id, controller_id, controller_epoch and elected_at (the latest snapshot's),
`no_controller`, `elections_last_hour` (elections of the changes observed less than an hour before
now), `elections_in_window`, `elections_per_hour` (in the window / the window's span in hours;
null with fewer than 2 snapshots), `last_change_at` (observed_at of the window's last change, else
elected_at), `seconds_since_last_change`, `zombie_partitions` (partitions of the latest snapshot
whose state was written by a controller epoch above the current one), `churn`
(elections_last_hour > thresholds.controller_elections_per_hour) and `severity` (no controller or
zombie partitions: critical; churn: warning; else ok).

Findings table `controller_zombie_partitions`, one row per such partition: snapshot_id, topic,
partition, state_controller_epoch, current_controller_epoch, leader, severity (critical).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest


def _seconds_between(later: Column, earlier: Column) -> Column:
    return (F.unix_micros(later) - F.unix_micros(earlier)) / 1e6


def detect_changes(controller: DataFrame) -> DataFrame:
    """Pure: the controller rows of every snapshot → `controller_changes` (without snapshot_id)."""
    # One row per snapshot (a few hundred a day): a single window partition is cheap here.
    order = Window.orderBy("captured_at", "snapshot_id")
    pairs = controller.select(
        F.col("captured_at").alias("observed_at"),
        F.lag("captured_at").over(order).alias("previous_observed_at"),
        F.lag("controller_id").over(order).alias("from_controller"),
        F.col("controller_id").alias("to_controller"),
        F.lag("controller_epoch").over(order).alias("epoch_before"),
        F.col("controller_epoch").alias("epoch_after"),
    ).where(F.col("previous_observed_at").isNotNull())
    rose = F.coalesce(F.col("epoch_after") > F.col("epoch_before"), F.lit(False))
    moved = ~F.col("from_controller").eqNullSafe(F.col("to_controller"))
    change = (
        F.when(F.col("to_controller").isNull(), "lost")
        .when(~rose, "changed_without_election")
        .when(F.col("from_controller") == F.col("to_controller"), "re_elected")
        .otherwise("elected")
    )
    return pairs.where(rose | moved).select(
        "observed_at", "previous_observed_at", "from_controller", "to_controller", "epoch_before",
        "epoch_after",
        F.when(rose, F.col("epoch_after") - F.col("epoch_before")).otherwise(0).alias("elections"),
        change.alias("change"),
        F.lit("info").alias("severity"),
    )  # fmt: skip


def detect_zombies(partitions_now: DataFrame, controller_now: DataFrame) -> DataFrame:
    """Pure: the latest partitions and controller row → `controller_zombie_partitions` (without
    snapshot_id). A state written by a higher epoch than /controller_epoch means a controller
    nobody elected (or a rolled-back ZooKeeper) is writing."""
    current = controller_now.select(F.col("controller_epoch").alias("current_controller_epoch"))
    return (
        partitions_now.where(F.col("has_state"))
        .crossJoin(current)
        .where(F.col("controller_epoch") > F.col("current_controller_epoch"))
        .select(
            "topic",
            "partition",
            F.col("controller_epoch").alias("state_controller_epoch"),
            "current_controller_epoch",
            "leader",
            F.lit("critical").alias("severity"),
        )
    )


def detect_health(
    controller: DataFrame,
    controller_now: DataFrame,
    changes: DataFrame,
    zombies: DataFrame,
    *,
    now: datetime,
    churn_per_hour: float,
) -> DataFrame:
    """Pure: history, latest row, changes and zombies → the `controller_health` row (zero rows
    when `controller_now` is empty; without snapshot_id)."""
    stats = changes.agg(
        F.coalesce(
            F.sum(F.when(F.col("observed_at") > F.lit(now - timedelta(hours=1)), F.col("elections"))),
            F.lit(0).cast("long"),
        ).alias("elections_last_hour"),
        F.coalesce(F.sum("elections"), F.lit(0).cast("long")).alias("elections_in_window"),
        F.max("observed_at").alias("last_observed_change"),
    )
    window = controller.agg(
        F.count(F.lit(1)).alias("snapshots"),
        _seconds_between(F.lit(now), F.min("captured_at")).alias("span_seconds"),
    )
    zombie_count = zombies.agg(F.count(F.lit(1)).alias("zombie_partitions"))
    row = (
        controller_now.select("controller_id", "controller_epoch", "elected_at")
        .crossJoin(stats)
        .crossJoin(window)
        .crossJoin(zombie_count)
        .withColumn("last_change_at", F.coalesce("last_observed_change", "elected_at"))
    )
    no_controller = F.col("controller_id").isNull()
    churn = F.col("elections_last_hour") > F.lit(churn_per_hour)
    severity = (
        F.when(no_controller | (F.col("zombie_partitions") > 0), "critical").when(churn, "warning").otherwise("ok")
    )
    return row.select(
        "controller_id", "controller_epoch", "elected_at",
        no_controller.alias("no_controller"),
        "elections_last_hour", "elections_in_window",
        F.when(
            (F.col("snapshots") >= 2) & (F.col("span_seconds") > 0),
            F.col("elections_in_window") / (F.col("span_seconds") / 3600),
        ).alias("elections_per_hour"),
        "last_change_at",
        _seconds_between(F.lit(now), F.col("last_change_at")).alias("seconds_since_last_change"),
        "zombie_partitions",
        churn.alias("churn"),
        severity.alias("severity"),
    )  # fmt: skip


def _tag(frame: DataFrame, context: Context) -> DataFrame:
    return frame.select(F.lit(context.snapshot_id).alias("snapshot_id"), "*")


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    controller = inputs["controller"]
    controller_now = latest(controller, context)
    changes = detect_changes(controller)
    zombies = detect_zombies(latest(inputs["partitions"], context), controller_now)
    health = detect_health(
        controller,
        controller_now,
        changes,
        zombies,
        now=context.captured_at,
        churn_per_hour=context.thresholds.controller_elections_per_hour,
    )
    return {
        "controller_changes": _tag(changes, context),
        "controller_health": _tag(health, context),
        "controller_zombie_partitions": _tag(zombies, context),
    }


DETECTOR = Detector(
    name="controller_health",
    tables=("controller", "partitions"),
    detect=_detect,
    outputs=("controller_changes", "controller_health", "controller_zombie_partitions"),
    latest_only=("partitions",),
)
