"""The load rules over `partition_load`, `broker_load` and `log_dir_load` (see `partition_load`): disk
running out, disk skew, hot partitions and hot brokers. Thresholds are in `kafka_ops.thresholds`
(`disk_*`, `hot_*`, `network_hot_share`); the warning share of a disk is the cluster's
`capacity.max_disk_share` (the planner's hard limit, default 0.8).

Findings table `load_problems`, one row per problem (also with `snapshot_id`): kind, broker_id,
log_dir, topic, partition (null where they do not apply), value (the figure judged: days, share, ratio
or bytes per second), problem (what and where, in words), action (what to do), since (when the
evidence begins: the first snapshot of the fitted disk history or of the rate window; for a disk or
volume over its share, the first snapshot of its unbroken run above `max_disk_share`; the snapshot's
capture time for the other states read from one snapshot), severity. Kinds:

* `disk_full_soon` (broker) / `log_dir_full_soon` (log dir): at the current growth (the least-squares
  slope of its disk use over the history, net of retention) its free space lasts `days_to_full`:
  critical at or below `disk_days_critical`, warning at or below `disk_days_warning`. A broker's free
  space needs its capacity (settings, else its log dirs' usable bytes); a log dir's, its usable bytes.
* `disk_over_share` (broker: disk_used_share) / `log_dir_over_share` (log dir: volume_used_share): fuller
  than `disk_share_critical` is critical, than `capacity.max_disk_share` a warning, whatever the growth.
* `log_dir_error`: a log dir the broker reports an error for (KAFKA_STORAGE_ERROR: an offline disk),
  warning; its replicas there are offline on that broker.
* `disk_skew`: a registered broker's disk use (its used share when every registered broker's capacity
  is known, else its bytes) is more than `disk_skew_ratio` times the registered brokers' mean, while the
  cluster holds at least `disk_skew_min_bytes`; warning.
* `log_dir_skew`: a healthy log dir of a broker with two or more holds more than `disk_skew_ratio` times
  the mean of that broker's healthy dirs, while the broker holds at least `disk_skew_min_bytes`; warning.
* `hot_partition`: bytes-in more than `hot_partition_factor` times the typical partition (the median of
  its topic's partitions with a rate when the topic has 3 or more, else the cluster's median) and at
  least `hot_partition_min_bytes_per_s`; warning.
* `hot_broker_in` / `hot_broker_out`: a registered broker's bytes-in (leader + replication) or bytes-out
  at or above `network_hot_share` of its network capacity (when set), or more than `hot_broker_factor`
  times the registered brokers' mean and at least `hot_broker_min_bytes_per_s`; warning.
"""

from __future__ import annotations

from datetime import timedelta
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import SEVERITIES, Context

PROBLEM_COLUMNS = ("kind", "broker_id", "log_dir", "topic", "partition", "value", "problem", "action", "since",
                   "severity")  # fmt: skip
MIN_TOPIC_PARTITIONS = 3
"""A topic's median is its typical partition only from this many partitions with a rate: with two, the
median is their mean, which neither can exceed `hot_partition_factor` times."""


def human_bytes(column: Column) -> Column:
    """A byte count as text: "1.5 GB" (powers of 1000, as disks are sold)."""
    units = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
    column = column.cast("double")
    text = F.format_string("%.0f B", column)
    for size, unit in reversed(units):
        text = F.when(F.abs(column) >= size, F.format_string(f"%.1f {unit}", column / size)).otherwise(text)
    return text


def _rate(column: Column) -> Column:
    return F.concat(human_bytes(column), F.lit("/s"))


def _percent(column: Column) -> Column:
    return F.format_string("%.0f%%", column * 100)


def _problem(
    frame: DataFrame, kind: str, *, value: Column, problem: Column, action: Column, since: Column, severity: Column
) -> DataFrame:
    """`frame`'s rows where `severity` is not null as `load_problems` rows (with broker_id, log_dir, topic
    and partition where `frame` has them)."""
    columns = set(frame.columns)

    def key(name: str, kind_: str) -> Column:
        return (F.col(name) if name in columns else F.lit(None)).cast(kind_).alias(name)

    return frame.where(severity.isNotNull()).select(
        F.lit(kind).alias("kind"), key("broker_id", "int"), key("log_dir", "string"), key("topic", "string"),
        key("partition", "int"), value.cast("double").alias("value"), problem.alias("problem"),
        action.alias("action"), since.cast("timestamp").alias("since"), severity.alias("severity"),
    )  # fmt: skip


