"""Effective min.insync.replicas against what Kafka 3.9.1 enforces: a real acks=all producer per partition."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError, NotEnoughReplicasError
from kazoo.client import KazooClient
from pyspark.sql import SparkSession

from kafka_ops.airflow import snapshot_paging
from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.thresholds import Thresholds
from sandbox import SandboxCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STOPPED = 3
TOPICS = {
    # RF 2: with broker 3 stopped, p0/p3 are led by 1 and p1/p4 by 2, each with an ISR of one
    "mi_rf2": {0: [1, 3], 1: [2, 3], 2: [1, 2], 3: [3, 1], 4: [3, 2]},
    "mi_override": {0: [1, 3]},  # topic override 1 beats every broker value
    "mi_rf1": {0: [1], 1: [2]},  # RF 1 below min ISR 2
}
TOPIC_CONFIGS = {"mi_override": {"min.insync.replicas": "1"}}
BROKER_CONFIGS = {"<default>": "2", "1": "2", "2": "1"}


def write_broker_config(zk: KazooClient, chroot: str, entity: str, value: str | None) -> None:
    """Set (or clear) min.insync.replicas of `/config/brokers/<entity>` as Kafka's ZooKeeper-mode
    ConfigCommand does: the entity znode, then a change notification the brokers act on."""
    path = f"{chroot}/config/brokers/{entity}"
    data = json.dumps({"version": 1, "config": {} if value is None else {"min.insync.replicas": value}}).encode()
    if zk.exists(path):
        zk.set(path, data)
    else:
        zk.create(path, data, makepath=True)
    note = json.dumps({"version": 2, "entity_path": f"brokers/{entity}"}).encode()
    zk.create(f"{chroot}/config/changes/config_change_", note, sequence=True, makepath=True)


def refused_by_kafka(bootstrap: str) -> set[tuple[str, int]]:
    """The partitions where an acks=all send gets NotEnoughReplicas (every other send must succeed)."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=0, request_timeout_ms=10_000)
    refused = set()
    try:
        for topic, assignment in TOPICS.items():
            for partition in assignment:
                for attempt in range(10):
                    try:
                        producer.send(topic, b"probe", partition=partition).get(timeout=30)
                        break
                    except NotEnoughReplicasError:
                        refused.add((topic, partition))
                        break
                    except KafkaError:  # a leader move not yet in the producer's metadata
                        if attempt == 9:
                            raise
                        time.sleep(1)
    finally:
        producer.close()
    return refused


@pytest.fixture
def min_isr_lab(healthy_sandbox: SandboxCluster) -> Iterator[SandboxCluster]:
    sandbox = healthy_sandbox
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
    zk = KazooClient(hosts=sandbox.zookeeper_hosts)
    zk.start()
    try:
        existing = set(sandbox.snapshot().topics)
        admin.create_topics(
            [
                NewTopic(topic, replica_assignments=assignment, topic_configs=TOPIC_CONFIGS.get(topic, {}))
                for topic, assignment in TOPICS.items()
                if topic not in existing
            ]
        )
        for entity, value in BROKER_CONFIGS.items():
            write_broker_config(zk, sandbox.chroot, entity, value)
        sandbox.wait_for(
            lambda s: all((t, p) in s.partition_states for t, a in TOPICS.items() for p in a), 30, "topics"
        )
        yield sandbox
    finally:
        # the sandbox is shared by the whole session: leave no broker config and no topic behind
        for entity in BROKER_CONFIGS:
            write_broker_config(zk, sandbox.chroot, entity, None)
        zk.stop()
        zk.close()
        if not sandbox.broker_running(STOPPED):
            sandbox.start_broker(STOPPED)
        sandbox.wait_healthy(180)
        admin.close()
        admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
        try:
            admin.delete_topics(list(TOPICS))
        finally:
            admin.close()
        sandbox.wait_for(lambda s: not set(TOPICS) & set(s.topics), 60, "test topics deleted")


