"""A snapshot corrupted on purpose is marked untrusted and blocks remediation planning."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_ops.airflow.remediation_tasks import make_plan
from kafka_ops.errors import SnapshotUntrusted
from kafka_ops.lake.open import open_lake
from kafka_ops.planning.request import RemediationRequest
from kafka_ops.settings import load_settings
from sandbox import SandboxCluster
from tests.integration.corrupt_chroot import corrupted_copy

pytestmark = pytest.mark.integration

TOPIC = "integrity_t"


def test_isr_outside_the_replicas_is_untrusted_and_nothing_is_planned(
    healthy_sandbox: SandboxCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = healthy_sandbox
    if TOPIC not in sandbox.snapshot().topics:
        admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
        try:
            admin.create_topics([NewTopic(TOPIC, 3, 2)])
        finally:
            admin.close()
        sandbox.wait_for(lambda s: len([p for p in s.partition_states if p[0] == TOPIC]) == 3, 30, "topic")
    replicas = list(sandbox.snapshot().replicas(TOPIC, 0))
    outsider = next(b for b in (1, 2, 3) if b not in replicas)
    chroot = f"/corrupt-{uuid.uuid4().hex[:6]}"
    corrupted_copy(sandbox, chroot, TOPIC, 0, isr=[*replicas, outsider])  # ISR not a subset of the replicas

    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(
        f'lake_root = "{tmp_path / "lake"}"\n[[clusters]]\nname = "corrupt"\nzookeeper_conn_id = "zk_corrupt"\n'
        "writes_enabled = true\n"
    )
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    connection = {"conn_type": "zookeeper", "host": sandbox.zookeeper_hosts, "extra": {"chroot": chroot}}
    monkeypatch.setenv("AIRFLOW_CONN_ZK_CORRUPT", json.dumps(connection))
    cluster = load_settings().cluster("corrupt")
    request = RemediationRequest(
        cluster=cluster,
        lake_root=str(tmp_path / "lake"),
        action="replication_factor",
        dry_run=True,
        plan_id=None,
        topics=(TOPIC,),
        replication_factor=3,
    )

    with pytest.raises(SnapshotUntrusted, match="isr_subset_of_replicas"):
        make_plan(request, actor="test")

    lake = open_lake(tmp_path / "lake")
    (validation,) = lake.read("snapshot_validations", "corrupt").to_pylist()
    assert validation["trusted"] is False and validation["failed"] == ["isr_subset_of_replicas"]
    details = json.loads(validation["details"])
    (row,) = details["failed"]["isr_subset_of_replicas"]["rows"]
    assert (row["topic"], row["partition"]) == (TOPIC, 0)
    assert lake.read("remediation_plans", "corrupt").num_rows == 0  # nothing planned on it
