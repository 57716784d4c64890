"""Run the snapshot DAG end to end with `dag.test()` against the real sandbox cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.models.asset import AssetEvent
from airflow.models.dagrun import DagRun
from airflow.utils.session import create_session
from kafka.admin import KafkaAdminClient, NewTopic
from sqlalchemy import select

from kafka_ops.airflow.assets import SNAPSHOT_ASSET
from kafka_ops.airflow.zookeeper_hook import ZooKeeperHook
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from sandbox import KRaftSandbox, SandboxCluster

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.usefixtures("airflow_db")]

DAG_ID = "kafka_metadata_snapshot"
DAG_FILE = Path(__file__).resolve().parents[2] / "dags" / f"{DAG_ID}.py"
TOPIC = "orders"


@pytest.fixture
def cluster_with_topic(dag_sandbox: SandboxCluster) -> SandboxCluster:
    """The sandbox with a 6-partition, RF 3 topic, once every replica is in sync."""
    if TOPIC not in dag_sandbox.snapshot().topics:
        admin = KafkaAdminClient(bootstrap_servers=dag_sandbox.bootstrap_servers, client_id="dag-test")
        try:
            admin.create_topics([NewTopic(TOPIC, num_partitions=6, replication_factor=3)])
        finally:
            admin.close()
    dag_sandbox.wait_for(
        lambda s: all((TOPIC, p) in s.partition_states for p in range(6)) and not s.under_replicated(),
        60,
        f"topic {TOPIC} created and in sync",
    )
    return dag_sandbox


def run_snapshot_dag(
    monkeypatch: pytest.MonkeyPatch,
    lake_root: Path,
    connection: dict[str, Any],
    bootstrap_servers: str,
    lake_format: str = "parquet",
) -> DagRun:
    monkeypatch.delenv("KAFKA_OPS_CONFIG", raising=False)  # the default cluster, `zookeeper_default`
    monkeypatch.setenv("KAFKA_OPS_LAKE", str(lake_root))
    monkeypatch.setenv("KAFKA_OPS_LAKE_FORMAT", lake_format)
    monkeypatch.setenv("AIRFLOW_CONN_ZOOKEEPER_DEFAULT", json.dumps(connection))
    kafka = {"conn_type": "kafka", "host": bootstrap_servers}
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_DEFAULT", json.dumps(kafka))
    return parsed_dag().test()


def parsed_dag() -> Any:
    """The snapshot DAG parsed under this test's settings: its clusters are those of the parse."""
    return DagBag(dag_folder=str(DAG_FILE)).dags[DAG_ID]


def snapshot_task(run: DagRun, task_id: str = "snapshot_cluster") -> Any:
    (ti,) = [ti for ti in run.get_task_instances() if ti.task_id == task_id]
    return ti


def asset_events(run: DagRun, task_id: str = "snapshot_cluster") -> list[dict[str, Any]]:
    with create_session() as session:
        events = session.scalars(
            select(AssetEvent).where(
                AssetEvent.source_dag_id == DAG_ID,
                AssetEvent.source_run_id == run.run_id,
                AssetEvent.source_task_id == task_id,
            )
        )
        return [dict(e.extra) for e in events]


@pytest.mark.parametrize("lake_format", ["parquet", "delta"])
def test_snapshot_dag_publishes_a_snapshot(
    cluster_with_topic: SandboxCluster,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    lake_format: str,
) -> None:
    connection = {
        "conn_type": "zookeeper",
        "host": cluster_with_topic.zookeeper_hosts,
        "extra": {"chroot": cluster_with_topic.chroot},
    }
    servers = cluster_with_topic.bootstrap_servers
    run = run_snapshot_dag(monkeypatch, tmp_path / "lake", connection, servers, lake_format)

    assert run.state == "success"
    lake = open_lake(tmp_path / "lake", lake_format)
    # the setting chose the writer: Delta tables (a log per table), or Parquet files with no log
    assert (tmp_path / "lake" / "partitions" / "_delta_log").is_dir() == (lake_format == "delta")
    snapshots = lake.snapshots().to_pylist()
    assert [(s["cluster"], s["broker_count"]) for s in snapshots] == [("default", 3)]
    partitions = lake.read("partitions", "default")
    rows = partitions.select(["topic", "partition"]).to_pylist()
    assert sorted(r["partition"] for r in rows if r["topic"] == TOPIC) == list(range(6))

    ti = snapshot_task(run)
    assert ti.rendered_map_index == "default"
    summary = ti.xcom_pull(task_ids="snapshot_cluster", map_indexes=0)
    assert summary["snapshot_id"] == snapshots[0]["snapshot_id"]
    assert (summary["brokers"], summary["under_replicated"], summary["offline"]) == ([1, 2, 3], 0, 0)
    assert len(json.dumps(summary)) < 1000  # a summary, not data
    # the load, read through the Kafka connection beside ZooKeeper: every replica of the topic on its brokers
    sizes = lake.read("replica_sizes", "default").to_pylist()
    assert sorted((r["partition"], r["broker_id"]) for r in sizes if r["topic"] == TOPIC) == [
        (p, b) for p in range(6) for b in (1, 2, 3)
    ]
    assert summary["disk_bytes"] == sum(r["size_bytes"] for r in sizes)

    assert asset_events(run) == [
        {"cluster": "default", "snapshot_id": summary["snapshot_id"], "lake_root": str(tmp_path / "lake")}
    ]
    assert SNAPSHOT_ASSET.uri == "x-kafka-ops://lake/snapshots"

    # consumer groups: collected beside the ZooKeeper snapshot, as their own committed batch
    (groups,) = lake.read("group_snapshots", "default").to_pylist()
    assert groups["issue_count"] == 0
    assert groups["bootstrap_servers"] == cluster_with_topic.bootstrap_servers
    groups_info = snapshot_task(run, "collect_groups").xcom_pull(task_ids="collect_groups", map_indexes=0)
    assert groups_info["snapshot_id"] == groups["snapshot_id"]
    # rated and paged at once, without an error (the shared sandbox may hold other tests' stopped groups)
    assert set(groups_info["paged"]) == {"opened", "resolved"}, groups_info["paged"]
    assert asset_events(run, "collect_groups") == [
        {"cluster": "default", "snapshot_id": groups["snapshot_id"], "lake_root": str(tmp_path / "lake")}
    ]


