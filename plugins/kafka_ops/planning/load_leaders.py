"""Leadership at no byte cost: a load-aware plan's replica order evens leader bytes-in, then leaders.

Runs after the byte balancing (`load_balance.LoadBalancer`) on its `Layout`, and never changes a
replica set: it only chooses which replica of a partition comes first (its preferred leader) and
plans the election that hands it the leadership, as `leader_reorder` does for preferred-leader
counts. Reordering moves no data; rack spread is a property of the set, so it cannot change.

Who leads after the plan is what `plan.broker_loads` reports: the current leader while it stays a
replica, else the new first replica; a reordered partition is led by its new first replica (the plan
elects it). Leadership may go to a replica that is a participant (registered, not cordoned, not
drained) and, for a partition the plan does not move, in its ISR (else the election would fail);
every replica of a moved partition is in the ISR once its reassignment completes.

Which partitions: every partition the plan reassigns, and, where the planner allows it
(`reorder_unmoved`: the replica balance), the other movable partitions; a reassigned partition is
tried before an unmoved one, whose reorder adds a zero-byte reassignment and an election to the plan.
With `keep_spread` (the decommission), unmoved partitions are reordered only in step 2 and only while
the participants' leader count spread is above what it was before the plan (at least 1): the plan
touches nothing else unless its moves would leave leadership less even than it found it. A
partition's leadership moves at most once. The replication-factor change reorders only the
partitions it changes. `even_leaders` runs it for any planner, with or without a load.

1. Leader bytes-in (when rates are known): the participant leading the most bytes/s gives, to the
   follower leading the least, the leadership of the largest partition that takes neither past the
   mean's band (± `LEADER_TOLERANCE`) and keeps the leader counts in theirs (`_counts_allow`: without
   it, evening bytes by the largest leaderships piled small ones on a few brokers, a 20-broker
   rebalance leaving leader counts 141 apart where they had been 8); repeated until every participant
   is within the band or the one furthest above has nothing left to give.
2. Leader counts: the participant leading the most partitions gives the one with the smallest rate
   to its follower leading fewest, while that follower leads at least two fewer, and only where
   both brokers' leader bytes-in stay within the range step 1 left (so step 2 never undoes step 1).
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable

from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.layout import Layout
from kafka_ops.planning.load import ClusterLoad
from kafka_ops.planning.plan import Election
from kafka_ops.planning.view import ClusterView

LEADER_TOLERANCE = 0.02
"""A participant within ±2 % of the mean leader bytes-in is balanced."""
LEADER_COUNT_TOLERANCE = 0.05
"""Step 1 hands a leadership over only where the leader counts stay in a band of ±5 % of their mean
(at least ±1) or in the range they spanned (`LeaderBalancer._counts_allow`): evening bytes must not
cost the counts their balance."""
_SCAN = 64
"""Partitions tried per step before the giving broker is set aside."""


class LeaderBalancer:
    """See the module docstring. `moved`: the partitions the plan reassigns; `movable`: those it
    may touch at all (not being reassigned, not offline)."""

    def __init__(
        self,
        view: ClusterView,
        layout: Layout,
        load: ClusterLoad,
        *,
        participants: Iterable[int],
        moved: Collection[TopicPartition],
        movable: Collection[TopicPartition],
        reorder_unmoved: bool,
        keep_spread: bool = False,
    ) -> None:
        self.view, self.layout, self.load = view, layout, load
        self.participants = set(participants)
        self.reorder_unmoved, self.keep_spread = reorder_unmoved, keep_spread
        led = view.leader_counts() if keep_spread else {}
        before = [led.get(b, 0) for b in self.participants]
        self.spread_before = max(1, max(before, default=0) - min(before, default=0))
        self.moved = set(moved)
        self.rate_sum = dict.fromkeys(self.participants, 0.0)
        self.count = dict.fromkeys(self.participants, 0)
        self.lead: dict[TopicPartition, int] = {}
        for tp, replicas in layout.replicas.items():
            leader = view.leader(tp)
            if tp in self.moved and leader not in replicas:
                leader = replicas[0]
            self.lead[tp] = leader
            if leader in self.participants:
                self.rate_sum[leader] += load.bytes_in(tp)
                self.count[leader] += 1
        counts = sum(self.count.values()) / max(1, len(self.participants))
        band = max(1.0, counts * LEADER_COUNT_TOLERANCE)
        self.count_band = (counts - band, counts + band)
        """Where step 1 keeps every leader count (`_counts_allow`)."""
        self.count_range = (min(self.count.values(), default=0), max(self.count.values(), default=0))
        """The leader counts' range before step 1."""
        # per giving broker, two queues (moved partitions first), each sorted by rate descending
        self.queues: dict[int, tuple[_Queue, _Queue]] = {b: (_Queue(), _Queue()) for b in self.participants}
        for tp in movable:
            leader = self.lead[tp]
            if leader in self.participants and len(layout.replicas[tp]) > 1:
                if tp in self.moved:
                    self.queues[leader][0].tps.append(tp)
                elif reorder_unmoved or keep_spread:
                    self.queues[leader][1].tps.append(tp)
        for pair in self.queues.values():
            for queue in pair:
                queue.sort(load)
        self.reordered: set[TopicPartition] = set()

    def run(self) -> list[Election]:
        """Both steps of the module docstring; the elections the reorders need."""
        if self.load.has_rates:
            self._even_bytes()
        self._even_counts()
        return self.elections()

    # -- moving one leadership ------------------------------------------------------------------------

    def _receivers(self, tp: TopicPartition) -> list[int]:
        replicas, lead = self.layout.replicas[tp], self.lead[tp]
        if tp in self.moved:
            return [b for b in replicas if b != lead and b in self.participants]
        isr = self.view.isr(tp)
        return [b for b in replicas if b != lead and b in self.participants and b in isr]

    def _hand_over(self, tp: TopicPartition, source: int, dest: int, queue: _Queue, index: int) -> None:
        rate = self.load.bytes_in(tp)
        first = self.layout.replicas[tp][0]
        if first != dest:
            self.layout.swap(tp, first, dest)
        self.lead[tp] = dest
        self.reordered.add(tp)
        del queue.tps[index]
        del queue.neg[index]
        self.rate_sum[source] -= rate
        self.rate_sum[dest] += rate
        self.count[source] -= 1
        self.count[dest] += 1

    # -- step 1: leader bytes-in ----------------------------------------------------------------------

    def _even_bytes(self) -> None:
        mean = sum(self.rate_sum.values()) / len(self.participants)
        tol = mean * LEADER_TOLERANCE
        stuck: set[int] = set()
        while True:
            sources = [b for b in self.participants if b not in stuck]
            if not sources:
                return
            source = max(sources, key=lambda b: (self.rate_sum[b], -b))
            over = self.rate_sum[source] - mean
            if over <= tol:
                return
            queues = self.queues[source] if self.reorder_unmoved else self.queues[source][:1]
            if not any(self._give_bytes(source, queue, over + tol, mean + tol) for queue in queues):
                stuck.add(source)

    def _give_bytes(self, source: int, queue: _Queue, most: float, ceiling: float) -> bool:
        """Hand over the largest partition of at most `most` bytes/s whose follower stays under `ceiling`
        (and whose leader counts stay in range: `_counts_allow`)."""
        start = bisect.bisect_left(queue.neg, -most)
        for i in range(start, min(len(queue.tps), start + _SCAN)):
            tp, rate = queue.tps[i], -queue.neg[i]
            if rate <= 0:
                return False
            fits = [
                d for d in self._receivers(tp) if self.rate_sum[d] + rate <= ceiling and self._counts_allow(source, d)
            ]
            if fits:
                dest = min(fits, key=lambda d: (self.rate_sum[d], d))
                self._hand_over(tp, source, dest, queue, i)
                return True
        return False

    def _counts_allow(self, source: int, dest: int) -> bool:
        """A leadership from `source` to `dest` leaves both leader counts inside the band, or goes from
        more leaders to fewer (the counts' squared deviation from their mean does not grow), or, except
        with `keep_spread`, stays inside the range the counts spanned when step 1 began (after brokers
        are added it is wide, the new ones leading few: only replica moves can give them more)."""
        (low, high), given, taken = self.count_band, self.count[source], self.count[dest]
        if (taken + 1 <= high and given - 1 >= low) or given > taken:
            return True
        return not self.keep_spread and self.count_range[0] < given and taken < self.count_range[1]

    # -- step 2: leader counts ------------------------------------------------------------------------

    def _even_counts(self) -> None:
        low, high = min(self.rate_sum.values(), default=0.0), max(self.rate_sum.values(), default=0.0)
        stuck: set[int] = set()
        while True:
            sources = [b for b in self.participants if b not in stuck]
            if not sources:
                return
            source = max(sources, key=lambda b: (self.count[b], -b))
            spread = self.count[source] - min(self.count.values())
            if spread <= 1:
                return
            unmoved = self.reorder_unmoved or (self.keep_spread and spread > self.spread_before)
            queues = self.queues[source] if unmoved else self.queues[source][:1]
            if not any(self._give_one(source, queue, low, high) for queue in queues):
                stuck.add(source)

    def _give_one(self, source: int, queue: _Queue, low: float, high: float) -> bool:
        """Hand over the smallest-rate partition whose follower leads two fewer, bytes kept in range."""
        most = self.count[source] - 2
        for i in range(len(queue.tps) - 1, max(-1, len(queue.tps) - 1 - _SCAN), -1):
            tp, rate = queue.tps[i], -queue.neg[i]
            if self.rate_sum[source] - rate < low:
                continue
            fits = [d for d in self._receivers(tp) if self.count[d] <= most and self.rate_sum[d] + rate <= high]
            if fits:
                dest = min(fits, key=lambda d: (self.count[d], self.rate_sum[d], d))
                self._hand_over(tp, source, dest, queue, i)
                return True
        return False

    # -- the plan's side --------------------------------------------------------------------------------

    def elections(self) -> list[Election]:
        """One per reordered partition whose current leader stays a replica but is not its new first."""
        out = []
        for tp in sorted(self.reordered):
            replicas, leader = self.layout.replicas[tp], self.view.leader(tp)
            if leader != replicas[0] and leader in replicas:
                out.append(Election(tp[0], tp[1], leader, replicas[0]))
        return out

    def figures(self) -> dict[str, int | float | None]:
        """How many partitions were reordered (the spreads before → after are the plan's goals)."""
        return {
            "leader_reorders": len(self.reordered),
            "leader_reorders_unmoved": len(self.reordered - self.moved),
        }


def even_leaders(
    view: ClusterView,
    layout: Layout,
    load: ClusterLoad | None,
    *,
    participants: Iterable[int],
    movable: Collection[TopicPartition],
    reorder_unmoved: bool = False,
    keep_spread: bool = False,
) -> tuple[list[Election], dict[str, int | float | None]]:
    """`LeaderBalancer` on a planner's finished `layout` (the partitions it reassigns are its targets);
    without a `load` (a count-based plan) only leader counts are evened. The elections, and figures."""
    model = load if load is not None else ClusterLoad({}, {}, {}, {})
    balancer = LeaderBalancer(view, layout, model, participants=participants, moved=layout.targets().keys(),
                              movable=movable, reorder_unmoved=reorder_unmoved, keep_spread=keep_spread)  # fmt: skip
    return balancer.run(), balancer.figures()


class _Queue:
    """A broker's partitions to give, by rate descending, with the negated rates (for bisection)."""

    def __init__(self) -> None:
        self.tps: list[TopicPartition] = []
        self.neg: list[float] = []

    def sort(self, load: ClusterLoad) -> None:
        self.tps.sort(key=lambda tp: (-load.bytes_in(tp), tp))
        self.neg = [-load.bytes_in(tp) for tp in self.tps]