def hot_partitions(parts: DataFrame, context: Context) -> DataFrame:
    """`partition_rates` with typical_bytes_in_per_s and hot."""
    t = context.thresholds
    rate = F.col("bytes_in_per_s")
    topics = parts.groupBy("topic").agg(F.median(rate).alias("topic_median"), F.count(rate).alias("rated"))
    cluster = parts.agg(F.median(rate).alias("cluster_median"))
    typical = F.when(F.col("rated") >= MIN_TOPIC_PARTITIONS, F.col("topic_median")).otherwise(F.col("cluster_median"))
    hot = (rate >= t.hot_partition_min_bytes_per_s) & (rate > F.coalesce(typical, F.lit(0.0)) * t.hot_partition_factor)
    return (
        parts.join(topics, "topic", "left")
        .crossJoin(cluster)
        .select("*", typical.alias("typical_bytes_in_per_s"))
        .select("*", F.coalesce(hot, F.lit(False)).alias("hot"))
        .drop("topic_median", "rated", "cluster_median")
    )


def partition_problems(parts: DataFrame, context: Context) -> DataFrame:
    t = context.thresholds
    partition = F.concat_ws("-", "topic", "partition")
    rate, typical = F.col("bytes_in_per_s"), F.col("typical_bytes_in_per_s")
    problem = F.concat(
        F.lit("partition "), partition, F.lit(" takes "), _rate(rate), F.lit(" in ("), F.col("method"),
        F.lit("), more than "), F.lit(f"{t.hot_partition_factor:g}"), F.lit("x the typical partition's "),
        _rate(typical), F.lit("; its leader broker "), F.col("leader").cast("string"), F.lit(" carries it"),
    )  # fmt: skip
    action = F.concat(
        F.lit("check the producers of topic "), F.col("topic"),
        F.lit(" for a hot key (records keyed to one partition); add partitions or spread the keys, and keep "
              "its leader off the busiest broker (load-aware replica balance)"),
    )  # fmt: skip
    return _problem(parts, "hot_partition", value=rate, problem=problem, action=action, since=F.col("window_start"),
                    severity=F.when(F.col("hot"), "warning"))  # fmt: skip


def _mean_over_registered(brokers: DataFrame, column: str, alias: str) -> DataFrame:
    return brokers.where(F.col("registered")).agg(F.avg(column).alias(alias))


def hot_brokers(brokers: DataFrame, context: Context) -> DataFrame:
    t = context.thresholds
    since = F.lit(context.captured_at - timedelta(hours=t.load_window_hours))
    out = []
    for direction, column, capacity in (("in", "bytes_in_per_s", "network_in_capacity"),
                                        ("out", "bytes_out_per_s", "network_out_capacity")):  # fmt: skip
        rate, cap, mean = F.col(column), F.col(capacity), F.col("mean")
        near_capacity = F.coalesce(rate >= cap * t.network_hot_share, F.lit(False))
        above_mean = (rate >= t.hot_broker_min_bytes_per_s) & (rate > mean * t.hot_broker_factor)
        why = F.when(
            near_capacity,
            F.concat(F.lit(", "), _percent(rate / cap), F.lit(" of its network capacity "), _rate(cap)),
        ).otherwise(F.concat(F.lit(f", more than {t.hot_broker_factor:g}x the brokers' mean "), _rate(mean)))
        problem = F.concat(
            F.lit("broker "), F.col("broker_id").cast("string"), F.lit(f" moves {_word(direction)} "), _rate(rate), why,
            F.when(F.col("unknown_rate_replicas") > 0, F.concat(
                F.lit(" (at least: "), F.col("unknown_rate_replicas").cast("string"),
                F.lit(" of its replicas have no known rate)"))).otherwise(F.lit("")),
        )  # fmt: skip
        action = F.lit(
            f"move leadership or replicas of its busiest partitions (partition_load, by bytes_{direction}_per_s) "
            "to less loaded brokers: a load-aware replica balance, then a preferred leader election"
        )
        judged = brokers.where(F.col("registered")).crossJoin(_mean_over_registered(brokers, column, "mean"))
        hot = F.when(near_capacity | F.coalesce(above_mean, F.lit(False)), "warning")
        out.append(_problem(judged, f"hot_broker_{direction}", value=rate, problem=problem, action=action,
                            since=since, severity=hot))  # fmt: skip
    return out[0].unionByName(out[1])


def _word(direction: str) -> str:
    return "in (produce + replication)" if direction == "in" else "out (consumers + followers' fetches)"