def test_wrong_chroot_fails_the_task_and_publishes_nothing(
    dag_sandbox: SandboxCluster,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    connection = {
        "conn_type": "zookeeper",
        "host": dag_sandbox.zookeeper_hosts,
        "extra": {"chroot": "/wrong"},
    }
    run = run_snapshot_dag(monkeypatch, tmp_path / "lake", connection, dag_sandbox.bootstrap_servers)

    assert run.state == "failed"
    ti = snapshot_task(run)
    assert ti.state == "failed"
    assert ti.try_number == 1  # a wrong chroot is not retried: no retry can fix it
    out, err = capfd.readouterr()  # dag.test() runs the task in this process: its log is here
    assert f"no /brokers under {dag_sandbox.zookeeper_hosts}/wrong" in out + err
    assert Lake(tmp_path / "lake").snapshots().num_rows == 0
    assert asset_events(run) == []
    # ...and the on-call engineer hears it (the default log sink), never silence
    sink = tmp_path / "lake" / "_alerting" / "default.alerts.jsonl"
    (page,) = [json.loads(line) for line in sink.read_text().splitlines()]
    assert (page["event"], page["key"], page["severity"]) == ("open", "cannot_see:zookeeper", "critical")
    assert page["title"] == "cannot see cluster default: the ZooKeeper snapshot failed"
    assert "NotAKafkaChroot" in page["cause"]


def test_hook_test_connection_against_the_sandbox(dag_sandbox: SandboxCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    for conn_id, chroot in (("zk_right", dag_sandbox.chroot), ("zk_wrong", "/wrong")):
        monkeypatch.setenv(
            f"AIRFLOW_CONN_{conn_id.upper()}",
            json.dumps({"conn_type": "zookeeper", "host": dag_sandbox.zookeeper_hosts, "extra": {"chroot": chroot}}),
        )
    assert ZooKeeperHook("zk_right").test_connection() == (
        True,
        f"ZooKeeper at {dag_sandbox.zookeeper_connect} holds Kafka metadata (3 broker(s) registered)",
    )
    ok, message = ZooKeeperHook("zk_wrong").test_connection()
    assert not ok and "/wrong" in message and "chroot" in message


def test_one_dag_snapshots_a_mixed_fleet(
    dag_sandbox: SandboxCluster,
    healthy_kraft_sandbox: KRaftSandbox,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A ZooKeeper cluster and a KRaft one in one settings file, `metadata_source` left at auto: the
    first has its ZooKeeper connection, the second none, so each is read from its own source."""
    settings = tmp_path / "kafka_ops.toml"
    settings.write_text(
        '[[clusters]]\nname = "zk"\nzookeeper_conn_id = "zk_zk"\nkafka_conn_id = "kafka_zk"\n'
        '[[clusters]]\nname = "k4"\nzookeeper_conn_id = "zk_k4"\nkafka_conn_id = "kafka_k4"\n'
    )
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))
    monkeypatch.setenv("KAFKA_OPS_LAKE", str(tmp_path / "lake"))
    zookeeper = {"conn_type": "zookeeper", "host": dag_sandbox.zookeeper_hosts, "extra": {"chroot": dag_sandbox.chroot}}
    monkeypatch.setenv("AIRFLOW_CONN_ZK_ZK", json.dumps(zookeeper))
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_ZK", json.dumps({"conn_type": "kafka", "host": dag_sandbox.bootstrap_servers})
    )
    kraft = {"conn_type": "kafka", "host": healthy_kraft_sandbox.bootstrap_servers}
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_K4", json.dumps(kraft))  # and no zk_k4 connection at all

    run = parsed_dag().test()

    assert run.state == "success"
    commits = {s["cluster"]: s for s in Lake(tmp_path / "lake").snapshots().to_pylist()}
    assert {c: (s["source"], s["broker_count"]) for c, s in commits.items()} == {
        "zk": ("zookeeper", 3),
        "k4": ("kraft", 3),
    }
    assert commits["k4"]["zookeeper"] is None
    assert commits["k4"]["bootstrap_servers"] == healthy_kraft_sandbox.bootstrap_servers
    quorum = Lake(tmp_path / "lake").read("quorum", "k4").to_pylist()
    assert {r["replica_id"] for r in quorum} == {101, 102, 103, 1, 2, 3}
