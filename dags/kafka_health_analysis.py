"""Analyse each cluster's snapshot history on Spark whenever a new snapshot lands.

Declares and wires only: the detectors live in `kafka_ops.detectors`, the Spark job in
`spark_jobs/cluster_health.py`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import dag, get_current_context, task

from kafka_ops.airflow.assets import SNAPSHOT_ASSET

SPARK_JOBS = os.environ.get(
    "KAFKA_OPS_SPARK_JOBS",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spark_jobs"),
)

DOC_MD = """
### Kafka health analysis

**What it does.** Scheduled on the asset `kafka_ops_snapshots`: each time the snapshot DAG
commits a snapshot, this DAG runs the Spark job `spark_jobs/cluster_health.py` for every
cluster that just got one (a manual run analyses every configured cluster). The job reads the
last day of snapshots from the lake and writes one findings table per detector, atomically:
ISR health (under-replicated, under-min-ISR, at-min-ISR, offline), ISR shrink/expand events,
time under-replicated and flapping, which broker is to blame, leader balance (ZooKeeper and
KRaft rules, fixable by a preferred election or blocked and why), replica and rack placement,
controller churn and zombie-controller symptoms, and reassignments in flight or stuck.

**Spark.** `SparkSubmitOperator` on the `spark_default` connection (`local[*]` by default;
point it at a standalone, YARN or Kubernetes master to run on a cluster). Thresholds come
from the kafka-ops settings file, per cluster (`[clusters.thresholds]`).

**When it fails.** A failed `analyse_cluster` means no findings were published for that
snapshot (the previous findings stay). An unhealthy cluster is a finding, never a task failure.
"""


@dag(
    dag_id="kafka_health_analysis",
    schedule=[SNAPSHOT_ASSET],
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
    def spark_arguments() -> list[list[str]]:
        """One `cluster_health.py` argument list per cluster to analyse."""
        import json
        from dataclasses import asdict

        from kafka_ops.settings import load_settings

        settings = load_settings()
        events: Any = get_current_context().get("triggering_asset_events") or {}
        triggered = {e.extra.get("cluster") for e in events.get(SNAPSHOT_ASSET, [])} if events else set()
        clusters = [c for c in settings.clusters if not triggered or c.name in triggered]
        return [
            [
                "--lake",
                settings.lake_root,
                "--cluster",
                c.name,
                "--thresholds",
                json.dumps(asdict(c.thresholds)),
            ]
            for c in clusters
        ]

    SparkSubmitOperator.partial(
        task_id="analyse_cluster",
        application=os.path.join(SPARK_JOBS, "cluster_health.py"),
        conn_id="spark_default",
        name="kafka-ops-cluster-health",
    ).expand(application_args=spark_arguments())


kafka_health_analysis()
