"""The Celery app's settings for kafka-ops' workers (`[celery] celery_config_options`): Airflow's own,
plus the modules of kafka-ops' task bodies, which each worker imports once when it starts.

A Celery worker runs each Airflow task in a process forked from itself (Airflow 3's task supervisor forks
on Linux), so a task starts with whatever its worker had imported. Left to import them itself, a task
spends seconds before its first line of work (Great Expectations alone takes 10 s on an idle 2-core
machine, 35 s at load 8): on the paging path, a snapshot task's page and a consumer group's page waited
that long. Preloaded, they cost the worker that time once, at start, and each task nothing.
"""

from __future__ import annotations

from typing import Any

from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

PRELOADED = (
    "kafka_ops.airflow.metadata_source",
    "kafka_ops.airflow.snapshot_paging",
    "kafka_ops.airflow.kafka_hook",
    "kafka_ops.airflow.analysis_arguments",
    "kafka_ops.airflow.health_tasks",
    "kafka_ops.airflow.connect_analysis",
    "kafka_ops.airflow.worker_warm_up",
)
"""The task bodies of the snapshot and analysis DAGs (and through them the sources, the lake, the gates,
alerting and the report), and one Great Expectations validation, whose lazy loading its import alone does
not do; nothing here connects to anything."""

CELERY_CONFIG: dict[str, Any] = {**DEFAULT_CELERY_CONFIG, "imports": PRELOADED}
"""`AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS=kafka_ops.airflow.celery_worker.CELERY_CONFIG`."""
