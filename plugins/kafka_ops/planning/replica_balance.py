"""Replica balance: even replica counts per broker and per rack with the fewest moves.

Targets are `bounds.balanced_targets` over the live brokers (minus `exclude_brokers`, which are
drained to zero): floor/ceil per broker, with each rack's share limited by what rack spread
allows. Cordoned brokers (the cluster's `cordoned_brokers` setting, or Kafka's own
`cordoned.log.dirs`) stand apart: they keep what they hold (a cordon is not a decommission) and
receive nothing, so they neither give nor take, and the mean is that of the other brokers over the
replicas those hold (their racks still count for the spread of the partitions they hold); a
cordoned broker named in `exclude_brokers` is drained like any other. The request records the
cordoned brokers. The plan's lower bound is `bounds.lower_bound_moves` against those targets; the
plan also reports the counts-only bound and what Kafka's `--generate` would move over the brokers
that are neither drained nor cordoned (`kafka_generate.generate_full_replacement`, fixed seed).

How replicas move, so that the count of moves meets the bound:

* every move takes a replica from a broker above its target to a broker below its target, so no
  replica moves twice and no broker overshoots: moves = Σ excess = the lower bound, unless a
  constraint leaves some excess nowhere to go (reported as `residual_excess`);
* the broker furthest above its target gives first (a heap), so every source keeps options;
* from a source it gives, in order: a replica that is neither the preferred leader nor the current
  leader (no leadership moves), of the topic it holds the most of (topics stay spread);
* the receiver is the broker furthest below its target that does not hold the partition and keeps
  the rack spread (never fewer racks than before, up to min(RF, racks)); ties: more racks covered,
  fewer replicas of the topic, lower id. The new replica takes the old one's slot;
* a first pass moves a replica to another rack only when its rack is above its rack share and the
  receiver's rack is below it (cross-rack moves are the scarce ones: RF = racks partitions can
  never cross); a second pass lifts that restriction for any excess still left.

Preferred leaders are not rebalanced here (that would move leadership needlessly): after a
balance completes, `leader_reorder` evens them without moving data. Skipped: partitions being
reassigned, offline or without state, topics being deleted, and partitions with a replica on a
broker that is not registered (decommission that broker instead).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Sequence

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.planning.bounds import balanced_targets, count_lower_bound, lower_bound_moves, rack_limits
from kafka_ops.planning.kafka_generate import generate_full_replacement, moves_between
from kafka_ops.planning.layout import Layout
from kafka_ops.planning.load import ClusterLoad
from kafka_ops.planning.load_balance import LoadBalancer
from kafka_ops.planning.load_goals import with_goals
from kafka_ops.planning.load_leaders import LeaderBalancer
from kafka_ops.planning.placement import required_racks
from kafka_ops.planning.plan import PartitionSizes, Plan, Skip, build_plan
from kafka_ops.planning.requests import check_broker_ids, check_cap, check_cordoned
from kafka_ops.planning.view import CORDONED, DEAD_REPLICA, ClusterView

__all__ = ["generate_full_replacement", "lower_bound_moves", "plan_replica_balance"]


def plan_replica_balance(
    snapshot: ClusterSnapshot,
    *,
    exclude_brokers: Sequence[int] = (),
    cordoned_brokers: Sequence[int] = (),
    max_moves: int | None = None,
    generate_seed: int | None = 0,
    partition_sizes: PartitionSizes | None = None,
    load: ClusterLoad | None = None,
) -> Plan:
    """Plan the fewest moves to even replica counts; `exclude_brokers` are drained to zero,
    `cordoned_brokers` (the cluster's setting) and brokers Kafka cordons are left as they are.
    `generate_seed` None skips the `--generate` comparison (it re-places every partition).
    With a `load` that has replica sizes, bytes are balanced instead (`load_balance`)."""
    view = ClusterView(snapshot, check_cordoned(cordoned_brokers))
    check_cap("max_moves", max_moves)
    if not view.live:
        raise PlanError("snapshot", f"no broker is registered in snapshot {view.snapshot_id}: nothing to balance onto")
    drained = _check_excluded(view, exclude_brokers)
    if not view.live - drained:
        raise PlanError("exclude_brokers", f"excludes every registered broker {sorted(view.live)}")
    brokers = sorted(view.placeable - drained)
    if not brokers:
        raise PlanError(
            CORDONED,
            f"every registered broker {sorted(view.live)} is drained or cordoned ({view.cordons_shown()}): "
            "no broker is left to balance onto; lift a cordon",
        )

    skipped, movable = _movable(view)
    layout = Layout(view)
    if load is not None and load.has_sizes:
        return _balance_bytes(view, layout, load, movable, skipped, brokers=brokers, drained=drained,
                              max_moves=max_moves)  # fmt: skip
    fixed = Counter(b for tp, replicas in view.assignment.items() if tp not in movable for b in replicas)
    counts = {b: layout.count[b] for b in [*brokers, *drained]}
    limits = rack_limits(
        (len(r) for r in view.assignment.values() if r and all(b in view.live for b in r)),
        len({view.rack_of[b] for b in brokers}),
    )
    targets = balanced_targets(
        counts, brokers, view.rack_of, limits, total=sum(counts.values()) - sum(fixed[b] for b in drained)
    )
    targets.update({b: fixed[b] for b in drained})
    # a cordoned broker's replicas stay: its rack still counts for the spread of their partitions
    standing = [*brokers, *(view.live & view.cordoned.keys() - drained)]
    balancer = _Balancer(view, layout, movable, targets, brokers=standing, max_moves=max_moves)
    balancer.run(strict=True)
    balancer.run(strict=False)

    figures: dict[str, int | float | None] = {
        "lower_bound_moves": lower_bound_moves(counts, targets),
        "count_lower_bound_moves": count_lower_bound(counts, brokers, drained),
        "residual_excess": sum(max(0, layout.count[b] - t) for b, t in targets.items()),
        "max_moves_reached": int(max_moves is not None and balancer.moves >= max_moves),
        "spread_before": _spread(counts, brokers),
        "spread_after": _spread(layout.count, brokers),
    }
    if generate_seed is not None:
        proposal = generate_full_replacement(view, brokers, generate_seed)
        figures["generate_moves"] = moves_between(view.assignment, proposal)
        figures["generate_seed"] = generate_seed
    request = {"exclude_brokers": sorted(drained), "max_moves": max_moves, "generate_seed": generate_seed,
               **view.cordon_request()}  # fmt: skip
    return build_plan(
        "replica_balance", view, request, layout.targets(), skipped=skipped, figures=figures,
        partition_sizes=partition_sizes,
    )  # fmt: skip


def _balance_bytes(
    view: ClusterView,
    layout: Layout,
    load: ClusterLoad,
    movable: set[TopicPartition],
    skipped: list[Skip],
    *,
    brokers: list[int],
    drained: set[int],
    max_moves: int | None,
) -> Plan:
    standing = [*brokers, *(view.live & view.cordoned.keys() - drained)]
    balancer = LoadBalancer(view, layout, load, movable, participants=brokers, drained=drained, standing=standing,
                            max_moves=max_moves)  # fmt: skip
    balancer.check_feasible()
    bound = balancer.lower_bound_bytes()
    balancer.drain()
    balancer.balance()
    disk_bytes = balancer.bytes_moved
    balancer.balance_network(balancer.network_budget())
    leaders = LeaderBalancer(view, layout, load, participants=brokers, moved=layout.targets().keys(), movable=movable,
                             reorder_unmoved=True)  # fmt: skip
    elections = leaders.run()
    figures: dict[str, int | float | None] = {
        **balancer.figures(bound),
        "network_swap_bytes": int(balancer.bytes_moved - disk_bytes),
        **leaders.figures(),
        "moves_made": balancer.moves,
        "max_moves_reached": int(max_moves is not None and balancer.moves >= max_moves),
        "partitions_without_size": sum(1 for tp in view.assignment if tp not in load.sizes),
    }
    request = {"exclude_brokers": sorted(drained), "max_moves": max_moves, "load_aware": True,
               **view.cordon_request()}  # fmt: skip
    plan = build_plan("replica_balance", view, request, layout.targets(), elections=elections, skipped=skipped,
                      figures=figures, load=load)  # fmt: skip
    return with_goals(plan, view, load, brokers)


def _check_excluded(view: ClusterView, exclude: Sequence[int]) -> set[int]:
    if not exclude:
        return set()
    ids = set(check_broker_ids("exclude_brokers", exclude))
    unknown = sorted(ids - view.live)
    if unknown:
        raise PlanError(
            "exclude_brokers",
            f"broker(s) {unknown} are not registered: use the decommission planner for a broker that is gone",
        )
    return ids


def _movable(view: ClusterView) -> tuple[list[Skip], set[TopicPartition]]:
    skipped: list[Skip] = []
    movable: set[TopicPartition] = set()
    for tp, replicas in view.assignment.items():
        reason = view.blocking_reason(tp)
        if reason is None and not all(b in view.live for b in replicas):
            reason = DEAD_REPLICA
        if reason is not None:
            skipped.append(Skip(tp[0], tp[1], reason))
        elif replicas:
            movable.add(tp)
    return skipped, movable


def _spread(counts: Counter[int] | dict[int, int], brokers: list[int]) -> int:
    """Max minus min replicas over the target brokers."""
    values = [counts.get(b, 0) for b in brokers]
    return max(values) - min(values) if values else 0


class _Balancer:
    """The move loop described in the module docstring."""

    def __init__(
        self,
        view: ClusterView,
        layout: Layout,
        movable: set[TopicPartition],
        targets: dict[int, int],
        *,
        brokers: list[int],
        max_moves: int | None,
    ) -> None:
        """`brokers`: those that hold replicas when the plan completes (for the racks available)."""
        self.view, self.layout, self.movable, self.targets = view, layout, movable, targets
        self.max_moves = max_moves
        self.moves = 0
        self.racks_available = len({view.rack_of[b] for b in brokers})
        self.rack_gap: Counter[str] = Counter()  # rack share minus what the rack holds
        self.open: dict[str, dict[int, int]] = {}  # per rack, brokers below target -> how far below
        for b, t in targets.items():
            rack = view.rack_of[b]
            self.rack_gap[rack] += t - layout.count[b]
            if t > layout.count[b]:
                self.open.setdefault(rack, {})[b] = t - layout.count[b]

    def excess(self, b: int) -> int:
        return self.layout.count[b] - self.targets[b]

    def run(self, *, strict: bool) -> None:
        heap = [(-self.excess(b), b) for b in self.targets if self.excess(b) > 0]
        if not heap:
            return
        heapq.heapify(heap)
        queues = self._queues({b for _, b in heap})
        while heap and (self.max_moves is None or self.moves < self.max_moves):
            _, source = heapq.heappop(heap)
            if self._give_one(source, queues[source], strict) and self.excess(source) > 0:
                heapq.heappush(heap, (-self.excess(source), source))

    def _queues(self, sources: set[int]) -> dict[int, list[TopicPartition]]:
        """Per source, its movable replicas in the order it gives them (popped from the end)."""
        layout, view = self.layout, self.view
        queues: dict[int, list[TopicPartition]] = {b: [] for b in sources}
        for tp in view.assignment:
            if tp in self.movable:
                for b in layout.replicas[tp]:
                    if b in queues:
                        queues[b].append(tp)
        for source, queue in queues.items():
            queue.sort(key=self._give_order(source), reverse=True)
        return queues

    def _give_order(self, source: int) -> Callable[[TopicPartition], tuple[bool, bool, int, TopicPartition]]:
        """Followers before preferred or current leaders, then the topics `source` holds most of."""
        layout, view = self.layout, self.view

        def key(tp: TopicPartition) -> tuple[bool, bool, int, TopicPartition]:
            return layout.replicas[tp][0] == source, view.leader(tp) == source, -layout.topic_count[(tp[0], source)], tp

        return key

    def _give_one(self, source: int, queue: list[TopicPartition], strict: bool) -> bool:
        """Move one replica off `source`. A replica that finds no receiver is dropped from this
        pass (receivers only fill up as the pass goes on); False when none is left."""
        while queue:
            tp = queue.pop()
            if source not in self.layout.replicas[tp]:
                continue
            dest = self._receiver(source, tp, strict)
            if dest is None:
                continue
            self.layout.replace(tp, source, dest)
            dest_rack = self.view.rack_of[dest]
            self.rack_gap[self.view.rack_of[source]] += 1
            self.rack_gap[dest_rack] -= 1
            receivers = self.open[dest_rack]
            receivers[dest] -= 1
            if not receivers[dest]:
                del receivers[dest]
            self.moves += 1
            return True
        return False

    def _receiver(self, source: int, tp: TopicPartition, strict: bool) -> int | None:
        layout, rack_of = self.layout, self.view.rack_of
        replicas = layout.replicas[tp]
        other_racks = {rack_of.get(b) for b in replicas if b != source}
        before = len({rack_of.get(b) for b in replicas})
        need = required_racks(len(replicas), self.racks_available)
        floor = min(before, need)
        source_rack = rack_of[source]
        if strict:
            cross_ok = self.rack_gap[source_rack] < 0
            racks = [r for r in self.open if r == source_rack or (cross_ok and self.rack_gap[r] > 0)]
        else:
            racks = list(self.open)
        best: tuple[int, int, int, int] | None = None
        for rack in racks:
            after = len(other_racks) + (rack not in other_racks)
            if after < floor:
                continue
            covered = -min(after, need)
            for dest, gap in self.open[rack].items():
                if dest in replicas or (best is not None and -gap > best[0]):
                    continue
                key = (-gap, covered, layout.topic_count[(tp[0], dest)], dest)
                if best is None or key < best:
                    best = key
        return None if best is None else best[3]
