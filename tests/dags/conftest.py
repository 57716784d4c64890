"""DAG-test setup: one DagBag over dags/, the metadata DB, the sandbox with a topic.

The Airflow environment (AIRFLOW_HOME under var/, dags/ and plugins/ folders) is set by
tests/conftest.py before anything imports airflow.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.utils.db import check_migrations

from kafka_ops.sandbox import SandboxCluster

DAGS_FOLDER = Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])


@cache
def _dag_bag() -> DagBag:
    # Airflow 3.3's DagBag has no `include_examples`; LOAD_EXAMPLES=False keeps them out
    return DagBag(dag_folder=str(DAGS_FOLDER))


@pytest.fixture(scope="session")
def dag_bag() -> DagBag:
    """Every DAG file under dags/, parsed once per test session."""
    return _dag_bag()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each test that takes `dag_id` once per DAG in the bag."""
    if "dag_id" in metafunc.fixturenames:
        metafunc.parametrize("dag_id", sorted(_dag_bag().dag_ids))


@pytest.fixture(scope="session")
def airflow_db() -> None:
    """The Airflow metadata DB at the migration head: migrated once, a fast check afterwards."""
    try:
        check_migrations(timeout=0)
        return
    except TimeoutError:
        pass  # a new or older database: migrate it
    subprocess.run(
        [sys.executable, "-m", "airflow", "db", "migrate"],
        check=True,
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
    )
    check_migrations(timeout=0)


@pytest.fixture
def dag_sandbox(healthy_sandbox: SandboxCluster) -> SandboxCluster:
    """The session's sandbox cluster (one cluster per test run), healthy."""
    return healthy_sandbox
