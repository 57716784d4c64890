"""Replication throttles set with nothing moving through them, in the latest snapshot.

A reassignment tool sets throttles for the time of a move (Kafka's `kafka-reassign-partitions
--throttle`, kafka-ops' executor): broker dynamic configs `leader.replication.throttled.rate` /
`follower.replication.throttled.rate` (bytes/s), and topic configs
`leader.replication.throttled.replicas` / `follower.replication.throttled.replicas` (which
replicas those rates apply to). Left behind after the move (a tool killed, `--verify` never run, a
plan that finished while another reassignment was in flight), they cap the replication of every
later move, and of a replica catching up after a broker restart, on those brokers: a throttle of
20 kB/s turns a restart into hours of under-replication.

Read from the `configs` table (the snapshot's dynamic configs) and `reassignments` (partitions in
flight) of the latest snapshot:

* a topic with a throttled-replica list and no partition of it in flight;
* a broker (or the cluster-wide `<default>` entity) with a throttle rate, when no partition in flight
  on a topic with throttled-replica lists has a replica (current or target) on that broker (for
  `<default>`: when no such partition is in flight at all). A rate with no throttled move through
  its broker throttles nothing now, and the next move inherits it.

Findings table `idle_throttles`, one row per entity: snapshot_id, entity_type (`topic`/`broker`),
entity_name, `throttle_keys` (the throttle keys set, sorted), `throttle_values` (`key=value; ...`),
`problem` (the sentence), `command` (Kafka's `kafka-configs` command that removes them; a kafka-ops
plan's leftovers are also removed by `kafka-ops remediation clear-throttles`), severity `warning`.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest

RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
LISTS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
DEFAULT_BROKER = "<default>"


def _ints(column: str) -> Column:
    return F.coalesce(F.col(column), F.array().cast("array<int>"))


def detect_idle_throttles(configs: DataFrame, reassignments: DataFrame, context: Context) -> DataFrame:
    """Pure: the latest snapshot's configs and reassignments → the `idle_throttles` findings."""
    throttles = latest(configs, context).where(
        F.col("config_key").isin(*RATES, *LISTS) & (F.length(F.trim(F.coalesce("config_value", F.lit("")))) > 0)
    )
    moving = latest(reassignments, context).select("topic", "replicas", "target_replicas")
    listed = (
        throttles.where((F.col("entity_type") == "topic") & F.col("config_key").isin(*LISTS))
        .select(F.col("entity_name").alias("topic"))
        .distinct()
    )
    busy = (
        moving.join(listed, "topic", "left_semi")
        .select(F.explode(F.array_union(_ints("replicas"), _ints("target_replicas"))).alias("broker"))
        .select(F.col("broker").cast("string").alias("name"))
        .distinct()
    )
    busy = busy.union(busy.limit(1).select(F.lit(DEFAULT_BROKER).alias("name")))  # anything moving: <default> too
    idle_topics = throttles.where((F.col("entity_type") == "topic") & F.col("config_key").isin(*LISTS)).join(
        moving.select(F.col("topic").alias("entity_name")).distinct(), "entity_name", "left_anti"
    )
    idle_brokers = throttles.where((F.col("entity_type") == "broker") & F.col("config_key").isin(*RATES)).join(
        busy.select(F.col("name").alias("entity_name")), "entity_name", "left_anti"
    )
    found = (
        idle_topics.unionByName(idle_brokers)
        .groupBy("entity_type", "entity_name")
        .agg(
            F.array_sort(F.collect_list("config_key")).alias("throttle_keys"),
            F.concat_ws("; ", F.array_sort(F.collect_list(F.concat_ws("=", "config_key", "config_value")))).alias(
                "throttle_values"
            ),
        )
    )
    is_topic = F.col("entity_type") == "topic"
    broker = F.when(F.col("entity_name") == DEFAULT_BROKER, F.lit("the cluster-wide broker default")).otherwise(
        F.concat(F.lit("broker "), F.col("entity_name"))
    )
    problem = F.when(
        is_topic,
        F.concat(
            F.lit("topic "),
            F.col("entity_name"),
            F.lit(" has throttled-replica lists but none of its partitions is being reassigned"),
        ),
    ).otherwise(
        F.concat(
            broker,
            F.lit(
                " has a replication throttle rate but no throttled reassignment in flight goes through it: "
                "the next move, or a replica catching up, is capped by it"
            ),
        )
    )
    entity = F.when(is_topic, F.concat(F.lit("--entity-type topics --entity-name "), F.col("entity_name"))).otherwise(
        F.when(F.col("entity_name") == DEFAULT_BROKER, F.lit("--entity-type brokers --entity-default")).otherwise(
            F.concat(F.lit("--entity-type brokers --entity-name "), F.col("entity_name"))
        )
    )
    command = F.concat(
        F.lit("kafka-configs --bootstrap-server <brokers> --alter "),
        entity,
        F.lit(" --delete-config "),
        F.concat_ws(",", "throttle_keys"),
    )
    return found.select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        "entity_type",
        "entity_name",
        "throttle_keys",
        "throttle_values",
        problem.alias("problem"),
        command.alias("command"),
        F.lit("warning").alias("severity"),
    )


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    return {"idle_throttles": detect_idle_throttles(inputs["configs"], inputs["reassignments"], context)}


DETECTOR = Detector(
    name="idle_throttles",
    tables=("configs", "reassignments"),
    detect=_detect,
    outputs=("idle_throttles",),
)
