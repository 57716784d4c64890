"""What retention is about to delete before a consumer group reads it, and what it already deleted.

Kafka deletes a partition's oldest segments, whole segments only, each broker at its retention checks (every
`log.retention.check.interval.ms`, 5 min by default): a segment once its newest record is older than
`retention.ms`, or while the segments after it alone hold at least `retention.bytes` (the active segment too,
once it has records: Kafka rolls a new, empty one first, seen on the sandbox); either moves the log start
offset up. A group whose committed offset falls below the log start lost the records in between:
its consumers resume wherever their `auto.offset.reset` says.

For every (group, topic, partition) of the latest group collection's `group_offsets` ("now" is its capture
time): c its committed offset (a share group's: its share-partition start offset, below which every record
is acknowledged, as in `lag_time`), s the partition's log start offset and e its end offset, both from the
same collection's `partition_end_offsets`.

* `lost`: c < s; records_lost = s - c (offsets: transaction markers count); lost_since is the first
  collection of the current streak (the first in the window that saw c < s after the last that saw c >= s);
  `lost_since_window_start` when no collection of the window saw c >= s (lost since at least then).
* An ETA for the first unconsumed record (offset c), in seconds after now, the earliest of two:
  - `retention.ms`: t0 + retention.ms - now, t0 the record's timestamp the collection read
    (`group_offsets.record_timestamp`). A LOWER BOUND: the segment holding c has a newest record at least
    as new as t0 (CreateTime: unless a producer's clock goes backwards), and the newer records sharing its
    segment (a segment rolls after `segment.ms` or `segment.bytes`) and the check interval only delay the
    deletion.
  - `retention.bytes`: Kafka deletes the segment holding c only once the segments after it alone hold
    retention.bytes, so not before the records from c on (e - c of them) hold that much. At the partition's
    bytes per record (size / (e - s), size the leader's replica in the metadata snapshot's `replica_sizes`)
    the log keeps retention.bytes / (bytes per record) records; the rest, less what is already there, must
    still be produced: (kept - (e - c)) / produce rate, produce rate the end offset's advance over the
    collections of the last `thresholds.load_window_hours`. An ESTIMATE at the current rate (at a steady
    rate also a lower bound); 0 when the records from c on already hold retention.bytes.
  `eta_seconds` is the earlier (0: due now, waiting only for the newer records of its segment, or the next
  check), `eta_basis` which one it is, `eta_is_lower_bound` when retention.ms.
* The topic's configs are the latest metadata snapshot's at or before the collection (`snapshots`,
  `configs`, `partitions`, `replica_sizes`): `retention.ms`, `retention.bytes` and `cleanup.policy`, each
  from the topic's override, else the partition leader's dynamic broker config (`log.retention.ms`,
  `log.retention.bytes`, `log.cleanup.policy`), else the cluster-wide dynamic default (`<default>`), else
  Kafka's defaults (604800000, -1, delete). The brokers' server.properties is not in the snapshot: a static
  `log.retention.hours` other than Kafka's 168 is not seen, and `retention_ms_source` /
  `retention_bytes_source` say `kafka_default` for a value assumed that way.

Findings table `retention_risk_partitions`: snapshot_id, group_id, topic, partition, committed_offset,
log_start_offset, end_offset, lag, state, records_lost (lost only), lost_since, lost_since_window_start,
eta_seconds, eta_basis (`retention.ms` or `retention.bytes`), eta_is_lower_bound, time_eta_seconds and
size_eta_seconds (each basis's figure, null where it gives none), first_unconsumed_at (t0),
retention_ms, retention_ms_source, retention_bytes, retention_bytes_source (`topic`, `broker`,
`broker_default`, `kafka_default`; null when no metadata snapshot tells), cleanup_policy, size_bytes,
produce_rate and log_start_rate (records per second over the rate window: what the producer adds, what
retention removes), reason (why a figure is missing, or why the state is not_applicable or ok without
one), severity.

States, first match wins (`STATES`):

1. `unknown` when the topic or partition is gone (`topic_deleted`) or the group has no committed offset;
2. `lost` when c < s (critical);
3. `unknown` when the end offset is unknown; `ok` when c >= e (nothing unconsumed, nothing to lose);
4. `unknown` when no metadata snapshot at or before the collection is in the window, or the topic is
   not in it (its configs are unknown);
5. `not_applicable` when `cleanup.policy` does not include `delete` (compact alone): compaction keeps each
   key's latest record and never moves the log start offset, so retention loses no position this way
   (DeleteRecords still can, and that shows as `lost`);
6. `unknown` when retention.ms and retention.bytes are both -1 (retention deletes nothing), or when neither
   gives an ETA (no record time was read, no replica size, no log start offset, no produce rate), with
   the reason;
7. `at_risk` when the ETA is within `thresholds.retention_eta_warning_s` (warning; critical within
   `retention_eta_critical_s`); else `ok`.

Severity: lost critical; at_risk warning or critical (above); unknown info; ok and not_applicable ok.

Findings table `retention_risk_groups`, one row per group of `retention_risk_partitions`: snapshot_id,
group_id, state (the worst partition's, in `STATES` order of concern: lost, at_risk, unknown, ok,
not_applicable), partitions, lost_partitions, at_risk_partitions, unknown_partitions, records_lost (summed,
0 without a lost partition), lost_since (the earliest), lost_since_window_start (that partition's),
lost_topic and lost_partition (the partition that lost most, ties to the smallest topic and partition),
eta_seconds, eta_topic, eta_partition, eta_basis and eta_is_lower_bound (the earliest ETA among its
partitions, ties likewise; null when none has one), severity (the worst partition's).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import SEVERITIES, Context, Detector, latest
from kafka_ops.kafka_types import (
    KAFKA_DEFAULT_CLEANUP_POLICY,
    KAFKA_DEFAULT_RETENTION_BYTES,
    KAFKA_DEFAULT_RETENTION_MS,
)
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE

TP = ["topic", "partition"]
KEY = ["group_id", *TP]
LOST = "lost"
AT_RISK = "at_risk"
UNKNOWN = "unknown"
OK = "ok"
NOT_APPLICABLE = "not_applicable"
STATES = (LOST, AT_RISK, UNKNOWN, OK, NOT_APPLICABLE)
"""Worst first: the order a group's state rolls up in."""
BY_TIME = "retention.ms"
BY_SIZE = "retention.bytes"
CONFIG_SOURCES = ("topic", "broker", "broker_default", "kafka_default")
"""Where a topic's retention config comes from, the first that is set (Kafka's order, as `isr_health`'s
min ISR): the topic's override, the partition leader's dynamic broker config, the cluster-wide dynamic
default (`<default>`), else Kafka's default (ASSUMED: server.properties is not in the snapshot)."""
DEFAULT_BROKER = "<default>"
_CONFIGS = {
    # column: (topic key, broker key, Kafka's default, type)
    "retention_ms": ("retention.ms", "log.retention.ms", KAFKA_DEFAULT_RETENTION_MS, "long"),
    "retention_bytes": ("retention.bytes", "log.retention.bytes", KAFKA_DEFAULT_RETENTION_BYTES, "long"),
    "cleanup_policy": ("cleanup.policy", "log.cleanup.policy", KAFKA_DEFAULT_CLEANUP_POLICY, "string"),
}


