"""Leadership at no byte cost: a load-aware plan's replica order evens leader counts, then leader bytes-in.

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
With `keep_spread` (the decommission), unmoved partitions are reordered only while the participants'
leader count spread is above what it was before the plan (at least 1): the plan touches nothing else
unless its moves would leave leadership less even than it found it. A partition's leadership moves at
most once. The replication-factor change reorders only the partitions it changes. `even_leaders` runs
it for any planner, with or without a load.

Leader counts come before leader bytes-in, as in Cruise Control's goal order (evening bytes by the
largest leaderships first piled small ones on a few brokers: a 20-broker rebalance left its leader
counts 15 apart where they had been 8).

1. Leader counts: the participant leading the most partitions gives one to its follower leading
   fewest, while that follower leads at least two fewer: the one whose rate is nearest half the gap
   between the two brokers' leader bytes-in (what evens both), and, except with `keep_spread`, only
   while the taker stays under the mean leader bytes-in's band (+ `LEADER_TOLERANCE`): after brokers
   are added the new ones may lead only what they hold, and filling their count with the largest
   leaderships would leave them far above the bytes' mean.
2. Leader bytes-in (when rates are known), with the leader counts kept in the range step 1 left
   (`_counts_allow`): the participant leading the most bytes/s gives, to the follower leading the
   least, the leadership of the largest partition that takes neither past the mean's band
   (± `LEADER_TOLERANCE`); where the counts forbid it, the two swap it for a smaller leadership the
   follower holds and the giver follows (`_swap_partner`): the counts stay, the bytes even. Repeated
   until every participant is within the band or the one furthest above has nothing left to give;
   then the participant furthest below takes, likewise, from those above the mean.
3. Leader counts again, only where both brokers' leader bytes-in stay within the range step 2 left.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Collection, Iterable

from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.layout import Layout
from kafka_ops.planning.load import ClusterLoad
from kafka_ops.planning.plan import Election
from kafka_ops.planning.view import ClusterView

LEADER_TOLERANCE = 0.02
"""A participant within ±2 % of the mean leader bytes-in is balanced."""
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
        self.count_band = (0.0, 0.0)
        """Where step 2 keeps every leader count (`_counts_allow`): set when step 1 ends."""
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
        self.led_by_pair = self._pairs() if load.has_rates else {}
        """Per (leader, follower), the leader's queued partitions the follower holds, by rate ascending:
        where step 2 finds the partition a swap hands back (`_swap_partner`)."""

    def _pairs(self) -> dict[tuple[int, int], list[TopicPartition]]:
        pairs: dict[tuple[int, int], list[TopicPartition]] = {}
        for b, queues in self.queues.items():
            for queue in queues if self.reorder_unmoved else queues[:1]:
                for tp in queue.tps:
                    for f in self.layout.replicas[tp]:
                        if f != b and f in self.participants:
                            pairs.setdefault((b, f), []).append(tp)
        for tps in pairs.values():
            tps.sort(key=lambda tp: (self.load.bytes_in(tp), tp))
        return pairs

    def run(self) -> list[Election]:
        """The steps of the module docstring; the elections the reorders need."""
        mean = sum(self.rate_sum.values()) / max(1, len(self.participants))
        capped = self.load.has_rates and not self.keep_spread
        self._even_counts(-math.inf, mean * (1 + LEADER_TOLERANCE) if capped else math.inf, even=True)
        counts = self.count.values()
        self.count_band = (min(counts, default=0), max(counts, default=0))
        if self.load.has_rates:
            self._even_bytes()
            rates = self.rate_sum.values()
            self._even_counts(min(rates, default=0.0), max(rates, default=0.0))
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

    # -- step 2: leader bytes-in ----------------------------------------------------------------------

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
                break
            queues = self.queues[source] if self.reorder_unmoved else self.queues[source][:1]
            if not any(self._give_bytes(source, queue, over + tol, mean + tol) for queue in queues):
                stuck.add(source)
        stuck.clear()
        while True:
            takers = [b for b in self.participants if b not in stuck]
            if not takers:
                return
            taker = min(takers, key=lambda b: (self.rate_sum[b], b))
            if mean - self.rate_sum[taker] <= tol:
                return
            if not self._take_bytes(taker, mean, tol):
                stuck.add(taker)

    def _take_bytes(self, taker: int, mean: float, tol: float) -> bool:
        """Lift `taker`, furthest below the mean: the largest leadership it may take from a broker above
        the mean that leaves neither past the band's far edge; a swap where the counts do not allow it."""
        short = mean - self.rate_sum[taker]
        givers = sorted((b for b in self.participants if self.rate_sum[b] > mean), key=lambda b: -self.rate_sum[b])
        for giver in givers:
            most = min(short + tol, self.rate_sum[giver] - (mean - tol))
            for tp in reversed(self.led_by_pair.get((giver, taker), [])):
                rate = self.load.bytes_in(tp)
                if rate > most or self.lead[tp] != giver or tp in self.reordered or taker not in self._receivers(tp):
                    continue
                if rate <= 0:
                    break
                partner = None
                if not self._counts_allow(giver, taker):
                    partner = self._swap_partner(taker, giver, rate, self.rate_sum[giver] + tol)
                    if partner is None:
                        continue
                self._hand_over_queued(tp, giver, taker)
                if partner is not None:
                    self._hand_over_queued(partner, taker, giver)
                return True
        return False

    def _hand_over_queued(self, tp: TopicPartition, source: int, dest: int) -> None:
        queue = next(q for q in self.queues[source] if tp in q.tps)
        self._hand_over(tp, source, dest, queue, queue.tps.index(tp))

    def _give_bytes(self, source: int, queue: _Queue, most: float, ceiling: float) -> bool:
        """Hand over the largest partition of at most `most` bytes/s whose follower stays under `ceiling`
        and whose leader counts stay in range (`_counts_allow`); where the counts do not allow it,
        swap it for a partition of a smaller rate that follower leads (`_swap_partner`)."""
        start = bisect.bisect_left(queue.neg, -most)
        for i in range(max(0, start - _SCAN), min(len(queue.tps), start + _SCAN)):
            tp, rate = queue.tps[i], -queue.neg[i]
            if rate <= 0:
                return False
            fits = sorted((d for d in self._receivers(tp) if self.rate_sum[d] + rate <= ceiling or rate > most),
                          key=lambda d: (self.rate_sum[d], d))  # fmt: skip
            allowed = [d for d in fits if rate <= most and self._counts_allow(source, d)]
            if allowed:
                self._hand_over(tp, source, allowed[0], queue, i)
                return True
            for dest in fits:
                partner = self._swap_partner(dest, source, rate, ceiling, least=rate - most)
                if partner is not None:
                    self._hand_over(tp, source, dest, queue, i)
                    self._hand_over_queued(partner, dest, source)
                    return True
        return False

    def _swap_partner(
        self, leader: int, follower: int, rate: float, ceiling: float, least: float = 0.0
    ) -> TopicPartition | None:
        """The partition of the smallest rate, at least `least`, that `leader` leads and may hand to
        `follower`, below `rate` by enough to keep `leader` under `ceiling` once it takes `rate`."""
        candidates = self.led_by_pair.get((leader, follower), [])
        for tp in candidates[bisect.bisect_left(candidates, least, key=self.load.bytes_in) :]:
            back = self.load.bytes_in(tp)
            if back >= rate:
                return None
            if self.lead[tp] != leader or tp in self.reordered or follower not in self._receivers(tp):
                continue
            if self.rate_sum[leader] + rate - back <= ceiling:
                return tp
        return None

    def _counts_allow(self, source: int, dest: int) -> bool:
        """A leadership from `source` to `dest` leaves both leader counts inside the band step 1 left,
        or goes from more leaders to fewer (the counts' squared deviation from their mean does not grow)."""
        (low, high), given, taken = self.count_band, self.count[source], self.count[dest]
        return (taken + 1 <= high and given - 1 >= low) or given > taken

    # -- steps 1 and 3: leader counts ----------------------------------------------------------------

    def _even_counts(self, low: float, high: float, even: bool = False) -> None:
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
            if not any(self._give_one(source, queue, low, high, even) for queue in queues):
                stuck.add(source)

    def _give_one(self, source: int, queue: _Queue, low: float, high: float, even: bool) -> bool:
        """Hand over a partition whose follower leads two fewer, both leader bytes-in kept in `low..high`:
        the smallest-rate one, or with `even` (step 1) the one whose rate is nearest half the gap between
        the source's leader bytes-in and the least-led broker's (what evens both)."""
        last = len(queue.tps) - 1
        smallest = range(last, max(-1, last - _SCAN), -1)
        if not (even and self.load.has_rates):
            return self._give_first(source, queue, smallest, low, high)
        fewest = min(self.participants, key=lambda b: (self.count[b], self.rate_sum[b], b))
        at = min(bisect.bisect_left(queue.neg, -(self.rate_sum[source] - self.rate_sum[fewest]) / 2), last)
        nearest = sorted(range(max(0, at - _SCAN), min(last + 1, at + _SCAN)), key=lambda i: abs(i - at))
        return self._give_first(source, queue, nearest, low, high)

    def _give_first(self, source: int, queue: _Queue, order: Iterable[int], low: float, high: float) -> bool:
        """Hand over the first partition of `queue` in `order` whose follower leads two fewer than
        `source`, both leader bytes-in kept in `low..high`; whether one was."""
        most = self.count[source] - 2
        for i in order:
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
