"""ISR history per partition over the window: who left or joined the ISR, what is under-replicated
now and since when, and which partitions flap faster than snapshots can see.

Only rows with a partition state (`has_state`) count; a partition's "consecutive snapshots" are
its consecutive observations with a state, ordered by (captured_at, snapshot_id). A partition
state is identified by (state_version, isr, leader): the state znode's version (the partition
epoch) rises on every leader/ISR write, so within one znode incarnation a state is one unbroken
run of snapshots, and only the boundaries between runs can carry a change. Detecting on runs
instead of rows keeps the work proportional to partitions + changes, not partitions × snapshots.
Only if a state znode is recreated (topic deleted and re-created) within the window *and* comes
back with the exact version, ISR and leader of an earlier observation do two runs merge; the
overlapping boundaries are then dropped (no event is invented, some are lost).

Findings table `isr_events`, one row per replica that left or joined a partition's ISR between
two consecutive snapshots: snapshot_id (the context's), event_snapshot_id and observed_at (the
later snapshot), previous_snapshot_id and previous_observed_at (the earlier one), topic,
partition, `event` ("shrink": the replica left the ISR, severity warning; "expand": it joined,
severity info), replica, isr_before, isr_after, leader_before, leader_after (-1 = no leader).

Findings table `isr_under_replicated`, one row per partition under-replicated in the latest
snapshot (ISR smaller than the replicas minus those a reassignment is still adding, as
`kafka-topics --under-replicated-partitions` counts): snapshot_id, topic, partition, replicas
(minus adding ones), isr, `missing` (replicas not in the ISR), `under_replicated_since` (capture
time of the first snapshot of the current streak: under-replicated in every snapshot with a state
since), `duration_seconds` (latest capture time - since, double), `since_window_start` (the
streak reaches the window's oldest snapshot, so it may be older), severity warning.

Findings table `isr_flapping`: between two consecutive snapshots the partition epoch rose by
`delta`; `observed` is the fewest state writes that explain the difference we saw (one per
replica that joined the ISR, since followers join one at a time, plus one when replicas left or
the leader moved: those can share a write); `hidden` = max(delta - observed, 0) writes nobody
saw. An ISR that changed and changed back takes two writes, so `flaps` = floor(hidden / 2); a
lone extra write is a leader-epoch bump (controlled shutdown), not a flap.

A reassignment that starts and completes between two snapshots leaves no in-flight record, only
an assignment that changed (replicas before != after, order included). Its own writes are
counted as observed, the way Kafka 3.9's controller makes them (`onPartitionReassignment`, ORS =
replicas before, TRS = after): one leader-epoch bump for phase A unless TRS was already inside
the ISR, one join per new replica (seen), one leader-epoch bump for phase B (which also moves a
leader that is not in TRS), and one leader-epoch bump per replica of ORS - TRS removed from the
ISR (those removals are not "replicas that left"). Every controller write bumps the leader
epoch, so the credit is capped at the leader epoch's rise over the pair: whatever else happened
in the interval (a follower dropping out and back, a broker bounce) still shows as hidden writes,
and a true flap on a reassigned partition is still counted. A reassignment started and cancelled
(or reverted) between two snapshots leaves the assignment as it was: its writes count as hidden.
Pairs whose version went down (state znode recreated), and pairs with a reassignment in flight on
either side (which of its phases ran in the interval cannot be told from one side's record), are
ignored. One row per partition with flaps in the window: snapshot_id, topic, partition,
`hidden_changes` (sum of hidden), `flaps` (sum), `intervals_with_flaps`, `version_delta` (the
epoch's total rise over the window's non-ignored pairs), `reassignment_changes` (the part of it
credited to completed reassignments), `notified_changes` (distinct `/isr_change_notification`
znodes naming the partition in the window: written only by brokers on IBP < 2.7, so usually 0 on
Kafka 3.9), `first_seen` and `last_seen` (the later snapshot's capture time of the first and
last pair with flaps), severity warning.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.analysis.partition_runs import RUNS_TABLE, merged, runs_of, snapshot_order

KEY = ["topic", "partition"]


def _isr() -> Column:
    return F.coalesce(F.col("isr"), F.array().cast("array<int>"))


def _replicas() -> Column:
    """The assignment minus the replicas a reassignment is still adding."""
    return F.filter("replicas", lambda r: ~F.coalesce(F.array_contains("adding_replicas", r), F.lit(False)))


def _under_replicated(isr: Column, replicas: Column) -> Column:
    return F.size(isr) < F.size(replicas)


def _snapshot(order: DataFrame, idx: str, snapshot_id: str, captured_at: str) -> DataFrame:
    return F.broadcast(
        order.select(
            F.col("idx").alias(idx), F.col("snapshot_id").alias(snapshot_id), F.col("captured_at").alias(captured_at)
        )
    )


def transitions(runs: DataFrame, order: DataFrame, *extra: str) -> DataFrame:
    """Pure: the window's partition runs (`analysis.partition_runs`, positions in `order`) → one row
    per pair of consecutive snapshots of a partition whose state (state_version, isr, leader, *extra)
    differs: topic, partition, previous_snapshot_id, previous_observed_at, event_snapshot_id,
    observed_at, isr_before, isr_after, leader_before, leader_after, version_before, version_after,
    and for each `extra` column of `runs` its value after (`<name>`) and before (`<name>_before`)."""
    by_start = Window.partitionBy(*KEY).orderBy("first")
    before = {c: F.lag(c).over(by_start) for c in ("last", "isr", "leader", "state_version", *extra)}
    pairs = merged(runs, "state_version", "isr", "leader", *extra).select(
        *KEY, "first", "isr", "leader", "state_version", *extra,
        *(v.alias(f"{c}_before") for c, v in before.items()),
    )  # fmt: skip
    # a boundary is only real if the earlier run ends before the later one starts (see above)
    return (
        pairs.where(F.col("last_before") < F.col("first"))
        .join(_snapshot(order, "last_before", "previous_snapshot_id", "previous_observed_at"), "last_before")
        .join(_snapshot(order, "first", "event_snapshot_id", "observed_at"), "first")
        .select(
            *KEY, "previous_snapshot_id", "previous_observed_at", "event_snapshot_id", "observed_at",
            "isr_before", F.col("isr").alias("isr_after"), "leader_before", F.col("leader").alias("leader_after"),
            F.col("state_version_before").alias("version_before"), F.col("state_version").alias("version_after"),
            *extra, *(f"{c}_before" for c in extra),
        )
    )  # fmt: skip


def window_runs(partitions: DataFrame) -> tuple[DataFrame, DataFrame]:
    """The runs of a window given as its partition rows, and its snapshots' order: what the analysis
    builds for these detectors, built here from the rows (for a caller holding the rows)."""
    order = snapshot_order(partitions)
    return runs_of(partitions, order), order


def detect_isr_events(partitions: DataFrame, snapshot_id: str) -> DataFrame:
    """Pure: the window's partitions → the `isr_events` rows, tagged with `snapshot_id`."""
    return isr_events(*window_runs(partitions), snapshot_id)