def _mapped(column: Column, mapping: Mapping[object, object]) -> Column:
    return F.create_map(*(F.lit(v) for kv in mapping.items() for v in kv))[column]


def effective_retention(partitions: DataFrame, configs: DataFrame) -> DataFrame:
    """Pure: one metadata snapshot's partitions (topic, partition, leader) and configs → topic, partition,
    retention_ms, retention_ms_source, retention_bytes, retention_bytes_source, cleanup_policy (see
    `CONFIG_SOURCES`). A value that does not parse counts as unset."""
    broker = F.col("entity_type") == "broker"

    def levels(key_of: int, prefix: str) -> list[Column]:
        return [
            F.max(F.when(F.col("config_key") == F.lit(keys[key_of]), F.col("config_value"))).alias(f"{prefix}{name}")
            for name, keys in _CONFIGS.items()
        ]

    topics = configs.where(F.col("entity_type") == "topic").groupBy(F.col("entity_name").alias("topic"))
    leaders = configs.where(broker & (F.col("entity_name") != DEFAULT_BROKER)).groupBy(
        F.col("entity_name").try_cast("int").alias("leader")
    )
    default = configs.where(broker & (F.col("entity_name") == DEFAULT_BROKER)).agg(*levels(1, "_d_"))
    found = (
        partitions.select(*TP, "leader")
        .join(topics.agg(*levels(0, "_t_")), "topic", "left")
        .join(F.broadcast(leaders.agg(*levels(1, "_b_"))), "leader", "left")
        .crossJoin(default)
    )
    out: list[str | Column] = [*TP]
    for name, (_, _, default_value, kind) in _CONFIGS.items():
        given = [F.col(f"{level}{name}").try_cast(kind) for level in ("_t_", "_b_", "_d_")]
        out.append(F.coalesce(*given, F.lit(default_value).cast(kind)).alias(name))
        if name != "cleanup_policy":
            source = F.when(given[0].isNotNull(), "topic").when(given[1].isNotNull(), "broker")
            source = source.when(given[2].isNotNull(), "broker_default").otherwise("kafka_default")
            out.append(source.alias(f"{name}_source"))
    return found.select(*out)


