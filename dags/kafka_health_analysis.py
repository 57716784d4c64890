"""Analyse each cluster's history on Spark whenever a new snapshot or group collection lands.

Declares and wires only: the detectors live in `kafka_ops.detectors`, the Spark jobs in
`spark_jobs/cluster_health.py` and `spark_jobs/consumer_groups.py`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import dag, get_current_context, task

from kafka_ops.airflow.assets import GROUP_SNAPSHOT_ASSET, SNAPSHOT_ASSET

SPARK_JOBS = os.environ.get(
    "KAFKA_OPS_SPARK_JOBS",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spark_jobs"),
)

DOC_MD = """
### Kafka health analysis

**What it does.** Scheduled on the assets `kafka_ops_snapshots` and `kafka_ops_group_snapshots`:
each time the snapshot DAG commits a batch, this DAG runs the matching Spark job for every
cluster that just got one (a manual run analyses every configured cluster with both jobs).

* `analyse_cluster` (`spark_jobs/cluster_health.py`, on ZooKeeper snapshots): ISR health
  (under-replicated, under-min-ISR, at-min-ISR, offline), ISR shrink/expand events, time
  under-replicated and flapping, which broker is to blame, leader balance (ZooKeeper and KRaft
  rules, fixable by a preferred election or blocked and why), replica and rack placement,
  controller churn and zombie-controller symptoms, and reassignments in flight or stuck.
* `analyse_groups` (`spark_jobs/consumer_groups.py`, on group collections): lag status per
  partition and group by Burrow's rules (OK, WARN, STALL, STOP, REWIND; groups roll up to ERR),
  lag in seconds (Kafka Lag Exporter's interpolation), and assignor skew with a what-if of
  Kafka's own assignors on the group's real members.

Each job reads the last day of its batches from the lake and writes one findings table per
detector output, atomically (commit log `analysis_runs`).

**Spark.** `SparkSubmitOperator` on the `spark_default` connection (`local[*]` by default;
point it at a standalone, YARN or Kubernetes master to run on a cluster). Thresholds come
from the kafka-ops settings file, per cluster (`[clusters.thresholds]`).

**When it fails.** A failed `analyse_*` task means no findings were published for that batch
(the previous findings stay). An unhealthy cluster or a lagging group is a finding, never a
task failure.
"""


@dag(
    dag_id="kafka_health_analysis",
    schedule=SNAPSHOT_ASSET | GROUP_SNAPSHOT_ASSET,
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["kafka-ops", "analysis", "spark"],
    doc_md=DOC_MD,
    default_args={
        "retries": 1,
        "retry_delay": timedelta(seconds=60),
        "execution_timeout": timedelta(minutes=20),
    },
)
def kafka_health_analysis() -> None:
    @task
    def cluster_health_arguments() -> list[list[str]]:
        """`cluster_health.py` arguments per cluster whose ZooKeeper snapshot triggered this run."""
        from kafka_ops.airflow.analysis_arguments import spark_arguments
        from kafka_ops.settings import load_settings

        events = get_current_context().get("triggering_asset_events")
        return spark_arguments(load_settings(), events, SNAPSHOT_ASSET, "snapshots")

    @task
    def consumer_groups_arguments() -> list[list[str]]:
        """`consumer_groups.py` arguments per cluster whose group collection triggered this run."""
        from kafka_ops.airflow.analysis_arguments import spark_arguments
        from kafka_ops.settings import load_settings

        events = get_current_context().get("triggering_asset_events")
        return spark_arguments(load_settings(), events, GROUP_SNAPSHOT_ASSET, "group_snapshots")

    SparkSubmitOperator.partial(
        task_id="analyse_cluster",
        application=os.path.join(SPARK_JOBS, "cluster_health.py"),
        conn_id="spark_default",
        name="kafka-ops-cluster-health",
    ).expand(application_args=cluster_health_arguments())
    SparkSubmitOperator.partial(
        task_id="analyse_groups",
        application=os.path.join(SPARK_JOBS, "consumer_groups.py"),
        conn_id="spark_default",
        name="kafka-ops-consumer-groups",
    ).expand(application_args=consumer_groups_arguments())


kafka_health_analysis()
