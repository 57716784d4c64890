"""Consumer lag status per partition and per group, by Burrow's rules.

Burrow (`linkedin/Burrow`, `core/internal/evaluator/caching.go`, `calculatePartitionStatus`)
evaluates a ring of a partition's last N offset *commits*, each (offset, commit time, lag at
commit). A partition's window here is, where the commit log holds 2 or more of its commits:

* *Logged commits* (`group_commits`, read from `__consumer_offsets` by each group collection): the
  last `thresholds.lag_window` commits up to now, each with its time; its lag is the end offset at
  the commit's time, interpolated between the end offsets of the collections just before and just
  after it (the latest, for a commit after the last collection), minus the offset: Burrow pairs a
  commit with the broker offset of its time. Every commit is one, equal offsets included, so STALL
  (the same offset committed again and again) and STOP (nothing committed) are told apart as Burrow
  tells them.

Otherwise (a share group, which commits nothing; a partition whose commits predate the commit log;
a cluster the log cannot be read on):

* *Samples*: a sample is a group collection in which the (group, topic, partition) has a committed
  offset and a lag (`group_offsets` rows with `no_commit`, a deleted topic or an unknown end
  offset carry no lag and are no samples). The window is the partition's last
  `thresholds.lag_window` samples, by (captured_at, snapshot_id). Commits are derived from the
  samples: consecutive samples with the same committed offset collapse into one commit,
  timestamped with the capture time at which that offset was first observed and carrying the lag of
  that first observation (which includes the producer's progress since the commit).

Either way only partitions whose latest collection row is a sample are evaluated (a partition the
group no longer commits, or whose lag is unknown now, is not reported); "now" is the latest
collection's capture time and the current lag is the latest sample's lag. A share group (KIP-932)
commits nothing; its rows carry the broker's lag and a share-partition start offset instead. Its
position is taken as `end_offset - lag` (all but `lag` records acknowledged): it moves when the group
acknowledges, is at the head when the lag is 0, and is what `committed_offset` holds in its findings.
The start offset would not do: it trails the acknowledgements (Kafka 4.4 persists it lazily) and stays
below the head while everything is acknowledged.

The rules, exactly as docs/reference.md ("Burrow's lag evaluation") states them: Burrow's current
evaluator (`calculatePartitionStatus` in the file above), where STOP is checked first, with the
differences from its code listed there. First match wins:

1. OK when the current lag <= `thresholds.lag_allowed`.
2. STOP when now - t(last commit) > t(last commit) - t(first commit) (strictly): no new offset for
   longer than the window spans; unless an end offset collected in the last `RECENT_HEAD_S` seconds
   is <= the current committed offset (the consumer was at the head recently: Burrow #303; an end
   offset older than that does not count, Burrow #290), and then evaluation goes on. A window of
   samples cannot tell repeated commits from none, so there membership decides instead: when a live
   member has the partition assigned now (the latest `group_members` assignment of a group whose
   latest state is Stable, or for a consumer-protocol group Assigning or Reconciling: its members
   keep consuming), the consumer is there but not moving, and the status is STALL.
3. REWIND at the first place (in time) where the committed offset is lower than the one before it,
   unless a later committed offset gets back to (>=) that earlier offset: a rewind that recovered is
   not REWIND, and later rewinds are not examined.
4. OK when any sample in the window had a lag <= `thresholds.lag_allowed`.
5. STALL when every commit of the window is the same offset (a single commit counts).
6. WARN when the lag never strictly decreased from one commit to the next (equal lags warn), over
   2 or more commits whose lag is known (a commit before the first collection has none).
7. OK otherwise.

With fewer than 2 samples the status is OK (nothing to compare: Burrow's ring fills with commits
seconds apart, our first sample is the moment we started watching) and `complete` < 1; `complete`
is always samples / lag_window, Burrow's measure of how full the ring is (`samples` counts the
window's logged commits, where they make it).

Findings table `lag_status_partitions`, one row per evaluated partition: snapshot_id, group_id,
topic, partition, status (OK, WARN, STOP, STALL, REWIND), committed_offset, end_offset and lag
(the latest sample's), lag_start (the window's first commit's or sample's lag; null for a commit
before the first collection, whose end offset was never seen) and lag_end (the latest sample's),
samples, complete, last_commit_at (the last logged commit's time; in a window of samples, when the
current offset was first observed),
owner (member_id of the member the partition is assigned to now, null if none), severity (OK: ok,
WARN: warning, STOP/STALL/REWIND: critical); then Burrow's `start` and `end` of the window:
first_commit_at and first_commit_offset (its first commit, or sample), last_commit_offset and
last_commit_lag (its last commit and the lag at that commit: in a window of samples, as first observed).

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
from datetime import datetime, timedelta

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.detectors.burrow_rules import (
    CODES,
    GROUP_SEVERITY,
    KEY,
    LIVE_STATES,
    NO_ENTITY,
    PARTITION_SEVERITY,
    QUOTA_PRECEDENCE,
    RECENT_HEAD_S,
)
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE


def _micros(at: datetime | str) -> Column:
    return F.unix_micros(F.lit(at) if isinstance(at, datetime) else F.col(at))


def _mapped(column: str, mapping: Mapping[str, object]) -> Column:
    return F.create_map(*(F.lit(v) for kv in mapping.items() for v in kv))[F.col(column)]


def samples_of(offsets: DataFrame) -> DataFrame:
    """The `group_offsets` rows that are samples (a committed offset or a share group's position, and a
    lag), a share group's `committed_offset` being its position."""
    share = F.col("start_offset").isNotNull() & F.col("committed_offset").isNull()
    position = F.when(share, F.col("end_offset") - F.col("lag")).otherwise(F.col("committed_offset"))
    offsets = offsets.withColumn("committed_offset", position)
    return offsets.where(F.col("committed_offset").isNotNull() & F.col("lag").isNotNull())