def _metadata(inputs: Mapping[str, DataFrame], context: Context) -> tuple[DataFrame, DataFrame]:
    """The latest metadata snapshot at or before the collection: TP → its retention configs
    (`effective_retention`), the leader replica's size (`size_bytes`; the largest replica's where the leader has
    none) and `in_snapshot`; and one row, `metadata_known`: whether the window holds such a snapshot."""
    newest = (
        inputs["snapshots"]
        .where(F.col("captured_at") <= F.lit(context.captured_at))
        .orderBy(F.desc("captured_at"), F.desc("snapshot_id"))
        .limit(1)
        .select("snapshot_id")
    )
    partitions = inputs["partitions"].join(newest, "snapshot_id", "left_semi")
    configs = inputs["configs"].join(newest, "snapshot_id", "left_semi")
    sizes = (
        inputs["replica_sizes"]
        .join(newest, "snapshot_id", "left_semi")
        .where(~F.coalesce(F.col("is_future"), F.lit(False)))
        .join(partitions.select(*TP, "leader"), TP, "left")
        .groupBy(*TP)
        .agg(
            F.max(F.when(F.col("broker_id") == F.col("leader"), F.col("size_bytes"))).alias("leader_size"),
            F.max("size_bytes").alias("largest_size"),
        )
        .select(*TP, F.coalesce("leader_size", "largest_size").alias("size_bytes"))
    )
    found = effective_retention(partitions, configs).join(sizes, TP, "left").withColumn("in_snapshot", F.lit(True))
    return found, newest.agg((F.count("*") > 0).alias("metadata_known"))


def rates(end_offsets: DataFrame, context: Context) -> DataFrame:
    """Pure: TP → produce_rate and log_start_rate (records per second: the end offset's and the log start
    offset's advance from the oldest collection of the last `load_window_hours` to the latest; null with a
    single collection there, or an offset that went down: a recreated topic)."""
    since = context.captured_at - timedelta(hours=context.thresholds.load_window_hours)
    window = end_offsets.where(
        (F.col("captured_at") >= F.lit(since)) & (F.col("captured_at") <= F.lit(context.captured_at))
    )
    order = F.struct("captured_at", "snapshot_id")
    point = F.struct(F.unix_micros("captured_at").alias("t"), F.col("end_offset").alias("e"),
                     F.col("log_start_offset").alias("s"))  # fmt: skip
    ends = window.groupBy(*TP).agg(F.min_by(point, order).alias("first"), F.max_by(point, order).alias("last"))
    seconds = (F.col("last.t") - F.col("first.t")).cast("double") / 1e6

    def rate(field: str) -> Column:
        moved = F.col(f"last.{field}") - F.col(f"first.{field}")
        return F.when((seconds > 0) & (moved >= 0), moved.cast("double") / seconds)

    return ends.select(*TP, rate("e").alias("produce_rate"), rate("s").alias("log_start_rate"))