def isr_events(runs: DataFrame, order: DataFrame, snapshot_id: str) -> DataFrame:
    """Pure: the window's partition runs and snapshot order → the `isr_events` rows."""

    def events(kind: str, replicas: Column) -> Column:
        return F.transform(replicas, lambda r: F.struct(F.lit(kind).alias("event"), r.alias("replica")))

    left = F.array_except("isr_before", "isr_after")
    joined = F.array_except("isr_after", "isr_before")
    return (
        transitions(runs, order)
        .select("*", F.inline(F.concat(events("shrink", left), events("expand", joined))))
        .select(
            F.lit(snapshot_id).alias("snapshot_id"),
            "event_snapshot_id", "previous_snapshot_id", "observed_at", "previous_observed_at",
            *KEY, "event", "replica", "isr_before", "isr_after", "leader_before", "leader_after",
            F.when(F.col("event") == "shrink", "warning").otherwise("info").alias("severity"),
        )
    )  # fmt: skip


def detect_under_replicated(partitions: DataFrame, snapshot_id: str) -> DataFrame:
    """Pure: the window's partitions → the `isr_under_replicated` rows of snapshot `snapshot_id`."""
    return under_replicated(*window_runs(partitions), partitions.where(F.col("snapshot_id") == snapshot_id))


