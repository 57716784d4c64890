"""Synthetic `ClusterSnapshot`s for the planning benchmark (in memory: planners need no cluster).

`healthy_cluster` places every topic as `kafka-topics --create` would: Kafka's rack-aware
`assignReplicasToBrokers` with a random start index and shift per topic (seeded), so replica
counts are close to even, as on a real cluster that only ever created topics. `skewed_cluster`
places each partition on distinct racks (rack spread kept) but favours some racks and brokers, as
a cluster looks after years of manual reassignments. `add_brokers` registers new, empty brokers.
Every partition is led by its first replica with a full ISR.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from kafka_ops.model.cluster import Broker, ClusterSnapshot, Controller, PartitionState, TopicAssignment, ZnodeStat
from kafka_ops.planning.placement import kafka_assignment

AT = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
STAT = ZnodeStat(0, 10, 10, 1_795_000_000_000, 1_795_000_000_000)
RF_MIX = ((3, 0.80), (2, 0.15), (1, 0.05))
"""(replication factor, share of topics): mostly RF 3, some RF 2 and RF 1 topics."""


def rack_name(index: int) -> str:
    return f"rack-{chr(ord('a') + index)}"


def broker(broker_id: int, rack: str) -> Broker:
    host = f"10.0.{broker_id // 250}.{broker_id % 250}"
    return Broker(broker_id, host, 9092, (f"PLAINTEXT://{host}:9092",), {"PLAINTEXT": "PLAINTEXT"}, -1,
                  1_795_000_000_000, rack, {}, 5, 1000 + broker_id)  # fmt: skip


def _empty(cluster: str, brokers: int, racks: int) -> ClusterSnapshot:
    snap = ClusterSnapshot(cluster=cluster, snapshot_id=f"{cluster}-0001", captured_at=AT, zookeeper="zk:2181/bench")
    snap.brokers = {b: broker(b, rack_name((b - 1) % racks)) for b in range(1, brokers + 1)}
    snap.controller = Controller(1, 1_795_000_000_000, -1, 2, STAT)
    snap.controller_epoch = 7
    return snap


def _rf(rng: random.Random) -> int:
    roll, acc = rng.random(), 0.0
    for rf, share in RF_MIX:
        acc += share
        if roll < acc:
            return rf
    return RF_MIX[0][0]


def _add_topic(snap: ClusterSnapshot, name: str, assignment: dict[int, list[int]]) -> None:
    snap.topics[name] = TopicAssignment(name, f"id-{name}", {p: tuple(r) for p, r in assignment.items()}, {}, {}, 3)
    for p, replicas in assignment.items():
        snap.partition_states[(name, p)] = PartitionState(name, p, replicas[0], 3, 7, tuple(replicas), None, STAT)


def healthy_cluster(
    *, partitions: int = 100_000, topics: int = 2_000, brokers: int = 60, racks: int = 3, seed: int = 7
) -> ClusterSnapshot:
    """Topics placed by Kafka's own algorithm (see the module docstring)."""
    rng = random.Random(seed)
    snap = _empty("healthy", brokers, racks)
    rack_map: dict[int, str | None] = {b: m.rack for b, m in snap.brokers.items()}
    per_topic = partitions // topics
    for t in range(topics):
        start_index, shift = rng.randrange(brokers), rng.randrange(brokers)
        placed = kafka_assignment(rack_map, per_topic, _rf(rng), start_index=start_index, shift=shift)
        _add_topic(snap, f"topic-{t:05d}", placed)
    return snap


def skewed_cluster(
    *,
    partitions: int = 100_000,
    topics: int = 2_000,
    brokers: int = 60,
    racks: int = 3,
    seed: int = 11,
    heavy_brokers: int = 10,
    heavy_weight: float = 3.0,
    heavy_rack_weight: float = 1.5,
) -> ClusterSnapshot:
    """Rack spread kept, counts skewed: brokers 1..`heavy_brokers` weigh `heavy_weight`, and the
    first rack `heavy_rack_weight` when a partition has fewer replicas than there are racks."""
    rng = random.Random(seed)
    snap = _empty("skewed", brokers, racks)
    members: dict[str, list[int]] = {}
    for b, m in sorted(snap.brokers.items()):
        members.setdefault(str(m.rack), []).append(b)
    names = sorted(members)
    rack_weights = [heavy_rack_weight if i == 0 else 1.0 for i in range(len(names))]
    per_topic = partitions // topics
    for t in range(topics):
        rf = _rf(rng)
        assignment: dict[int, list[int]] = {}
        for p in range(per_topic):
            chosen: list[str] = []
            while len(chosen) < rf:
                rack = rng.choices(names, rack_weights)[0]
                if rack not in chosen:
                    chosen.append(rack)
            assignment[p] = [
                rng.choices(members[r], [heavy_weight if b <= heavy_brokers else 1.0 for b in members[r]])[0]
                for r in chosen
            ]
        _add_topic(snap, f"topic-{t:05d}", assignment)
    return snap


def add_brokers(snap: ClusterSnapshot, count: int) -> list[int]:
    """Register `count` new empty brokers, racks continuing the round robin; returns their ids."""
    racks = len({m.rack for m in snap.brokers.values()})
    first = max(snap.brokers) + 1
    new = list(range(first, first + count))
    for b in new:
        snap.brokers[b] = broker(b, rack_name((b - 1) % racks))
    return new
