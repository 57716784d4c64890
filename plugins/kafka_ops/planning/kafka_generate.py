"""The baseline: what `kafka-reassign-partitions --generate` would propose, and what it moves.

Kafka's `--generate` (`ReassignPartitionsCommand.calculateAssignment`) re-places every partition
of every named topic from scratch: per topic, `AdminUtils.assignReplicasToBrokers(brokers,
partitions, RF of one partition)` with a random start index and a random follower shift, rack-aware
when every given broker has a rack. It never looks at where replicas are now, which is why it moves
nearly everything. To make the comparison repeatable the two random draws come from
`random.Random(seed)` (one stream, two draws per topic, topics in name order): the figure is
Kafka's algorithm under one fixed seed, not a single possible Kafka run. With racks on some
brokers only, Kafka refuses unless `--disable-rack-aware`; this baseline then places rack-unaware,
as that flag would. The replication factor of a topic is that of its lowest partition id (Kafka
takes an arbitrary one).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping

from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.placement import kafka_assignment
from kafka_ops.planning.view import ClusterView


def generate_full_replacement(
    view: ClusterView, brokers: Collection[int], seed: int = 0
) -> dict[TopicPartition, tuple[int, ...]]:
    """Kafka's `--generate` proposal for every topic over `brokers` (see the module docstring)."""
    racks = {b: view.racks.get(b) for b in sorted(brokers)}
    if any(r is None for r in racks.values()):
        racks = dict.fromkeys(racks)
    rng = random.Random(seed)  # noqa: S311 - a repeatable baseline, not a secret
    n = len(racks)
    proposal: dict[TopicPartition, tuple[int, ...]] = {}
    for topic in sorted(view.snapshot.topics):
        ids = sorted(view.snapshot.topics[topic].partitions)
        if not ids:
            continue
        rf = len(view.assignment[(topic, ids[0])])
        start_index, shift = rng.randrange(n), rng.randrange(n)
        if rf == 0:
            continue
        placed = kafka_assignment(racks, len(ids), min(rf, n), start_index=start_index, shift=shift)
        # Kafka numbers the proposal 0..n-1; topics always have exactly those ids
        for index, partition in enumerate(ids):
            proposal[(topic, partition)] = tuple(placed[index])
    return proposal


def topics_to_move_json(view: ClusterView) -> dict[str, object]:
    """`--topics-to-move-json-file` naming every topic, to run the same comparison with Kafka's tool."""
    return {"version": 1, "topics": [{"topic": t} for t in sorted(view.snapshot.topics)]}


def moves_between(
    current: Mapping[TopicPartition, tuple[int, ...]], proposal: Mapping[TopicPartition, tuple[int, ...]]
) -> int:
    """Replicas a proposal adds to brokers that do not hold them now."""
    return sum(len(set(target) - set(current[tp])) for tp, target in proposal.items())
