"""The load-aware move loop: replicas move by bytes, under the hard goals, toward an even disk share.

Used by the replica balance (and so by adding brokers) and the decommission planners when the
snapshot has replica sizes (`load.ClusterLoad.has_sizes`); without sizes they keep their
count-based loops. Works on the planner's `Layout` (replica lists) plus per-broker byte sums, with
each broker's movable replicas in one list sorted by size: a move looks its replica up by bisection,
so planning a million replicas costs about one Python step per moved replica, not per replica.

Targets. The *participants* are the brokers that end the plan holding replicas and may receive
(registered, not cordoned, not drained). They share the bytes they hold plus the drained brokers'
movable bytes in proportion to their disk capacities (every participant's known), else equally.
A broker is balanced within `DISK_TOLERANCE` of its target (a band: partitions come in whole
pieces); the loops aim at `BALANCE_MARGIN` of the band, as Cruise Control's do. Every move goes
from a broker above its target to one below, and never takes either past its band edge, so no byte
moves twice; the lower bound on bytes moved is (band edges at the margin)

    max(drained + Σ_b max(0, used_b − (target_b + tol_b)), Σ_b max(0, (target_b − tol_b) − used_b))

(what must leave the brokers above the band, and what must reach those below it). A move takes,
from the broker furthest above its target, the smallest replica that closes the larger of the two
gaps (best fit: the least overshoot), else the largest that fits (progress); of the replicas within a
quarter of the source's band of that size, the one whose bytes-in rate best evens the two brokers'
inbound goes instead (soft goal 2 at no extra byte). A receiver holding fewer
replicas than there are partitions per participant (a new broker) could not lead its share of them: for
it the gap is divided by the replicas it lacks, so it receives replicas of about the bytes per partition
it should lead rather than the fewest, largest ones (more moves, the same bytes). Receivers below
their band come first (bytes sent to a broker already in its band must later be sent again from
another), then by room, in 10 % buckets of their target, then lowest inbound bytes/s share (when
rates are known), then fewest replicas. A replica moves at most once and keeps its slot.

Hard goals on every receiver: not already holding the partition, the rack rule of
`placement.spread_kept`, the disk limit (`max_disk_share` × capacity), `max_replicas_per_broker` and,
when rates are known, `network_in_bytes_per_s` (inbound after the move, where set).

Network inbound (soft goal 2, `balance_network`, replica balance only, when rates are known): after
the disk balance, the inbound share (bytes-in over `network_in_bytes_per_s`, or bytes-in when a
capacity is missing) is evened until every broker is within `NETWORK_TOLERANCE` of the mean (at the
margin), above and below: from the broker furthest above, one replica moves to a broker below where
both disks stay in their bands (the one that evens the most per byte copied), else a replica with a
high rate goes and one of about the same size and a lower rate comes back (a swap). These copy bytes
for inbound alone, so they are capped at `NETWORK_EXTRA` (4 %) of the bytes the disk balance moved
(at least 4 % of a participant's mean disk use): where the byte bound is tight (add brokers) the plan
stays within 1.05x of it.
Drained brokers give every movable replica, biggest first, each to the receiver that keeps the
most racks (up to min(RF, racks)), then with the lowest disk fill after it; one that fits nowhere
refuses the plan naming the partition and the goal.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.layout import Layout
from kafka_ops.planning.load import DISK_CAPACITY, NETWORK_IN_CAPACITY, RACK_AWARE, REPLICA_CAPACITY, ClusterLoad
from kafka_ops.planning.placement import spread_kept
from kafka_ops.planning.view import ClusterView

DISK_TOLERANCE = 0.02
"""A broker within ±2 % of its byte target is balanced."""
BALANCE_MARGIN = 0.9
"""The loops aim at this share of each band (disk, inbound), as Cruise Control's goals do: a plan
that ends inside the band's edge stays balanced through the drift of its own execution."""
_USEFUL = 0.05
"""A replica that only makes progress (smaller than the gap) moves only if it is at least this share
of its source's tolerance band: KB-sized partitions never matter to a 2 % band."""
_SCAN = 48
"""Replicas tried per (source, receiver) pair before the next receiver: rack rules reject some."""
NETWORK_TOLERANCE = 0.05
"""A broker within ±5 % of the mean inbound share is balanced (soft goal 2)."""
NETWORK_EXTRA = 0.04
"""Swaps for inbound alone copy at most this share of the bytes the disk balance moved (and at
least of a participant's mean disk use): the 1.05x bound on bytes where it is tight survives them."""
_RECEIVERS = 8
"""Receivers tried per inbound step, lowest inbound share first."""
_SIZE_SLACK = 0.25
"""A disk move may take, instead of the replica of the best size, one up to this share of the
source's band larger or smaller whose bytes-in rate evens the two brokers' inbound better."""
_MOVE_SCAN = 256
"""Replicas weighed per receiver for a single inbound move."""


