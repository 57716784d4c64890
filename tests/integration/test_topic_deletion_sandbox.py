"""A topic deleted while one of its brokers is down: Kafka parks it; kafka-ops must report a stuck
deletion, not offline partitions, a sick healthy broker or a fixable election."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.gates import run_gates
from sandbox import SandboxCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "deleted_while_down"


def analysed(
    sandbox: SandboxCluster, lake: Lake, spark: SparkSession
) -> tuple[str, dict[str, list[dict[str, object]]]]:
    snap = sandbox.snapshot()
    lake.publish(snapshot_batch(snap))
    analyse(spark, lake.root, "sandbox", list(DETECTORS.values()), Thresholds())
    tables = sorted({o for d in DETECTORS.values() for o in d.outputs})
    return snap.snapshot_id, {t: lake.read(t, "sandbox", [snap.snapshot_id]).to_pylist() for t in tables}


def test_deletion_stuck_on_a_down_broker(healthy_sandbox: SandboxCluster, spark: SparkSession, tmp_path: Path) -> None:
    sandbox = healthy_sandbox
    victim = next(b for b in (3, 2, 1) if b != sandbox.controller_id())
    a, b = (x for x in (1, 2, 3) if x != victim)
    # partition 2 and 3 live on healthy brokers only: deleting them is what the down broker blocks
    assignment = {0: [a, victim], 1: [victim, b], 2: [b, a], 3: [a, b]}
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(TOPIC, replica_assignments=assignment)])
    finally:
        admin.close()
    sandbox.wait_for(lambda s: all((TOPIC, p) in s.partition_states for p in assignment), 30, "topic")
    lake = open_lake(tmp_path / "lake")
    try:
        sandbox.stop_broker(victim)
        sandbox.wait_for(lambda s: victim not in s.brokers, 60, f"broker {victim} gone")
        admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
        try:
            admin.delete_topics([TOPIC])
            assert TOPIC not in admin.list_topics()  # Kafka: the topic does not exist any more
        finally:
            admin.close()
        parked = sandbox.wait_for(
            lambda s: (
                TOPIC in s.pending_topic_deletions
                and all(s.partition_states[(TOPIC, p)].leader == -1 for p in assignment)
            ),
            60,
            "deletion parked by the controller",
        )
        assert TOPIC in parked.topics  # it cannot complete while broker `victim` is down
        snapshot_id, found = analysed(sandbox, lake, spark)

        assert not [r for r in found["isr_health"] if r["topic"] == TOPIC]
        assert not [r for r in found["leader_balance_partitions"] if r["topic"] == TOPIC]
        healthy = [r for r in found["broker_attribution"] if r["registered"]]
        assert {r["broker_id"] for r in healthy} == {a, b}
        assert all(r["cause"] is None and r["severity"] == "ok" for r in healthy), healthy
        (deletion,) = [r for r in found["topic_deletions"] if r["topic"] == TOPIC]
        assert (deletion["stuck"], deletion["offline_brokers"], deletion["partitions"]) == (True, [victim], 4)
        assert deletion["severity"] == "warning" and f"broker {victim}" in str(deletion["action"])
        report = run_gates(lake, "sandbox", snapshot_id, data_docs=False)
        named = [g.name for g in report.results if any(r.get("topic") == TOPIC for r in g.rows)]
        assert named == []
    finally:
        if not sandbox.broker_running(victim):
            sandbox.start_broker(victim)
    # the broker back: Kafka completes the deletion, and the finding goes away
    sandbox.wait_for(lambda s: TOPIC not in s.topics and TOPIC not in s.pending_topic_deletions, 120, "deletion done")
    sandbox.wait_healthy(180)
    _, after = analysed(sandbox, lake, spark)
    assert not [r for r in after["topic_deletions"] if r["topic"] == TOPIC]
