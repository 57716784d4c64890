"""Leader balance without data movement: reorder replica lists, then elect.

Leadership goes to a partition's preferred replica (its first), so evening the preferred leaders
over the live brokers evens the leaders once elections run. Reordering a replica list is a
reassignment to the same brokers: the controller rewrites the assignment and copies no data
(moves = 0), and a preferred-leader election then moves leadership to the new first replica.

Targets: the partitions are spread floor/ceil over the live brokers (`bounds.spread_evenly`, the
extra units to the brokers that are preferred most now; a broker that is not registered gets 0).
The fewest reorders is Σ max(0, preferred_b − target_b) (`lower_bound_changes`), since each
reorder takes one preferred leadership off one broker; the plan meets it unless the constraints
below leave a broker with nothing to give.

Each reorder swaps the first replica of a partition whose preferred leader is above its target
with another replica that is live, in the ISR (else the election would fail) and below its target:
preferably the current leader (then no election is needed: it fixes a partition led by a
non-preferred replica for free), else the broker furthest below its target, then the lower id.
The broker furthest above its target gives first; from a broker, partitions in (topic, partition)
order. When no direct swap is left for a broker still above its target (its partitions' other
replicas are all at their targets), a second pass looks for the shortest chain of swaps (1 → 2 on
one partition, 2 → 3 on another, ...) ending at a broker below its target: the brokers in between
keep their counts, and the chain costs one reorder per link (so the plan may exceed the bound).
An election is planned for every reordered partition not already led by its new first replica.

Skipped: partitions whose preferred leader is above target but that are being reassigned,
offline, without state, or of a topic being deleted, and those cut off by `max_partitions`.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator, Sequence

from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.planning.bounds import lower_bound_moves, spread_evenly
from kafka_ops.planning.layout import Layout
from kafka_ops.planning.plan import Election, Plan, Skip, build_plan
from kafka_ops.planning.requests import check_cap, scope
from kafka_ops.planning.view import CAP_CHANGES, ClusterView


def plan_leader_reorder(
    snapshot: ClusterSnapshot, *, topics: Sequence[str] | None = None, max_partitions: int | None = None
) -> Plan:
    """Plan replica-list reorders (no data movement) and elections that even preferred leaders."""
    view = ClusterView(snapshot)
    check_cap("max_partitions", max_partitions)
    layout = Layout(view)
    before = dict(layout.preferred)
    targets = spread_evenly(sum(before.values()), sorted(view.live), before)
    targets.update({b: 0 for b in before if b not in view.live})

    skipped: list[Skip] = []
    usable: list[TopicPartition] = []
    for tp in scope(view, topics):
        replicas = view.assignment[tp]
        reason = view.blocking_reason(tp) if replicas else None
        if reason is not None and before[replicas[0]] > targets[replicas[0]]:
            skipped.append(Skip(tp[0], tp[1], reason))
        elif reason is None and len(replicas) > 1:
            usable.append(tp)
    reorder = _Reorderer(view, layout, targets, usable, max_partitions)
    reorder.direct()
    reorder.chains()
    if reorder.capped:
        skipped.extend(Skip(t, p, CAP_CHANGES) for t, p in reorder.left_over())

    new_targets = layout.targets()
    elections = [
        Election(tp[0], tp[1], view.leader(tp), target[0])
        for tp, target in new_targets.items()
        if view.leader(tp) != target[0]
    ]
    brokers = sorted(view.live)
    figures = {
        "lower_bound_changes": lower_bound_moves(before, targets),
        "reordered": len(new_targets),
        "residual_excess": reorder.residual(),
        "preferred_spread_before": _spread(before, brokers),
        "preferred_spread_after": _spread(dict(layout.preferred), brokers),
    }
    request = {"topics": None if topics is None else sorted(topics), "max_partitions": max_partitions}
    return build_plan("leader_reorder", view, request, new_targets, elections=elections, skipped=skipped,
                      figures=figures)  # fmt: skip


class _Reorderer:
    """The two passes described in the module docstring."""

    def __init__(
        self,
        view: ClusterView,
        layout: Layout,
        targets: dict[int, int],
        usable: list[TopicPartition],
        max_partitions: int | None,
    ) -> None:
        self.view, self.layout, self.targets, self.max_partitions = view, layout, targets, max_partitions
        self.usable = usable
        self.changed: set[TopicPartition] = set()
        self.capped = False

    def excess(self, b: int) -> int:
        return self.layout.preferred[b] - self.targets.get(b, 0)

    def residual(self) -> int:
        return sum(max(0, self.excess(b)) for b in self.targets)

    def _room(self, tp: TopicPartition) -> bool:
        """Whether the cap allows touching `tp` (a partition already reordered is free)."""
        if tp in self.changed or self.max_partitions is None or len(self.changed) < self.max_partitions:
            return True
        self.capped = True
        return False

    def _followers(self, tp: TopicPartition) -> Iterator[int]:
        """Replicas that could lead `tp`: not first, live and in the ISR."""
        isr = self.view.isr(tp)
        return (b for b in self.layout.replicas[tp][1:] if b in self.view.live and b in isr)

    def _swap(self, tp: TopicPartition, to: int) -> None:
        self.layout.swap(tp, self.layout.replicas[tp][0], to)
        self.changed.add(tp)

    def direct(self) -> None:
        queues: dict[int, deque[TopicPartition]] = {}
        for tp in self.usable:
            first = self.layout.replicas[tp][0]
            if self.excess(first) > 0:
                queues.setdefault(first, deque()).append(tp)
        heap = [(-self.excess(b), b) for b in queues]
        heapq.heapify(heap)
        while heap:
            _, source = heapq.heappop(heap)
            queue = queues[source]
            while queue:
                tp = queue.popleft()
                receiver = self._receiver(tp)
                if receiver is not None and self._room(tp):
                    self._swap(tp, receiver)
                    break
            if self.excess(source) > 0 and queue:
                heapq.heappush(heap, (-self.excess(source), source))

    def _receiver(self, tp: TopicPartition) -> int | None:
        leader = self.view.leader(tp)
        eligible = [b for b in self._followers(tp) if self.excess(b) < 0]
        return min(eligible, key=lambda b: (b != leader, self.excess(b), b)) if eligible else None

    def chains(self) -> None:
        edges: dict[int, dict[int, list[TopicPartition]]] = {}
        for tp in self.usable:
            for b in self._followers(tp):
                edges.setdefault(self.layout.replicas[tp][0], {}).setdefault(b, []).append(tp)
        for source in sorted(self.targets, key=lambda b: (-self.excess(b), b)):
            while self.excess(source) > 0 and not self.capped:
                path = self._shortest_chain(source, edges)
                if path is None:
                    break
                for tp, to in path:
                    self._swap(tp, to)
                    for b in self._followers(tp):
                        edges.setdefault(to, {}).setdefault(b, []).append(tp)

    def _edge(self, edges: dict[int, dict[int, list[TopicPartition]]], u: int, v: int) -> TopicPartition | None:
        """A partition led (preferred) by `u` that `v` could lead; stale entries are dropped."""
        candidates = edges.get(u, {}).get(v, [])
        while candidates:
            tp = candidates[-1]
            if self.layout.replicas[tp][0] == u and self._room(tp):
                return tp
            candidates.pop()
        return None

    def _shortest_chain(
        self, source: int, edges: dict[int, dict[int, list[TopicPartition]]]
    ) -> list[tuple[TopicPartition, int]] | None:
        """Breadth-first from `source` to a broker below its target: [(partition, new first)]."""
        came_from: dict[int, tuple[int, TopicPartition]] = {}
        frontier, seen = [source], {source}
        while frontier:
            following: list[int] = []
            for u in frontier:
                for v in sorted(edges.get(u, {})):
                    if v in seen:
                        continue
                    tp = self._edge(edges, u, v)
                    if tp is None:
                        continue
                    seen.add(v)
                    came_from[v] = (u, tp)
                    if self.excess(v) < 0:
                        return self._path(came_from, source, v)
                    following.append(v)
            frontier = following
        return None

    @staticmethod
    def _path(
        came_from: dict[int, tuple[int, TopicPartition]], source: int, end: int
    ) -> list[tuple[TopicPartition, int]]:
        path: list[tuple[TopicPartition, int]] = []
        node = end
        while node != source:
            u, tp = came_from[node]
            path.append((tp, node))
            node = u
        return path[::-1]

    def left_over(self) -> list[TopicPartition]:
        """Partitions the cap cut off: as many as each broker is still above target."""
        out: list[TopicPartition] = []
        given: dict[int, int] = {}
        for tp in self.usable:
            first = self.layout.replicas[tp][0]
            if tp not in self.changed and given.get(first, 0) < self.excess(first):
                given[first] = given.get(first, 0) + 1
                out.append(tp)
        return out


def _spread(counts: dict[int, int], brokers: list[int]) -> int:
    values = [counts.get(b, 0) for b in brokers]
    return max(values) - min(values) if values else 0
