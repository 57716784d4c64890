"""How evenly each consumer group's assignor spread partitions (and lag) over its members, now.

Statistics only, from the latest collection: every group whose latest state is Stable, whose
protocol type is `consumer` (classic consumer groups and consumer-protocol ones), `streams` (a
member's partitions: its active tasks' input partitions) or `share` (a member's partitions: those
the broker lets it fetch from, which several members may share), and that has at least two members
(`group_members` rows). A member's lag is the sum of the known lags (`group_offsets`) of the
partitions assigned to it.

The range assignor's signature. Range deals each topic on its own: its C subscribed members, in
the assignors' member order (static members first by group.instance.id, then the rest by
member id), get P div C partitions each, and the first P mod C get one more; the extras pile
onto the same first members across topics. Subscriptions are not in the lake, only assignments,
so the signature assumes every member subscribes to every topic the group consumes: it is present
when, for every such topic, the members' partition counts in that order never go up and differ
by at most one (range-shaped), at least one topic is split unevenly, and the piling-up makes the
spread (max - min partitions per member) at least 2. Unequal subscriptions (a member holding none
of a topic others hold several partitions of) never carry the signature, nor do share groups
(their partitions are shared out, not dealt).

Findings table `assignor_skew_groups`: snapshot_id, group_id, assignor, members, partitions
(assigned), min_partitions, max_partitions, mean_partitions (per member), spread (max - min),
lag_spread (max - min member lag), range_signature, skewed (spread >= `thresholds.skew_spread`),
severity (warning when skewed, else ok) and `cause`, one line for a human.

Findings table `assignor_skew_members`: snapshot_id, group_id, member_id, client_id, host,
partitions, lag, partition_share (of the group's assigned partitions; null when none), lag_share
(of the group's lag; null when that is 0), lag_to_partition_ratio (lag_share / partition_share: 1
means the member carries lag in proportion to its partitions), severity (warning when the member
holds at least `skew_spread` partitions more than the group's least loaded member, else ok).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE

STABLE = "Stable"
SHARE = "share"
PROTOCOL_TYPES = ("consumer", "streams", SHARE)
"""Groups whose members hold partitions: classic and consumer-protocol consumer groups (both
`consumer`), streams groups, share groups."""


def _member_order() -> list[Column]:
    """The order the Java assignors sort members in: static ones first by instance id, then by member id."""
    return [F.col("group_instance_id").isNull(), F.col("group_instance_id"), F.col("member_id")]


def candidate_members(members: DataFrame, groups: DataFrame, context: Context) -> DataFrame:
    """The latest members of the groups this detector looks at, with the group's assignor and protocol type."""
    eligible = (
        latest(groups, context)
        .where((F.col("state") == STABLE) & F.col("protocol_type").isin(*PROTOCOL_TYPES))
        .select("group_id", "assignor", "protocol_type")
    )
    rows = latest(members, context).join(eligible, "group_id")
    return rows.withColumn("size", F.count("*").over(Window.partitionBy("group_id"))).where(F.col("size") >= 2)


def member_loads(members: DataFrame, offsets: DataFrame, context: Context) -> DataFrame:
    """Per candidate member: group_id, member_id, group_instance_id, client_id, host, partitions, lag."""
    lags = latest(offsets, context).select("group_id", "topic", "partition", "lag")
    assigned = members.select("group_id", "member_id", F.explode_outer("assigned_partitions").alias("tp")).select(
        "group_id", "member_id", "tp.topic", "tp.partition"
    )
    loads = (
        assigned.join(lags, ["group_id", "topic", "partition"], "left")
        .groupBy("group_id", "member_id")
        .agg(F.count("topic").cast("int").alias("partitions"), F.coalesce(F.sum("lag"), F.lit(0)).alias("lag"))
    )
    return members.select(
        "group_id", "member_id", "group_instance_id", "client_id", "host", "assignor", "protocol_type"
    ).join(loads, ["group_id", "member_id"])


def range_shaped_topics(members: DataFrame) -> DataFrame:
    """Per group: `range_shaped` (every topic it consumes is range-shaped, see the module doc),
    `uneven` (topics split unevenly) and `topic_sets` (distinct sets of topics members hold)."""
    held = (
        members.select("group_id", "member_id", F.explode("assigned_partitions").alias("tp"))
        .groupBy("group_id", "member_id", "tp.topic")
        .agg(F.count("*").alias("n"))
    )
    topics = held.select("group_id", "topic").distinct()
    order = Window.partitionBy("group_id", "topic").orderBy(*_member_order())
    counts = (
        members.select("group_id", "member_id", "group_instance_id")
        .join(topics, "group_id")
        .join(held, ["group_id", "member_id", "topic"], "left")
        .withColumn("n", F.coalesce(F.col("n"), F.lit(0)))
        .withColumn("rises", F.coalesce(F.col("n") > F.lag("n").over(order), F.lit(False)))
    )
    per_topic = counts.groupBy("group_id", "topic").agg(
        (F.max("n") - F.min("n")).alias("gap"), F.bool_or("rises").alias("rises")
    )
    sets = held.groupBy("group_id", "member_id").agg(F.array_sort(F.collect_set("topic")).alias("set"))
    return (
        per_topic.groupBy("group_id")
        .agg(
            F.bool_and(~F.col("rises") & (F.col("gap") <= 1)).alias("range_shaped"),
            F.count_if(F.col("gap") == 1).cast("int").alias("uneven"),
        )
        .join(sets.groupBy("group_id").agg(F.count_distinct("set").alias("topic_sets")), "group_id", "left")
    )