def windows(samples: DataFrame, context: Context) -> DataFrame:
    """Each evaluated partition's window from the collections: its last `lag_window` samples (KEY,
    captured_at, committed_offset, end_offset, lag, `rank` = 1 for the newest), flagged (`_flagged`),
    a new commit wherever the offset differs from the sample before."""
    current = latest(samples, context).select(*KEY)
    newest_first = Window.partitionBy(*KEY).orderBy(F.desc("captured_at"), F.desc("snapshot_id"))
    window = (
        samples.join(current, KEY, "left_semi")
        .select(*KEY, "captured_at", "committed_offset", "end_offset", "lag",
                F.row_number().over(newest_first).alias("rank"))
        .where(F.col("rank") <= int(context.thresholds.lag_window))
    )  # fmt: skip
    previous = F.lead("committed_offset").over(Window.partitionBy(*KEY).orderBy("rank"))
    return _flagged(window, F.coalesce(previous != F.col("committed_offset"), F.lit(True)))


def logged_windows(commits: DataFrame, samples: DataFrame, context: Context) -> DataFrame:
    """Each partition's window from the commit log (`group_commits`), for the partitions the latest
    collection sampled and the log holds at least 2 commits of: its last `lag_window` commits up to now
    (one row per (time, offset): consecutive collections may both hold a commit), each a new commit,
    with the end offset at its time and its lag (`_lag_at_commit`), flagged (`_flagged`)."""
    current = latest(samples, context).select(*KEY)
    logged = (
        commits.where(F.col("committed_offset").isNotNull() & (F.col("committed_at") <= F.lit(context.captured_at)))
        .select(*KEY, "committed_at", "committed_offset")
        .distinct()
        .join(current, KEY, "left_semi")
    )
    newest_first = Window.partitionBy(*KEY).orderBy(F.desc("committed_at"), F.desc("committed_offset"))
    window = logged.select("*", F.row_number().over(newest_first).alias("rank")).where(
        F.col("rank") <= int(context.thresholds.lag_window)
    )
    window = window.withColumn("commits", F.count("*").over(Window.partitionBy(*KEY)))
    window = window.where(F.col("commits") >= 2).drop("commits")
    return _flagged(_lag_at_commit(window, samples, context), F.lit(True))


