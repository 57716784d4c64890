"""The services of the running topology, in start order: one table for the native stack (`python -m
stack up`) and `docker/docker-compose.yml`, whose services of the same names play the same roles
(tests/unit/test_docker_stack.py holds the compose file to this table)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Service:
    name: str
    """The process's name here (state.json, `logs/<name>.log`) and its compose service's."""
    role: str


SERVICES: tuple[Service, ...] = (
    Service("postgres", "Airflow's metadata database (PostgreSQL 15)"),
    Service("redis", "the Celery broker"),
    Service("object-store", "S3-compatible object store for the lake (moto's server mode)"),
    Service("webhook", "records every page, resolve and Alertmanager notification it receives"),
    Service("spark-master", "Spark standalone master"),
    Service("spark-worker-1", "Spark standalone worker"),
    Service("spark-worker-2", "Spark standalone worker"),
    Service("spark-connect", "Spark Connect server on the master: the warm Spark the analysis DAG's jobs run on"),
    Service("airflow-api-server", "Airflow's UI, REST and execution API, and the kafka-ops plugin"),
    Service("airflow-scheduler", "Airflow's scheduler (CeleryExecutor)"),
    Service("airflow-dag-processor", "parses dags/"),
    Service("airflow-triggerer", "runs deferred tasks' triggers"),
    Service(
        "airflow-worker-1", "Celery worker: runs every task but the Spark jobs, in its own working directory and TMPDIR"
    ),
    Service(
        "airflow-worker-2", "Celery worker: runs tasks and the Spark jobs, in its own working directory and TMPDIR"
    ),
    Service("prometheus-token", "keeps the read-only user's Airflow JWT fresh for Prometheus"),
    Service("alertmanager", "routes Prometheus' alerts to the webhook receiver"),
    Service("prometheus", "scrapes /kafka-ops/metrics with the read-only user's token"),
)
SERVICE_NAMES: tuple[str, ...] = tuple(s.name for s in SERVICES)
AIRFLOW_WORKERS: tuple[str, ...] = tuple(n for n in SERVICE_NAMES if n.startswith("airflow-worker-"))
SPARK_WORKERS: tuple[str, ...] = tuple(n for n in SERVICE_NAMES if n.startswith("spark-worker-"))
EXECUTOR = "CeleryExecutor"
SPARK_QUEUE = "spark"
"""The Celery queue of the analysis DAG's Spark jobs (`KAFKA_OPS_SPARK_QUEUE`): a spark-submit holds its worker
slot for minutes, so only the last worker serves this queue, and the others are always free for the snapshots
and their pages."""
WORKER_QUEUES: dict[str, str] = {
    name: "default" if name != AIRFLOW_WORKERS[-1] else f"default,{SPARK_QUEUE}" for name in AIRFLOW_WORKERS
}
"""Each Celery worker's `--queues`."""