def _cause(threshold: float) -> Column:
    low, high, spread = (F.col(c).cast("string") for c in ("min_partitions", "max_partitions", "spread"))
    per_member = F.concat(low, F.lit("-"), high, F.lit(" partitions per member"))
    return (
        F.when(
            F.col("range_signature"),
            F.concat(F.lit("range assignor's signature: the extra partitions of "), F.col("uneven").cast("string"),
                     F.lit(" unevenly split topics pile onto the same members: "), per_member),
        )
        .when(
            F.col("skewed") & (F.col("topic_sets") > 1),
            F.concat(F.lit("members hold different topics (unequal subscriptions?): "), per_member),
        )
        .when(F.col("skewed"),
              F.concat(per_member, F.lit(", spread "), spread, F.lit(f" >= {threshold:g}")))
        .otherwise(F.concat(F.lit("balanced: "), per_member))
    )  # fmt: skip


def detect_skew(
    members: DataFrame, groups: DataFrame, offsets: DataFrame, context: Context
) -> tuple[DataFrame, DataFrame]:
    """Pure: the window's group_members, consumer_groups and group_offsets → (`assignor_skew_groups`,
    `assignor_skew_members`)."""
    threshold = context.thresholds.skew_spread
    candidates = candidate_members(members, groups, context)
    loads = member_loads(candidates, offsets, context)
    stats = loads.groupBy("group_id", "assignor", "protocol_type").agg(
        F.count("*").cast("int").alias("members"),
        F.sum("partitions").cast("int").alias("partitions"),
        F.min("partitions").alias("min_partitions"),
        F.max("partitions").alias("max_partitions"),
        F.avg("partitions").alias("mean_partitions"),
        (F.max("lag") - F.min("lag")).alias("lag_spread"),
        F.sum("lag").alias("total_lag"),
    )
    spread = F.col("max_partitions") - F.col("min_partitions")
    summary = (
        stats.join(range_shaped_topics(candidates), "group_id", "left")
        .withColumn("spread", spread)
        .withColumn("skewed", spread >= threshold)
        .withColumn(
            "range_signature",
            F.coalesce(F.col("range_shaped") & (F.col("uneven") >= 1) & (spread >= 2), F.lit(False))
            & (F.col("protocol_type") != SHARE),
        )
    )
    snapshot_id = F.lit(context.snapshot_id).alias("snapshot_id")
    found_groups = summary.select(
        snapshot_id, "group_id", "assignor", "members", "partitions", "min_partitions", "max_partitions",
        "mean_partitions", "spread", "lag_spread", "range_signature", "skewed",
        F.when(F.col("skewed"), "warning").otherwise("ok").alias("severity"),
        _cause(threshold).alias("cause"),
    )  # fmt: skip
    totals = summary.select("group_id", F.col("partitions").alias("group_partitions"), "total_lag", "min_partitions")
    partition_share = F.when(F.col("group_partitions") > 0, F.col("partitions") / F.col("group_partitions"))
    lag_share = F.when(F.col("total_lag") > 0, F.col("lag") / F.col("total_lag"))
    found_members = (
        loads.join(totals, "group_id")
        .select("*", partition_share.alias("partition_share"), lag_share.alias("lag_share"))
        .select(
            snapshot_id, "group_id", "member_id", "client_id", "host", "partitions", "lag", "partition_share",
            "lag_share",
            F.when(F.col("partition_share") > 0, F.col("lag_share") / F.col("partition_share"))
            .alias("lag_to_partition_ratio"),
            F.when(F.col("partitions") - F.col("min_partitions") >= threshold, "warning")
            .otherwise("ok").alias("severity"),
        )
    )  # fmt: skip
    return found_groups, found_members


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    found_groups, found_members = detect_skew(
        inputs["group_members"], inputs["consumer_groups"], inputs["group_offsets"], context
    )
    return {"assignor_skew_groups": found_groups, "assignor_skew_members": found_members}


DETECTOR = Detector(
    name="assignor_skew",
    tables=("group_members", "consumer_groups", "group_offsets"),
    detect=_detect,
    outputs=("assignor_skew_groups", "assignor_skew_members"),
    source=GROUP_COMMIT_TABLE,
)
