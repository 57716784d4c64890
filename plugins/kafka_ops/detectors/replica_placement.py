"""Replica placement in the latest snapshot: spread over brokers and racks, redundancy.

A partition's replicas are its assignment minus the replicas a reassignment is still adding
(order kept); its replication factor is their number. Racks come from the latest `brokers`
table: a broker registered without `broker.rack`, and any broker that is not registered, has an
unknown (null) rack. With no rack configured anywhere, no partition is flagged for sharing a rack.

Findings tables (every row also carries `snapshot_id`, the context's):

`replica_placement_brokers`, one row per broker that is registered or holds replicas:
broker_id, rack, registered, replicas (partitions with a replica on it), leaders (partitions it
leads), share_of_replicas (replicas / all replicas; 0.0 when there are none), severity (info when
its replicas exceed the mean over registered brokers, those holding nothing included, by more
than 20 %; else ok; also applies to unregistered brokers; ok everywhere when none is registered).

`replica_placement_racks`, one row per rack of those brokers, null standing for the unknown
rack: rack, brokers, replicas, share_of_replicas (as above; the shares add up to 1), severity ok.

`replica_placement_partitions`, one row per partition whose replicas share racks although enough
racks exist: distinct_racks (distinct known racks among its replicas) < min(replication factor,
racks_available (distinct racks among the brokers whose rack is known)). A broker's rack is the
last one it registered with in the history window, so a broker that is down now keeps its rack
(a stopped broker does not make its partitions look rack-collocated). A replica on a broker
whose rack was never seen adds no rack, so it counts as sharing. Columns: topic, partition,
replicas, racks (the replicas' racks in replica order, null when unknown), distinct_racks,
racks_available, severity warning.

`replica_placement_topics`, one row per topic without redundancy (replication factor, the max
over its partitions, is 1: losing one broker loses data): topic, partitions, replication_factor,
severity warning.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.detectors.leader_balance import NO_LEADER, assignment

OVERLOAD_PERCENT = 20
"""A broker holding more than this percentage above the mean is reported (info)."""


# Totals over a findings table of a few rows (one per broker or rack) are windows over one
# partition: a cross join with an aggregate would rescan the partitions once per total. The
# constant key keeps Spark from warning about a window without partitioning.
def _all_rows() -> WindowSpec:
    return Window.partitionBy(F.lit(0))


def _share_of_replicas() -> Column:
    total = F.sum("replicas").over(_all_rows())
    return F.when(total > 0, F.col("replicas") / total).otherwise(F.lit(0.0))


def broker_counts(partitions: DataFrame, brokers: DataFrame) -> DataFrame:
    """Per broker registered or holding replicas: broker_id, rack, registered, replicas, leaders."""
    # one pass over the partitions: a "holds" role per replica, a "leads" role for the leader
    replicas = F.coalesce(assignment(), F.array().cast("array<int>"))
    replica_roles = F.transform(
        replicas, lambda r: F.struct(r.alias("broker_id"), F.lit(1).alias("holds"), F.lit(0).alias("leads"))
    )
    led = F.when(F.col("leader") != NO_LEADER, F.col("leader"))
    leader_role = F.struct(led.alias("broker_id"), F.lit(0).alias("holds"), F.lit(1).alias("leads"))
    roles = (
        partitions.select(F.explode(F.concat(replica_roles, F.array(leader_role))).alias("role"))
        .select("role.*", F.lit(0).alias("registered"))
        .where(F.col("broker_id").isNotNull())
    )
    registered = brokers.select(
        "broker_id", F.lit(0).alias("holds"), F.lit(0).alias("leads"), F.lit(1).alias("registered")
    )
    racks = brokers.select("broker_id", "rack")
    return (
        roles.unionByName(registered)
        .groupBy("broker_id")
        .agg(
            (F.max("registered") == 1).alias("registered"),
            F.sum("holds").alias("replicas"),
            F.sum("leads").alias("leaders"),
        )
        .where(F.col("registered") | (F.col("replicas") > 0))
        .join(racks, "broker_id", "left")
    )


def broker_placement(counts: DataFrame) -> DataFrame:
    """`replica_placement_brokers` without snapshot_id, from `broker_counts`."""
    registered = F.col("registered")
    registered_brokers = F.count(F.when(registered, 1)).over(_all_rows())
    registered_replicas = F.coalesce(F.sum(F.when(registered, F.col("replicas"))).over(_all_rows()), F.lit(0))
    # replicas > (100 + 20) % × registered_replicas / registered_brokers, in integers (exact)
    overloaded = F.col("replicas") * 100 * registered_brokers > (100 + OVERLOAD_PERCENT) * registered_replicas
    return counts.select(
        "broker_id",
        "rack",
        "registered",
        "replicas",
        "leaders",
        _share_of_replicas().alias("share_of_replicas"),
        F.when(overloaded, "info").otherwise("ok").alias("severity"),
    )


def rack_placement(counts: DataFrame) -> DataFrame:
    """`replica_placement_racks` without snapshot_id, from `broker_counts`."""
    per_rack = counts.groupBy("rack").agg(F.count(F.lit(1)).alias("brokers"), F.sum("replicas").alias("replicas"))
    return per_rack.select(
        "rack", "brokers", "replicas", _share_of_replicas().alias("share_of_replicas"), F.lit("ok").alias("severity")
    )


def shared_rack_partitions(partitions: DataFrame, brokers: DataFrame) -> DataFrame:
    """`replica_placement_partitions` without snapshot_id."""
    racks = brokers.agg(
        F.map_from_entries(F.collect_list(F.struct("broker_id", "rack"))).alias("rack_of"),
        F.count_distinct("rack").cast("int").alias("racks_available"),
    )
    frame = (
        partitions.select("topic", "partition", assignment().alias("replicas"))
        .crossJoin(racks)
        .select(
            "topic",
            "partition",
            "replicas",
            # a missing map key gives null: the rack of an unregistered broker is unknown
            F.transform("replicas", lambda r: F.col("rack_of")[r]).alias("racks"),
            "racks_available",
        )
        .select("*", F.size(F.array_distinct(F.filter("racks", lambda k: k.isNotNull()))).alias("distinct_racks"))
    )
    enough = F.least(F.size("replicas"), F.col("racks_available"))
    return frame.where(F.col("distinct_racks") < enough).select(
        "topic", "partition", "replicas", "racks", "distinct_racks", "racks_available",
        F.lit("warning").alias("severity"),
    )  # fmt: skip


def unreplicated_topics(partitions: DataFrame) -> DataFrame:
    """`replica_placement_topics` without snapshot_id."""
    return (
        partitions.groupBy("topic")
        .agg(F.count(F.lit(1)).alias("partitions"), F.max(F.size(assignment())).alias("replication_factor"))
        .where(F.col("replication_factor") == 1)
        .select("topic", "partitions", "replication_factor", F.lit("warning").alias("severity"))
    )


def last_known_racks(brokers: DataFrame) -> DataFrame:
    """Per broker seen in the window: broker_id and its last known (non-null) rack."""
    return (
        brokers.where(F.col("rack").isNotNull())
        .groupBy("broker_id")
        .agg(F.max_by("rack", F.struct("captured_at", "snapshot_id")).alias("rack"))
    )


def detect_replica_placement(
    partitions: DataFrame, brokers: DataFrame, *, snapshot_id: str, known_racks: DataFrame | None = None
) -> dict[str, DataFrame]:
    """Pure: one snapshot's partitions and brokers → the four findings tables, tagged with
    `snapshot_id`. Rack sharing is judged on `known_racks` (broker_id, rack) when given, so a
    broker that is down keeps the rack it had (else the latest brokers' racks)."""
    counts = broker_counts(partitions, brokers)
    tables = {
        "replica_placement_brokers": broker_placement(counts),
        "replica_placement_racks": rack_placement(counts),
        "replica_placement_partitions": shared_rack_partitions(
            partitions, brokers if known_racks is None else known_racks
        ),
        "replica_placement_topics": unreplicated_topics(partitions),
    }
    return {name: frame.select(F.lit(snapshot_id).alias("snapshot_id"), "*") for name, frame in tables.items()}


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    partitions, brokers = (latest(inputs[t], context) for t in ("partitions", "brokers"))
    known = last_known_racks(inputs["brokers"])
    return detect_replica_placement(partitions, brokers, snapshot_id=context.snapshot_id, known_racks=known)


DETECTOR = Detector(
    name="replica_placement",
    tables=("partitions", "brokers"),
    detect=_detect,
    outputs=(
        "replica_placement_brokers",
        "replica_placement_racks",
        "replica_placement_partitions",
        "replica_placement_topics",
    ),
    latest_only=("partitions",),
)
