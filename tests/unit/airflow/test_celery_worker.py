"""The Celery workers' settings: Airflow's own, and the task bodies each worker imports once at start."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

from kafka_ops.airflow.celery_worker import CELERY_CONFIG, PRELOADED


def test_the_workers_keep_airflows_celery_settings_and_preload_the_task_bodies() -> None:
    assert {k: v for k, v in CELERY_CONFIG.items() if k != "imports"} == DEFAULT_CELERY_CONFIG
    assert CELERY_CONFIG["imports"] == PRELOADED
    assert {"kafka_ops.airflow.snapshot_paging", "kafka_ops.airflow.health_tasks"} <= set(PRELOADED)


def test_preloading_starts_no_thread_a_forked_task_would_lose() -> None:
    """A worker forks each task from itself: a thread started by an import would not exist in the task.
    In a fresh interpreter, as a worker starts."""
    imports = "; ".join(f"import {module}" for module in PRELOADED)
    probe = f"import threading; {imports}; print([t.name for t in threading.enumerate()])"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "['MainThread']"


def test_a_failed_warm_up_is_logged_and_the_worker_starts_all_the_same(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> None:
        raise RuntimeError("no metrics today")

    monkeypatch.setattr("kafka_ops.validation.runner.warm_up", broken)
    monkeypatch.delitem(sys.modules, "kafka_ops.airflow.worker_warm_up", raising=False)
    importlib.import_module("kafka_ops.airflow.worker_warm_up")
    assert "warm-up failed, each task will load it itself: RuntimeError: no metrics today" in caplog.text