class LoadBalancer:
    """See the module docstring. `standing`: every broker holding replicas after the plan (for the
    number of racks available), `participants` and `drained` as described there."""

    def __init__(
        self,
        view: ClusterView,
        layout: Layout,
        load: ClusterLoad,
        movable: Collection[TopicPartition],
        *,
        participants: Iterable[int],
        drained: Collection[int] = (),
        standing: Iterable[int],
        max_moves: int | None = None,
    ) -> None:
        self.view, self.layout, self.load = view, layout, load
        self.participants = sorted(participants)
        self.rack_member = {view.rack_of[b]: b for b in reversed(self.participants)}
        """One participant of each rack (the lowest id), to ask a rack question of."""
        self.participant_racks = set(self.rack_member)
        self.drained = set(drained)
        self.max_moves = max_moves
        self.moves = 0
        self.bytes_moved = 0
        self.racks_available = len({view.rack_of[b] for b in standing})
        self.used: dict[int, float] = {}
        self.bytes_in: dict[int, float] = {}
        for tp, replicas in layout.replicas.items():
            size, rate = load.size(tp), load.bytes_in(tp)
            for b in replicas:
                self.used[b] = self.used.get(b, 0.0) + size
                self.bytes_in[b] = self.bytes_in.get(b, 0.0) + rate
        self.limit = {b: load.disk_limit(b) for b in self.participants}
        self.max_replicas = load.max_replicas_per_broker
        caps_in = load.network_in_capacity if load.has_rates else {}
        self.net_cap = {b: c for b, c in caps_in.items() if c}
        caps = [load.network_in_capacity.get(b) for b in self.participants]
        self.net_weight = {b: (c or 1.0) if all(caps) else 1.0 for b, c in zip(self.participants, caps, strict=True)}
        """What a broker's bytes-in is divided by for its inbound share: its capacity, when every
        participant's is known, else 1 (bytes-in itself)."""
        # per giving broker: movable replicas by size, descending, and their negated sizes (for bisect)
        self.queue: dict[int, list[TopicPartition]] = {b: [] for b in [*self.participants, *self.drained]}
        for tp in movable:
            for b in layout.replicas[tp]:
                if b in self.queue:
                    self.queue[b].append(tp)
        self.neg: dict[int, list[int]] = {}
        for b, queue in self.queue.items():
            queue.sort(key=lambda tp: (-load.size(tp), tp))
            self.neg[b] = [-load.size(tp) for tp in queue]
        drained_bytes = sum(load.size(tp) for b in self.drained for tp in self.queue[b])
        self.drained_bytes = drained_bytes
        self.target, self.tol = self._targets(drained_bytes)
        self.lead_share = len(layout.replicas) / max(1, len(self.participants))
        """Partitions per participant: what each should be able to lead, so what each should at least hold."""

    def _targets(self, drained_bytes: float) -> tuple[dict[int, float], dict[int, float]]:
        caps = [self.load.disk_capacity.get(b) for b in self.participants]
        weights = {b: float(c) for b, c in zip(self.participants, caps, strict=True) if c}
        if len(weights) != len(self.participants):
            weights = dict.fromkeys(self.participants, 1.0)
        total = sum(self.used.get(b, 0.0) for b in self.participants) + drained_bytes
        whole = sum(weights.values()) or 1.0
        target = {b: total * w / whole for b, w in weights.items()}
        return target, {b: t * DISK_TOLERANCE * BALANCE_MARGIN for b, t in target.items()}

    def lower_bound_bytes(self) -> int:
        """The bound of the module docstring, over the state before any move."""
        excess = sum(max(0.0, self.used.get(b, 0.0) - self.target[b] - self.tol[b]) for b in self.participants)
        deficit = sum(max(0.0, self.target[b] - self.tol[b] - self.used.get(b, 0.0)) for b in self.participants)
        return round(max(self.drained_bytes + excess, deficit))

    def check_feasible(self) -> None:
        """Refuse, naming the goal and the brokers, when no plan could meet the capacity goals."""
        limits = [self.limit[b] for b in self.participants]
        total = sum(self.target.values())
        if limits and all(v is not None for v in limits) and total > sum(v or 0.0 for v in limits):
            over = [b for b in self.participants if self.used.get(b, 0.0) > (self.limit[b] or 0.0)]
            raise PlanError(
                DISK_CAPACITY,
                f"brokers {self.participants} would hold {int(total):,} bytes, more than their disk limits "
                f"({int(sum(v or 0.0 for v in limits)):,} bytes at max_disk_share {self.load.max_disk_share}); "
                f"above their limit now: {over or 'none'}: add brokers or disk, or lower retention",
            )
        most = self.max_replicas
        replicas = sum(self.layout.count[b] for b in self.participants) + sum(len(self.queue[b]) for b in self.drained)
        if most is not None and replicas > most * len(self.participants):
            over = [b for b in self.participants if self.layout.count[b] > most]
            raise PlanError(
                REPLICA_CAPACITY,
                f"brokers {self.participants} would hold {replicas} replicas, more than max_replicas_per_broker "
                f"{most} each; above it now: {over or 'none'}: add brokers or raise the limit",
            )

    # -- hard goals on one receiver -------------------------------------------------------------------

    def _fits(
        self, tp: TopicPartition, source: int, dest: int, size: float, racks: set[str | None] | None = None
    ) -> bool:
        """Whether `dest` may take `tp`'s replica from `source` under every hard goal; `racks`: the
        receiving racks that keep its rack spread, when the caller has them (`_receiving_racks`)."""
        replicas = self.layout.replicas[tp]
        if dest in replicas:
            return False
        limit = self.limit.get(dest)
        if limit is not None and self.used.get(dest, 0.0) + size > limit:
            return False
        if self.max_replicas is not None and self.layout.count[dest] >= self.max_replicas:
            return False
        if racks is not None and self.view.rack_of[dest] not in racks:
            return False
        if self._over_network(tp, dest):
            return False
        return racks is not None or self._racks_kept(replicas, source, dest)

    def _over_network(self, tp: TopicPartition, dest: int) -> bool:
        """Whether `tp`'s replica would take `dest` past its `network_in_bytes_per_s` (where set)."""
        net = self.net_cap.get(dest)
        return net is not None and self.bytes_in.get(dest, 0.0) + self.load.bytes_in(tp) > net

    def _racks_kept(self, replicas: list[int], source: int, dest: int) -> bool:
        rack_of = self.view.rack_of
        others = {rack_of.get(b, f"<unknown: {b}>") for b in replicas if b != source}
        before = len(others | {rack_of.get(source, f"<unknown: {source}>")})
        after = len(others) + (rack_of[dest] not in others)
        return spread_kept(before, after, len(replicas), self.racks_available)

    def _receiving_racks(self, replicas: list[int], source: int) -> set[str | None]:
        """The participants' racks a replica of `replicas` may go to from `source` with the partition's
        rack spread kept: `_racks_kept` once per rack rather than once per broker."""
        return {r for r in self.participant_racks if self._racks_kept(replicas, source, self.rack_member[r])}

    def _move(self, tp: TopicPartition, source: int, dest: int, index: int) -> None:
        size, rate = self.load.size(tp), self.load.bytes_in(tp)
        self.layout.replace(tp, source, dest)
        del self.queue[source][index]
        del self.neg[source][index]
        self.used[source] -= size
        self.used[dest] = self.used.get(dest, 0.0) + size
        self.bytes_in[source] -= rate
        self.bytes_in[dest] = self.bytes_in.get(dest, 0.0) + rate
        self.moves += 1
        self.bytes_moved += size

    def _capped(self) -> bool:
        return self.max_moves is not None and self.moves >= self.max_moves

    # -- draining -------------------------------------------------------------------------------------

    def drain(self) -> None:
        """Move every movable replica off the drained brokers (biggest first); refuse when one fits
        on no receiver under the hard goals."""
        work = sorted(((tp, b) for b in self.drained for tp in self.queue[b]), key=lambda x: (-self.load.size(x[0]), x))
        for tp, source in work:
            size = self.load.size(tp)
            racks = self._receiving_racks(self.layout.replicas[tp], source)
            fits = [d for d in self.participants if self._fits(tp, source, d, size, racks)]
            if not fits:
                raise self._nowhere(tp, source, size)
            others = {self.view.rack_of.get(b) for b in self.layout.replicas[tp] if b != source}
            need = min(len(self.layout.replicas[tp]), self.racks_available)

            def key(d: int, size: float = size, others: set[str | None] = others, need: int = need) -> tuple:
                covered = min(len(others) + (self.view.rack_of[d] not in others), need)
                return -covered, self._fill(d, size), self.layout.count[d], d

            dest = min(fits, key=key)
            self._move(tp, source, dest, self.queue[source].index(tp))

    def _fill(self, b: int, size: float) -> float:
        target = self.target[b] or 1.0
        return (self.used.get(b, 0.0) + size) / target

    def _nowhere(self, tp: TopicPartition, source: int, size: float) -> PlanError:
        replicas = self.layout.replicas[tp]
        free = [d for d in self.participants if d not in replicas]
        racked = [d for d in free if self._racks_kept(replicas, source, d)]
        if not racked:
            goal = RACK_AWARE
        elif self.max_replicas is not None and all(self.layout.count[d] >= self.max_replicas for d in racked):
            goal = REPLICA_CAPACITY
        elif all(self._over_network(tp, d) for d in racked):
            goal = NETWORK_IN_CAPACITY
        else:
            goal = DISK_CAPACITY
        return PlanError(
            goal,
            f"{tp[0]}-{tp[1]} ({int(size):,} bytes) must leave broker {source}, but no broker can take it "
            f"without breaking hard goal {goal} (candidates {free}, of which rack-compatible {racked}; "
            f"disk limits at max_disk_share {self.load.max_disk_share}); add brokers or capacity, or drain fewer",
        )

    # -- balancing ------------------------------------------------------------------------------------

    def balance(self) -> None:
        """Move bytes from brokers above their target to brokers below it until every broker is in
        its band, or no move that keeps the hard goals helps (see the module docstring)."""
        stuck: set[int] = set()
        participants, used, target, tol = self.participants, self.used, self.target, self.tol
        while not self._capped():
            dev = {b: used.get(b, 0.0) - target[b] for b in participants}  # once per move: 1M replicas, 200 brokers
            sources = [b for b in participants if b not in stuck and self.queue[b]]
            if not sources:
                return
            source = max(sources, key=lambda b: (dev[b], -b))
            over = dev[source] - tol[source]
            under = max(-dev[b] - tol[b] for b in participants)
            if over <= 0 and under <= 0:
                return
            if not self._give(source, over, dev):
                stuck.add(source)

    def _give(self, source: int, over: float, dev: dict[int, float]) -> bool:
        give = self.used[source] - (self.target[source] - self.tol[source])
        for dest in self._receivers(source, dev):
            room = self.target[dest] + self.tol[dest] - self.used.get(dest, 0.0)
            need = max(over, -dev[dest] - self.tol[dest])
            if need <= 0:
                continue
            short = self.lead_share - self.layout.count[dest]  # a new broker: too few replicas to lead its share
            found = self._pick(source, dest, need / short if short > 1 else need, min(give, room))
            if found is not None:
                self._move(self.queue[source][found], source, dest, found)
                return True
        return False

    def _receivers(self, source: int, dev: dict[int, float]) -> list[int]:
        rates = self.load.has_rates
        cap_in = self.load.network_in_capacity

        def key(b: int) -> tuple[bool, int, float, int, int]:
            target = self.target[b] or 1.0
            bucket = int(-dev[b] / target * 10)
            net = self.bytes_in.get(b, 0.0) / (cap_in.get(b) or 1.0) if rates else 0.0
            return dev[b] >= -self.tol[b], -bucket, net, self.layout.count[b], b

        return sorted((b for b in self.participants if b != source and dev[b] < self.tol[b]), key=key)

    def _pick(self, source: int, dest: int, need: float, most: float) -> int | None:
        """Index in `source`'s queue of the replica to move to `dest`: the smallest of at least
        `need` bytes if it is at most `most`, else the largest below `most`; None if none fits.
        Of the replicas up to `_SIZE_SLACK` of the source's band larger than that smallest (or
        smaller than that largest), the one whose rate best evens inbound goes (`_by_rate`)."""
        neg, queue = self.neg[source], self.queue[source]
        if most <= 0:
            return None
        slack = self.tol[source] * _SIZE_SLACK
        first_fit = bisect.bisect_left(neg, -most)  # first replica of at most `most` bytes
        smallest_enough = bisect.bisect_right(neg, -need) - 1  # last replica of at least `need` bytes
        if smallest_enough >= first_fit:
            a = smallest_enough
            first = bisect.bisect_left(neg, neg[a] - slack, max(first_fit, a - _SCAN), a)
            found = self._by_rate(source, dest, first, a + 1)
            if found is not None:
                return found
        for i in range(smallest_enough, max(first_fit, smallest_enough - _SCAN) - 1, -1):
            if self._fits(queue[i], source, dest, -neg[i]):
                return i
        useful = self.tol[source] * _USEFUL  # smaller replicas would move bytes for no visible gain
        a = max(first_fit, smallest_enough + 1)
        if a < len(queue) and -neg[a] >= useful:
            end = min(len(queue), a + _SCAN)
            last = min(bisect.bisect_right(neg, neg[a] + slack, a, end), bisect.bisect_right(neg, -useful, a, end))
            found = self._by_rate(source, dest, a, last)
            if found is not None:
                return found
        for i in range(a, min(len(queue), first_fit + _SCAN)):
            if -neg[i] < useful:
                break
            if self._fits(queue[i], source, dest, -neg[i]):
                return i
        return None

    def _by_rate(self, source: int, dest: int, lo: int, hi: int) -> int | None:
        """Of `source`'s queue[lo:hi] (replicas of about one size), the one that fits `dest` whose
        rate is nearest the one that evens the two brokers' inbound shares (half their difference in
        bytes-in, at equal capacities); None without rates, with fewer than two to choose from, or
        when none fits."""
        if not self.load.has_rates or hi - lo < 2:
            return None
        queue, neg = self.queue[source], self.neg[source]
        ws, wd = self.net_weight[source], self.net_weight[dest]
        ideal = (self.bytes_in.get(source, 0.0) / ws - self.bytes_in.get(dest, 0.0) / wd) / (1 / ws + 1 / wd)
        for i in sorted(range(lo, hi), key=lambda i: abs(self.load.bytes_in(queue[i]) - ideal)):
            if self._fits(queue[i], source, dest, -neg[i]):
                return i
        return None

    # -- network inbound (soft goal 2) ---------------------------------------------------------------

    def network_budget(self) -> float:
        """Bytes that swaps for inbound alone may copy: `NETWORK_EXTRA` of what the disk balance
        moved, and at least of a participant's mean disk use (see the module docstring)."""
        held = sum(self.used.get(b, 0.0) for b in self.participants)
        return NETWORK_EXTRA * max(self.bytes_moved, held / max(1, len(self.participants)))

    def balance_network(self, budget: float) -> None:
        """Swap a replica with a high rate on the broker furthest above the mean inbound share for one
        of about the same size and a lower rate on a broker below it, keeping both disks in their
        bands, until every broker is within `NETWORK_TOLERANCE` of the mean or `budget` is spent."""
        if not self.load.has_rates or not self.participants:
            return
        mean = sum(self.bytes_in.get(b, 0.0) for b in self.participants) / sum(self.net_weight.values())
        self.net_mean = mean
        self.net_tol = mean * NETWORK_TOLERANCE * BALANCE_MARGIN
        stuck: set[int] = set()
        while not self._capped() and budget > 0:
            sources = [b for b in self.participants if b not in stuck and self.queue[b]]
            if not sources:
                return
            source = max(sources, key=lambda b: (self._in_dev(b), -b))
            if self._in_dev(source) <= self.net_tol and min(map(self._in_dev, self.participants)) >= -self.net_tol:
                return
            cost = self._move_inbound(source, budget)
            if cost is None:
                cost = self._swap_inbound(source, budget)
            if cost is None:
                stuck.add(source)
            else:
                budget -= cost

    def _in_dev(self, b: int) -> float:
        return self.bytes_in.get(b, 0.0) / self.net_weight[b] - self.net_mean

    def _inbound_receivers(self) -> list[int]:
        return sorted((b for b in self.participants if self._in_dev(b) < 0), key=self._in_dev)[:_RECEIVERS]

    def _move_inbound(self, source: int, budget: float) -> float | None:
        """One replica off `source` to a receiver below the mean inbound share, keeping both disks in
        their bands and neither broker past the inbound band's far edge: of the `_MOVE_SCAN` largest
        that fit each receiver's disk room, the one that reduces the two brokers' squared deviation
        from the mean the most per byte copied. Its bytes, or None when none helps."""
        queue, neg = self.queue[source], self.neg[source]
        ds, tol = self._in_dev(source), self.net_tol
        give = self.used[source] - (self.target[source] - self.tol[source])
        best: tuple[float, int, int] | None = None
        for dest in self._inbound_receivers():
            dd = self._in_dev(dest)
            room = min(give, self.target[dest] + self.tol[dest] - self.used.get(dest, 0.0), budget)
            if room <= 0:
                continue
            start = bisect.bisect_left(neg, -room)
            for i in range(start, min(len(queue), start + _MOVE_SCAN)):
                rate = self.load.bytes_in(queue[i])
                out, into = rate / self.net_weight[source], rate / self.net_weight[dest]
                if rate <= 0 or out > ds + tol or into > tol - dd:
                    continue
                score = (ds * ds + dd * dd - (ds - out) ** 2 - (dd + into) ** 2) / max(-neg[i], 1.0)
                if score > 0 and (best is None or score > best[0]) and self._fits(queue[i], source, dest, -neg[i]):
                    best = (score, i, dest)
        if best is None:
            return None
        _, i, dest = best
        size = -neg[i]
        self._move(queue[i], source, dest, i)
        return size

    def _swap_inbound(self, source: int, budget: float) -> float | None:
        """One swap off `source` (see `balance_network`); its bytes, or None when none helps."""
        receivers = self._inbound_receivers()
        useful = self.net_tol * _USEFUL
        queue, neg = self.queue[source], self.neg[source]
        for dest in receivers:
            # inbound bytes/s the swap may shift: neither broker may cross the mean's band
            most = min(self._in_dev(source) + self.net_tol, self.net_tol - self._in_dev(dest)) * min(
                self.net_weight[source], self.net_weight[dest]
            )
            lo, hi = self._disk_shift(source, dest)
            start = bisect.bisect_left(neg, -budget)
            for i in range(start, min(len(queue), start + _SCAN)):
                hot, size = queue[i], -neg[i]
                found = self._partner(hot, size, source=source, dest=dest, shift=(lo, hi), most=(useful, most),
                                      budget=budget - size)  # fmt: skip
                if found is not None:
                    cold = self.queue[dest][found]
                    cost = size + self.load.size(cold)
                    self._move(hot, source, dest, i)
                    self._move(cold, dest, source, found)
                    return cost
        return None

    def _disk_shift(self, source: int, dest: int) -> tuple[float, float]:
        """The range of (hot size - cold size) that keeps both brokers' disks in their bands."""
        lo = max(
            (self.target[dest] - self.tol[dest]) - self.used.get(dest, 0.0),
            self.used.get(source, 0.0) - (self.target[source] + self.tol[source]),
        )
        hi = min(
            (self.target[dest] + self.tol[dest]) - self.used.get(dest, 0.0),
            self.used.get(source, 0.0) - (self.target[source] - self.tol[source]),
        )
        return lo, hi

    def _partner(
        self,
        hot: TopicPartition,
        size: float,
        *,
        source: int,
        dest: int,
        shift: tuple[float, float],
        most: tuple[float, float],
        budget: float,
    ) -> int | None:
        """Index in `dest`'s queue of a replica to send back for `hot`: its size within `size - hi ..
        size - lo` (`shift`) and `budget`, a rate lower than `hot`'s by between the two of `most`."""
        (lo, hi), (useful, most_shift) = shift, most
        rate = self.load.bytes_in(hot)
        if rate < useful or lo > hi or not self._fits(hot, source, dest, size):
            return None
        neg = self.neg[dest]
        first = bisect.bisect_left(neg, -min(size - lo, budget))
        last = bisect.bisect_right(neg, -(size - hi))
        for j in range(first, min(last, first + _SCAN)):
            cold = self.queue[dest][j]
            gain = rate - self.load.bytes_in(cold)
            if cold != hot and useful <= gain <= most_shift and self._fits(cold, dest, source, -neg[j]):
                return j
        return None

    def figures(self, lower_bound: int) -> dict[str, int | float | None]:
        """The byte figures a load-aware plan reports."""
        shares = [self.used.get(b, 0.0) / self.target[b] for b in self.participants if self.target[b]]
        return {
            "lower_bound_bytes": lower_bound,
            "bytes_moved": int(self.bytes_moved),
            "bytes_over_lower_bound": round(self.bytes_moved / lower_bound, 4) if lower_bound else None,
            "disk_tolerance": DISK_TOLERANCE,
            "disk_over_target_max_after": round(max(shares), 4) if shares else None,
            "disk_over_target_min_after": round(min(shares), 4) if shares else None,
        }