def _lag_at_commit(window: DataFrame, samples: DataFrame, context: Context) -> DataFrame:
    """Each logged commit with the partition's end offset at its time, interpolated between the end
    offsets the collections saw just before and just after it (the latest seen, for a commit after the
    last collection; unknown before the first), and its lag (clamped at 0), as Burrow pairs a commit
    with the broker offset of its time; `captured_at` is the commit's time."""
    ends = samples.where(F.col("captured_at") <= F.lit(context.captured_at)).select(
        *KEY, F.col("captured_at").alias("at"), "end_offset",
        F.lit(None).cast("long").alias("committed_offset"), F.lit(None).cast("int").alias("rank"),
    )  # fmt: skip
    commits = window.select(
        *KEY,
        F.col("committed_at").alias("at"),
        F.lit(None).cast("long").alias("end_offset"),
        "committed_offset",
        "rank",
    )
    seen = F.struct(F.col("at").alias("at"), F.col("end_offset").alias("end"))
    is_end = F.col("rank").isNull()
    in_time = Window.partitionBy(*KEY).orderBy("at", F.col("rank").isNotNull())
    before = F.last(F.when(is_end, seen), ignorenulls=True).over(in_time.rowsBetween(Window.unboundedPreceding, 0))
    after = F.first(F.when(is_end, seen), ignorenulls=True).over(in_time.rowsBetween(0, Window.unboundedFollowing))
    paired = ends.unionByName(commits).select("*", before.alias("l"), after.alias("r")).where(~is_end)
    span = _micros("r.at") - _micros("l.at")
    share = (_micros("at") - _micros("l.at")) / span
    end = (
        F.when(F.col("l").isNull(), F.lit(None).cast("long"))
        .when(F.col("r").isNull() | (span <= 0), F.col("l.end"))
        .otherwise(F.floor(F.col("l.end") + (F.col("r.end") - F.col("l.end")) * share).cast("long"))
    )
    return paired.select(
        *KEY, F.col("at").alias("captured_at"), "committed_offset", end.alias("end_offset"),
        F.when(end.isNotNull(), F.greatest(end - F.col("committed_offset"), F.lit(0))).alias("lag"), "rank",
    )  # fmt: skip


def _flagged(window: DataFrame, new_commit: Column) -> DataFrame:
    """A window (ranks count backwards in time) with `new_commit`, `rewound` (the offset is lower than
    the row before), `unrecovered` (on a rewound row: no row from this one on gets back to the offset
    before it) and `commit_lag_fell` (on a new commit: its lag is below the previous commit's)."""
    in_order = Window.partitionBy(*KEY).orderBy("rank")
    previous = F.lead("committed_offset").over(in_order)
    since = in_order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    flagged = window.select(
        "*",
        new_commit.alias("new_commit"),
        F.coalesce(F.col("committed_offset") < previous, F.lit(False)).alias("rewound"),
        F.coalesce(F.max("committed_offset").over(since) < previous, F.lit(False)).alias("unrecovered"),
    )
    # the previous commit's lag: the lag of the latest earlier row that started a commit
    earlier = in_order.rowsBetween(1, Window.unboundedFollowing)
    previous_commit_lag = F.first(F.when(F.col("new_commit"), F.col("lag")), ignorenulls=True).over(earlier)
    return flagged.select(
        "*",
        (F.col("new_commit") & F.coalesce(F.col("lag") < previous_commit_lag, F.lit(False))).alias("commit_lag_fell"),
    )