def lost_streaks(offsets: DataFrame, end_offsets: DataFrame) -> DataFrame:
    """Pure: KEY → lost_since (the first collection of the window that saw the committed offset below the log
    start after the last that saw it at or above) and lost_since_window_start (none saw it at or above), over
    the collections that read both."""
    seen = (
        offsets.select("snapshot_id", "captured_at", *KEY, F.coalesce("committed_offset", "start_offset").alias("c"))
        .where(F.col("c").isNotNull())
        .join(end_offsets.select("snapshot_id", *TP, "log_start_offset"), ["snapshot_id", *TP])
        .where(F.col("log_start_offset").isNotNull())
        .select(*KEY, "captured_at", (F.col("c") < F.col("log_start_offset")).alias("lost"))
    )
    last_kept = F.max(F.when(~F.col("lost"), F.col("captured_at"))).over(Window.partitionBy(*KEY))
    streak = seen.select("*", last_kept.alias("kept_at")).where(
        F.col("lost") & (F.col("kept_at").isNull() | (F.col("captured_at") > F.col("kept_at")))
    )
    return streak.groupBy(*KEY).agg(
        F.min("captured_at").alias("lost_since"), F.first(F.col("kept_at").isNull()).alias("lost_since_window_start")
    )


def _time_eta(now_us: Column) -> Column:
    """t0 + retention.ms - now, in seconds, at least 0 (due: it waits for the newer records of its segment, or the
    next check)."""
    # in doubles: a retention.ms of Long.MAX_VALUE ("forever" without -1) overflows a long in microseconds
    due = F.unix_micros("first_unconsumed_at").cast("double") + F.col("retention_ms").cast("double") * 1000.0
    return F.when(
        (F.col("retention_ms") >= 0) & F.col("first_unconsumed_at").isNotNull(),
        F.greatest((due - now_us.cast("double")) / 1e6, F.lit(0.0)),
    )


def _size_eta() -> Column:
    """(records the log keeps at retention.bytes - records from c on) / produce rate, at least 0; null without a
    size, a log start offset, a non-empty log or (when still to come) a rate."""
    records = F.col("end_offset") - F.col("log_start_offset")
    kept = F.col("retention_bytes").cast("double") * records / F.col("size_bytes")
    to_come = kept - (F.col("end_offset") - F.col("c")).cast("double")
    known = (
        (F.col("retention_bytes") >= 0)
        & (F.col("size_bytes") > 0)
        & F.col("log_start_offset").isNotNull()
        & (records > 0)
    )
    return F.when(known & (to_come <= 0), F.lit(0.0)).when(
        known & (F.col("produce_rate") > 0), to_come / F.col("produce_rate")
    )


def _missing_eta() -> Column:
    """Why neither basis gives an ETA, in words (for `unknown`)."""
    by_time = F.col("retention_ms") >= 0
    by_size = F.col("retention_bytes") >= 0
    return F.concat_ws(
        "; ",
        F.when(by_time & F.col("first_unconsumed_at").isNull(),
               F.lit("retention.ms: the collection read no time for the first unconsumed record")),
        F.when(by_size & F.col("size_bytes").isNull(),
               F.lit("retention.bytes: the metadata snapshot has no replica size (DescribeLogDirs)")),
        F.when(by_size & F.col("size_bytes").isNotNull() & F.col("log_start_offset").isNull(),
               F.lit("retention.bytes: the collection read no log start offset")),
        F.when(by_size & F.col("size_bytes").isNotNull() & F.col("log_start_offset").isNotNull(),
               F.lit("retention.bytes: no produce rate (nothing produced over the rate window) and the log is "
                     "below retention.bytes")),
    )  # fmt: skip


