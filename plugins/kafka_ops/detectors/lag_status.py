"""Consumer lag status per partition and per group, by Burrow's rules adapted to sampled collections.

Burrow (`linkedin/Burrow`, `core/internal/evaluator/caching.go`, `calculatePartitionStatus`)
evaluates a ring of a partition's last N offset *commits*, each (offset, commit time, lag at
commit). We never see commits: each group collection samples OffsetFetch, which carries no
commit time. The adaptation:

* A *sample* is a group collection in which the (group, topic, partition) has a committed
  offset and a lag (`group_offsets` rows with `no_commit`, a deleted topic or an unknown end
  offset carry no lag and are no samples). The *window* is the partition's last
  `thresholds.lag_window` samples, by (captured_at, snapshot_id). Only partitions whose latest
  collection row is a sample are evaluated (a partition the group no longer commits, or whose lag
  is unknown now, is not reported).
* *Commits* are derived from the samples: consecutive samples with the same committed offset
  collapse into one commit, timestamped with the capture time at which that offset was first
  observed and carrying the lag of that first observation.
* "now" is the latest collection's capture time; the current lag is the latest sample's lag.
* A share group (KIP-932) commits nothing; its rows carry the broker's lag and a share-partition
  start offset instead. Its position is taken as `end_offset - lag` (all but `lag` records
  acknowledged): it moves when the group acknowledges, is at the head when the lag is 0, and is
  what `committed_offset` holds in its findings. The start offset would not do: it trails the
  acknowledgements (Kafka 4.4 persists it lazily) and stays below the head while everything is
  acknowledged.

The rules, exactly as docs/reference.md ("Burrow's lag evaluation") states them: Burrow's current
evaluator (`calculatePartitionStatus` in the file above), where STOP is checked first, with the
differences from its code listed there. First match wins:

1. OK when the current lag <= `thresholds.lag_allowed`.
2. STOP when now - t(last commit) > t(last commit) - t(first commit) (strictly): no new offset for
   longer than the window spans; unless an end offset recorded in the window is <= the current
   committed offset (the consumer was at the head recently: Burrow #303), and then evaluation goes
   on. Burrow's STALL is "the same offset committed over and over"; we cannot tell repeated commits
   from none, so membership decides instead: when a live member has the partition assigned now
   (the latest `group_members` assignment of a group whose latest state is Stable, or for a
   consumer-protocol group Assigning or Reconciling: its members keep consuming), the consumer is
   there but not moving, and the status is STALL.
3. REWIND at the first place (in time) where the committed offset is lower than the one before it,
   unless a later committed offset gets back to (>=) that earlier offset: a rewind that recovered is
   not REWIND, and later rewinds are not examined.
4. OK when any sample in the window had a lag <= `thresholds.lag_allowed`.
5. STALL when every commit of the window is the same offset (a single commit counts).
6. WARN when the lag never strictly decreased from one commit to the next (equal lags warn).
7. OK otherwise.

With fewer than 2 samples the status is OK (nothing to compare: Burrow's ring fills with commits
seconds apart, our first sample is the moment we started watching) and `complete` < 1; `complete`
is always samples / lag_window, Burrow's measure of how full the ring is.

Findings table `lag_status_partitions`, one row per evaluated partition: snapshot_id, group_id,
topic, partition, status (OK, WARN, STOP, STALL, REWIND), committed_offset, end_offset and lag
(the latest sample's), lag_start and lag_end (the window's first and last sample lags), samples,
complete, last_commit_at (when the current offset was first observed, within the window),
owner (member_id of the member the partition is assigned to now, null if none), severity (OK: ok,
WARN: warning, STOP/STALL/REWIND: critical).

Findings table `lag_status_groups`, one row per group of the latest collection (`consumer_groups`)
or with evaluated partitions: snapshot_id, group_id, state (latest; null if the group was not
described), status (Burrow's roll-up: the worst partition, STOP/STALL/REWIND counting as ERR; OK <
WARN < ERR; OK for a group without evaluated partitions), partition_count, total_lag, max_lag_topic,
max_lag_partition and max_lag (the partition with the largest lag, ties to the smallest topic and
partition), ok/warn/stop/stall/rewind_partitions (counts), complete (Burrow's: the share of
partitions whose window is full; null without partitions), severity (OK: ok, WARN: warning, ERR:
critical) and `cause`, one line about the worst kind of partition present (Burrow's order: REWIND >
STALL > STOP > WARN), e.g. "3 partitions STOP: no new commit for 25 min while lag grew to 4,000";
then consumer_quota_bytes_per_s and consumer_quota_entity, the lowest client quota
(`consumer_byte_rate`) that applies to one of the group's members and the quota entity that sets it
(null without one: see `consumer_quotas`). A lagging group's cause names it, so a quota holding
consumers back reads differently from a slow consumer.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE

KEY = ["group_id", "topic", "partition"]
STABLE = "Stable"
LIVE_STATES = (STABLE, "Assigning", "Reconciling")
"""States in which members hold their partitions and consume: a classic group only when Stable (a
rebalance stops it); a consumer-protocol group (KIP-848) also while the broker assigns or members
reconcile, since each member keeps consuming what it holds meanwhile (no classic group has these states)."""
# Burrow's StatusConstant order, which its group roll-up and our `cause` follow
CODES = {"OK": 1, "WARN": 2, "STOP": 4, "STALL": 5, "REWIND": 6}
PARTITION_SEVERITY = {"OK": "ok", "WARN": "warning", "STOP": "critical", "STALL": "critical", "REWIND": "critical"}
GROUP_SEVERITY = {"OK": "ok", "WARN": "warning", "ERR": "critical"}
NO_ENTITY = "-"
# "user|client" of a quota entity (C: the member's own client id) -> Kafka's precedence for a user
# that has no quota entity of its own (see `consumer_quotas`)
QUOTA_PRECEDENCE = {"<default>|C": 1, "<default>|<default>": 2, f"<default>|{NO_ENTITY}": 3,
                    f"{NO_ENTITY}|C": 4, f"{NO_ENTITY}|<default>": 5}  # fmt: skip


def _micros(at: datetime | str) -> Column:
    return F.unix_micros(F.lit(at) if isinstance(at, datetime) else F.col(at))


def _mapped(column: str, mapping: Mapping[str, object]) -> Column:
    return F.create_map(*(F.lit(v) for kv in mapping.items() for v in kv))[F.col(column)]


def windows(offsets: DataFrame, context: Context) -> DataFrame:
    """Each evaluated partition's window: its last `lag_window` samples (KEY, captured_at,
    committed_offset, end_offset, lag, `rank` = 1 for the newest), with `new_commit` (the offset
    differs from the sample before), `rewound` (it is lower), `unrecovered` (on a rewound sample: no
    sample from this one on gets back to the offset before it), `commit_lag_fell` (on a new commit:
    its lag is below the previous commit's) and `at_head` (this sample's end offset is <= the current
    committed offset: Burrow's "recent lag zero")."""
    share = F.col("start_offset").isNotNull() & F.col("committed_offset").isNull()
    position = F.when(share, F.col("end_offset") - F.col("lag")).otherwise(F.col("committed_offset"))
    offsets = offsets.withColumn("committed_offset", position)
    samples = offsets.where(F.col("committed_offset").isNotNull() & F.col("lag").isNotNull())
    current = latest(samples, context).select(*KEY)
    newest_first = Window.partitionBy(*KEY).orderBy(F.desc("captured_at"), F.desc("snapshot_id"))
    window = (
        samples.join(current, KEY, "left_semi")
        .select(*KEY, "captured_at", "committed_offset", "end_offset", "lag",
                F.row_number().over(newest_first).alias("rank"))
        .where(F.col("rank") <= int(context.thresholds.lag_window))
    )  # fmt: skip
    in_order = Window.partitionBy(*KEY).orderBy("rank")
    previous = F.lead("committed_offset").over(in_order)  # ranks count backwards in time
    since = in_order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    flagged = window.select(
        "*",
        F.coalesce(previous != F.col("committed_offset"), F.lit(True)).alias("new_commit"),
        F.coalesce(F.col("committed_offset") < previous, F.lit(False)).alias("rewound"),
        F.coalesce(F.max("committed_offset").over(since) < previous, F.lit(False)).alias("unrecovered"),
        (F.col("end_offset") <= F.first("committed_offset").over(in_order)).alias("at_head"),
    )
    # the previous commit's lag: the lag of the latest earlier sample that started a commit
    earlier = in_order.rowsBetween(1, Window.unboundedFollowing)
    previous_commit_lag = F.first(F.when(F.col("new_commit"), F.col("lag")), ignorenulls=True).over(earlier)
    return flagged.select(
        "*",
        (F.col("new_commit") & F.coalesce(F.col("lag") < previous_commit_lag, F.lit(False))).alias("commit_lag_fell"),
    )


def _owners(members: DataFrame, groups: DataFrame, context: Context) -> DataFrame:
    """KEY → owner (member_id) and `live` (the group is in a `LIVE_STATES` state now) from the latest
    assignments."""
    states = latest(groups, context).select("group_id", "state")
    return (
        latest(members, context)
        .select("group_id", "member_id", F.explode("assigned_partitions").alias("tp"))
        .select("group_id", "tp.topic", "tp.partition", "member_id")
        .groupBy(*KEY)
        .agg(F.min("member_id").alias("owner"))
        .join(states, "group_id", "left")
        .select(*KEY, "owner", F.coalesce(F.col("state").isin(*LIVE_STATES), F.lit(False)).alias("live"))
    )


def _status(context: Context) -> Column:
    now = _micros(context.captured_at)
    last, first = _micros("last_commit_at"), _micros("first_at")
    stopped = (now - last > last - first) & ~F.col("was_at_head")
    allowed = context.thresholds.lag_allowed
    return (
        F.when(F.col("samples") < 2, "OK")
        .when(F.col("lag") <= allowed, "OK")
        .when(stopped & F.coalesce(F.col("live"), F.lit(False)), "STALL")
        .when(stopped, "STOP")
        .when(F.coalesce(F.col("first_rewind.unrecovered"), F.lit(False)), "REWIND")
        .when(F.col("min_lag") <= allowed, "OK")
        .when(F.col("commits") == 1, "STALL")
        .when(~F.col("lag_fell"), "WARN")
        .otherwise("OK")
    )


def detect_partitions(offsets: DataFrame, members: DataFrame, groups: DataFrame, context: Context) -> DataFrame:
    """Pure: the window's group_offsets, group_members and consumer_groups → `lag_status_partitions`."""
    stats = (
        windows(offsets, context)
        .groupBy(*KEY)
        .agg(
            F.count("*").alias("samples"),
            F.min("lag").alias("min_lag"),
            F.bool_or("at_head").alias("was_at_head"),
            # the oldest rewind (ranks count backwards) and whether it recovered
            F.max(F.when(F.col("rewound"), F.struct("rank", "unrecovered"))).alias("first_rewind"),
            F.bool_or("commit_lag_fell").alias("lag_fell"),
            F.count_if("new_commit").alias("commits"),
            F.min("captured_at").alias("first_at"),
            F.max(F.when(F.col("new_commit"), F.col("captured_at"))).alias("last_commit_at"),
            F.min_by("committed_offset", "rank").alias("committed_offset"),
            F.min_by("end_offset", "rank").alias("end_offset"),
            F.min_by("lag", "rank").alias("lag"),
            F.max_by("lag", "rank").alias("lag_start"),
        )
        .join(_owners(members, groups, context), KEY, "left")
        .withColumn("status", _status(context))
    )
    return stats.select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        *KEY, "status", "committed_offset", "end_offset", "lag", "lag_start",
        F.col("lag").alias("lag_end"),
        F.col("samples").cast("int").alias("samples"),
        (F.col("samples") / F.lit(int(context.thresholds.lag_window))).alias("complete"),
        "last_commit_at", "owner",
        _mapped("status", PARTITION_SEVERITY).alias("severity"),
    )  # fmt: skip


