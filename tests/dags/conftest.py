"""DAG-test setup: one DagBag over dags/, the metadata DB, the sandbox with a topic.

The Airflow environment (AIRFLOW_HOME under var/, dags/ and plugins/ folders) is set by
tests/conftest.py before anything imports airflow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.utils.db import check_migrations

from sandbox import SandboxCluster

DAGS_FOLDER = Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
CLUSTER = "sandbox"  # the cluster name the DAG tests give the sandbox in their settings
Configure = Callable[..., Path]


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
def configure(dag_sandbox: SandboxCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Configure:
    """Connections to the sandbox, and `configure(writes_enabled=..., extra=...)` writing the settings file
    (`extra`: more lines of the cluster's table)."""
    zookeeper = {"conn_type": "zookeeper", "host": dag_sandbox.zookeeper_hosts, "extra": {"chroot": dag_sandbox.chroot}}
    monkeypatch.setenv("AIRFLOW_CONN_ZK_SANDBOX", json.dumps(zookeeper))
    kafka = {"conn_type": "kafka", "host": dag_sandbox.bootstrap_servers, "extra": {"request_timeout_ms": 10_000}}
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_SANDBOX", json.dumps(kafka))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)

    def write(*, writes_enabled: bool = True, extra: str = "") -> Path:
        path = tmp_path / "kafka-ops.toml"
        path.write_text(
            f'lake_root = "{tmp_path / "lake"}"\n'
            "[[clusters]]\n"
            f'name = "{CLUSTER}"\n'
            'zookeeper_conn_id = "zk_sandbox"\n'
            'kafka_conn_id = "kafka_sandbox"\n'
            f"writes_enabled = {str(writes_enabled).lower()}\n"
            "remediation_controller_quiet_seconds = 0\n"
            f"{extra}"
        )
        monkeypatch.setenv("KAFKA_OPS_CONFIG", str(path))
        return tmp_path / "lake"

    write()
    return write


@pytest.fixture
def dag_sandbox(healthy_sandbox: SandboxCluster) -> SandboxCluster:
    """The session's sandbox cluster (one cluster per test run), healthy."""
    return healthy_sandbox
