"""Broker decommission: move every replica off the named brokers, and no other replica.

Fewest moves: exactly one move per replica on a decommissioned broker, which is also the lower
bound (each of those replicas must land somewhere new); no other replica is moved. With replica
sizes (the load-aware plan), leadership is then evened at no byte cost (`load_leaders.even_leaders`,
`keep_spread`): the moved partitions' replica order is chosen to even leader bytes-in (with rates)
and leader counts over the remaining brokers, and other partitions are reordered (a zero-move
reassignment plus an election) only while the leader count spread would otherwise end above what
it was before the plan.

Each replacement takes the slot of the replica it replaces, so the survivors keep their order
and the preferred leader changes only where the decommissioned broker was the preferred leader.
It goes to a live broker that is not decommissioned, not cordoned (the cluster's
`cordoned_brokers` setting, or Kafka's own `cordoned.log.dirs`) and does not hold the partition,
chosen:

1. to keep the partition on as many racks as possible, up to min(RF, racks) (the broker's own
   rack always qualifies when it has another broker left; spread drops only when the last broker
   of a rack leaves, or the others of its rack are cordoned, and no other rack is free);
2. then the fewest replicas of this topic, the fewest replicas overall and, for the first slot,
   the fewest preferred leaderships (the cluster stays even as it absorbs the replicas);
3. then the first in Kafka's rack-alternated list after the partition's first replica.

A broker that is no longer registered may be decommissioned (its replicas are rebuilt from the
live ones) as long as it still holds replicas. A cordoned broker may be decommissioned: a cordon
keeps its replicas where they are, decommissioning is the explicit request to move them. Refused:
an empty or duplicate list, a broker that is neither registered nor holding replicas,
decommissioning every registered broker, and any partition that would need more brokers than
would remain (lower its replication factor first); naming `cordoned_brokers` when the brokers that
would remain are enough but too many of them are cordoned. Skipped: partitions being reassigned,
offline or without state, and topics being deleted. The request records the cordoned brokers.

On a cluster whose metadata.version takes Kafka's own cordon (4.3-IV0 and later, KIP-1066), the
request also lists the leaving brokers the execution cordons (`cordoned.log.dirs=*`) before its
first move, so that no new partition lands on them while they drain (`view.cordon_first`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.planning.layout import Layout
from kafka_ops.planning.load import ClusterLoad
from kafka_ops.planning.load_balance import LoadBalancer
from kafka_ops.planning.load_goals import with_goals
from kafka_ops.planning.load_leaders import even_leaders
from kafka_ops.planning.placement import required_racks, rotation
from kafka_ops.planning.plan import PartitionSizes, Plan, Skip, build_plan
from kafka_ops.planning.requests import check_broker_ids, check_cordoned
from kafka_ops.planning.view import CORDONED, ClusterView


def plan_decommission(
    snapshot: ClusterSnapshot,
    brokers: Sequence[int],
    *,
    cordoned_brokers: Sequence[int] = (),
    partition_sizes: PartitionSizes | None = None,
    load: ClusterLoad | None = None,
) -> Plan:
    """Plan moving every replica off `brokers`, onto brokers neither in `cordoned_brokers` (the
    cluster's setting) nor cordoned by Kafka. With a `load` that has replica sizes, each replica
    goes where the disk fills least, under the hard goals (`load_balance.LoadBalancer.drain`)."""
    view = ClusterView(snapshot, check_cordoned(cordoned_brokers))
    leaving = set(check_broker_ids("brokers", brokers))
    holding = view.replica_counts()
    unknown = sorted(b for b in leaving if b not in view.live and not holding[b])
    if unknown:
        raise PlanError(
            "brokers",
            f"broker(s) {unknown} are neither registered nor holding any replica in snapshot {view.snapshot_id}",
        )
    staying = view.live - leaving
    if not staying:
        raise PlanError("brokers", f"decommissioning every registered broker {sorted(view.live)} leaves none")
    remaining = staying & view.placeable
    affected = [tp for tp, replicas in view.assignment.items() if leaving.intersection(replicas)]
    reasons = {tp: view.blocking_reason(tp) for tp in affected}
    skipped = [Skip(tp[0], tp[1], reason) for tp, reason in reasons.items() if reason is not None]
    blocked = [tp for tp, reason in reasons.items() if reason is not None]
    movable = [tp for tp, reason in reasons.items() if reason is None]
    _check_room(view, movable, leaving, staying, remaining)

    layout = Layout(view)
    positions = rotation(view.order)
    left_behind = sum(len(leaving.intersection(view.assignment[tp])) for tp in blocked)
    if load is not None and load.has_sizes:
        balancer = LoadBalancer(view, layout, load, movable, participants=remaining, drained=leaving,
                                standing=staying)  # fmt: skip
        balancer.check_feasible()
        balancer.drain()
        elections, leader_figures = even_leaders(view, layout, load, participants=remaining,
                                                 movable=_reorderable(view, leaving), keep_spread=True)  # fmt: skip
        on = sum(holding[b] for b in leaving)
        counted = {
            "replicas_on_brokers": on,
            "replicas_left_behind": left_behind,
            "lower_bound_moves": on - left_behind,
        }
        figures = {**counted, **balancer.figures(round(balancer.drained_bytes)), **leader_figures}
        request = {"brokers": sorted(leaving), "load_aware": True, **view.cordon_request(),
                   **view.cordon_first(leaving)}  # fmt: skip
        plan = build_plan("decommission", view, request, layout.targets(), elections=elections, skipped=skipped,
                          figures=figures, load=load)  # fmt: skip
        return with_goals(plan, view, load, remaining)
    for tp in movable:
        for old in [b for b in view.assignment[tp] if b in leaving]:
            new = _replacement(view, layout, tp, old, leaving=leaving, remaining=remaining, positions=positions)
            layout.replace(tp, old, new)
    on_brokers = sum(holding[b] for b in leaving)
    figures = {
        "replicas_on_brokers": on_brokers,
        "replicas_left_behind": left_behind,
        "lower_bound_moves": on_brokers - left_behind,
    }
    request = {"brokers": sorted(leaving), **view.cordon_request(), **view.cordon_first(leaving)}
    return build_plan(
        "decommission", view, request, layout.targets(), skipped=skipped, figures=figures,
        partition_sizes=partition_sizes,
    )  # fmt: skip


def _reorderable(view: ClusterView, leaving: set[int]) -> list[TopicPartition]:
    """Partitions whose replica order the plan may change at no byte cost: not blocked, every replica live
    (the moved ones included: their replicas on `leaving` are replaced by then)."""
    return [
        tp
        for tp, replicas in view.assignment.items()
        if view.blocking_reason(tp) is None and all(b in view.live or b in leaving for b in replicas)
    ]


def _check_room(
    view: ClusterView,
    affected: list[TopicPartition],
    leaving: set[int],
    staying: frozenset[int],
    remaining: frozenset[int],
) -> None:
    """Every affected partition finds enough brokers to move to: `staying` registered ones, of which
    `remaining` are not cordoned."""
    for tp in affected:
        replicas = view.assignment[tp]
        kept = [b for b in replicas if b not in leaving]
        needed = len(replicas) - len(kept)
        if needed > len(staying.difference(kept)):
            raise PlanError(
                "brokers",
                f"{tp[0]}-{tp[1]} has {len(replicas)} replicas {list(replicas)} but only "
                f"{len(staying)} registered broker(s) would remain {sorted(staying)}: "
                "lower the topic's replication factor first, or decommission fewer brokers",
            )
        if needed > len(remaining.difference(kept)):
            raise PlanError(
                CORDONED,
                f"{tp[0]}-{tp[1]} has {len(replicas)} replicas {list(replicas)}; of the brokers that would "
                f"remain {sorted(staying)} too few are free to take {needed}, the others are cordoned: "
                f"{view.cordons_shown(staying)}; lift a cordon, or lower the topic's replication factor first",
            )


def _replacement(
    view: ClusterView,
    layout: Layout,
    tp: TopicPartition,
    old: int,
    *,
    leaving: set[int],
    remaining: frozenset[int],
    positions: dict[int, int],
) -> int:
    replicas = layout.replicas[tp]
    slot = replicas.index(old)
    survivor_racks = {view.rack_of.get(b) for b in replicas if b not in leaving}
    need = required_racks(len(replicas), view.racks_available)
    anchor = positions.get(replicas[0], -1)
    n = len(view.order)
    topic = tp[0]

    def key(b: int) -> tuple[int, int, int, int, int, int]:
        return (
            -min(len(survivor_racks) + (view.rack_of[b] not in survivor_racks), need),
            layout.topic_count[(topic, b)],
            layout.count[b],
            layout.preferred[b] if slot == 0 else 0,
            (positions[b] - anchor - 1) % n,
            b,
        )

    return min((b for b in view.order if b in remaining and b not in replicas), key=key)