def _plural(count: Column, word: str) -> Column:
    return F.concat(count.cast("string"), F.when(count == 1, f" {word}").otherwise(f" {word}s"))


def _duration(seconds: Column) -> Column:
    """ "45 s", "25 min", "3.5 h": whole seconds below a minute, whole minutes below two hours."""
    return (
        F.when(seconds < 60, F.concat(F.floor(seconds).cast("string"), F.lit(" s")))
        .when(seconds < 7200, F.concat(F.floor(seconds / 60).cast("string"), F.lit(" min")))
        .otherwise(F.concat(F.format_number(seconds / 3600, 1), F.lit(" h")))
    )


def _cause() -> Column:
    """One line about the group's worst kind of partition (`head_*` columns: see `detect_groups`)."""
    head = F.concat(_plural(F.col("head_count"), "partition"), F.lit(" "), F.col("head"), F.lit(": "))
    lag = F.format_number(F.col("head_max_lag"), 0)
    trend = F.when(F.col("head_lag_grew"), F.concat(F.lit("while lag grew to "), lag)).otherwise(
        F.concat(F.lit("with lag at "), lag)
    )
    up_to = F.concat(F.lit("lag up to "), lag)
    idle = F.concat(_duration(F.col("head_idle_seconds")), F.lit(" "))
    return (
        F.when(F.col("partition_count") == 0, F.lit("no committed partition with a known lag"))
        .when(F.col("head") == "OK", F.concat(head, F.lit("total lag "), F.format_number(F.col("total_lag"), 0)))
        .when(F.col("head") == "REWIND", F.concat(head, F.lit("the committed offset went backwards, "), up_to))
        .when(F.col("head") == "STALL",
              F.concat(head, F.lit("assigned to a live member but no new commit for "), idle, trend))
        .when(F.col("head") == "STOP", F.concat(head, F.lit("no new commit for "), idle, trend))
        .otherwise(F.concat(head, F.lit("lag never decreased from one commit to the next, "), up_to))
    )  # fmt: skip


