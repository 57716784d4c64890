"""Topics pending deletion in the latest snapshot, and why a deletion cannot complete.

`kafka-topics --delete` (DeleteTopics) writes `/admin/delete_topics/<t>`; from then on Kafka no
longer serves the topic (metadata says it does not exist) and the controller parks its partitions
with leader -1 while it deletes the replicas. It completes, and removes the topic znode and the
request, only once every broker holding a replica is online and no replica of it is being
reassigned; until then the partitions look offline, under min ISR and out of sync on healthy
brokers. None of that is a health problem of the topic (its data is going away by request), so
the health detectors (`isr_health`, `broker_attribution`, `leader_balance`) leave these topics out
with `without_pending_deletions`, and this detector reports them instead.

Findings table `topic_deletions`, one row per topic with a pending delete request: snapshot_id,
topic, `partitions` (partitions still in its topic znode; 0 when only the request is left),
`replica_brokers` (every broker holding one of its replicas, sorted), `offline_brokers` (those not
registered: the deletion waits for them), `reassigning_partitions` (partitions with replicas being
added or removed: the deletion waits for those too), `pending_since` (the first snapshot that saw
the request after the last one of the window that did not; the window's first snapshot when every
snapshot saw it), `stuck` (offline brokers or reassigning partitions), `cause`, `action` and
`severity` (stuck: warning; otherwise info: the deletion is under way).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.lake.schema import DELETE_TOPIC


def pending_deletions(admin_requests: DataFrame) -> DataFrame:
    """The topics (one column, `topic`) of one snapshot's `admin_requests` pending deletion."""
    return admin_requests.where(F.col("request") == DELETE_TOPIC).select("topic").distinct()


def without_pending_deletions(frame: DataFrame, admin_requests: DataFrame) -> DataFrame:
    """`frame`'s rows (with a `topic` column) of topics that are not pending deletion in
    `admin_requests` (restrict both to the same snapshot)."""
    return frame.join(F.broadcast(pending_deletions(admin_requests)), "topic", "left_anti")


def _since(admin_requests: DataFrame, snapshots: DataFrame, pending: DataFrame) -> DataFrame:
    """topic → pending_since, over the window's snapshots."""
    requests = (
        admin_requests.where(F.col("request") == DELETE_TOPIC).select("snapshot_id", "captured_at", "topic").distinct()
    )
    absent = (
        snapshots.select("snapshot_id", "captured_at")
        .crossJoin(pending)
        .join(requests.select("snapshot_id", "topic"), ["snapshot_id", "topic"], "left_anti")
        .groupBy("topic")
        .agg(F.max("captured_at").alias("absent_at"))
    )
    return (
        requests.join(pending, "topic", "left_semi")
        .join(absent, "topic", "left")
        .where(F.col("absent_at").isNull() | (F.col("captured_at") > F.col("absent_at")))
        .groupBy("topic")
        .agg(F.min("captured_at").alias("pending_since"))
    )


def _brokers_text(ids: Column) -> Column:
    return F.array_join(F.transform(ids, lambda b: b.cast("string")), ", ")


def _cause() -> Column:
    topic, offline, moving = F.col("topic"), F.col("offline_brokers"), F.col("reassigning_partitions")
    waits = F.concat_ws(
        " and ",
        F.when(F.size(offline) > 0, F.concat(F.lit("its replicas on broker "), _brokers_text(offline),
                                             F.lit(" are offline (not registered)"))),
        F.when(moving > 0, F.concat(moving.cast("string"), F.lit(" of its partitions are being reassigned"))),
    )  # fmt: skip
    return F.when(
        F.col("stuck"), F.concat(F.lit("deletion of topic "), topic, F.lit(" cannot complete: "), waits)
    ).otherwise(
        F.concat(F.lit("topic "), topic, F.lit(" is being deleted ("), F.col("partitions").cast("string"),
                 F.when(F.col("partitions") == 1, " partition left)").otherwise(" partitions left)"))
    )  # fmt: skip


def _action() -> Column:
    offline, moving = F.col("offline_brokers"), F.col("reassigning_partitions")
    steps = F.concat_ws(
        "; ",
        F.when(F.size(offline) > 0, F.concat(F.lit("bring broker "), _brokers_text(offline),
                                             F.lit(" back: Kafka then finishes the deletion by itself"))),
        F.when(moving > 0, F.lit("let the reassignment finish (or cancel it)")),
    )  # fmt: skip
    return F.when(F.col("stuck"), steps)


def detect_topic_deletions(
    partitions: DataFrame, brokers: DataFrame, admin_requests: DataFrame, snapshots: DataFrame, snapshot_id: str
) -> DataFrame:
    """Pure: the latest snapshot's partitions and brokers, the window's admin requests and snapshot
    list (`snapshot_id`, `captured_at`) → the `topic_deletions` rows, tagged with `snapshot_id`."""
    pending = pending_deletions(admin_requests.where(F.col("snapshot_id") == snapshot_id))
    registered = brokers.agg(F.collect_set("broker_id").alias("registered"))
    reassigning = F.coalesce(F.size("adding_replicas") > 0, F.lit(False)) | F.coalesce(
        F.size("removing_replicas") > 0, F.lit(False)
    )
    held = (
        partitions.join(pending, "topic", "left_semi")
        .groupBy("topic")
        .agg(
            F.count("*").alias("partitions"),
            F.array_sort(F.array_distinct(F.flatten(F.collect_list(F.coalesce("replicas", F.array()))))).alias(
                "replica_brokers"
            ),
            F.count_if(reassigning).alias("reassigning_partitions"),
        )
    )
    no_replicas = F.array().cast("array<int>")
    frame = (
        pending.join(held, "topic", "left")
        .join(_since(admin_requests, snapshots, pending), "topic", "left")
        .crossJoin(registered)
        .select(
            "topic",
            F.coalesce("partitions", F.lit(0).cast("bigint")).alias("partitions"),
            F.coalesce("replica_brokers", no_replicas).alias("replica_brokers"),
            F.filter(F.coalesce("replica_brokers", no_replicas), lambda b: ~F.array_contains("registered", b)).alias(
                "offline_brokers"
            ),
            F.coalesce("reassigning_partitions", F.lit(0).cast("bigint")).alias("reassigning_partitions"),
            "pending_since",
        )
        .select("*", ((F.size("offline_brokers") > 0) | (F.col("reassigning_partitions") > 0)).alias("stuck"))
    )
    return frame.select(
        F.lit(snapshot_id).alias("snapshot_id"),
        "topic", "partitions", "replica_brokers", "offline_brokers", "reassigning_partitions", "pending_since",
        "stuck", _cause().alias("cause"), _action().alias("action"),
        F.when(F.col("stuck"), "warning").otherwise("info").alias("severity"),
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    partitions, brokers = latest(inputs["partitions"], context), latest(inputs["brokers"], context)
    found = detect_topic_deletions(
        partitions, brokers, inputs["admin_requests"], inputs["snapshots"], context.snapshot_id
    )
    return {"topic_deletions": found}


DETECTOR = Detector(
    name="topic_deletions",
    tables=("partitions", "brokers", "admin_requests", "snapshots"),
    detect=_detect,
    outputs=("topic_deletions",),
    latest_only=("partitions",),
)
