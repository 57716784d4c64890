"""DAG-test setup: an Airflow home under var/, one DagBag over dags/, the metadata DB, a sandbox.

The environment is set here, before anything imports airflow (Airflow reads its config once,
at first import), with `setdefault` so the Makefile's exports win. `UNIT_TEST_MODE` is left
off on purpose: it loads Airflow's own test config (LocalExecutor, example DAGs, FAB auth)
on top of ours, which is for Airflow's test suite, not for testing our DAGs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS_FOLDER = REPO / "dags"

os.environ.setdefault("AIRFLOW_HOME", str(REPO / "var" / "airflow"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
os.environ.setdefault("AIRFLOW__CORE__DAGS_FOLDER", str(DAGS_FOLDER))
os.environ.setdefault("AIRFLOW__CORE__PLUGINS_FOLDER", str(REPO / "plugins"))

from airflow.dag_processing.dagbag import DagBag  # noqa: E402  (after the environment is set)

from kafka_ops.sandbox import SandboxCluster  # noqa: E402


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
    from airflow.utils.db import check_migrations

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


@pytest.fixture(scope="module")
def dag_sandbox() -> Iterator[SandboxCluster]:
    """A real ZooKeeper + 3 Kafka brokers for one test module, always stopped afterwards.

    Not `sandbox` (tests/conftest.py's session fixture): module scope keeps the JVMs from
    outliving the DAG tests, so two clusters never run at once on a small machine.
    """
    with SandboxCluster() as cluster:
        yield cluster