def _days_severity(context: Context) -> Column:
    days = F.col("days_to_full")
    t = context.thresholds
    return F.when(days <= t.disk_days_critical, "critical").when(days <= t.disk_days_warning, "warning")


def _share_severity(share: Column, context: Context) -> Column:
    return F.when(share >= context.thresholds.disk_share_critical, "critical").when(
        share >= context.capacity.max_disk_share, "warning"
    )


def disk_problems(brokers: DataFrame, dirs: DataFrame, context: Context) -> list[DataFrame]:
    """disk_full_soon, disk_over_share, log_dir_full_soon, log_dir_over_share, log_dir_error."""
    now = F.lit(context.captured_at)
    broker = F.concat(F.lit("broker "), F.col("broker_id").cast("string"))
    where_dir = F.concat(F.lit("log dir "), F.col("log_dir"), F.lit(" of broker "), F.col("broker_id").cast("string"))
    growth = F.concat(human_bytes(F.col("disk_growth_bytes_per_s") * 86400), F.lit("/day"))
    days = F.format_string("%.1f days", F.col("days_to_full"))
    move_off = F.concat(
        F.lit("move partitions off "), broker,
        F.lit(" (load-aware replica balance), lower retention of its biggest topics (partition_load by "
              "size_bytes), or add disk"),
    )  # fmt: skip
    move_dir = F.concat(
        F.lit("move replicas to another log dir of broker "), F.col("broker_id").cast("string"),
        F.lit(" (kafka-reassign-partitions with log_dirs / alter_replica_log_dirs) or off the broker; lower "
              "retention of its biggest topics, or grow the volume"),
    )  # fmt: skip
    full = F.concat(F.lit(" fills up in "), days, F.lit(" at its current growth of "), growth)
    used_of = F.concat(
        F.lit(" is "), _percent(F.col("disk_used_share")), F.lit(" full ("), human_bytes(F.col("disk_used_bytes")),
        F.lit(" of "), human_bytes(F.col("disk_capacity_bytes")), F.lit(", capacity from "), F.col("capacity_source"),
        F.lit(")"),
    )  # fmt: skip
    volume = F.concat(
        F.lit(" is "), _percent(F.col("volume_used_share")), F.lit(" full ("), human_bytes(F.col("usable_bytes")),
        F.lit(" free of "), human_bytes(F.col("total_bytes")), F.lit(")"),
    )  # fmt: skip
    error_action = F.concat(
        F.lit("replace or repair the disk of "), where_dir,
        F.lit(" and restart the broker; until then its replicas there are offline on that broker (under-"
              "replicated), and Kafka will not place new ones there"),
    )  # fmt: skip
    registered = brokers.where(F.col("registered"))
    broker_share, dir_share = F.col("disk_used_share"), F.col("volume_used_share")
    return [
        _problem(registered, "disk_full_soon", value=F.col("days_to_full"), problem=F.concat(broker, full),
                 action=move_off, since=F.col("growth_start"), severity=_days_severity(context)),
        _problem(registered, "disk_over_share", value=broker_share, problem=F.concat(broker, used_of),
                 action=move_off, since=F.coalesce("full_since", now), severity=_share_severity(broker_share, context)),
        _problem(dirs, "log_dir_full_soon", value=F.col("days_to_full"), problem=F.concat(where_dir, full),
                 action=move_dir, since=F.col("growth_start"), severity=_days_severity(context)),
        _problem(dirs, "log_dir_over_share", value=dir_share, problem=F.concat(where_dir, volume),
                 action=move_dir, since=F.coalesce("full_since", now), severity=_share_severity(dir_share, context)),
        _problem(dirs, "log_dir_error", value=F.lit(None),
                 problem=F.concat(where_dir, F.lit(" reports "), F.col("error")), action=error_action,
                 since=now, severity=F.when(F.col("error").isNotNull(), "warning")),
    ]  # fmt: skip