def _recent_heads(samples: DataFrame, context: Context) -> DataFrame:
    """KEY → `recent_end`: the lowest end offset the collections saw in the last `RECENT_HEAD_S` seconds
    (Burrow's broker-offset ring: one end offset per 10 s refresh, the last 10)."""
    since = F.lit(context.captured_at - timedelta(seconds=RECENT_HEAD_S))
    recent = samples.where((F.col("captured_at") > since) & (F.col("captured_at") <= F.lit(context.captured_at)))
    return recent.groupBy(*KEY).agg(F.min("end_offset").alias("recent_end"))


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
    at_head = F.coalesce(F.col("recent_end") <= F.col("committed_offset"), F.lit(False))
    stopped = (now - last > last - first) & ~at_head
    # without the commit log, a consumer committing nothing and one committing the same offset look alike
    live = F.coalesce(F.col("live"), F.lit(False)) & ~F.col("logged")
    allowed = context.thresholds.lag_allowed
    return (
        F.when(F.col("samples") < 2, "OK")
        .when(F.col("lag") <= allowed, "OK")
        .when(stopped & live, "STALL")
        .when(stopped, "STOP")
        .when(F.coalesce(F.col("first_rewind.unrecovered"), F.lit(False)), "REWIND")
        .when(F.col("min_lag") <= allowed, "OK")
        .when(F.col("lowest_offset") == F.col("highest_offset"), "STALL")
        .when(~F.col("lag_fell") & (F.col("known_lags") >= 2), "WARN")  # unknown lags show no trend
        .otherwise("OK")
    )


def detect_partitions(
    offsets: DataFrame, commits: DataFrame, members: DataFrame, groups: DataFrame, context: Context
) -> DataFrame:
    """Pure: the window's group_offsets, group_commits, group_members and consumer_groups →
    `lag_status_partitions`. A partition's window is its logged commits where the commit log holds 2
    or more (`logged_windows`), else its collections' samples (`windows`)."""
    samples = samples_of(offsets)
    sampled = windows(samples, context)
    logged = logged_windows(commits, samples, context)
    window = sampled.join(logged.select(*KEY).distinct(), KEY, "left_anti").withColumn("logged", F.lit(False))
    window = window.unionByName(logged.withColumn("logged", F.lit(True)))
    now = sampled.where(F.col("rank") == 1).select(*KEY, "committed_offset", "end_offset", "lag")
    stats = (
        window.groupBy(*KEY)
        .agg(
            F.count("*").alias("samples"),
            F.bool_or("logged").alias("logged"),
            F.min("lag").alias("min_lag"),
            # the oldest rewind (ranks count backwards) and whether it recovered
            F.max(F.when(F.col("rewound"), F.struct("rank", "unrecovered"))).alias("first_rewind"),
            F.bool_or("commit_lag_fell").alias("lag_fell"),
            F.count("lag").alias("known_lags"),  # a commit before the first collection has none
            F.min("committed_offset").alias("lowest_offset"),
            F.max("committed_offset").alias("highest_offset"),
            F.min("captured_at").alias("first_at"),
            F.max(F.when(F.col("new_commit"), F.col("captured_at"))).alias("last_commit_at"),
            F.max_by("lag", "rank").alias("lag_start"),
            F.max_by("committed_offset", "rank").alias("first_commit_offset"),
            # the newest row that is a commit: the last commit (a window of samples: when its offset was new)
            F.min(F.when(F.col("new_commit"), F.struct("rank", "committed_offset", "lag"))).alias("last"),
        )
        .join(now, KEY)
        .join(_recent_heads(samples, context), KEY, "left")
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
        F.col("first_at").alias("first_commit_at"), "first_commit_offset",
        F.col("last.committed_offset").alias("last_commit_offset"), F.col("last.lag").alias("last_commit_lag"),
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
    offsets, commits = inputs["group_offsets"], inputs["group_commits"]
    partitions = detect_partitions(offsets, commits, inputs["group_members"], groups, context)
    quotas = consumer_quotas(inputs["group_members"], inputs["quotas"], inputs["snapshots"], context)
    return {
        "lag_status_partitions": partitions,
        "lag_status_groups": _with_quotas(detect_groups(partitions, groups, context), quotas),
    }


DETECTOR = Detector(
    name="lag_status",
    tables=("group_offsets", "group_commits", "group_members", "consumer_groups", "quotas", "snapshots"),
    detect=_detect,
    outputs=("lag_status_partitions", "lag_status_groups"),
    source=GROUP_COMMIT_TABLE,
)
