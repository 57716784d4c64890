"""Replication-factor change for chosen topics, up or down, with the fewest moves.

Going up, every existing replica stays where it is and in its slot (so the preferred leader and
the current leader do not change); only the missing replicas are added, at the end of the list,
one move each. With replica sizes (the load-aware plan), the changed partitions' replica order is
then chosen at no byte cost to even leader bytes-in (with rates) and leader counts over the brokers
that may receive (`load_leaders.even_leaders`: a new first replica is elected once the reassignment
is complete); no other partition is touched, so the leader count spread never grows.

Each new replica goes to a live broker that is not cordoned (`view`: the cluster's
`cordoned_brokers` setting, or Kafka's own `cordoned.log.dirs`) and does not hold the partition yet:

1. on a rack the partition does not use yet, while such a rack exists (Kafka's rule: no two
   replicas of a partition in one rack while racks remain);
2. then on the broker holding the fewest replicas of this topic (the topic stays spread like
   Kafka's own per-topic round robin), then the fewest replicas overall;
3. then the first in Kafka's rack-alternated broker list after the partition's first replica
   (Kafka's walk: for a topic created on an empty cluster this gives what `kafka-topics` would).

Going down, the current leader and the first replica are kept (no leadership moves) and
replicas are dropped one at a time, choosing the drop that leaves the most racks covered (up to
min(RF, racks)), then a replica on a broker that is not registered, then one outside the ISR,
then one on a cordoned broker, then one on the broker holding the most replicas, then the last in
the list. Replicas on cordoned brokers are otherwise kept: a cordon only stops new ones.

Refused: a replication factor below 1 or above the number of live brokers, unknown or duplicate
topics or topics being deleted, and (naming `cordoned_brokers`) a partition that cannot reach the
factor because every broker it could grow onto is cordoned. Skipped: partitions being reassigned,
offline or without state (nothing to copy from), and partitions already at the requested factor.
The request records the cordoned brokers (`ClusterView.cordon_request`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.planning.layout import Layout
from kafka_ops.planning.load import DISK_CAPACITY, REPLICA_CAPACITY, ClusterLoad
from kafka_ops.planning.load_goals import with_goals
from kafka_ops.planning.load_leaders import even_leaders
from kafka_ops.planning.placement import required_racks, rotation, spread
from kafka_ops.planning.plan import PartitionSizes, Plan, Skip, build_plan
from kafka_ops.planning.requests import check_cordoned, check_topics
from kafka_ops.planning.view import ALREADY_AT_RF, CORDONED, ClusterView


def plan_replication_factor(
    snapshot: ClusterSnapshot,
    topics: Sequence[str],
    replication_factor: int,
    *,
    cordoned_brokers: Sequence[int] = (),
    partition_sizes: PartitionSizes | None = None,
    load: ClusterLoad | None = None,
) -> Plan:
    """Plan the change of every partition of `topics` to `replication_factor` replicas; no new
    replica goes to `cordoned_brokers` (the cluster's setting) nor to a broker Kafka cordons.
    With a `load` that has replica sizes, a new replica goes, among the brokers of a fresh rack, to
    the one whose disk fills least, never past its disk limit or `max_replicas_per_broker`."""
    view = ClusterView(snapshot, check_cordoned(cordoned_brokers))
    rf = replication_factor
    if isinstance(rf, bool) or not isinstance(rf, int) or rf < 1:
        raise PlanError("replication_factor", f"must be an integer of at least 1, got {rf!r}")
    if rf > len(view.live):
        raise PlanError(
            "replication_factor",
            f"{rf} is larger than the {len(view.live)} live (registered) brokers {sorted(view.live)}",
        )
    names = check_topics(view, topics)
    layout = Layout(view)
    positions = rotation(view.order)
    disk = _Disk(view, load) if load is not None and load.has_sizes else None
    skipped: list[Skip] = []
    added = removed = 0
    for topic in names:
        for tp in view.partitions_of(topic):
            reason = view.blocking_reason(tp)
            if reason is None and len(layout.replicas[tp]) == rf:
                reason = ALREADY_AT_RF
            if reason is not None:
                skipped.append(Skip(tp[0], tp[1], reason))
                continue
            while len(layout.replicas[tp]) < rf:
                new = _new_replica(view, layout, tp, positions, disk)
                layout.append(tp, new)
                if disk is not None:
                    disk.add(tp, new)
                added += 1
            while len(layout.replicas[tp]) > rf:
                layout.remove(tp, _replica_to_drop(view, layout, tp, rf))
                removed += 1
    figures: dict[str, int | float | None] = {
        "replicas_added": added,
        "replicas_removed": removed,
        "lower_bound_moves": added,
    }
    request = {"topics": names, "replication_factor": rf, **view.cordon_request()}
    if disk is None or load is None:
        return build_plan(
            "replication_factor", view, request, layout.targets(),
            skipped=skipped, figures=figures, partition_sizes=partition_sizes,
        )  # fmt: skip
    bound = sum(
        load.size(tp) * (rf - len(view.assignment[tp])) for tp in layout.targets() if len(view.assignment[tp]) < rf
    )
    bytes_moved = sum(load.size(tp) for tp, b in disk.added)
    elections, leader_figures = even_leaders(view, layout, load, participants=view.placeable,
                                             movable=layout.targets().keys())  # fmt: skip
    figures.update({**leader_figures, "lower_bound_bytes": bound, "bytes_moved": bytes_moved,
                    "bytes_over_lower_bound": round(bytes_moved / bound, 4) if bound else None})  # fmt: skip
    plan = build_plan("replication_factor", view, {**request, "load_aware": True}, layout.targets(),
                      elections=elections, skipped=skipped, figures=figures, load=load)  # fmt: skip
    return with_goals(plan, view, load, view.placeable)


class _Disk:
    """Bytes per broker as new replicas are added, and the hard limits a new one must keep."""

    def __init__(self, view: ClusterView, load: ClusterLoad) -> None:
        self.load = load
        self.used: dict[int, float] = {}
        for tp, replicas in view.assignment.items():
            for b in replicas:
                self.used[b] = self.used.get(b, 0.0) + load.size(tp)
        self.added: list[tuple[TopicPartition, int]] = []

    def add(self, tp: TopicPartition, broker: int) -> None:
        self.used[broker] = self.used.get(broker, 0.0) + self.load.size(tp)
        self.added.append((tp, broker))

    def fits(self, tp: TopicPartition, broker: int, count: int) -> bool:
        limit = self.load.disk_limit(broker)
        most = self.load.max_replicas_per_broker
        if most is not None and count >= most:
            return False
        return limit is None or self.used.get(broker, 0.0) + self.load.size(tp) <= limit

    def fill(self, tp: TopicPartition, broker: int) -> float:
        """The broker's disk share after taking `tp` (bytes when its capacity is unknown)."""
        cap = self.load.disk_capacity.get(broker)
        after = self.used.get(broker, 0.0) + self.load.size(tp)
        return after / cap if cap else after


def _new_replica(
    view: ClusterView, layout: Layout, tp: TopicPartition, positions: dict[int, int], disk: _Disk | None = None
) -> int:
    replicas = layout.replicas[tp]
    used_racks = {view.rack_of.get(b) for b in replicas}
    candidates = [b for b in view.order if b not in replicas and b in view.placeable]
    if not candidates:
        raise PlanError(
            CORDONED,
            f"{tp[0]}-{tp[1]} holds {replicas} and needs another replica, but every other registered broker is "
            f"cordoned: {view.cordons_shown()}; lift a cordon or ask for a lower replication factor",
        )
    if disk is not None:
        fitting = [b for b in candidates if disk.fits(tp, b, layout.count[b])]
        if not fitting:
            most = disk.load.max_replicas_per_broker
            full = most is not None and all(layout.count[b] >= most for b in candidates)
            raise PlanError(
                REPLICA_CAPACITY if full else DISK_CAPACITY,
                f"{tp[0]}-{tp[1]} ({disk.load.size(tp):,} bytes) needs another replica, but every broker that could "
                f"take it {candidates} would go above its {'max_replicas_per_broker' if full else 'disk limit'} "
                f"(max_disk_share {disk.load.max_disk_share}): add brokers or capacity, or change fewer topics",
            )
        candidates = fitting
    fresh = [b for b in candidates if view.rack_of[b] not in used_racks]
    anchor = positions.get(replicas[0], -1) if replicas else -1
    n = len(view.order)
    topic = tp[0]
    if disk is not None:
        return min(fresh or candidates, key=lambda b: (disk.fill(tp, b), layout.count[b], b))
    return min(
        fresh or candidates,
        key=lambda b: (layout.topic_count[(topic, b)], layout.count[b], (positions[b] - anchor - 1) % n, b),
    )


def _replica_to_drop(view: ClusterView, layout: Layout, tp: TopicPartition, rf: int) -> int:
    replicas = layout.replicas[tp]
    leader, isr = view.leader(tp), set(view.isr(tp))
    protected = {replicas[0], leader}
    candidates = [b for b in replicas if b not in protected] or [b for b in replicas if b != leader]
    need = required_racks(rf, view.racks_available)

    def key(b: int) -> tuple[int, bool, bool, bool, int, int]:
        left = [r for r in replicas if r != b]
        return (-min(spread(left, view.rack_of), need), b in view.live, b in isr, b not in view.cordoned,
                -layout.count[b], -replicas.index(b))  # fmt: skip

    return min(candidates, key=key)
