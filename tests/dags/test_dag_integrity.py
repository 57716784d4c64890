"""Every DAG under dags/ imports cleanly and follows the house rules (STYLE.md, rule 1)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from airflow._shared.module_loading.file_discovery import find_path_from_directory
from airflow.configuration import conf
from airflow.dag_processing.dagbag import DagBag
from airflow.sdk import AssetOrTimeSchedule, CronTriggerTimetable
from airflow.sdk.definitions.mappedoperator import MappedOperator
from airflow.serialization.serialized_objects import DagSerialization

from kafka_ops.airflow.assets import SNAPSHOT_ASSET
from kafka_ops.airflow.cluster_watch import CHANGES_ASSET_NAME, CLASSPATH
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


def test_a_missing_settings_file_does_not_break_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks read the settings at run time; parsing reads them only for the snapshot DAG's clusters (a
    mapped task instance and a watcher each). Settings it cannot read leave the DAG parsed, on its cron
    heartbeat, without watchers, and with one task that fails each run naming the settings' error."""
    monkeypatch.setenv("KAFKA_OPS_CONFIG", "/nonexistent/kafka-ops.toml")
    bag = DagBag(dag_folder=str(DAGS_FOLDER))
    assert not bag.import_errors
    dag = bag.dags["kafka_metadata_snapshot"]
    schedule = dag.timetable
    assert isinstance(schedule, AssetOrTimeSchedule) and schedule.asset_condition.watchers == []
    assert dag.task_ids == ["read_settings"]
    run = dag.test()
    assert run.state == "failed"
    assert [ti.try_number for ti in run.get_task_instances()] == [1]  # failed at once: a retry cannot help


def test_parsing_opens_no_connection(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A fleet of clusters, one watcher each, and not one socket opened nor connection looked up."""
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(
        '[[clusters]]\nname = "zk"\nmetadata_source = "zookeeper"\nzookeeper_conn_id = "zk_zk"\n'
        '[[clusters]]\nname = "kr"\nmetadata_source = "kraft"\nkafka_conn_id = "kafka_kr"\n'
        '[[clusters]]\nname = "mixed"\n'
    )
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"parsing opened a connection: {args}")

    monkeypatch.setattr("socket.socket.connect", no_network)
    monkeypatch.setattr("socket.create_connection", no_network)
    monkeypatch.setattr("airflow.sdk.bases.hook.BaseHook.get_connection", no_network)
    bag = DagBag(dag_folder=str(DAGS_FOLDER / "kafka_metadata_snapshot.py"))
    assert not bag.import_errors
    watchers = bag.dags["kafka_metadata_snapshot"].timetable.asset_condition.watchers
    assert [w.trigger.serialize()[1]["cluster"] for w in watchers] == ["zk", "kr", "mixed"]
    snapshot = bag.dags["kafka_metadata_snapshot"].get_task("snapshot_cluster")
    assert [c["name"] for c in snapshot._get_specified_expand_input().value["cluster"]] == ["zk", "kr", "mixed"]


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
WRITES_TO_A_CLUSTER = {"execute", "execute_approved", "auto_election", "cancel", "clear_throttles"}


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
    assert dag.max_active_runs == 2  # a held run never blinds the next change; beyond, one more run (doc_md)
    schedule = dag.timetable  # the cron heartbeat OR a change a watcher saw
    assert isinstance(schedule, AssetOrTimeSchedule)
    assert schedule.timetable == CronTriggerTimetable(DEFAULT_SCHEDULE, timezone="UTC")  # env unset in tests
    assert schedule.asset_condition.name == CHANGES_ASSET_NAME
    watchers = schedule.asset_condition.watchers
    assert [w.name for w in watchers] == ["kafka_ops_watch_default"]  # one per cluster; no settings file here
    assert watchers[0].trigger.serialize()[0] == CLASSPATH
    snapshot = dag.get_task("snapshot_cluster")
    assert snapshot.upstream_task_ids == set()  # mapped over the parsed settings' clusters: no task hop first
    assert snapshot.retries == 2
    assert snapshot.retry_delay == timedelta(seconds=30)
    assert isinstance(snapshot, MappedOperator)
    assert snapshot.outlets == [SNAPSHOT_ASSET]


def test_an_automatic_election_waiting_for_approval_starts_an_election_run(dag_bag: DagBag) -> None:
    """`auto_election` → `approval_requests` → `request_approval`, a mapped trigger of the election DAG (none
    mapped when no cluster waits)."""
    dag = dag_bag.dags["kafka_health_analysis"]
    trigger = dag.get_task("request_approval")
    assert isinstance(trigger, MappedOperator)
    assert trigger.partial_kwargs["trigger_dag_id"] == "kafka_preferred_leader_election"
    assert trigger.upstream_task_ids == {"approval_requests"}
    assert dag.get_task("approval_requests").upstream_task_ids == {"auto_election"}


def test_the_dag_processor_stores_the_watchers(dag_bag: DagBag) -> None:
    """What `airflow dags reserialize` / the dag-processor writes, and the scheduler reads back: the schedule
    with its asset, and each watcher's trigger as classpath and plain kwargs."""
    dag = dag_bag.dags["kafka_metadata_snapshot"]
    stored = DagSerialization.to_dict(dag)
    DagSerialization.validate_schema(stored)
    timetable = stored["dag"]["timetable"]["__var"]
    assert timetable["timetable"]["__var"]["expression"] == DEFAULT_SCHEDULE
    (watcher,) = timetable["asset_condition"]["watchers"]
    assert watcher["name"] == "kafka_ops_watch_default"
    assert watcher["trigger"]["classpath"] == CLASSPATH
    assert watcher["trigger"]["kwargs"]["cluster"] == "default"
    restored = DagSerialization.from_dict(stored)
    assert restored.timetable.asset_condition.name == CHANGES_ASSET_NAME


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
