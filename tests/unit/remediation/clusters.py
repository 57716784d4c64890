"""Hand-built live clusters and plans for the executor's pure parts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from kafka_ops.model.cluster import ClusterSnapshot, Controller, TopicAssignment, TopicPartition
from kafka_ops.planning import Plan, plan_replication_factor
from tests.unit.planning.builders import Assignment, cluster
from tests.unit.snapshots import stat

RACKS = {1: "rack-a", 2: "rack-b", 3: "rack-c"}
CONTROLLER_MS = 1_795_000_000_000  # when the hand-built controller was elected
LAYOUT: Assignment = {"orders": {0: (1,), 1: (2,), 2: (3,), 3: (1,)}, "logs": {0: (1, 2)}}


def live(
    topics: Assignment = LAYOUT,
    *,
    snapshot_id: str = "live",
    leaders: Mapping[TopicPartition, int] | None = None,
    isr: Mapping[TopicPartition, tuple[int, ...]] | None = None,
) -> ClusterSnapshot:
    """Brokers 1-3 registered, a controller elected at `CONTROLLER_MS`, `topics` in sync unless
    `leaders` / `isr` say otherwise."""
    snap = cluster(RACKS, topics, snapshot_id=snapshot_id, leaders=leaders, isr=isr)
    snap.controller = Controller(1, CONTROLLER_MS, -1, 2, replace(stat(0, 50), ctime_ms=CONTROLLER_MS))
    snap.controller_epoch = 4
    snap.controller_epoch_stat = replace(stat(3, 50), mtime_ms=CONTROLLER_MS)
    return snap


def rf2_plan(snapshot_id: str = "base") -> Plan:
    """`orders` (4 partitions, RF 1) to RF 2, planned on `live(snapshot_id=...)`."""
    return plan_replication_factor(live(snapshot_id=snapshot_id), ["orders"], 2)


def moving(snap: ClusterSnapshot, topic: str, partition: int, target: tuple[int, ...]) -> None:
    """Make `topic-partition` in flight to `target` as the controller writes it: target + original
    replicas, adding = target - original, removing = original - target."""
    t = snap.topics[topic]
    original = t.partitions[partition]
    replicas = (*target, *(b for b in original if b not in target))
    adding = tuple(b for b in target if b not in original)
    removing = tuple(b for b in original if b not in target)
    snap.topics[topic] = TopicAssignment(
        topic,
        t.topic_id,
        {**t.partitions, partition: replicas},
        {**t.adding_replicas, **({partition: adding} if adding else {})},
        {**t.removing_replicas, **({partition: removing} if removing else {})},
        t.version,
    )


def assign(snap: ClusterSnapshot, topic: str, partition: int, replicas: tuple[int, ...]) -> None:
    """Set a partition's replicas (a finished reassignment), every replica in the ISR."""
    t = snap.topics[topic]
    t.partitions[partition] = replicas
    state = snap.partition_states[(topic, partition)]
    snap.partition_states[(topic, partition)] = replace(state, isr=replicas)
