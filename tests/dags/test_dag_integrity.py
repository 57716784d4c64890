"""Every DAG under dags/ imports cleanly and follows the house rules (STYLE.md, rule 1)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from airflow._shared.module_loading.file_discovery import find_path_from_directory
from airflow.configuration import conf
from airflow.dag_processing.dagbag import DagBag
from airflow.sdk.definitions.mappedoperator import MappedOperator

from kafka_ops.airflow.assets import SNAPSHOT_ASSET
from kafka_ops.settings import DEFAULT_SCHEDULE

pytestmark = pytest.mark.dags

DAGS_FOLDER = Path(__file__).resolve().parents[2] / "dags"


def test_no_import_errors(dag_bag: DagBag) -> None:
    errors = "\n".join(f"{path}:\n{error}" for path, error in dag_bag.import_errors.items())
    assert not dag_bag.import_errors, f"DAG import errors:\n{errors}"


def test_every_dag_file_defines_a_dag(dag_bag: DagBag) -> None:
    files = {p.resolve() for p in DAGS_FOLDER.glob("*.py") if not p.name.startswith("_")}
    with_dags = {Path(dag.fileloc).resolve() for dag in dag_bag.dags.values()}
    assert files <= with_dags, f"DAG files without a DAG: {sorted(map(str, files - with_dags))}"


def test_parsing_reads_no_settings_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings are read in tasks, at run time: a missing settings file must not break parsing."""
    monkeypatch.setenv("KAFKA_OPS_CONFIG", "/nonexistent/kafka-ops.toml")
    bag = DagBag(dag_folder=str(DAGS_FOLDER))
    assert not bag.import_errors


def test_tags(dag_bag: DagBag, dag_id: str) -> None:
    assert "kafka-ops" in dag_bag.dags[dag_id].tags


def test_doc_md_tells_the_operator(dag_bag: DagBag, dag_id: str) -> None:
    doc = dag_bag.dags[dag_id].doc_md or ""
    assert len(doc) > 200, f"{dag_id}: doc_md should say what the DAG does and what a failure means"


def test_no_catchup_fixed_start(dag_bag: DagBag, dag_id: str) -> None:
    dag = dag_bag.dags[dag_id]
    assert dag.catchup is False
    assert dag.start_date is not None and dag.start_date.tzinfo is not None


# an automatic retry must never repeat a write
WRITES_TO_A_CLUSTER = {"execute", "auto_election", "cancel", "clear_throttles"}


def test_every_task_retries(dag_bag: DagBag, dag_id: str) -> None:
    for task in dag_bag.dags[dag_id].tasks:
        if task.task_id in WRITES_TO_A_CLUSTER:
            assert task.retries == 0, f"{dag_id}.{task.task_id} writes to a cluster: it must never retry"
            continue
        assert (task.retries or 0) >= 1, f"{dag_id}.{task.task_id} has no retries"
        assert task.retry_delay <= timedelta(minutes=5), f"{dag_id}.{task.task_id} retries too late"


def test_snapshot_dag_shape(dag_bag: DagBag) -> None:
    dag = dag_bag.dags["kafka_metadata_snapshot"]
    assert set(dag.tags) == {"kafka-ops", "snapshot"}
    assert dag.max_active_runs == 1
    assert dag.schedule == DEFAULT_SCHEDULE  # KAFKA_OPS_SNAPSHOT_SCHEDULE unset in tests
    listing, snapshot = dag.get_task("list_clusters"), dag.get_task("snapshot_cluster")
    assert snapshot.upstream_task_ids == {"list_clusters"}
    assert listing.retries == snapshot.retries == 2
    assert snapshot.retry_delay == timedelta(seconds=30)
    assert isinstance(snapshot, MappedOperator)
    assert snapshot.outlets == [SNAPSHOT_ASSET]


def test_plugin_loader_leaves_the_library_alone() -> None:
    """Airflow imports every .py under the plugins folder as a top-level module named by its
    stem, in every task. For kafka_ops that would run sandbox/__main__.py as `__main__` (the
    sandbox CLI exits the task) and shadow modules like `settings`. kafka_ops is an installed
    package: the plugins folder's .airflowignore must exclude it."""
    folder = conf.get("core", "plugins_folder")
    syntax = conf.get("core", "dag_ignore_file_syntax", fallback="glob")
    loaded = sorted(
        path
        for path in find_path_from_directory(folder, ".airflowignore", syntax)
        if path.endswith(".py") and "/kafka_ops/" in path
    )
    assert not loaded, (
        f"Airflow would import {len(loaded)} kafka_ops files as plugins (e.g. {loaded[:3]}); "
        f"add a line 'kafka_ops/' to {folder}/.airflowignore"
    )