def _state(context: Context) -> tuple[Column, Column]:
    """(state, reason): `STATES` by the rules of the module docstring."""
    c, s, e = F.col("c"), F.col("log_start_offset"), F.col("end_offset")
    no_retention = (F.col("retention_ms") < 0) & (F.col("retention_bytes") < 0)
    deletes = F.lower(F.col("cleanup_policy")).contains("delete")
    rules: list[tuple[Column, str, Column | str | None]] = [
        (F.coalesce(F.col("topic_deleted"), F.lit(False)), UNKNOWN, "the topic or partition no longer exists"),
        (c.isNull(), UNKNOWN, "the group has no committed offset on the partition"),
        (s.isNotNull() & (c < s), LOST, None),
        (e.isNull(), UNKNOWN, "the partition's end offset is unknown"),
        (c >= e, OK, "nothing unconsumed: the group is at the end of the partition"),
        (~F.col("metadata_known"), UNKNOWN,
         "no metadata snapshot at or before the collection in the history window: the topic's retention is unknown"),
        (F.col("in_snapshot").isNull(), UNKNOWN,
         "the topic is not in the latest metadata snapshot: its retention is unknown"),
        (~deletes, NOT_APPLICABLE,
         F.concat(F.lit("cleanup.policy="), F.col("cleanup_policy"),
                  F.lit(": compaction keeps each key's latest record and never moves the log start offset, so "
                        "retention loses no position here (DeleteRecords still can: that shows as lost)"))),
        (no_retention, UNKNOWN, "retention.ms and retention.bytes are both -1: retention deletes nothing"),
        (F.col("eta_seconds").isNull(), UNKNOWN, _missing_eta()),
        (F.col("eta_seconds") <= context.thresholds.retention_eta_warning_s, AT_RISK, None),
    ]  # fmt: skip
    state = reason = None
    for condition, name, why in rules:
        text = why if isinstance(why, Column) else F.lit(why).cast("string")
        state = F.when(condition, name) if state is None else state.when(condition, name)
        reason = F.when(condition, text) if reason is None else reason.when(condition, text)
    if state is None or reason is None:  # for mypy: `rules` is not empty
        raise ValueError("no retention_risk rules")
    return state.otherwise(OK), reason.otherwise(F.lit(None).cast("string"))


def _severity(context: Context) -> Column:
    state = F.col("state")
    return (
        F.when(state == LOST, "critical")
        .when((state == AT_RISK) & (F.col("eta_seconds") <= context.thresholds.retention_eta_critical_s), "critical")
        .when(state == AT_RISK, "warning")
        .when(state == UNKNOWN, "info")
        .otherwise("ok")
    )


def detect_partitions(inputs: Mapping[str, DataFrame], context: Context) -> DataFrame:
    """Pure: the window's group_offsets, partition_end_offsets, snapshots, configs, partitions and
    replica_sizes → `retention_risk_partitions`."""
    offsets, end_offsets = inputs["group_offsets"], inputs["partition_end_offsets"]
    ends = latest(end_offsets, context).select(*TP, F.col("end_offset").alias("partition_end"), "log_start_offset")
    now_us = F.unix_micros(F.lit(context.captured_at))
    metadata, known = _metadata(inputs, context)
    found = (
        latest(offsets, context)
        .select(
            *KEY,
            F.coalesce("committed_offset", "start_offset").alias("c"),
            "end_offset",
            "lag",
            "topic_deleted",
            F.col("record_timestamp").alias("first_unconsumed_at"),
        )
        .join(ends, TP, "left")
        .withColumn("end_offset", F.coalesce("end_offset", "partition_end"))
        .join(metadata, TP, "left")
        .crossJoin(known)
        .join(rates(end_offsets, context), TP, "left")
        .join(lost_streaks(offsets, end_offsets), KEY, "left")
        .withColumn("time_eta_seconds", _time_eta(now_us))
        .withColumn("size_eta_seconds", _size_eta())
        .withColumn("eta_seconds", F.least("time_eta_seconds", "size_eta_seconds"))
    )
    state, reason = _state(context)
    found = found.withColumn("state", state).withColumn("reason", reason)
    lost = F.col("state") == LOST
    predicted = F.col("state").isin(AT_RISK, OK)  # a figure means something: retention applies, nothing lost yet
    has_eta = predicted & F.col("eta_seconds").isNotNull()
    basis = F.when(F.col("time_eta_seconds") == F.col("eta_seconds"), BY_TIME).otherwise(BY_SIZE)
    return found.select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        *KEY, F.col("c").alias("committed_offset"), "log_start_offset", "end_offset", "lag", "state",
        F.when(lost, F.col("log_start_offset") - F.col("c")).alias("records_lost"),
        F.when(lost, F.col("lost_since")).alias("lost_since"),
        F.when(lost, F.col("lost_since_window_start")).alias("lost_since_window_start"),
        F.when(has_eta, F.col("eta_seconds")).alias("eta_seconds"),
        F.when(has_eta, basis).alias("eta_basis"),
        F.when(has_eta, basis == BY_TIME).alias("eta_is_lower_bound"),
        F.when(predicted, F.col("time_eta_seconds")).alias("time_eta_seconds"),
        F.when(predicted, F.col("size_eta_seconds")).alias("size_eta_seconds"), "first_unconsumed_at",
        "retention_ms", "retention_ms_source", "retention_bytes", "retention_bytes_source", "cleanup_policy",
        "size_bytes", "produce_rate", "log_start_rate", "reason",
        _severity(context).alias("severity"),
    )  # fmt: skip


