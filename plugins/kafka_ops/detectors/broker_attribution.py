"""Which broker is sick: the latest snapshot's replicas missing from the ISR, attributed to brokers.

A replica counts when its broker is in the partition's assignment minus the replicas a
reassignment is still adding (a new replica catching up is not a sick broker); partitions without
a state (`has_state` false) and topics pending deletion (their replicas leave the ISR because the
controller is deleting them; see `topic_deletions`) are ignored. A broker missing from ISRs is either down (not
registered in `/brokers/ids`: every partition it holds is under-replicated or offline) or alive
but lagging (registered, yet out of sync: slow disk, network, GC, throttling).

Findings table `broker_attribution`, one row per broker registered in the latest snapshot or named
in one of its partitions' assignments: snapshot_id, broker_id, `registered`, `rack` (null when not
registered), `assigned_replicas`, `missing_from_isr` (of those, partitions whose ISR lacks it),
`missing_broker_down` (missing_from_isr when not registered, else 0), `missing_alive_lagging`
(missing_from_isr when registered, else 0), `leaders` (partitions it leads), `shrinks_in_window`
(how many consecutive-snapshot intervals of the window saw it leave at least one partition's ISR:
a flaky broker shows here even when it is back in sync now; see `isr_events`), `cause` and
`severity`:

* critical, "broker 2 is down: 40 partitions under-replicated": not registered, assigned replicas
  (when some ISRs still hold it, e.g. as the last ISR member of an offline partition, ", still in
  the ISR of N partitions" follows);
* warning, "broker 3 is alive but out of sync in 5 partitions": registered, missing from an ISR;
* ok, cause null: everything else.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context, Detector, latest
from kafka_ops.analysis.partition_runs import RUNS_TABLE, snapshot_order
from kafka_ops.detectors.isr_events import isr_events, window_runs
from kafka_ops.detectors.topic_deletions import without_pending_deletions

COUNTS = ["assigned_replicas", "missing_from_isr", "leaders", "shrinks_in_window"]


def _partitions(n: Column) -> Column:
    return F.concat(n.cast("string"), F.when(n == 1, " partition").otherwise(" partitions"))


def _cause() -> Column:
    broker, missing = F.col("broker_id").cast("string"), F.col("missing_from_isr")
    in_isr = F.col("assigned_replicas") - missing
    down = F.concat(
        F.lit("broker "), broker, F.lit(" is down: "), _partitions(missing), F.lit(" under-replicated"),
        F.when(in_isr > 0, F.concat(F.lit(", still in the ISR of "), _partitions(in_isr))).otherwise(""),
    )  # fmt: skip
    lagging = F.concat(F.lit("broker "), broker, F.lit(" is alive but out of sync in "), _partitions(missing))
    return (
        F.when(~F.col("registered") & (F.col("assigned_replicas") > 0), down)
        .when(F.col("registered") & (missing > 0), lagging)
        .otherwise(F.lit(None).cast("string"))
    )


def detect_broker_attribution(
    partitions: DataFrame, brokers: DataFrame, history: DataFrame, snapshot_id: str, admin_requests: DataFrame
) -> DataFrame:
    """Pure: the latest snapshot's partitions, brokers and admin requests plus the window's
    partitions (`history`, for the shrinks) → the `broker_attribution` rows, tagged with
    `snapshot_id`."""
    return broker_attribution(partitions, brokers, *window_runs(history), snapshot_id, admin_requests)


def broker_attribution(  # noqa: PLR0917 - the detector's inputs
    partitions: DataFrame,
    brokers: DataFrame,
    runs: DataFrame,
    order: DataFrame,
    snapshot_id: str,
    admin_requests: DataFrame,
) -> DataFrame:
    """Pure: the latest snapshot's partitions, brokers and admin requests plus the window's partition
    runs and snapshot order (for the shrinks) → the `broker_attribution` rows, tagged with
    `snapshot_id`. Topics pending deletion now are left out of the latest snapshot and the runs."""
    partitions = without_pending_deletions(partitions, admin_requests)
    runs = without_pending_deletions(runs, admin_requests)
    replica = F.col("replica")
    assigned = ~F.coalesce(F.array_contains("adding_replicas", replica), F.lit(False))
    in_isr = F.coalesce(F.array_contains("isr", replica), F.lit(False))
    held = (
        partitions.where(F.col("has_state"))
        .select("adding_replicas", "isr", "leader", F.explode("replicas").alias("replica"))
        .groupBy(replica.alias("broker_id"))
        .agg(
            F.count_if(assigned).alias("assigned_replicas"),
            F.count_if(assigned & ~in_isr).alias("missing_from_isr"),
            F.count_if(F.col("leader") == replica).alias("leaders"),
        )
    )
    registered = brokers.select("broker_id", "rack", F.lit(True).alias("registered"))
    shrinks = (
        isr_events(runs, order, snapshot_id)
        .where(F.col("event") == "shrink")
        .groupBy(F.col("replica").alias("broker_id"))
        .agg(F.count_distinct("event_snapshot_id").alias("shrinks_in_window"))
    )
    missing, alive = F.col("missing_from_isr"), F.col("registered")
    return (
        held.join(registered, "broker_id", "full")
        .join(shrinks, "broker_id", "left")
        .select(
            "broker_id",
            F.coalesce(alive, F.lit(False)).alias("registered"),
            "rack",
            *(F.coalesce(c, F.lit(0).cast("bigint")).alias(c) for c in COUNTS),
        )
        .select(
            F.lit(snapshot_id).alias("snapshot_id"),
            "broker_id", "registered", "rack", "assigned_replicas", "missing_from_isr",
            F.when(~alive, missing).otherwise(0).alias("missing_broker_down"),
            F.when(alive, missing).otherwise(0).alias("missing_alive_lagging"),
            "leaders", "shrinks_in_window", _cause().alias("cause"),
            F.when(~alive & (F.col("assigned_replicas") > 0), "critical")
            .when(alive & (missing > 0), "warning")
            .otherwise("ok")
            .alias("severity"),
        )
    )  # fmt: skip


def _detect(inputs: Mapping[str, DataFrame], context: Context) -> dict[str, DataFrame]:
    partitions, brokers = latest(inputs["partitions"], context), latest(inputs["brokers"], context)
    admin_requests = latest(inputs["admin_requests"], context)
    order = snapshot_order(inputs["snapshots"])
    found = broker_attribution(partitions, brokers, inputs[RUNS_TABLE], order, context.snapshot_id, admin_requests)
    return {"broker_attribution": found}


DETECTOR = Detector(
    name="broker_attribution",
    tables=("partitions", "brokers", "admin_requests", RUNS_TABLE, "snapshots"),
    detect=_detect,
    outputs=("broker_attribution",),
    latest_only=("partitions", "brokers", "admin_requests"),
)
