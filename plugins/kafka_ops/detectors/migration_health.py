"""A ZooKeeper cluster's migration to KRaft (Kafka 3.9): its phase, since when, and whether it is stuck.

Read from the `migration` table (one row per snapshot of a migrating cluster, see `sources.migration`)
and `migration_divergences` (the partition fields ZooKeeper and the KRaft metadata disagree on). Empty
when the cluster is not migrating. One row `kind` = `phase` for the latest snapshot:

* `pre_migration` for longer than `migration_stall_minutes`: the controllers still wait for brokers to
  restart with the migration settings (`waiting_brokers` names them when the quorum was asked) — stalled,
  warning;
* `dual_write` with brokers still on ZooKeeper, and no write to ZooKeeper for longer than
  `migration_stall_minutes`: the controllers stopped mirroring the metadata, so those brokers' ZooKeeper
  view goes stale and a rollback would lose changes — stalled, critical;
* `post_migration`: the migration is finalized and ZooKeeper is no longer written, but this cluster is
  still snapshotted from ZooKeeper — warning, switch its `metadata_source` to `kraft`;
* otherwise `ok`.

And one row `kind` = `divergence` per topic/partition field that has disagreed in every compared
snapshot for at least `migration_divergence_minutes` (a single read can catch an ISR change half
applied; a real divergence persists) — warning: neither roll back nor finalize until it is explained.

Findings table `migration_health`: snapshot_id, kind, phase, phase_since (first snapshot of the
unbroken run of that phase in the history), zookeeper_written_at, zookeeper_brokers, waiting_brokers,
topic, partition, field, zookeeper, kraft, diverging_since, status (`ok`, `stalled`, `finalized`,
`diverged`), problem, action (null when ok), severity.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.analysis.runs import run_since, seconds_since

DIVERGENCE_KEY = ["topic", "partition_key", "field"]
"""A divergence's identity; `partition_key` is the partition, -1 for a whole topic (partition null), so that
joins on it match."""


def _minutes_since(column: str, context: Context) -> Column:
    return seconds_since(column, context) / 60


def detect_migration_health(migration: DataFrame, divergences: DataFrame, context: Context) -> DataFrame:
    """Pure: the migration and divergence history → the `migration_health` findings (see the module doc)."""
    return _phase(migration, context).unionByName(_divergences(migration, divergences, context))


def _phase(migration: DataFrame, context: Context) -> DataFrame:
    t = context.thresholds
    now = latest(migration, context).select(
        "phase", "zookeeper_written_at", "zookeeper_writes_stopped", "zookeeper_brokers", "waiting_brokers"
    )
    since = run_since(now, migration, migration, ["phase"]).withColumnRenamed("since", "phase_since")
    rows = now.join(since, "phase").withColumn(
        "minutes_in_phase", F.floor(_minutes_since("phase_since", context)).cast("long")
    )
    waiting = F.col("minutes_in_phase") > F.lit(t.migration_stall_minutes)
    zk_silent = _minutes_since("zookeeper_written_at", context) > F.lit(t.migration_stall_minutes)
    brokers_on_zk = F.size(F.coalesce("zookeeper_brokers", F.array())) > 0
    stalled_waiting = (F.col("phase") == "pre_migration") & waiting
    stalled_writes = (F.col("phase") == "dual_write") & brokers_on_zk & zk_silent
    finalized = F.col("phase") == "post_migration"
    status = F.when(stalled_waiting | stalled_writes, "stalled").when(finalized, "finalized").otherwise("ok")
    brokers = F.coalesce(F.array_join("waiting_brokers", ", "), F.lit("?"))
    problem = (
        F.when(
            stalled_waiting,
            F.concat(
                F.lit("the KRaft controllers have waited "), F.col("minutes_in_phase").cast("string"),
                F.lit(" min for brokers to register with them (still waiting for: "), brokers,
                F.lit("); the metadata is not migrated until every broker has"),
            ),
        )
        .when(
            stalled_writes,
            F.concat(
                F.lit("the KRaft controllers stopped writing to ZooKeeper at "),
                F.col("zookeeper_written_at").cast("string"),
                F.lit(" while brokers "), F.array_join("zookeeper_brokers", ", "),
                F.lit(" still run on ZooKeeper: their metadata goes stale and a rollback would lose changes"),
            ),
        )
        .when(
            finalized,
            F.lit("the migration is finalized: the controllers no longer write to ZooKeeper, so snapshots "
                  "read from it are stale"),
        )
    )  # fmt: skip
    action = (
        F.when(
            stalled_waiting,
            F.concat(
                F.lit("restart brokers "), brokers,
                F.lit(" with zookeeper.metadata.migration.enable=true, controller.quorum.voters (or "
                      "controller.quorum.bootstrap.servers) and controller.listener.names set; the active "
                      "controller's log (KRaftMigrationDriver) names the brokers it waits for"),
            ),
        )
        .when(
            stalled_writes,
            F.lit("read the active controller's log (KRaftMigrationDriver errors, ZooKeeper session); do not "
                  "finalize or roll back before dual-write resumes (/migration's mtime moves again)"),
        )
        .when(
            finalized,
            F.lit("set this cluster's metadata_source to \"kraft\" (and its Kafka connection to the brokers) "
                  "so kafka-ops reads the live metadata; then retire the ZooKeeper ensemble"),
        )
    )  # fmt: skip
    severity = F.when(stalled_writes, "critical").when(stalled_waiting | finalized, "warning").otherwise("ok")
    return rows.select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        F.lit("phase").alias("kind"),
        "phase",
        "phase_since",
        "zookeeper_written_at",
        "zookeeper_brokers",
        "waiting_brokers",
        *_no_divergence(),
        status.alias("status"),
        problem.alias("problem"),
        action.alias("action"),
        severity.alias("severity"),
    )


def _no_divergence() -> list[Column]:
    return [
        F.lit(None).cast("string").alias("topic"),
        F.lit(None).cast("int").alias("partition"),
        F.lit(None).cast("string").alias("field"),
        F.lit(None).cast("string").alias("zookeeper"),
        F.lit(None).cast("string").alias("kraft"),
        F.lit(None).cast("timestamp").alias("diverging_since"),
    ]


def _divergences(migration: DataFrame, divergences: DataFrame, context: Context) -> DataFrame:
    """Each field diverging now, since the first snapshot of its unbroken diverging run among the
    snapshots that compared the two views (`migration.divergences` not null)."""
    t = context.thresholds
    divergences = divergences.withColumn("partition_key", F.coalesce("partition", F.lit(-1)))
    now = latest(divergences, context).select(*DIVERGENCE_KEY, "partition", "zookeeper", "kraft")
    compared = migration.where(F.col("divergences").isNotNull())
    since = run_since(now, divergences, compared, DIVERGENCE_KEY).withColumnRenamed("since", "diverging_since")
    rows = now.join(since, DIVERGENCE_KEY).where(
        _minutes_since("diverging_since", context) >= F.lit(t.migration_divergence_minutes)
    )
    phase = latest(migration, context).select("phase", "zookeeper_written_at", "zookeeper_brokers")
    where = F.concat(
        F.col("topic"),
        F.when(F.col("partition").isNotNull(), F.concat(F.lit("-"), F.col("partition"))).otherwise(F.lit("")),
    )
    problem = F.concat(
        where, F.lit(" "), F.col("field"), F.lit(": ZooKeeper has "), F.coalesce("zookeeper", F.lit("nothing")),
        F.lit(", the KRaft metadata "), F.coalesce("kraft", F.lit("nothing")), F.lit(", since "),
        F.col("diverging_since").cast("string"),
    )  # fmt: skip
    return rows.crossJoin(phase).select(
        F.lit(context.snapshot_id).alias("snapshot_id"),
        F.lit("divergence").alias("kind"),
        "phase",
        F.lit(None).cast("timestamp").alias("phase_since"),
        "zookeeper_written_at",
        "zookeeper_brokers",
        F.lit(None).cast("array<int>").alias("waiting_brokers"),
        "topic",
        "partition",
        "field",
        "zookeeper",
        "kraft",
        "diverging_since",
        F.lit("diverged").alias("status"),
        problem.alias("problem"),
        F.lit(
            "do not finalize or roll back while the views disagree: the KRaft log is the truth during dual-write; "
            "read the active controller's log for ZooKeeper write errors (KRaftMigrationDriver), and compare "
            "with kafka-topics --describe and the partition's state znode"
        ).alias("action"),
        F.lit("warning").alias("severity"),
    )


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    found = detect_migration_health(inputs["migration"], inputs["migration_divergences"], context)
    return {"migration_health": found}


DETECTOR = Detector(
    name="migration_health",
    tables=("migration", "migration_divergences"),
    detect=_detect,
    outputs=("migration_health",),
)
