"""Consumer lag in time, by Kafka Lag Exporter's lookup table.

Kafka Lag Exporter (`seglo/kafka-lag-exporter`, `LookupTable.scala`, `MemoryTable`) keeps, per
partition, a table of (end offset, time) points and estimates when the message at a group's
committed offset was produced; lag in seconds = now - that time. Here a point is a
`partition_end_offsets` row (end_offset, captured_at) of a group collection in the window, added
in (captured_at, snapshot_id) order the way `MemoryTable.addPoint` adds them:

* a point whose time is not after the previous collection's is out of order and skipped (KLE
  compares with the last point kept; collections share a capture time only by accident);
* a point whose end offset is below the table's newest is not monotonic and skipped (a
  recreated topic is ignored until its end offset passes the old one);
* flat lines are compressed: while the end offset does not move, only the first and the latest
  point of the run are kept (the right-hand side moves out), so a quiet producer neither fills
  the table nor hides when the flat stretch began;
* at most `thresholds.lag_time_points` points (KLE's default 60), the newest.

Lookup of a committed offset c, as `MemoryTable.lookup`, for every (group, topic, partition) of
the latest collection ("now" = its capture time):

* `no_commit`: the group has no committed offset (lag_seconds null);
* `exact`: the collection read the timestamp of the first unconsumed record (the first record at
  or after c, `group_offsets.record_timestamp`): lag_seconds = now - that timestamp, at least 0
  (a producer's clock ahead of the collector's). Only a partition with lag is read, and a read can
  fail (an offset deleted by retention, no leader: a collection issue); the table below is the
  fallback;
* `caught_up`: c >= the newest point's offset, lag_seconds 0, exact. KLE only checks c == newest:
  above it (our `committed_above_end`, lag clamped to 0) it would extrapolate into the future and
  report a negative lag;
* `too_few_points`: fewer than two points (lag_seconds null);
* `lower_bound`: c below a table whose points all share one offset: the producer has been idle for
  the whole table, so the message at c is older than the oldest point. KLE divides by zero there
  and reports -inf/+inf seconds; with no slope there is no rate to extrapolate with, but
  now - (oldest point's time) is a true lower bound, and that is what lag_seconds holds;
* `interpolated`: the newest pair of neighbouring points l, r with l.o <= c <= r.o (on a flat
  stretch that is the right-hand side, so its latest time): t = r.t - (r.o - c)·(r.t - l.t)/(r.o - l.o);
  an estimate, within about a second of the record's CreateTime on the sandbox;
* `extrapolated`: c is below the oldest point; the same formula with the oldest and newest points:
  an estimate that assumes the oldest rate held before the history began (measured 13-68 s too
  high on the sandbox).

A share group (KIP-932) commits no offset: c is its share-partition start offset
(`group_offsets.start_offset`). Every record below it is acknowledged, so the oldest unacknowledged
record is at or above it: the figure is that record's age (`exact`) when the collection could tell
that nothing above the start offset is acknowledged yet (the broker's lag is end - start:
`GroupOffset.position`), else an estimate on the start offset, which can only overstate (Kafka 4.4
lets the start offset trail acknowledgements); with the broker's lag 0 it is `caught_up`.

Every reader prints a figure with its method (`analysis.lag_estimates.time_behind`): only
`caught_up` is a plain figure.

Lag velocity and time to close, per (group, topic, partition), beside Burrow's status (`lag_status`),
never instead of it: `lag_velocity` is the least-squares slope of the lag (messages, `group_offsets.lag`)
against the capture time over the partition's last `thresholds.lag_window` samples, Burrow's window
(records per second; positive: the lag grows), `velocity_points` how many samples it rests on, and
`lag_trend` (`TRENDS`), first match wins:

* `unknown`: no lag figure now (no commit, topic deleted, end offset unknown);
* `caught_up`: no lag now (time_to_close_seconds 0);
* `unknown`: fewer than two samples, or all at one capture time (no slope);
* `closing`: the lag falls: time_to_close_seconds = lag / -lag_velocity, when it reaches zero at the
  current rate, from the latest collection;
* `growing`: the lag grows; `steady`: it neither grows nor falls (no time to close: not at the current
  rate).

A fit over the window rather than the last two samples: a lag sampled at each collection carries the
producer's progress since the last commit, a few seconds' worth either way, and a slope over ten
samples is not turned round by one of them.

Interpolation cannot divide by zero: a pair with l.o == r.o == c is only the newest pair
containing c when r is the newest point, and then c is caught up.

Findings table `lag_time_partitions`: snapshot_id, group_id, topic, partition, committed_offset,
end_offset, lag (messages, from `group_offsets`), lag_seconds (double, null when not computable),
method (above: how lag_seconds was obtained), points (in the table), lag_velocity, velocity_points,
lag_trend, time_to_close_seconds (above), severity (critical above
`thresholds.lag_seconds_critical`, warning above `lag_seconds_warning`, info when lag_seconds is
null, else ok).

Findings table `lag_time_groups`, one row per group of the latest collection's offsets:
snapshot_id, group_id, max_lag_seconds, max_lag_topic and max_lag_partition (the partition with
it, ties to the smallest topic and partition; null when no partition has a lag in seconds),
max_lag_method (that partition's method: how the figure was obtained, null with no figure),
max_is_lower_bound (max_lag_method is `lower_bound`), total_lag (messages),
partitions, unknown_partitions (partitions with lag but no lag_seconds), lag_velocity (the sum of its
partitions' where known), lag_trend (`caught_up` with no lag; else `growing` if a lagging partition
grows, `unknown` if one has no slope, `steady` if one neither grows nor falls, else `closing`),
time_to_close_seconds (`closing`: when its last partition reaches zero, the largest of theirs),
severity (the worst partition's).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.analysis.lag_estimates import (
    CAUGHT_UP,
    EXACT,
    EXTRAPOLATED,
    INTERPOLATED,
    LOWER_BOUND,
    NO_COMMIT,
    TOO_FEW_POINTS,
)
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE

TP = ["topic", "partition"]
KEY = ["group_id", *TP]
SEVERITIES = ("ok", "info", "warning", "critical")
CAUGHT_UP_TREND, CLOSING, GROWING, STEADY, UNKNOWN_TREND = "caught_up", "closing", "growing", "steady", "unknown"
TRENDS = (CAUGHT_UP_TREND, CLOSING, GROWING, STEADY, UNKNOWN_TREND)


def lookup_tables(end_offsets: DataFrame, limit: int) -> DataFrame:
    """Pure: KLE's table per partition from the window's partition_end_offsets: topic, partition,
    `points` (how many), `oldest` and `newest` (struct<o, t>: offset, capture time in µs) and
    `pairs` (array<struct<idx, l_o, l_t, r_o, r_t>>: every two neighbouring points, idx = the
    right one's position, 2 for the oldest pair)."""
    order = Window.partitionBy(*TP).orderBy("captured_at", "snapshot_id")
    in_time = (
        end_offsets.select(*TP, "captured_at", "snapshot_id", "end_offset",
                           F.lag("captured_at").over(order).alias("previous_at"))
        .where(F.col("previous_at").isNull() | (F.col("captured_at") > F.col("previous_at")))
    )  # fmt: skip
    # the table's newest offset is the highest accepted so far, and a rejected one is lower than it
    high = F.max("end_offset").over(order.rowsBetween(Window.unboundedPreceding, -1))
    accepted = in_time.select("*", high.alias("high")).where(
        F.col("high").isNull() | (F.col("end_offset") >= F.col("high"))
    )
    same = F.col("end_offset")
    inside_flat_run = F.coalesce((F.lag(same).over(order) == same) & (F.lead(same).over(order) == same), F.lit(False))
    newest_first = Window.partitionBy(*TP).orderBy(F.desc("captured_at"), F.desc("snapshot_id"))
    kept = (
        accepted.select("*", inside_flat_run.alias("inside"))
        .where(~F.col("inside"))
        .select(*TP, "captured_at", "snapshot_id", "end_offset", F.row_number().over(newest_first).alias("age"))
        .where(F.col("age") <= limit)
    )
    point = F.struct(F.col("end_offset").alias("o"), F.unix_micros("captured_at").alias("t"))
    in_order = Window.partitionBy(*TP).orderBy(F.desc("age"))
    pairs = kept.select(
        *TP, "age", point.alias("point"),
        F.struct(
            F.row_number().over(in_order).alias("idx"),
            F.lag(point).over(in_order)["o"].alias("l_o"), F.lag(point).over(in_order)["t"].alias("l_t"),
            point["o"].alias("r_o"), point["t"].alias("r_t"),
        ).alias("pair"),
    )  # fmt: skip
    return pairs.groupBy(*TP).agg(
        F.count("*").cast("int").alias("points"),
        F.max_by("point", "age").alias("oldest"),
        F.min_by("point", "age").alias("newest"),
        F.collect_list(F.when(F.col("pair.l_o").isNotNull(), F.col("pair"))).alias("pairs"),
    )


def velocities(offsets: DataFrame, context: Context) -> DataFrame:
    """Pure: per (group, topic, partition), the lag's least-squares slope over its last `lag_window`
    samples up to the context's collection: `lag_velocity` (records per second, null without two capture
    times) and `velocity_points`."""
    newest_first = Window.partitionBy(*KEY).orderBy(F.desc("captured_at"), F.desc("snapshot_id"))
    seconds = (F.unix_micros("captured_at") - F.unix_micros(F.lit(context.captured_at))).cast("double") / 1e6
    window = (
        offsets.where(F.col("lag").isNotNull() & (F.col("captured_at") <= F.lit(context.captured_at)))
        .select(*KEY, seconds.alias("t"), F.col("lag").cast("double").alias("y"),
                F.row_number().over(newest_first).alias("age"))
        .where(F.col("age") <= int(context.thresholds.lag_window))
    )  # fmt: skip
    return window.groupBy(*KEY).agg(
        F.regr_slope("y", "t").alias("lag_velocity"), F.count("*").cast("int").alias("velocity_points")
    )


def _trend() -> Column:
    velocity = F.col("lag_velocity")
    return (
        F.when(F.col("lag").isNull(), UNKNOWN_TREND)
        .when(F.col("lag") <= 0, CAUGHT_UP_TREND)
        .when(velocity.isNull(), UNKNOWN_TREND)  # NaN (no spread in time) is null by then
        .when(velocity < 0, CLOSING)
        .when(velocity > 0, GROWING)
        .otherwise(STEADY)
    )


def _time_to_close() -> Column:
    return (
        F.when(F.col("lag_trend") == CAUGHT_UP_TREND, F.lit(0.0))
        .when(F.col("lag_trend") == CLOSING, F.col("lag").cast("double") / -F.col("lag_velocity"))
        .otherwise(F.lit(None).cast("double"))
    )


def _severity(context: Context) -> Column:
    seconds = F.col("lag_seconds")
    return (
        F.when(seconds.isNull(), "info")
        .when(seconds > context.thresholds.lag_seconds_critical, "critical")
        .when(seconds > context.thresholds.lag_seconds_warning, "warning")
        .otherwise("ok")
    )


def detect_partitions(offsets: DataFrame, end_offsets: DataFrame, context: Context) -> DataFrame:
    """Pure: the window's group_offsets and partition_end_offsets → `lag_time_partitions`."""
    tables = lookup_tables(end_offsets, int(context.thresholds.lag_time_points))
    offsets = offsets.withColumn("committed_offset", F.coalesce("committed_offset", "start_offset"))
    c = F.col("committed_offset")
    # the newest pair of neighbours around c (structs compare by idx first)
    around = F.array_max(F.filter("pairs", lambda p: (p["l_o"] <= c) & (c <= p["r_o"])))
    found = (
        latest(offsets, context)
        .join(tables, TP, "left")
        .select("*", F.coalesce(F.col("points"), F.lit(0)).alias("n"), around.alias("around"))
    )
    left_o = F.coalesce(F.col("around.l_o"), F.col("oldest.o"))
    left_t = F.coalesce(F.col("around.l_t"), F.col("oldest.t"))
    right_o = F.coalesce(F.col("around.r_o"), F.col("newest.o"))
    right_t = F.coalesce(F.col("around.r_t"), F.col("newest.t"))
    method = (
        F.when(c.isNull(), NO_COMMIT)
        .when(F.col("start_offset").isNotNull() & (F.col("lag") == 0), CAUGHT_UP)
        .when((F.col("n") >= 1) & (c >= F.col("newest.o")), CAUGHT_UP)
        .when(F.col("record_timestamp").isNotNull(), EXACT)
        .when(F.col("n") < 2, TOO_FEW_POINTS)
        .when(F.col("around").isNull() & (F.col("oldest.o") == F.col("newest.o")), LOWER_BOUND)
        .when(F.col("around").isNotNull(), INTERPOLATED)
        .otherwise(EXTRAPOLATED)
    )  # fmt: skip
    now = F.unix_micros(F.lit(context.captured_at))
    # t(c) = r.t - (r.o - c)·(r.t - l.t)/(r.o - l.o), in µs; lag = now - t(c), in seconds
    span = (right_o - c).cast("double") * (right_t - left_t).cast("double") / (right_o - left_o).cast("double")
    estimated = ((now - right_t).cast("double") + span) / 1e6
    seconds = (
        F.when(F.col("method") == CAUGHT_UP, F.lit(0.0))
        .when(
            F.col("method") == EXACT,
            F.greatest((now - F.unix_micros("record_timestamp")).cast("double") / 1e6, F.lit(0.0)),
        )
        .when(F.col("method").isin(INTERPOLATED, EXTRAPOLATED), estimated)
        .when(F.col("method") == LOWER_BOUND, (now - F.col("oldest.t")).cast("double") / 1e6)
        .otherwise(F.lit(None).cast("double"))
    )
    velocity = F.when(~F.isnan("lag_velocity"), F.col("lag_velocity"))
    return (
        found.withColumn("method", method)
        .withColumn("lag_seconds", seconds)
        .join(velocities(offsets, context), KEY, "left")
        .withColumn("lag_velocity", velocity)
        .withColumn("lag_trend", _trend())
        .select(
            F.lit(context.snapshot_id).alias("snapshot_id"),
            *KEY, "committed_offset", "end_offset", "lag", "lag_seconds", "method",
            F.col("n").alias("points"),
            "lag_velocity",
            F.coalesce(F.col("velocity_points"), F.lit(0)).alias("velocity_points"),
            "lag_trend",
            _time_to_close().alias("time_to_close_seconds"),
            _severity(context).alias("severity"),
        )
    )  # fmt: skip


def detect_groups(partitions: DataFrame, context: Context) -> DataFrame:
    """Pure: `lag_time_partitions` → `lag_time_groups`."""
    rank = F.create_map(*(F.lit(v) for i, s in enumerate(SEVERITIES) for v in (s, i)))[F.col("severity")]
    # the largest lag in seconds, ties to the smallest (topic, partition)
    at_max = F.when(
        F.col("lag_seconds").isNotNull(),
        F.struct((-F.col("lag_seconds")).alias("minus_seconds"), "topic", "partition", "method"),
    )
    unknown = F.col("lag_seconds").isNull() & (F.coalesce(F.col("lag"), F.lit(0)) > 0)
    trend = F.col("lag_trend")
    rolled = partitions.groupBy("group_id").agg(
        F.min(at_max).alias("at_max"),
        F.sum("lag").alias("total_lag"),
        F.count("*").cast("int").alias("partitions"),
        F.count(F.when(unknown, 1)).cast("int").alias("unknown_partitions"),
        F.max(rank).alias("worst"),
        F.sum("lag_velocity").alias("lag_velocity"),
        *(F.max(trend == t).alias(t) for t in (GROWING, UNKNOWN_TREND, STEADY, CLOSING)),
        F.max(F.when(trend == CLOSING, F.col("time_to_close_seconds"))).alias("closing_s"),
    )
    group_trend = (
        F.when(~F.coalesce(F.col(CLOSING) | F.col(GROWING) | F.col(UNKNOWN_TREND) | F.col(STEADY), F.lit(False)),
               CAUGHT_UP_TREND)
        .when(F.col(GROWING), GROWING)
        .when(F.col(UNKNOWN_TREND), UNKNOWN_TREND)
        .when(F.col(STEADY), STEADY)
        .otherwise(CLOSING)
    )  # fmt: skip
    return rolled.select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        "group_id",
        (-F.col("at_max.minus_seconds")).alias("max_lag_seconds"),
        F.col("at_max.topic").alias("max_lag_topic"),
        F.col("at_max.partition").alias("max_lag_partition"),
        F.col("at_max.method").alias("max_lag_method"),
        (F.col("at_max.method") == LOWER_BOUND).alias("max_is_lower_bound"),
        "total_lag",
        "partitions",
        "unknown_partitions",
        "lag_velocity",
        group_trend.alias("lag_trend"),
        F.when(group_trend == CLOSING, F.col("closing_s"))
        .when(group_trend == CAUGHT_UP_TREND, F.lit(0.0))
        .otherwise(F.lit(None).cast("double"))
        .alias("time_to_close_seconds"),
        F.create_map(*(F.lit(v) for i, s in enumerate(SEVERITIES) for v in (i, s)))[F.col("worst")].alias("severity"),
    )


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    partitions = detect_partitions(inputs["group_offsets"], inputs["partition_end_offsets"], context)
    return {"lag_time_partitions": partitions, "lag_time_groups": detect_groups(partitions, context)}


DETECTOR = Detector(
    name="lag_time",
    tables=("group_offsets", "partition_end_offsets"),
    detect=_detect,
    outputs=("lag_time_partitions", "lag_time_groups"),
    source=GROUP_COMMIT_TABLE,
)