def detect_groups(partitions: DataFrame, context: Context) -> DataFrame:
    """Pure: `retention_risk_partitions` → `retention_risk_groups`."""
    state_rank = _mapped(F.col("state"), {s: i for i, s in enumerate(STATES)})
    severity_rank = _mapped(F.col("severity"), {s: i for i, s in enumerate(SEVERITIES)})
    lost = F.col("state") == LOST
    rolled = partitions.groupBy("group_id").agg(
        F.count("*").cast("int").alias("partitions"),
        F.count_if(lost).cast("int").alias("lost_partitions"),
        F.count_if(F.col("state") == AT_RISK).cast("int").alias("at_risk_partitions"),
        F.count_if(F.col("state") == UNKNOWN).cast("int").alias("unknown_partitions"),
        F.coalesce(F.sum("records_lost"), F.lit(0)).alias("records_lost"),
        F.min(F.when(lost, F.struct("lost_since", "lost_since_window_start"))).alias("since"),
        # most records lost, ties to the smallest (topic, partition); the earliest ETA likewise
        F.min(F.when(lost, F.struct((-F.col("records_lost")).alias("minus"), *TP))).alias("most_lost"),
        F.min(F.when(F.col("eta_seconds").isNotNull(),
                     F.struct("eta_seconds", *TP, "eta_basis", "eta_is_lower_bound"))).alias("first"),
        F.min(state_rank).alias("state_rank"),
        F.max(severity_rank).alias("severity_rank"),
    )  # fmt: skip
    return rolled.select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        "group_id",
        _mapped(F.col("state_rank"), dict(enumerate(STATES))).alias("state"),
        "partitions", "lost_partitions", "at_risk_partitions", "unknown_partitions", "records_lost",
        F.col("since.lost_since").alias("lost_since"),
        F.col("since.lost_since_window_start").alias("lost_since_window_start"),
        F.col("most_lost.topic").alias("lost_topic"), F.col("most_lost.partition").alias("lost_partition"),
        F.col("first.eta_seconds").alias("eta_seconds"), F.col("first.topic").alias("eta_topic"),
        F.col("first.partition").alias("eta_partition"), F.col("first.eta_basis").alias("eta_basis"),
        F.col("first.eta_is_lower_bound").alias("eta_is_lower_bound"),
        _mapped(F.col("severity_rank"), dict(enumerate(SEVERITIES))).alias("severity"),
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    partitions = detect_partitions(inputs, context)
    return {"retention_risk_partitions": partitions, "retention_risk_groups": detect_groups(partitions, context)}


DETECTOR = Detector(
    name="retention_risk",
    tables=("group_offsets", "partition_end_offsets", "snapshots", "configs", "partitions", "replica_sizes"),
    detect=_detect,
    outputs=("retention_risk_partitions", "retention_risk_groups"),
    source=GROUP_COMMIT_TABLE,
)
