"""The reassignment DAG on a KRaft cluster (Kafka 4.4 sandbox, no ZooKeeper connection at all): the dry
run snapshots it through the Admin API, validates and plans; executing the reviewed plan writes through
the Admin API and reads live state the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.models.dagrun import DagRun
from kafka.admin import NewTopic

from kafka_ops.airflow.remediation_params import form_params
from kafka_ops.lake.open import open_lake
from kafka_ops.planning.request import FORMS
from kafka_ops.remediation import load_plan
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.kraft.collector import KRaftCollector
from kafka_ops.validation.integrity import is_trusted
from sandbox import KRaftSandbox

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.usefixtures("airflow_db")]

CLUSTER = "k4"
REASSIGNMENT = "kafka_partition_reassignment"
TOPIC = "kr_dag_rf"


@pytest.fixture
def kraft_settings(healthy_kraft_sandbox: KRaftSandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    kafka = {
        "conn_type": "kafka",
        "host": healthy_kraft_sandbox.bootstrap_servers,
        "extra": {"request_timeout_ms": 10_000},
    }
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_K4", json.dumps(kafka))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    path = tmp_path / "kafka-ops.toml"
    path.write_text(
        f'lake_root = "{tmp_path / "lake"}"\n[[clusters]]\nname = "{CLUSTER}"\nzookeeper_conn_id = "zk_k4"\n'
        'kafka_conn_id = "kafka_k4"\nwrites_enabled = true\nremediation_controller_quiet_seconds = 0\n'
    )  # no zk_k4 connection: metadata_source auto reads the cluster through the Admin API
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(path))
    return tmp_path / "lake"


def trigger(dag_bag: DagBag, **conf: Any) -> DagRun:
    defaults = {name: param.value for name, param in form_params(FORMS[REASSIGNMENT]).items()}
    return dag_bag.dags[REASSIGNMENT].test(run_conf={**defaults, "cluster": CLUSTER, **conf})


def xcom(run: DagRun, task_id: str) -> Any:
    (ti,) = [ti for ti in run.get_task_instances() if ti.task_id == task_id]
    return ti.xcom_pull(task_ids=task_id)


def test_replication_factor_dry_run_then_execute_on_kraft(
    healthy_kraft_sandbox: KRaftSandbox, kraft_settings: Path, dag_bag: DagBag
) -> None:
    cluster = healthy_kraft_sandbox
    target = KafkaTarget(cluster.bootstrap_servers)
    with cluster.admin() as admin:
        if TOPIC not in admin.list_topics():
            admin.create_topics([NewTopic(TOPIC, replica_assignments={0: [1], 1: [2], 2: [3]})])
    cluster.wait_for(lambda: (TOPIC, 2) in KRaftCollector(CLUSTER, target).collect().partition_states, 60, TOPIC)
    form = {"action": "replication_factor", "throttle_bytes_per_s": 20_000_000, "batch_size": 2}

    run = trigger(dag_bag, **form, topics=[TOPIC], replication_factor=2)

    assert run.state == "success"
    summary = xcom(run, "plan")
    lake = open_lake(kraft_settings)
    plan = load_plan(lake, CLUSTER, summary["plan_id"])
    assert (summary["kind"], summary["moves"]) == ("replication_factor", 3)
    assert is_trusted(lake, CLUSTER, plan.snapshot_id)
    (commit,) = [s for s in lake.snapshots().to_pylist() if s["snapshot_id"] == plan.snapshot_id]
    assert commit["source"] == "kraft"

    run = trigger(dag_bag, **form, dry_run=False, plan_id=plan.plan_id)

    assert run.state == "success"
    report = xcom(run, "execute")
    assert (report["status"], report["throttles_removed"]) == ("done", True)
    after = KRaftCollector(CLUSTER, target).collect()
    for m in plan.reassignments:
        assert after.topics[TOPIC].partitions[m.partition] == m.target
        assert sorted(after.partition_states[(TOPIC, m.partition)].isr) == sorted(m.target)
