"""On the sandbox: reassignments that start and complete between two snapshots are not ISR flaps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import TopicPartition
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors import isr_events
from kafka_ops.lake.open import open_lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.thresholds import Thresholds
from sandbox import SandboxCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "flap_after_move"
BEFORE = {0: [1, 2], 1: [2, 3], 2: [3, 1]}
# a move (3 in, 2 out: the leader-epoch bumps of phases A and B and of 2's removal), a growth
# (phases A and B) and a reorder (phase B only)
AFTER = {0: [3, 1], 1: [2, 3, 1], 2: [1, 3]}


def states(snap: ClusterSnapshot) -> dict[int, tuple[int, int]]:
    """partition -> (partition epoch, leader epoch)."""
    return {
        p: (snap.partition_states[(TOPIC, p)].stat.version, snap.partition_states[(TOPIC, p)].leader_epoch)
        for p in BEFORE
    }


@pytest.fixture
def deleted_after(healthy_sandbox: SandboxCluster) -> Iterator[SandboxCluster]:
    """The topic is left with mixed replication factors (the grown partition): it goes after the test, so the
    session sandbox's later snapshots stay trusted."""
    yield healthy_sandbox
    admin = KafkaAdminClient(bootstrap_servers=healthy_sandbox.bootstrap_servers)
    try:
        if TOPIC in admin.list_topics():
            admin.delete_topics([TOPIC])
    finally:
        admin.close()
    healthy_sandbox.wait_for(lambda s: TOPIC not in s.topics, 120, f"{TOPIC} deleted")


def test_reassignment_completed_between_snapshots_is_not_flapping(
    deleted_after: SandboxCluster, spark: SparkSession, tmp_path: Path
) -> None:
    sandbox, lake = deleted_after, open_lake(tmp_path / "lake")
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(TOPIC, replica_assignments=BEFORE)])
        first = sandbox.wait_for(
            lambda s: all(
                (TOPIC, p) in s.partition_states and sorted(s.partition_states[(TOPIC, p)].isr) == sorted(r)
                for p, r in BEFORE.items()
            ),
            60,
            f"{TOPIC} created with full ISRs",
        )
        lake.publish(snapshot_batch(first))
        admin.alter_partition_reassignments({TopicPartition(TOPIC, p): r for p, r in AFTER.items()})
        second = sandbox.wait_for(
            lambda s: (
                {p: list(r) for p, r in s.topics[TOPIC].partitions.items()} == AFTER
                and not s.topics[TOPIC].adding_replicas
                and not s.topics[TOPIC].removing_replicas
                and all(sorted(s.partition_states[(TOPIC, p)].isr) == sorted(r) for p, r in AFTER.items())
            ),
            120,
            f"{TOPIC} reassigned",
        )
    finally:
        admin.close()
    lake.publish(snapshot_batch(second))
    # the controller's writes the detector must account for: more than the ISR changes a snapshot sees
    before, after = states(first), states(second)
    rises = {p: (after[p][0] - before[p][0], after[p][1] - before[p][1]) for p in BEFORE}
    assert rises == {0: (4, 3), 1: (3, 2), 2: (1, 1)}, rises

    analyse(spark, str(lake.root), "sandbox", [isr_events.DETECTOR], Thresholds())
    flapping = lake.read("isr_flapping", "sandbox", [second.snapshot_id]).to_pylist()
    assert [r for r in flapping if r["topic"] == TOPIC] == []
    events = lake.read("isr_events", "sandbox", [second.snapshot_id]).to_pylist()
    assert {(e["partition"], e["event"], e["replica"]) for e in events if e["topic"] == TOPIC} == {
        (0, "expand", 3), (0, "shrink", 2), (1, "expand", 1),
    }  # fmt: skip
