"""ISR health per partition in the latest snapshot, as Kafka's `kafka-topics` defines it.

For each partition (replicas = the assignment minus replicas a reassignment is still adding;
min ISR = `effective_min_isr`, resolved as the partition's leader resolves it when it appends a
batch produced with `acks=all`):

* `offline` (`--unavailable-partitions`): no leader (-1) or the leader is not a registered broker;
* `under_min_isr` (`--under-min-isr-partitions`): no leader, or ISR smaller than min ISR
  (producers with `acks=all` get NotEnoughReplicas here);
* `under_replicated` (`--under-replicated-partitions`): ISR smaller than the replicas;
* `at_min_isr` (`--at-min-isr-partitions`): ISR size equals min ISR (one more loss and
  `acks=all` producers fail).

min ISR is the value the leader enforces, capped at the replication factor as Kafka caps it;
`kafka-topics` compares the ISR with the configured value instead, so it lists a partition whose
replication factor is below `min.insync.replicas` as under min ISR although producers succeed.
Topics pending deletion (`/admin/delete_topics/<t>`) are not here: see `topic_deletions`.

Elections (KIP-966's eligible leader replicas on KRaft): Kafka elects a clean leader from the ISR,
and on KRaft with ELR also from the ELR: replicas that left the ISR only because it could not shrink
below min ISR, and so hold every committed record. `clean_candidates` are the live brokers (registered,
unfenced) among ISR ∪ ELR other than the leader: who could take over without losing data if the leader
went now (empty on a partition under min ISR: one more loss and it goes offline or unclean).
`unclean_only`: the partition is offline and no live broker is in its ISR or ELR, so only an unclean
election (`kafka-leader-election --election-type unclean`) brings it back, losing the records only the
dead replicas had.

Findings table `isr_health`, one row per partition: snapshot_id, topic, partition, replicas,
isr, elr (null where not reported: ZooKeeper, or ELR off), leader, min_isr (enforced),
min_isr_configured (before the cap), min_isr_source (see `MIN_ISR_SOURCES`; `static` = assumed from
the settings), clean_candidates, unclean_only, the four flags,
`status` (the worst of offline > under_min_isr > under_replicated > at_min_isr > ok) and
`severity` (offline and under_min_isr: critical; under_replicated: warning; at_min_isr: info).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.detectors.topic_deletions import without_pending_deletions
from kafka_ops.kafka_types import KAFKA_DEFAULT_MIN_ISR

MIN_ISR_SOURCES = ("topic", "broker", "broker_default", "static")
"""Where a partition's min ISR comes from, the first that is set (Kafka's order for a topic's config):
`topic`: `/config/topics/<t>`; `broker`: the dynamic config of the partition's LEADER,
`/config/brokers/<leader>` (the leader checks min ISR when it appends a batch produced with
`acks=all`, against its own broker defaults, so the leader's value is the one a producer meets);
`broker_default`: the cluster-wide dynamic default, `/config/brokers/<default>`; `static`: the brokers'
`server.properties`, which ZooKeeper does not hold: ASSUMED to be the cluster's setting
`min_insync_replicas_default` (default 1, Kafka's)."""


def effective_min_isr(partitions: DataFrame, configs: DataFrame, static_min_isr: int) -> DataFrame:
    """`partitions` (one snapshot; columns `topic`, `leader`, `replicas` as the lake stores them) plus
    `min_isr_configured`, `min_isr_source` and `min_isr`: the one resolution of min ISR, every
    under/at-min-ISR figure is computed from these columns.

    `min_isr` is what the leader enforces: the configured value capped at the number of assigned
    replicas (Kafka's `Partition.effectiveMinIsr`: a topic with replication factor 1 and
    `min.insync.replicas` 2 takes `acks=all` writes with an ISR of 1, measured on Kafka 3.9.1).
    A partition without a leader resolves without a broker config (none is `leader`)."""
    value = F.col("config_value").try_cast("int")
    mine = configs.where(F.col("config_key") == "min.insync.replicas")
    broker = F.col("entity_type") == "broker"
    topics = (
        mine.where(F.col("entity_type") == "topic")
        .groupBy(F.col("entity_name").alias("topic"))
        .agg(F.max(value).alias("_topic"))
    )
    leaders = (
        mine.where(broker & (F.col("entity_name") != "<default>"))
        .groupBy(F.col("entity_name").try_cast("int").alias("leader"))
        .agg(F.max(value).alias("_broker"))
    )
    default = mine.where(broker & (F.col("entity_name") == "<default>")).agg(F.max(value).alias("_default"))
    levels = ["_topic", "_broker", "_default"]
    source = (
        F.when(F.col("_topic").isNotNull(), "topic")
        .when(F.col("_broker").isNotNull(), "broker")
        .when(F.col("_default").isNotNull(), "broker_default")
        .otherwise("static")
    )
    configured = F.coalesce(*levels, F.lit(int(static_min_isr)))
    assigned = F.greatest(F.coalesce(F.size("replicas"), F.lit(0)), F.lit(1))
    return (
        partitions.join(topics, "topic", "left")
        .join(F.broadcast(leaders), "leader", "left")
        .crossJoin(default)
        .select("*", configured.alias("min_isr_configured"), source.alias("min_isr_source"))
        .select("*", F.least("min_isr_configured", assigned).alias("min_isr"))
        .drop(*levels)
    )


def detect_isr_health(
    partitions: DataFrame,
    brokers: DataFrame,
    configs: DataFrame,
    admin_requests: DataFrame,
    static_min_isr: int = KAFKA_DEFAULT_MIN_ISR,
) -> DataFrame:
    """Pure: one snapshot's partitions, brokers, configs and admin requests → the `isr_health` rows
    (no severity ordering or snapshot tagging beyond the input's snapshot_id). Topics pending
    deletion are left out: Kafka no longer serves them (see `topic_deletions`)."""
    live = brokers.select(F.col("broker_id").alias("leader"), F.lit(True).alias("leader_alive"))
    live_ids = brokers.agg(F.collect_set("broker_id").alias("_live"))
    replicas = F.filter("replicas", lambda r: ~F.coalesce(F.array_contains("adding_replicas", r), F.lit(False)))
    isr = F.coalesce(F.col("isr"), F.array().cast("array<int>"))
    served = without_pending_deletions(partitions.where(F.col("has_state")), admin_requests)
    frame = (
        effective_min_isr(served, configs, static_min_isr)
        .join(live, "leader", "left")
        .crossJoin(live_ids)
        .select(
            "snapshot_id",
            "topic",
            "partition",
            replicas.alias("replicas"),
            isr.alias("isr"),
            "elr",
            F.array_except(
                F.filter(
                    F.array_union(isr, F.coalesce("elr", F.array().cast("array<int>"))),
                    lambda r: F.array_contains("_live", r),
                ),
                F.array("leader"),
            ).alias("clean_candidates"),
            "leader",
            "min_isr",
            "min_isr_configured",
            "min_isr_source",
            ((F.col("leader") == -1) | F.col("leader_alive").isNull()).alias("offline"),
        )
    )
    has_leader = F.col("leader") != -1
    isr_size = F.size("isr")
    flagged = frame.select(
        "*",
        (~has_leader | (isr_size < F.col("min_isr"))).alias("under_min_isr"),
        (isr_size < F.size("replicas")).alias("under_replicated"),
        (isr_size == F.col("min_isr")).alias("at_min_isr"),
    )
    status = (
        F.when(F.col("offline"), "offline")
        .when(F.col("under_min_isr"), "under_min_isr")
        .when(F.col("under_replicated"), "under_replicated")
        .when(F.col("at_min_isr"), "at_min_isr")
        .otherwise("ok")
    )
    severity = (
        F.when(F.col("offline") | F.col("under_min_isr"), "critical")
        .when(F.col("under_replicated"), "warning")
        .when(F.col("at_min_isr"), "info")
        .otherwise("ok")
    )
    unclean_only = F.col("offline") & (F.size("clean_candidates") == 0)
    return flagged.select(
        "snapshot_id", "topic", "partition", "replicas", "isr", "elr", "leader", "min_isr", "min_isr_configured",
        "min_isr_source", "clean_candidates", unclean_only.alias("unclean_only"), "offline", "under_min_isr",
        "under_replicated", "at_min_isr", status.alias("status"), severity.alias("severity"),
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    tables = ("partitions", "brokers", "configs", "admin_requests")
    partitions, brokers, configs, admin_requests = (latest(inputs[t], context) for t in tables)
    static = context.min_insync_replicas_default
    return {"isr_health": detect_isr_health(partitions, brokers, configs, admin_requests, static)}


DETECTOR = Detector(
    name="isr_health",
    tables=("partitions", "brokers", "configs", "admin_requests"),
    detect=_detect,
    outputs=("isr_health",),
    latest_only=("partitions", "brokers", "configs", "admin_requests"),
)
