"""Load per partition, broker and log dir, derived from the history in the lake: nothing is added to
the brokers. The load rules (`detectors.load_rules`) judge these tables; the load-aware planner reads
`partition_load` as (topic, partition) → (bytes_in_per_s, bytes_out_per_s).

Bytes-in of a partition (what producers write to its leader), over the snapshots of the last
`thresholds.load_window_hours`, by the first method that has the data:

* `size_growth`: the partition's size in each metadata snapshot (its largest replica that is not a
  future one in `replica_sizes`: followers trail the leader, a new replica starts empty) and the
  growth between neighbouring snapshots. A step where the size dropped is retention deleting
  segments (or compaction): it is not negative traffic. Such steps are left out of both the bytes and
  the seconds, so the rate is the mean over the steps without a deletion, assumed to hold through the
  deletions too. Confidence `high` when no step dropped, `medium` when some did.
* `offsets`: records per second from the end offsets (`partition_end_offsets`, collected for the
  topics the consumer groups read; a step where the end offset fell, a recreated topic, is left out)
  times bytes per offset = the partition's size / its end offset. That ratio is exact while the log
  still starts at offset 0 and too low once retention deleted its head, so confidence is `low`. Used
  when the size history has no step without a deletion (one snapshot only, or retention deleting at
  every step).
* `unknown`: neither (no size and no end offsets, or a single point of each): the rates are null, and
  brokers count the partition in `unknown_rate_replicas` rather than as zero.

Every follower fetches the leader's bytes-in (replication bytes-in on the follower's broker). Bytes-out
of a partition, all served by its leader: each group with a committed offset on it in the latest group
collection of the window (a share group: a start offset) reads its bytes-in, plus every follower's
fetch. Consumers that commit no offset are not seen.

Findings tables (every row also carries `snapshot_id`, the context's):

`partition_load`, one row per partition of the latest snapshot: topic, partition, leader (-1 none),
replicas, size_bytes (largest replica now, null when no size is collected), bytes_in_per_s,
bytes_out_per_s (double; null when the method is unknown), messages_in_per_s (from the end offsets,
null without two of them), bytes_per_offset (size / end offset, null without both), method
(`size_growth`, `offsets`, `unknown`), confidence (`high`, `medium`, `low`, null when unknown),
readers (groups with a committed offset on it), followers (every replica but one: the leader's
fetchers), window_start (the first snapshot the rate was measured from), typical_bytes_in_per_s
(the median bytes-in of its topic's partitions with a rate, or of the cluster's for a topic of
fewer than 3),
hot (see `load_rules`), severity (warning when hot, info when the method is unknown, else ok).

`broker_load`, one row per broker registered or holding a replica: broker_id, registered,
replicas, leaders, log_dirs, offline_log_dirs (a log dir with an error), disk_used_bytes (the sum of
its replicas' sizes, future replicas included: they take disk too), disk_capacity_bytes (the
`[clusters.capacity]` setting, else the sum of its healthy log dirs' total_bytes; null when neither),
capacity_source (`settings`, `log_dirs`, null), disk_used_share (used / capacity), disk_free_bytes
(capacity - used with a setting, else the log dirs' usable_bytes), disk_growth_bytes_per_s (the least-
squares slope of disk_used_bytes over the snapshots of the whole history: net of retention, which
frees disk), days_to_full (free / growth; null when not growing or free is unknown), bytes_in_per_s
(leader_bytes_in_per_s + replication_bytes_in_per_s), leader_bytes_in_per_s,
replication_bytes_in_per_s, bytes_out_per_s (of the partitions it leads), network_in_capacity and
network_out_capacity (bytes/s, from settings, null when unset), unknown_rate_replicas (replicas whose
partition's rate is unknown: the rates are then lower bounds), severity (the worst of its
`load_problems`, else ok).

`log_dir_load`, one row per (broker, log dir) of the latest snapshot's `log_dirs`: broker_id, log_dir,
error, replicas, disk_used_bytes (its replicas' sizes), total_bytes and usable_bytes (the volume, as
the broker reports them; null before Kafka 3.3), volume_used_share ((total - usable) / total: other
files on the volume count), disk_growth_bytes_per_s (slope of disk_used_bytes over the history),
days_to_full (usable / growth), severity (the worst of its `load_problems`, else ok).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.analysis.runs import run_since
from kafka_ops.capacities import Capacities
from kafka_ops.detectors import load_rules

TP = ["topic", "partition"]
SIZE_GROWTH, OFFSETS, UNKNOWN = "size_growth", "offsets", "unknown"
SECONDS_PER_DAY = 86400.0


def _seconds(later: str, earlier: str) -> Column:
    return (F.unix_micros(later) - F.unix_micros(earlier)).cast("double") / 1e6


def partition_sizes(replica_sizes: DataFrame) -> DataFrame:
    """Per snapshot and partition: size_bytes, its largest replica that is not a future one."""
    current = replica_sizes.where(~F.coalesce(F.col("is_future"), F.lit(False)))
    return current.groupBy("snapshot_id", "captured_at", *TP).agg(F.max("size_bytes").alias("size_bytes"))


def _steps(points: DataFrame, value: str) -> DataFrame:
    """Neighbouring points of each partition: delta (of `value`), seconds, start (the earlier's time)."""
    order = Window.partitionBy(*TP).orderBy("captured_at", "snapshot_id")
    return (
        points.select(*TP, "captured_at", value,
                      F.lag(value).over(order).alias("previous"), F.lag("captured_at").over(order).alias("start"))
        .where(F.col("previous").isNotNull() & (F.col("captured_at") > F.col("start")))
        .select(*TP, "start", (F.col(value) - F.col("previous")).alias("delta"),
                _seconds("captured_at", "start").alias("seconds"))
    )  # fmt: skip


def size_growth(sizes: DataFrame) -> DataFrame:
    """Per partition: grown_bytes and grown_seconds over the steps without a drop, drops (steps where the
    size fell: retention), size_start (the first step's start)."""
    kept = F.col("delta") >= 0
    return (
        _steps(sizes, "size_bytes")
        .groupBy(*TP)
        .agg(
            F.sum(F.when(kept, F.col("delta"))).alias("grown_bytes"),
            F.sum(F.when(kept, F.col("seconds"))).alias("grown_seconds"),
            F.count(F.when(~kept, 1)).alias("drops"),
            F.min("start").alias("size_start"),
        )
    )


def offset_growth(end_offsets: DataFrame) -> DataFrame:
    """Per partition: messages and message_seconds over the steps where the end offset did not fall,
    end_offset (the newest), offsets_start."""
    kept = F.col("delta") >= 0
    steps = _steps(end_offsets.select("snapshot_id", "captured_at", *TP, "end_offset"), "end_offset")
    newest = end_offsets.groupBy(*TP).agg(F.max_by("end_offset", "captured_at").alias("end_offset"))
    grown = steps.groupBy(*TP).agg(
        F.sum(F.when(kept, F.col("delta"))).alias("messages"),
        F.sum(F.when(kept, F.col("seconds"))).alias("message_seconds"),
        F.min("start").alias("offsets_start"),
    )
    return newest.join(grown, TP, "left")


def readers(group_offsets: DataFrame) -> DataFrame:
    """Per partition: readers, the groups with a committed (share groups: start) offset on it in the
    latest group collection of the frame."""
    newest = group_offsets.agg(F.max_by("snapshot_id", "captured_at").alias("snapshot_id"))
    committed = F.col("committed_offset").isNotNull() | F.col("start_offset").isNotNull()
    return (
        group_offsets.join(newest, "snapshot_id", "left_semi")
        .where(committed)
        .groupBy(*TP)
        .agg(F.count_distinct("group_id").cast("int").alias("readers"))
    )


def partition_rates(
    partitions: DataFrame, sizes: DataFrame, end_offsets: DataFrame, group_offsets: DataFrame, context: Context
) -> DataFrame:
    """Pure: the latest `partitions`, the window's partition sizes (`partition_sizes`), end offsets and
    group offsets → `partition_load` without typical/hot/severity/snapshot_id."""
    now = sizes.where(F.col("snapshot_id") == context.snapshot_id).select(*TP, "size_bytes")
    bytes_per_offset = F.when(
        (F.col("end_offset") > 0) & F.col("size_bytes").isNotNull(), F.col("size_bytes") / F.col("end_offset")
    )
    messages_per_s = F.when(F.col("message_seconds") > 0, F.col("messages") / F.col("message_seconds"))
    by_size = F.col("grown_seconds") > 0
    by_offsets = messages_per_s.isNotNull() & (F.col("bytes_per_offset").isNotNull() | (F.col("messages") == 0))
    method = F.when(by_size, SIZE_GROWTH).when(by_offsets, OFFSETS).otherwise(UNKNOWN)
    bytes_in = (
        F.when(by_size, F.col("grown_bytes") / F.col("grown_seconds"))
        .when(by_offsets, F.col("messages_in_per_s") * F.coalesce("bytes_per_offset", F.lit(0.0)))
        .cast("double")
    )
    confidence = F.when(by_size & (F.col("drops") == 0), "high").when(by_size, "medium").when(by_offsets, "low")
    followers = F.greatest(F.coalesce(F.size("replicas"), F.lit(0)) - 1, F.lit(0)).cast("int")
    frame = (
        partitions.select(*TP, F.coalesce("leader", F.lit(-1)).alias("leader"), "replicas")
        .join(now, TP, "left")
        .join(size_growth(sizes), TP, "left")
        .join(offset_growth(end_offsets), TP, "left")
        .join(readers(group_offsets), TP, "left")
        .select("*", bytes_per_offset.alias("bytes_per_offset"), messages_per_s.alias("messages_in_per_s"))
        .select("*", bytes_in.alias("bytes_in_per_s"), method.alias("method"), confidence.alias("confidence"),
                followers.alias("followers"), F.coalesce("readers", F.lit(0)).alias("n_readers"))
    )  # fmt: skip
    bytes_out = F.col("bytes_in_per_s") * (F.col("n_readers") + F.col("followers"))
    window_start = F.when(by_size, F.col("size_start")).when(by_offsets, F.col("offsets_start"))
    return frame.select(
        *TP, "leader", "replicas", "size_bytes", "bytes_in_per_s", bytes_out.alias("bytes_out_per_s"),
        "messages_in_per_s", "bytes_per_offset", "method", "confidence", F.col("n_readers").alias("readers"),
        "followers", window_start.alias("window_start"),
    )  # fmt: skip


def _capacity(capacity: Capacities, name: str) -> Column:
    """Broker `broker_id`'s figure `name`: its own setting over the cluster default (null: unset)."""
    value: Column = F.lit(getattr(capacity.default, name))
    for broker_id, _ in capacity.brokers:
        value = F.when(F.col("broker_id") == broker_id, F.lit(getattr(capacity.of(broker_id), name))).otherwise(value)
    return value.cast("double")


def disk_growth(replica_sizes: DataFrame, keys: list[str]) -> DataFrame:
    """Per `keys` (broker, or broker and log dir): disk_growth_bytes_per_s, the least-squares slope of
    the summed replica sizes over the snapshots (null with fewer than two), and growth_start."""
    used = replica_sizes.groupBy("snapshot_id", "captured_at", *keys).agg(F.sum("size_bytes").alias("used"))
    seconds = F.unix_micros("captured_at").cast("double") / 1e6
    return used.groupBy(*keys).agg(
        F.regr_slope(F.col("used").cast("double"), seconds).alias("disk_growth_bytes_per_s"),
        F.min("captured_at").alias("growth_start"),
    )


def _days_to_full(free: Column) -> Column:
    growth = F.col("disk_growth_bytes_per_s")
    return F.when((growth > 0) & free.isNotNull(), F.greatest(free, F.lit(0)) / growth / SECONDS_PER_DAY)


def log_dir_loads(log_dirs: DataFrame, replica_sizes: DataFrame, history: DataFrame) -> DataFrame:
    """Pure: the latest `log_dirs` and `replica_sizes`, and the history's `replica_sizes` →
    `log_dir_load` without severity/snapshot_id, plus growth_start."""
    keys = ["broker_id", "log_dir"]
    used = replica_sizes.groupBy(*keys).agg(
        F.count("*").cast("int").alias("replicas"), F.sum("size_bytes").alias("disk_used_bytes")
    )
    total, usable = F.col("total_bytes"), F.col("usable_bytes")
    return (
        log_dirs.select(*keys, "error", "total_bytes", "usable_bytes")
        .join(used, keys, "left")
        .join(disk_growth(history, keys), keys, "left")
        .select(
            *keys, "error", F.coalesce("replicas", F.lit(0)).alias("replicas"),
            F.coalesce("disk_used_bytes", F.lit(0)).alias("disk_used_bytes"), "total_bytes", "usable_bytes",
            F.when(total > 0, (total - usable) / total).alias("volume_used_share"),
            "disk_growth_bytes_per_s", _days_to_full(usable).alias("days_to_full"), "growth_start",
        )
    )  # fmt: skip


def broker_loads(
    brokers: DataFrame,
    *,
    parts: DataFrame,
    replica_sizes: DataFrame,
    dirs: DataFrame,
    history: DataFrame,
    capacity: Capacities,
) -> DataFrame:
    """Pure: the latest `brokers` and `replica_sizes`, `partition_rates`, `log_dir_loads` and the
    history's `replica_sizes` → `broker_load` without severity/snapshot_id, plus growth_start."""
    rate = F.coalesce(F.col("bytes_in_per_s"), F.lit(0.0))
    unknown = F.col("bytes_in_per_s").isNull().cast("int")
    roles = parts.select(
        F.explode("replicas").alias("broker_id"), "leader", "bytes_in_per_s", "bytes_out_per_s"
    ).select("*", (F.col("broker_id") == F.col("leader")).alias("leads"))
    leads = F.col("leads")
    traffic = roles.groupBy("broker_id").agg(
        F.count("*").cast("int").alias("replicas"),
        F.count(F.when(leads, 1)).cast("int").alias("leaders"),
        F.sum(F.when(leads, rate).otherwise(0.0)).alias("leader_bytes_in_per_s"),
        F.sum(F.when(~leads, rate).otherwise(0.0)).alias("replication_bytes_in_per_s"),
        F.sum(F.when(leads, F.coalesce("bytes_out_per_s", F.lit(0.0))).otherwise(0.0)).alias("bytes_out_per_s"),
        F.sum(unknown).cast("int").alias("unknown_rate_replicas"),
    )
    healthy = F.col("error").isNull()
    disks = dirs.groupBy("broker_id").agg(
        F.count("*").cast("int").alias("log_dirs"),
        F.count(F.when(~healthy, 1)).cast("int").alias("offline_log_dirs"),
        F.sum(F.when(healthy, F.col("total_bytes"))).alias("dirs_total"),
        F.sum(F.when(healthy, F.col("usable_bytes"))).alias("dirs_usable"),
        F.count(F.when(healthy & F.col("usable_bytes").isNull(), 1)).alias("dirs_unreported"),
    )
    used = replica_sizes.groupBy("broker_id").agg(F.sum("size_bytes").alias("disk_used_bytes"))
    ids = (
        brokers.select("broker_id", F.lit(True).alias("registered"))
        .unionByName(traffic.select("broker_id", F.lit(False).alias("registered")))
        .groupBy("broker_id")
        .agg(F.max("registered").alias("registered"))
    )
    setting = _capacity(capacity, "disk_bytes")
    from_dirs = F.when((F.col("dirs_total") > 0) & (F.col("dirs_unreported") == 0), F.col("dirs_total"))
    disk_capacity = F.coalesce(setting, from_dirs.cast("double"))
    used_bytes = F.col("disk_used_bytes")
    free = F.when(setting.isNotNull(), setting - used_bytes).when(
        F.col("capacity_source") == "log_dirs", F.col("dirs_usable").cast("double")
    )
    leader_in, replication_in = F.col("leader_bytes_in_per_s"), F.col("replication_bytes_in_per_s")
    return (
        ids.join(traffic, "broker_id", "left")
        .join(disks, "broker_id", "left")
        .join(used, "broker_id", "left")
        .join(disk_growth(history, ["broker_id"]), "broker_id", "left")
        .select(
            "*",
            disk_capacity.alias("disk_capacity_bytes"),
            F.when(setting.isNotNull(), "settings").when(from_dirs.isNotNull(), "log_dirs").alias("capacity_source"),
        )
        .fillna(0, ["replicas", "leaders", "log_dirs", "offline_log_dirs", "unknown_rate_replicas", "disk_used_bytes"])
        .fillna(0.0, ["leader_bytes_in_per_s", "replication_bytes_in_per_s", "bytes_out_per_s"])
        .select(
            "broker_id", "registered", "replicas", "leaders", "log_dirs", "offline_log_dirs", "disk_used_bytes",
            "disk_capacity_bytes", "capacity_source",
            F.when(F.col("disk_capacity_bytes") > 0, used_bytes / F.col("disk_capacity_bytes"))
            .alias("disk_used_share"),
            free.alias("disk_free_bytes"), "disk_growth_bytes_per_s", _days_to_full(free).alias("days_to_full"),
            (leader_in + replication_in).alias("bytes_in_per_s"), "leader_bytes_in_per_s",
            "replication_bytes_in_per_s", "bytes_out_per_s",
            _capacity(capacity, "network_in_bytes_per_s").alias("network_in_capacity"),
            _capacity(capacity, "network_out_bytes_per_s").alias("network_out_capacity"),
            "unknown_rate_replicas", "growth_start",
        )
    )  # fmt: skip


def _full_since(shares: DataFrame, keys: list[str], share: float) -> DataFrame:
    """Per `keys` fuller than `share` in the latest snapshot of `shares` (snapshot_id, captured_at, keys,
    used_share): full_since, the start of its unbroken run above `share` (`analysis.runs.run_since`)."""
    over = shares.where(F.col("used_share") >= share)
    newest = shares.agg(F.max_by("snapshot_id", "captured_at").alias("snapshot_id"))
    checked = shares.select("snapshot_id", "captured_at").distinct()
    return run_since(over.join(newest, "snapshot_id", "left_semi"), over, checked, keys).withColumnRenamed(
        "since", "full_since"
    )


def log_dir_full_since(log_dirs: DataFrame, share: float) -> DataFrame:
    """`_full_since` of each log dir's volume ((total - usable) / total) over the history's `log_dirs`."""
    total, usable = F.col("total_bytes"), F.col("usable_bytes")
    shares = log_dirs.where(total > 0).select(
        "snapshot_id", "captured_at", "broker_id", "log_dir", ((total - usable) / total).alias("used_share")
    )
    return _full_since(shares, ["broker_id", "log_dir"], share)


def broker_full_since(history: DataFrame, brokers: DataFrame, share: float) -> DataFrame:
    """`_full_since` of each broker's disk: its replica bytes in each snapshot of the history over its
    capacity now (`broker_loads`' disk_capacity_bytes)."""
    used = history.groupBy("snapshot_id", "captured_at", "broker_id").agg(F.sum("size_bytes").alias("used"))
    capacity = brokers.where(F.col("disk_capacity_bytes") > 0).select("broker_id", "disk_capacity_bytes")
    shares = used.join(capacity, "broker_id").select(
        "snapshot_id", "captured_at", "broker_id", (F.col("used") / F.col("disk_capacity_bytes")).alias("used_share")
    )
    return _full_since(shares, ["broker_id"], share)


def detect_load(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    """Pure: the window's `partitions`, `brokers`, `log_dirs`, `replica_sizes`, `partition_end_offsets`
    and `group_offsets` → `partition_load`, `broker_load`, `log_dir_load` and `load_problems`."""
    history = inputs["replica_sizes"]
    window_from = F.lit(context.captured_at - timedelta(hours=context.thresholds.load_window_hours))
    in_window = F.col("captured_at") >= window_from
    sizes = partition_sizes(history.where(in_window))
    now_sizes = latest(history, context)
    parts = partition_rates(
        latest(inputs["partitions"], context),
        sizes,
        inputs["partition_end_offsets"].where(in_window),
        inputs["group_offsets"],
        context,
    )
    # small (a row per partition, broker or log dir) and read by every rule: computed once, not per rule
    parts = parts.localCheckpoint()
    dirs = log_dir_loads(latest(inputs["log_dirs"], context), now_sizes, history).localCheckpoint()
    brokers = broker_loads(
        latest(inputs["brokers"], context),
        parts=parts, replica_sizes=now_sizes, dirs=dirs, history=history, capacity=context.capacity,
    )  # fmt: skip
    share = context.capacity.max_disk_share
    dirs = dirs.join(log_dir_full_since(inputs["log_dirs"], share), ["broker_id", "log_dir"], "left").localCheckpoint()
    brokers = brokers.join(broker_full_since(history, brokers, share), "broker_id", "left").localCheckpoint()
    judged = load_rules.judge(parts, brokers, dirs, context)
    return {name: frame.select(F.lit(context.snapshot_id).alias("snapshot_id"), "*") for name, frame in judged.items()}


DETECTOR = Detector(
    name="load",
    tables=("partitions", "brokers", "log_dirs", "replica_sizes", "partition_end_offsets", "group_offsets"),
    detect=detect_load,
    outputs=("partition_load", "broker_load", "log_dir_load", "load_problems"),
    latest_only=("partitions",),
)
