"""A planner's working copy of the assignment, with the per-broker counters it balances on.

Planners never mutate the snapshot: they copy the assignment into a `Layout`, change the copy
one replica at a time (the counters follow), then diff it against the snapshot into a plan.
"""

from __future__ import annotations

from collections import Counter

from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.view import ClusterView


class Layout:
    """Replica lists plus replicas, preferred leaders and (topic, broker) replicas per broker."""

    def __init__(self, view: ClusterView) -> None:
        self.view = view
        self.replicas: dict[TopicPartition, list[int]] = {tp: list(r) for tp, r in view.assignment.items()}
        items = self.replicas.items()
        self.count: Counter[int] = Counter(b for replicas in self.replicas.values() for b in replicas)
        self.preferred: Counter[int] = Counter(replicas[0] for replicas in self.replicas.values() if replicas)
        self.topic_count: Counter[tuple[str, int]] = Counter((tp[0], b) for tp, replicas in items for b in replicas)

    def replace(self, tp: TopicPartition, old: int, new: int) -> None:
        """`new` takes `old`'s slot, so the preferred-leader order of the others is unchanged."""
        replicas = self.replicas[tp]
        slot = replicas.index(old)
        replicas[slot] = new
        self._moved(tp[0], old, -1)
        self._moved(tp[0], new, +1)
        if slot == 0:
            self.preferred[old] -= 1
            self.preferred[new] += 1

    def append(self, tp: TopicPartition, new: int) -> None:
        self.replicas[tp].append(new)
        self._moved(tp[0], new, +1)

    def remove(self, tp: TopicPartition, old: int) -> None:
        replicas = self.replicas[tp]
        if replicas[0] == old:
            self.preferred[old] -= 1
            if len(replicas) > 1:
                self.preferred[replicas[1]] += 1
        replicas.remove(old)
        self._moved(tp[0], old, -1)

    def swap(self, tp: TopicPartition, a: int, b: int) -> None:
        """Exchange two replicas' slots (no data moves); only the preferred leader may change."""
        replicas = self.replicas[tp]
        first = replicas[0]
        i, j = replicas.index(a), replicas.index(b)
        replicas[i], replicas[j] = b, a
        if replicas[0] != first:
            self.preferred[first] -= 1
            self.preferred[replicas[0]] += 1

    def _moved(self, topic: str, broker: int, delta: int) -> None:
        self.count[broker] += delta
        self.topic_count[(topic, broker)] += delta

    def targets(self) -> dict[TopicPartition, tuple[int, ...]]:
        """The partitions whose replica list differs from the snapshot, with their new list."""
        current = self.view.assignment
        return {tp: tuple(r) for tp, r in self.replicas.items() if tuple(r) != current[tp]}
