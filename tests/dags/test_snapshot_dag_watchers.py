"""The snapshot DAG's asset watchers as Airflow's own machinery takes them, on the real metadata DB:
the dag-processor's write registers one trigger per cluster, a change during a run starts a second one at
once, and asset events queued while two runs are active coalesce into one more run. (The triggerer running
the trigger is the stack's test.)

Cost: ~3 s (one DAG file parsed and written to the SQLite DB)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from airflow.assets.manager import AssetManager
from airflow.dag_processing.bundles.manager import DagBundlesManager
from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db
from airflow.models.asset import AssetDagRunQueue, AssetEvent, AssetModel, AssetWatcherModel
from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.models.trigger import Trigger
from airflow.utils.session import create_session
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunTriggeredByType, DagRunType
from sqlalchemy import delete, select

from kafka_ops.airflow.cluster_watch import CHANGES_ASSET_NAME, CLASSPATH

DAG_ID = "kafka_metadata_snapshot"
DAG_FILE = Path(__file__).resolve().parents[2] / "dags" / "kafka_metadata_snapshot.py"
RUN_IDS = ("test_watchers_running", "test_watchers_running_2")

pytestmark = pytest.mark.dags


@pytest.fixture
def synced(airflow_db: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AssetModel]:
    """The snapshot DAG for two clusters written to the DB as the dag-processor writes it, unpaused;
    what the test queued or ran is removed after, and the DAG paused again (its triggers unregistered
    at its next write)."""
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text('[[clusters]]\nname = "east"\n[[clusters]]\nname = "west"\nmetadata_source = "kraft"\n')
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))
    bag = DagBag(dag_folder=str(DAG_FILE))
    assert not bag.import_errors
    with create_session() as session:
        DagBundlesManager().sync_bundles_to_db(session=session)
    sync_bag_to_db(bag, "dags-folder", None)
    with create_session() as session:
        session.get(DagModel, DAG_ID).is_paused = False
    sync_bag_to_db(bag, "dags-folder", None)  # Airflow sets an asset's watchers only while its DAG is unpaused
    with create_session() as session:
        asset = session.scalars(select(AssetModel).where(AssetModel.name == CHANGES_ASSET_NAME)).one()
        session.expunge(asset)
    try:
        yield asset
    finally:
        with create_session() as session:
            session.execute(delete(AssetDagRunQueue).where(AssetDagRunQueue.target_dag_id == DAG_ID))
            session.execute(delete(AssetEvent).where(AssetEvent.asset_id == asset.id))
            session.execute(delete(DagRun).where(DagRun.run_id.in_(RUN_IDS)))
            session.get(DagModel, DAG_ID).is_paused = True


def test_the_dag_processor_registers_one_trigger_per_cluster(synced: AssetModel) -> None:
    with create_session() as session:
        watchers = session.scalars(select(AssetWatcherModel).where(AssetWatcherModel.asset_id == synced.id)).all()
        by_name = {w.name: session.get(Trigger, w.trigger_id) for w in watchers}
        assert sorted(by_name) == ["kafka_ops_watch_east", "kafka_ops_watch_west"]
        for name, trigger in by_name.items():
            assert trigger.classpath == CLASSPATH
            assert trigger.kwargs["cluster"] == name.removeprefix("kafka_ops_watch_")
        assert by_name["kafka_ops_watch_west"].kwargs["metadata_source"] == "kraft"


def _changed(session: object, asset: AssetModel, cluster: str) -> None:
    """What `Trigger.submit_event` does with a watcher's event."""
    payload = {"cluster": cluster, "source": "KRaft", "changes": ["brokers"]}
    AssetManager.register_asset_change(
        asset=asset.to_serialized(), extra={"from_trigger": True, "payload": payload}, session=session
    )


def _due(session: object) -> bool:
    """Whether the scheduler would create an asset-triggered run of the DAG now."""
    _, triggered = DagModel.dags_needing_dagruns(session)  # type: ignore[arg-type]
    return DAG_ID in triggered


def _running(session: object, run_id: str) -> DagRun:
    run = DagRun(
        dag_id=DAG_ID, run_id=run_id, run_type=DagRunType.SCHEDULED, state=DagRunState.RUNNING,
        triggered_by=DagRunTriggeredByType.TIMETABLE,
    )  # fmt: skip
    session.add(run)  # type: ignore[attr-defined]
    session.flush()  # type: ignore[attr-defined]
    return run


def test_a_change_during_a_run_starts_a_second_run_at_once(synced: AssetModel) -> None:
    # a run held by a task whose worker died must not keep a broker's death from being snapshotted
    with create_session() as session:
        assert session.get(DagModel, DAG_ID).max_active_runs == 2
        _running(session, RUN_IDS[0])
        _changed(session, synced, "east")
        session.flush()
        assert _due(session)


def test_changes_while_two_runs_are_active_coalesce_into_one_more_run(synced: AssetModel) -> None:
    with create_session() as session:
        first = _running(session, RUN_IDS[0])
        _running(session, RUN_IDS[1])
        for cluster in ("east", "west", "east"):  # three changes while two runs are active
            _changed(session, synced, cluster)
        session.flush()
        queued = session.scalars(select(AssetDagRunQueue).where(AssetDagRunQueue.target_dag_id == DAG_ID)).all()
        assert len(queued) == 1  # one queue row per (asset, DAG), whatever the number of events
        assert not _due(session)  # at max_active_runs: the scheduler waits
        first.state = DagRunState.SUCCESS
        session.flush()
        assert _due(session)  # a run ended: exactly one more run is due, for all three events
        events = session.scalars(select(AssetEvent).where(AssetEvent.asset_id == synced.id)).all()
        assert [e.extra["payload"]["cluster"] for e in events] == ["east", "west", "east"]
