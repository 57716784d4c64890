"""The snapshot DAG's asset watchers as Airflow's own machinery takes them, on the real metadata DB:
the dag-processor's write registers one trigger per cluster, and asset events queued while a run is
active coalesce into one more run. (The triggerer running the trigger is the stack's test.)

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
RUN_ID = "test_watchers_running"

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
            session.execute(delete(DagRun).where(DagRun.run_id == RUN_ID))
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


def test_changes_during_a_run_coalesce_into_one_more_run(synced: AssetModel) -> None:
    with create_session() as session:
        dag_model = session.get(DagModel, DAG_ID)
        assert dag_model.max_active_runs == 1
        session.add(
            DagRun(
                dag_id=DAG_ID, run_id=RUN_ID, run_type=DagRunType.SCHEDULED, state=DagRunState.RUNNING,
                triggered_by=DagRunTriggeredByType.TIMETABLE,
            )
        )  # fmt: skip
        session.flush()
        for cluster in ("east", "west", "east"):  # three changes while a run is active
            _changed(session, synced, cluster)
        session.flush()
        queued = session.scalars(select(AssetDagRunQueue).where(AssetDagRunQueue.target_dag_id == DAG_ID)).all()
        assert len(queued) == 1  # one queue row per (asset, DAG), whatever the number of events
        assert not _due(session)  # at max_active_runs: the scheduler waits
        session.scalars(select(DagRun).where(DagRun.run_id == RUN_ID)).one().state = DagRunState.SUCCESS
        session.flush()
        assert _due(session)  # the run ended: exactly one more run is due, for all three events
        events = session.scalars(select(AssetEvent).where(AssetEvent.asset_id == synced.id)).all()
        assert [e.extra["payload"]["cluster"] for e in events] == ["east", "west", "east"]