def under_replicated(runs: DataFrame, order: DataFrame, now: DataFrame) -> DataFrame:
    """Pure: the window's partition runs and snapshot order, and the latest snapshot's partitions
    (`now`) → the `isr_under_replicated` rows."""
    flagged = merged(runs, "state_version", "isr", "leader", "replicas", "adding_replicas").select(
        *KEY, "first", "last", _under_replicated(F.col("isr"), _replicas()).alias("under")
    )
    last_ok = F.max(F.when(~F.col("under"), F.col("last"))).over(Window.partitionBy(*KEY))
    streaks = (
        flagged.select("*", last_ok.alias("last_ok"))
        .where(F.col("under") & F.coalesce(F.col("first") > F.col("last_ok"), F.lit(True)))
        .groupBy(*KEY)
        .agg(F.min("first").alias("since_idx"))
        .join(_snapshot(order, "since_idx", "since_snapshot_id", "under_replicated_since"), "since_idx")
    )
    now = now.where(F.col("has_state")).select(
        "snapshot_id", "captured_at", *KEY, _replicas().alias("replicas"), _isr().alias("isr")
    )
    since = F.col("under_replicated_since")
    return (
        now.where(_under_replicated(F.col("isr"), F.col("replicas")))
        .join(streaks, KEY)
        .select(
            "snapshot_id", *KEY, "replicas", "isr",
            F.array_except("replicas", "isr").alias("missing"),
            since,
            ((F.unix_micros("captured_at") - F.unix_micros(since)) / 1e6).alias("duration_seconds"),
            (F.col("since_idx") == 1).alias("since_window_start"),
            F.lit("warning").alias("severity"),
        )
    )  # fmt: skip


def _reassignment_writes(moved: Column) -> tuple[Column, Column]:
    """The state writes of a reassignment that started and completed between two snapshots, and
    the replicas it removed from the ISR. Kafka 3.9's controller (`onPartitionReassignment`) with
    ORS = replicas before, TRS = replicas after: phase A (only when TRS is not already inside the
    ISR) bumps the leader epoch once; each new replica joins the ISR in its own write (the
    leader's, seen as a join); phase B bumps the leader epoch once more (B3, moving the leader if
    it is not in TRS) and then removes each replica of ORS - TRS still in the ISR, one
    leader-epoch bump each (B4). Every write of the controller bumps the leader epoch, so never
    more than the leader epoch rose are credited."""
    removed = F.array_intersect(F.array_except("replicas_before", "replicas"), "isr_before")
    phase_a = F.when(F.size(F.array_except("replicas", "isr_before")) > 0, 1).otherwise(0)
    epoch_rise = F.greatest(F.coalesce(F.col("leader_epoch") - F.col("leader_epoch_before"), F.lit(0)), F.lit(0))
    writes = F.least(phase_a + 1 + F.size(removed), epoch_rise)
    return F.when(moved, writes).otherwise(0), F.when(moved, removed).otherwise(F.array().cast("array<int>"))


def detect_flapping(partitions: DataFrame, notifications: DataFrame, snapshot_id: str) -> DataFrame:
    """Pure: the window's partitions and ISR change notifications → the `isr_flapping` rows."""
    return flapping(*window_runs(partitions), notifications, snapshot_id)