def skew_problems(brokers: DataFrame, dirs: DataFrame, context: Context) -> list[DataFrame]:
    """disk_skew across registered brokers, log_dir_skew across the healthy log dirs of one broker."""
    t = context.thresholds
    registered = brokers.where(F.col("registered"))
    by_share = registered.agg(
        (F.count(F.when(F.col("disk_used_share").isNull(), 1)) == 0).alias("by_share"),
        F.sum("disk_used_bytes").alias("cluster_bytes"),
    )
    metric = F.when(F.col("by_share"), F.col("disk_used_share")).otherwise(F.col("disk_used_bytes"))
    with_metric = registered.crossJoin(by_share).select("*", metric.alias("metric"))
    mean = with_metric.agg(F.avg("metric").alias("mean"))
    judged = with_metric.crossJoin(mean).select("*", (F.col("metric") / F.col("mean")).alias("ratio"))
    skewed = judged.where((F.col("ratio") > t.disk_skew_ratio) & (F.col("cluster_bytes") >= t.disk_skew_min_bytes))
    problem = F.concat(
        F.lit("broker "), F.col("broker_id").cast("string"), F.lit(" holds "), human_bytes(F.col("disk_used_bytes")),
        F.when(F.col("by_share"), F.concat(F.lit(" ("), _percent(F.col("disk_used_share")), F.lit(" of its disk)")))
        .otherwise(F.lit("")),
        F.format_string(", %.1fx the brokers' mean", F.col("ratio")),
    )  # fmt: skip
    action = F.lit("run a load-aware replica balance: it moves the big partitions off the fullest brokers")
    healthy = dirs.where(F.col("error").isNull())
    per_broker = Window.partitionBy("broker_id")
    dir_judged = healthy.select(
        "*", F.count("*").over(per_broker).alias("dirs"), F.sum("disk_used_bytes").over(per_broker).alias("held"),
        (F.col("disk_used_bytes") / F.avg("disk_used_bytes").over(per_broker)).alias("ratio"),
    )  # fmt: skip
    dir_judged = dir_judged.where(
        (F.col("dirs") >= 2) & (F.col("held") >= t.disk_skew_min_bytes) & (F.col("ratio") > t.disk_skew_ratio)
    )
    dir_problem = F.concat(
        F.lit("log dir "), F.col("log_dir"), F.lit(" of broker "), F.col("broker_id").cast("string"), F.lit(" holds "),
        human_bytes(F.col("disk_used_bytes")),
        F.format_string(", %.1fx the mean of the broker's log dirs", F.col("ratio")),
    )  # fmt: skip
    dir_action = F.concat(
        F.lit("move replicas between the log dirs of broker "), F.col("broker_id").cast("string"),
        F.lit(" (alter_replica_log_dirs, or kafka-reassign-partitions with log_dirs)"),
    )  # fmt: skip
    now = F.lit(context.captured_at)
    return [
        _problem(
            skewed,
            "disk_skew",
            value=F.col("ratio"),
            problem=problem,
            action=action,
            since=now,
            severity=F.lit("warning"),
        ),
        _problem(
            dir_judged,
            "log_dir_skew",
            value=F.col("ratio"),
            problem=dir_problem,
            action=dir_action,
            since=now,
            severity=F.lit("warning"),
        ),
    ]


def _worst(problems: DataFrame, keys: list[str]) -> DataFrame:
    rank = F.create_map(*(F.lit(v) for i, s in enumerate(SEVERITIES) for v in (s, i)))[F.col("severity")]
    back = F.create_map(*(F.lit(v) for i, s in enumerate(SEVERITIES) for v in (i, s)))
    return problems.groupBy(*keys).agg(back[F.max(rank)].alias("worst"))


def judge(parts: DataFrame, brokers: DataFrame, dirs: DataFrame, context: Context) -> dict[str, DataFrame]:
    """The load tables with their severities, and `load_problems` (none tagged with snapshot_id yet)."""
    parts = hot_partitions(parts, context)
    problems = reduce(
        DataFrame.unionByName,
        [partition_problems(parts, context), hot_brokers(brokers, context),
         *disk_problems(brokers, dirs, context), *skew_problems(brokers, dirs, context)],
    )  # fmt: skip
    of_broker = _worst(problems.where(F.col("log_dir").isNull() & F.col("topic").isNull()), ["broker_id"])
    of_dir = _worst(problems.where(F.col("log_dir").isNotNull()), ["broker_id", "log_dir"])
    part_severity = F.when(F.col("hot"), "warning").when(F.col("method") == "unknown", "info").otherwise("ok")
    return {
        "partition_load": parts.select("*", part_severity.alias("severity")),
        "broker_load": brokers.join(of_broker, "broker_id", "left")
        .select("*", F.coalesce("worst", F.lit("ok")).alias("severity"))
        .drop("worst", "growth_start", "full_since"),
        "log_dir_load": dirs.join(of_dir, ["broker_id", "log_dir"], "left")
        .select("*", F.coalesce("worst", F.lit("ok")).alias("severity"))
        .drop("worst", "growth_start", "full_since"),
        "load_problems": problems,
    }
