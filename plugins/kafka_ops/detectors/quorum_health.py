"""The KRaft controller quorum and the brokers it fences, in the latest snapshot (empty on ZooKeeper).

Read from the `quorum` table (DescribeQuorum: every replica of the metadata log, its log end offset,
lag behind the leader, last fetch and last caught-up times, as `kafka-metadata-quorum describe
--replication` shows them) and `fenced_brokers` (DescribeCluster):

* a voter (a controller) that has not fetched from the leader for `quorum_fetch_seconds`: it is down
  or cut off; the quorum tolerates one such voter of three, two leave it without a majority
  (critical: no metadata change, no leader election, can be made);
* a voter or observer (a broker) not caught up with the leader's log end for `quorum_lag_seconds`:
  a lagging voter slows every commit, a lagging broker serves stale metadata;
* an observer not fetching for `quorum_fetch_seconds`: a broker that stopped replicating metadata;
* a fenced broker: registered but fenced by the controller (stopped, or missing its heartbeats), it
  leads nothing and is out of every ISR; `fenced_since` is the first snapshot of the unbroken run of
  snapshots (within the history window) that showed it fenced.

Findings table `quorum_health`, one row per quorum replica and per fenced broker: snapshot_id, kind
(`voter`, `observer`, `fenced_broker`), replica_id, is_leader, log_end_offset, lag,
seconds_since_fetch, seconds_since_caught_up, fenced_since, status (`leader`, `ok`, `not_fetching`,
`lagging`, `fenced`), problem and action (null when ok), severity.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.analysis.runs import run_since, seconds_since


def detect_quorum_health(quorum: DataFrame, fenced: DataFrame, snapshots: DataFrame, context: Context) -> DataFrame:
    """Pure: the quorum, fenced brokers and snapshot log of the history → the `quorum_health` findings."""
    t = context.thresholds
    replicas = latest(quorum, context).select(
        "replica_id",
        F.col("role").alias("kind"),
        "is_leader",
        "log_end_offset",
        "lag",
        seconds_since("last_fetch_at", context).alias("seconds_since_fetch"),
        seconds_since("last_caught_up_at", context).alias("seconds_since_caught_up"),
    )
    is_voter = F.col("kind") == "voter"
    not_fetching = ~F.col("is_leader") & (
        F.col("seconds_since_fetch").isNull() | (F.col("seconds_since_fetch") > F.lit(t.quorum_fetch_seconds))
    )
    lagging = (F.coalesce("lag", F.lit(0)) > 0) & (
        F.col("seconds_since_caught_up").isNull() | (F.col("seconds_since_caught_up") > F.lit(t.quorum_lag_seconds))
    )
    status = (
        F.when(F.col("is_leader"), "leader").when(not_fetching, "not_fetching").when(lagging, "lagging").otherwise("ok")
    )
    voters = replicas.where(is_voter).agg(
        F.count("*").alias("voters"),
        F.sum(F.when(not_fetching, 0).otherwise(1)).alias("fetching"),
    )
    rows = replicas.withColumn("status", status).crossJoin(voters)
    majority = F.floor(F.col("voters") / 2) + 1
    who = F.concat(F.when(is_voter, F.lit("controller ")).otherwise(F.lit("broker ")), F.col("replica_id"))
    problem = F.when(
        F.col("status") == "not_fetching",
        F.concat(
            who,
            F.coalesce(
                F.concat(
                    F.lit(" has not fetched the metadata log from the quorum leader for "),
                    F.col("seconds_since_fetch").cast("string"),
                    F.lit(" s"),
                ),
                F.lit(" has not fetched the metadata log since the quorum leader was elected"),
            ),
            F.when(
                is_voter,
                F.concat(
                    F.lit(": a voter down or cut off ("), F.col("fetching"), F.lit(" of "), F.col("voters"),
                    F.lit(" voters fetching, "), majority, F.lit(" needed for a majority)"),
                ),
            ).otherwise(F.lit(": it serves metadata it no longer receives")),
        ),
    ).when(
        F.col("status") == "lagging",
        F.concat(
            who,
            F.lit(" is "),
            F.col("lag").cast("string"),
            F.lit(" offsets behind the quorum leader and has not caught up "),
            F.coalesce(
                F.concat(F.lit("for "), F.col("seconds_since_caught_up").cast("string"), F.lit(" s")),
                F.lit("since the quorum leader was elected"),
            ),
            F.when(is_voter, F.lit(": it slows every metadata commit")).otherwise(
                F.lit(": it serves stale metadata (topics, leaders, ISRs)")
            ),
        ),
    )  # fmt: skip
    action = F.when(
        F.col("status").isin("not_fetching", "lagging"),
        F.concat(
            F.lit("check "),
            who,
            F.lit(
                " (process up, GC pauses, disk, network to the quorum leader); "
                "kafka-metadata-quorum --bootstrap-server <brokers> describe --replication shows its progress"
            ),
        ),
    )
    severity = (
        F.when(F.col("status").isin("leader", "ok"), "ok")
        .when((F.col("status") == "not_fetching") & is_voter & (F.col("fetching") < majority), "critical")
        .otherwise("warning")
    )
    quorum_rows = rows.select(
        "replica_id",
        "kind",
        "is_leader",
        "log_end_offset",
        "lag",
        "seconds_since_fetch",
        "seconds_since_caught_up",
        F.lit(None).cast("timestamp").alias("fenced_since"),
        "status",
        problem.alias("problem"),
        action.alias("action"),
        severity.alias("severity"),
    )
    return quorum_rows.unionByName(_fenced(fenced, snapshots, context)).select(
        F.lit(context.snapshot_id).alias("snapshot_id"), *quorum_rows.columns
    )


def _fenced(fenced: DataFrame, snapshots: DataFrame, context: Context) -> DataFrame:
    """Each broker fenced now, since the first snapshot of its unbroken fenced run in the history."""
    since = run_since(latest(fenced, context), fenced, snapshots, ["broker_id"]).withColumnRenamed(
        "since", "fenced_since"
    )
    return since.select(
        F.col("broker_id").alias("replica_id"),
        F.lit("fenced_broker").alias("kind"),
        F.lit(False).alias("is_leader"),
        F.lit(None).cast("long").alias("log_end_offset"),
        F.lit(None).cast("long").alias("lag"),
        F.lit(None).cast("long").alias("seconds_since_fetch"),
        F.lit(None).cast("long").alias("seconds_since_caught_up"),
        "fenced_since",
        F.lit("fenced").alias("status"),
        F.concat(
            F.lit("broker "),
            F.col("broker_id"),
            F.lit(" is registered but fenced by the controller: it leads nothing and is out of every ISR"),
        ).alias("problem"),
        F.concat(
            F.lit("start broker "),
            F.col("broker_id"),
            F.lit(
                " again, or find why it misses its heartbeats (its log, broker.session.timeout.ms); "
                "if it is gone for good, move its replicas off it (kafka_partition_reassignment, action "
                "decommission), then unregister it (the same DAG, action unregister_broker)"
            ),
        ).alias("action"),
        F.lit("warning").alias("severity"),
    )


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    found = detect_quorum_health(inputs["quorum"], inputs["fenced_brokers"], inputs["snapshots"], context)
    return {"quorum_health": found}


DETECTOR = Detector(
    name="quorum_health",
    tables=("quorum", "fenced_brokers", "snapshots"),
    detect=_detect,
    outputs=("quorum_health",),
)