def consumer_quotas(members: DataFrame, quotas: DataFrame, snapshots: DataFrame, context: Context) -> DataFrame:
    """Pure: per group, the lowest consumer quota (`consumer_byte_rate`, bytes/s) that applies to one of
    its members now, and the entity that sets it: (group_id, consumer_quota_bytes_per_s,
    consumer_quota_entity).

    Kafka picks one quota per (user, client id), the most specific entity first: users/U/clients/C,
    users/U/clients/<default>, users/U, users/<default>/clients/C, users/<default>/clients/<default>,
    users/<default>, clients/C, clients/<default>. A group's members are known by client id only, not by
    the user they authenticate as, so the ranks used here are those that hold for a user without quotas
    of its own (`QUOTA_PRECEDENCE`). The quotas are the latest ZooKeeper snapshot's at or before the
    group collection."""
    newest = snapshots.where(F.col("captured_at") <= F.lit(context.captured_at)).orderBy(
        F.desc("captured_at"), F.desc("snapshot_id")
    )
    current = quotas.join(newest.limit(1).select("snapshot_id"), "snapshot_id", "left_semi").where(
        F.col("quota_key") == "consumer_byte_rate"
    )
    clients = latest(members, context).select("group_id", "client_id").distinct()
    user = F.coalesce(F.col("user"), F.lit(NO_ENTITY))
    client = F.coalesce(F.col("q.client_id"), F.lit(NO_ENTITY))
    rank = F.create_map(*(F.lit(v) for kv in QUOTA_PRECEDENCE.items() for v in kv))[
        F.concat(user, F.lit("|"), F.when(client == F.col("m.client_id"), F.lit("C")).otherwise(client))
    ]
    matched = (
        clients.alias("m")
        .join(current.alias("q"))
        .select("group_id", "m.client_id", "entity_path", "quota_value", rank.alias("rank"))
        .where(F.col("rank").isNotNull())
    )
    first = Window.partitionBy("group_id", "client_id").orderBy("rank")
    effective = matched.select("*", F.row_number().over(first).alias("n")).where(F.col("n") == 1)
    return (
        effective.groupBy("group_id")
        .agg(F.min(F.struct("quota_value", "entity_path")).alias("q"))
        .select(
            "group_id",
            F.col("q.quota_value").alias("consumer_quota_bytes_per_s"),
            F.col("q.entity_path").alias("consumer_quota_entity"),
        )
    )


