"""ISR health per partition in the latest snapshot, as Kafka's `kafka-topics` defines it.

For each partition (replicas = the assignment minus replicas a reassignment is still adding;
min ISR = the topic's `min.insync.replicas`, else the broker default (`/config/brokers/<default>`),
else 1):

* `offline` (`--unavailable-partitions`): no leader (-1) or the leader is not a registered broker;
* `under_min_isr` (`--under-min-isr-partitions`): no leader, or ISR smaller than min ISR
  (producers with `acks=all` fail here);
* `under_replicated` (`--under-replicated-partitions`): ISR smaller than the replicas;
* `at_min_isr` (`--at-min-isr-partitions`): ISR size equals min ISR (one more loss and
  `acks=all` producers fail).

Findings table `isr_health`, one row per partition: snapshot_id, topic, partition, replicas,
isr, leader, min_isr, min_isr_source (topic | broker_default | kafka_default), the four flags,
`status` (the worst of offline > under_min_isr > under_replicated > at_min_isr > ok) and
`severity` (offline and under_min_isr: critical; under_replicated: warning; at_min_isr: info).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest

KAFKA_DEFAULT_MIN_ISR = 1


def min_isr_by_topic(configs: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(topic → min ISR override, the broker default as exactly one row, null when unset)."""
    key = F.col("config_key") == "min.insync.replicas"
    topics = configs.where(key & (F.col("entity_type") == "topic")).select(
        F.col("entity_name").alias("topic"), F.col("config_value").try_cast("int").alias("topic_min_isr")
    )
    default = configs.where(key & (F.col("entity_type") == "broker") & (F.col("entity_name") == "<default>")).agg(
        F.max(F.col("config_value").try_cast("int")).alias("broker_min_isr")
    )
    return topics, default


def detect_isr_health(partitions: DataFrame, brokers: DataFrame, configs: DataFrame) -> DataFrame:
    """Pure: one snapshot's partitions, brokers and configs → the `isr_health` rows (no severity
    ordering or snapshot tagging beyond the input's snapshot_id)."""
    topic_min, broker_min = min_isr_by_topic(configs)
    live = brokers.select(F.col("broker_id").alias("leader"), F.lit(True).alias("leader_alive"))
    replicas = F.filter("replicas", lambda r: ~F.coalesce(F.array_contains("adding_replicas", r), F.lit(False)))
    isr = F.coalesce(F.col("isr"), F.array().cast("array<int>"))
    frame = (
        partitions.where(F.col("has_state"))
        .join(topic_min, "topic", "left")
        .crossJoin(broker_min)
        .join(live, "leader", "left")
        .select(
            "snapshot_id",
            "topic",
            "partition",
            replicas.alias("replicas"),
            isr.alias("isr"),
            "leader",
            F.coalesce("topic_min_isr", "broker_min_isr", F.lit(KAFKA_DEFAULT_MIN_ISR)).alias("min_isr"),
            F.when(F.col("topic_min_isr").isNotNull(), "topic")
            .when(F.col("broker_min_isr").isNotNull(), "broker_default")
            .otherwise("kafka_default")
            .alias("min_isr_source"),
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
    return flagged.select(
        "snapshot_id", "topic", "partition", "replicas", "isr", "leader", "min_isr", "min_isr_source",
        "offline", "under_min_isr", "under_replicated", "at_min_isr",
        status.alias("status"), severity.alias("severity"),
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    partitions, brokers, configs = (latest(inputs[t], context) for t in ("partitions", "brokers", "configs"))
    return {"isr_health": detect_isr_health(partitions, brokers, configs)}


DETECTOR = Detector(
    name="isr_health",
    tables=("partitions", "brokers", "configs"),
    detect=_detect,
    outputs=("isr_health",),
)