def test_under_min_isr_is_what_an_acks_all_producer_meets(
    min_isr_lab: SandboxCluster, spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = min_isr_lab
    sandbox.stop_broker(STOPPED)
    ours = {(t, p) for t, a in TOPICS.items() for p in a}
    sandbox.wait_for(
        lambda s: (
            STOPPED not in s.brokers
            and all(STOPPED not in s.partition_states[tp].isr and s.partition_states[tp].leader != -1 for tp in ours)
        ),
        90,
        f"broker {STOPPED} out of every ISR",
    )
    time.sleep(3)  # the brokers act on the config change notifications within milliseconds
    refused = refused_by_kafka(sandbox.bootstrap_servers)
    # measured, not assumed: broker 2's own value (1) beats the cluster default (2), the topic override
    # beats both, and RF 1 below min ISR 2 still takes acks=all writes (Kafka caps min ISR at the RF)
    assert refused == {("mi_rf2", 0), ("mi_rf2", 3)}

    lake = open_lake(tmp_path / "lake")
    snap = sandbox.snapshot()
    lake.publish(snapshot_batch(snap))
    analyse(spark, lake.root, "sandbox", [DETECTORS["isr_health"]], Thresholds())
    rows = {(r["topic"], r["partition"]): r for r in lake.read("isr_health", "sandbox", [snap.snapshot_id]).to_pylist()}
    under = {tp for tp in ours if rows[tp]["under_min_isr"] and not rows[tp]["offline"]}
    assert under == refused
    assert (rows[("mi_rf2", 1)]["min_isr"], rows[("mi_rf2", 1)]["min_isr_source"]) == (1, "broker")
    assert (rows[("mi_rf2", 0)]["min_isr"], rows[("mi_rf2", 0)]["min_isr_source"]) == (2, "broker")
    assert rows[("mi_override", 0)]["min_isr_source"] == "topic"
    rf1 = rows[("mi_rf1", 0)]
    assert (rf1["min_isr"], rf1["min_isr_configured"], rf1["min_isr_source"]) == (1, 2, "broker")
    assert rf1["status"] == "at_min_isr"
    assert refused_by_kafka(sandbox.bootstrap_servers) == refused  # still the same: nothing raced

    # paged from the snapshot: the partitions' page reaches the team that owns their topics, the dead
    # broker's reaches the cluster's on-call. The team owns every topic: on the shared sandbox other tests'
    # RF-2 topics on broker 3 are under this test's cluster-wide min ISR too, and a page about topics of
    # several owners (or of none) would rightly go to the on-call instead.
    team = tmp_path / "mi-team.jsonl"
    monkeypatch.setenv("AIRFLOW_CONN_MI_TEAM", json.dumps({"conn_type": "fs", "extra": {"path": str(team)}}))
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(f'lake_root = "{lake.root}"\n[[clusters]]\nname = "sandbox"\n[[owners]]\nname = "mi-team"\n'
                        'topics = [".*"]\nalert_conn_ids = ["mi_team"]\n')  # fmt: skip
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    monkeypatch.delenv("KAFKA_OPS_LAKE_FORMAT", raising=False)
    snapshot_paging.page_from_snapshot("sandbox", snap.snapshot_id, datetime.now(UTC), "kafka_metadata_snapshot", "r1")
    every = lake.read("isr_health", "sandbox", [snap.snapshot_id]).to_pylist()
    under_topics = sorted({r["topic"] for r in every if r["under_min_isr"] and not r["offline"]})
    assert "mi_rf2" in under_topics and not {"mi_override", "mi_rf1"} & set(under_topics)
    mine = {e["key"]: e for e in map(json.loads, team.read_text().splitlines())}
    oncall = [
        json.loads(line) for line in (Path(lake.root) / "_alerting" / "sandbox.alerts.jsonl").read_text().splitlines()
    ]
    paged = mine["no_under_min_isr_partitions"]
    assert (paged["owner"], sorted(paged["topics"])) == ("mi-team", under_topics)
    assert [(e["key"], e["owner"]) for e in oncall] == [("no_broker_down", None)]