def flapping(runs: DataFrame, order: DataFrame, notifications: DataFrame, snapshot_id: str) -> DataFrame:
    """Pure: the window's partition runs and snapshot order, and its ISR change notifications → the
    `isr_flapping` rows."""
    # the assignment changed between the snapshots: a reassignment started and completed in between
    # (an assignment missing on either side, e.g. a partition absent from its topic znode, is no move)
    moved = F.coalesce(F.col("replicas") != F.col("replicas_before"), F.lit(False))
    reassignment, reassignment_removed = _reassignment_writes(moved)
    added = F.size(F.array_except("isr_after", "isr_before"))
    removed = F.size(F.array_except(F.array_except("isr_before", "isr_after"), reassignment_removed))
    # B3 moves a leader that is not in the new assignment
    leader_moved = ~F.col("leader_before").eqNullSafe(F.col("leader_after")) & ~(
        moved & ~F.coalesce(F.array_contains("replicas", F.col("leader_before")), F.lit(False))
    )
    # the fewest state writes that explain what we saw: a replica joins the ISR in its own write;
    # removals and a leader move can share one; a completed reassignment's own writes
    observed = added + F.when(leader_moved | (removed > 0), 1).otherwise(0) + reassignment
    delta = F.col("version_after") - F.col("version_before")
    # a reassignment in flight on either side: which of its phases ran in the interval cannot be
    # told from one side's in-flight record, so those pairs are skipped
    in_flight = (F.size("adding_replicas") > 0) | (F.size("removing_replicas") > 0)
    quiet = ~F.col("reassigning") & ~F.col("reassigning_before")
    pairs = (
        transitions(
            runs.withColumn("reassigning", F.coalesce(in_flight, F.lit(False))), order,
            "reassigning", "replicas", "leader_epoch",
        )
        .where((delta >= 0) & quiet)
        .select(*KEY, "observed_at", delta.alias("delta"), observed.alias("observed"),
                reassignment.alias("reassignment"))
        .withColumn("hidden", F.greatest(F.col("delta") - F.col("observed"), F.lit(0)))
        # changed and changed back takes two writes; a lone extra write is a leader-epoch bump
        .withColumn("flaps", F.floor(F.col("hidden") / 2).cast("int"))
    )  # fmt: skip
    flapped = F.col("flaps") > 0
    notified = (
        notifications.where(F.col("topic").isNotNull() & F.col("partition").isNotNull())
        .groupBy(*KEY)
        .agg(F.count_distinct("notification").alias("notified_changes"))
    )
    return (
        pairs.groupBy(*KEY)
        .agg(
            F.sum("hidden").alias("hidden_changes"),
            F.sum("flaps").alias("flaps"),
            F.count_if(flapped).alias("intervals_with_flaps"),
            F.sum("delta").alias("version_delta"),
            F.sum("reassignment").alias("reassignment_changes"),
            F.min(F.when(flapped, F.col("observed_at"))).alias("first_seen"),
            F.max(F.when(flapped, F.col("observed_at"))).alias("last_seen"),
        )
        .where(F.col("flaps") > 0)
        .join(notified, KEY, "left")
        .select(
            F.lit(snapshot_id).alias("snapshot_id"),
            *KEY, "hidden_changes", "flaps", "intervals_with_flaps", "version_delta", "reassignment_changes",
            F.coalesce("notified_changes", F.lit(0).cast("bigint")).alias("notified_changes"),
            "first_seen", "last_seen", F.lit("warning").alias("severity"),
        )
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    runs, order = inputs[RUNS_TABLE], snapshot_order(inputs["snapshots"])
    return {
        "isr_events": isr_events(runs, order, context.snapshot_id),
        "isr_under_replicated": under_replicated(runs, order, latest(inputs["partitions"], context)),
        "isr_flapping": flapping(runs, order, inputs["isr_change_notifications"], context.snapshot_id),
    }


DETECTOR = Detector(
    name="isr_events",
    tables=(RUNS_TABLE, "snapshots", "partitions", "isr_change_notifications"),
    detect=_detect,
    outputs=("isr_events", "isr_under_replicated", "isr_flapping"),
    latest_only=("partitions",),
)