def detect_groups(partitions: DataFrame, groups: DataFrame, context: Context) -> DataFrame:
    """Pure: `lag_status_partitions` and the window's consumer_groups → `lag_status_groups`."""
    now = _micros(context.captured_at)
    code = _mapped("status", CODES)
    ranked = partitions.select(
        "*", code.alias("code"), F.max(code).over(Window.partitionBy("group_id")).alias("head_code")
    )
    is_head = F.col("code") == F.col("head_code")
    count = {s: F.count_if(F.col("status") == s).cast("int").alias(f"{s.lower()}_partitions") for s in CODES}
    rolled = ranked.groupBy("group_id").agg(
        F.count("*").cast("int").alias("partition_count"),
        F.sum("lag").alias("total_lag"),
        F.min(F.struct((-F.col("lag")).alias("minus_lag"), "topic", "partition")).alias("max_lag_at"),
        *count.values(),
        F.avg((F.col("complete") >= 1).cast("double")).alias("complete"),
        F.max("code").alias("worst"),
        F.first("head_code").alias("head_code"),
        F.count_if(is_head).cast("int").alias("head_count"),
        F.max(F.when(is_head, F.col("lag"))).alias("head_max_lag"),
        F.bool_or(is_head & (F.col("lag") > F.col("lag_start"))).alias("head_lag_grew"),
        F.max(F.when(is_head, (now - _micros("last_commit_at")) / 1e6)).alias("head_idle_seconds"),
    )
    states = latest(groups, context).select("group_id", "state")
    status = F.when(F.col("worst") >= CODES["STOP"], "ERR").when(F.col("worst") == CODES["WARN"], "WARN")
    head = F.create_map(*(F.lit(v) for name, c in CODES.items() for v in (c, name)))[F.col("head_code")]
    return (
        states.join(rolled, "group_id", "full")
        .fillna(0, subset=["partition_count", "total_lag", *(c.lower() + "_partitions" for c in CODES)])
        .withColumn("status", F.coalesce(status, F.lit("OK")))
        .withColumn("head", head)
        .select(
            F.lit(context.snapshot_id).alias("snapshot_id"),
            "group_id", "state", "status", "partition_count", "total_lag",
            F.col("max_lag_at.topic").alias("max_lag_topic"),
            F.col("max_lag_at.partition").alias("max_lag_partition"),
            (-F.col("max_lag_at.minus_lag")).alias("max_lag"),
            *(c.lower() + "_partitions" for c in CODES), "complete",
            _mapped("status", GROUP_SEVERITY).alias("severity"),
            _cause().alias("cause"),
        )
    )  # fmt: skip


