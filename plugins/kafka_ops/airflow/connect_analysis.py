"""The analysis DAG's Spark jobs on a Spark Connect server, inside the Airflow task (no spark-submit).

Chosen by `KAFKA_OPS_SPARK_CONNECT_CONN_ID` (an Airflow connection of type `spark_connect`, as Airflow's
Spark provider defines it: host `sc://...`, port, optional token and SSL); the jobs' arguments are the
ones spark-submit would get, and their findings the same (`kafka_ops.analysis.job.analyse_job`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafka_ops.analysis.connect import connect_mode_restored, connect_session
from kafka_ops.analysis.job import analyse_job
from kafka_ops.detectors.registry import DETECTORS, GROUP_DETECTORS
from kafka_ops.errors import ConfigError

JOBS = {"cluster_health.py": DETECTORS, "consumer_groups.py": GROUP_DETECTORS}
"""The `spark_jobs/` file each registry of detectors runs as under spark-submit."""


def analyse_on_connect(conn_id: str, job: str, arguments: Sequence[str]) -> dict[str, Any]:
    """Run `job` (a `spark_jobs/` file name) with `arguments` on the Spark Connect server of Airflow
    connection `conn_id`; its summary (what the job prints under spark-submit). Raises `ConfigError`
    for an unknown job, a connection that is missing or not Spark Connect, or a server that is down."""
    from airflow.exceptions import AirflowNotFoundException  # noqa: PLC0415 - Airflow only in its tasks
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook  # noqa: PLC0415

    if job not in JOBS:
        raise ConfigError(f"no analysis job {job!r}; known: {sorted(JOBS)}")
    where = f"Airflow connection {conn_id!r}"
    try:
        url = SparkConnectHook(conn_id).get_connection_url()
    except AirflowNotFoundException:
        raise ConfigError(f"{where} (KAFKA_OPS_SPARK_CONNECT_CONN_ID) is not defined") from None
    with connect_mode_restored():
        result = analyse_job(
            list(arguments), job, f"kafka-ops {job} on Spark Connect", JOBS[job],
            session=lambda _app, lake_format, _root: connect_session(url, where, lake_format),
        )  # fmt: skip
    return result.summary()