def _with_quotas(statuses: DataFrame, quotas: DataFrame) -> DataFrame:
    """`lag_status_groups` with the consumer quota of each group, named in the cause of a lagging group:
    a quota holding a consumer back reads differently from a slow consumer."""
    rate = F.format_number(F.col("consumer_quota_bytes_per_s"), 0)
    note = F.concat(F.lit("; a consumer quota of "), rate, F.lit(" B/s applies to its members ("),
                    F.col("consumer_quota_entity"), F.lit("): the quota may be what holds it back"))  # fmt: skip
    lagging = (F.col("status") != "OK") & F.col("consumer_quota_bytes_per_s").isNotNull()
    return statuses.join(quotas, "group_id", "left").select(
        *(c for c in statuses.columns if c != "cause"),
        F.when(lagging, F.concat(F.col("cause"), note)).otherwise(F.col("cause")).alias("cause"),
        "consumer_quota_bytes_per_s", "consumer_quota_entity",
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    groups = inputs["consumer_groups"]
    partitions = detect_partitions(inputs["group_offsets"], inputs["group_members"], groups, context)
    quotas = consumer_quotas(inputs["group_members"], inputs["quotas"], inputs["snapshots"], context)
    return {
        "lag_status_partitions": partitions,
        "lag_status_groups": _with_quotas(detect_groups(partitions, groups, context), quotas),
    }


DETECTOR = Detector(
    name="lag_status",
    tables=("group_offsets", "group_members", "consumer_groups", "quotas", "snapshots"),
    detect=_detect,
    outputs=("lag_status_partitions", "lag_status_groups"),
    source=GROUP_COMMIT_TABLE,
)
