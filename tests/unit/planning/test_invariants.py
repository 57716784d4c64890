"""Every planner on one messy, seeded cluster: invariants and determinism."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

import pytest

from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import (
    Plan,
    plan_decommission,
    plan_leader_reorder,
    plan_preferred_election,
    plan_replica_balance,
    plan_replication_factor,
)
from tests.unit.planning.builders import check_invariants, cluster, reassigning

RACKS = {b: "abc"[b % 3] for b in range(1, 11)}  # broker 10 is new and empty; 11 is gone


def messy(order_seed: int | None = None) -> ClusterSnapshot:
    """Skewed RF 1-3 topics, a dead broker's replicas, an offline partition, a reassignment,
    partitions led by a non-preferred replica.
    `order_seed` shuffles every dict's insertion order (what a collector could do)."""
    rng = random.Random(1)
    topics: dict[str, dict[int, tuple[int, ...]]] = {}
    for t in range(12):
        rf = 1 + t % 3
        pool = [1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11][: 9 + t % 3]  # broker 1 weighs double
        topics[f"t{t:02d}"] = {p: tuple(rng.sample(pool, rf)) for p in range(8)}
    topics = {t: dict(ps) for t, ps in topics.items() if all(len(set(r)) == len(r) for r in ps.values())}
    racks = dict(RACKS)
    if order_seed is not None:
        shuffle = random.Random(order_seed)
        items = list(topics.items())
        shuffle.shuffle(items)
        topics = {t: dict(shuffle.sample(list(ps.items()), len(ps))) for t, ps in items}
        racks = dict(shuffle.sample(list(racks.items()), len(racks)))
    # partition 5 of every replicated topic is led by its last replica (an election's work)
    leaders = {(t, 5): ps[5][-1] for t, ps in topics.items() if len(ps[5]) > 1 and ps[5][-1] in RACKS}
    snap = cluster(racks, topics, leaders={**leaders, ("t00", 3): -1})
    reassigning(snap, "t01", 0, (10,))
    return snap


def kafka_cordons(snap: ClusterSnapshot, *brokers: int) -> ClusterSnapshot:
    """`snap` with `brokers` cordoned by Kafka (`cordoned.log.dirs`), as the KRaft source records it."""
    snap.brokers = {b: replace(x, cordoned=b in brokers) for b, x in snap.brokers.items()}
    return snap


PLANNERS: dict[str, tuple[Callable[[ClusterSnapshot], Plan], int | None]] = {
    "rf_up": (lambda s: plan_replication_factor(s, ["t00", "t03", "t06"], 3), 3),
    "rf_down": (lambda s: plan_replication_factor(s, ["t02", "t05"], 2), 2),
    "decommission": (lambda s: plan_decommission(s, [1, 11]), None),
    "balance": (plan_replica_balance, None),
    "balance_drain": (lambda s: plan_replica_balance(s, exclude_brokers=[2]), None),
    "leader_reorder": (plan_leader_reorder, None),
    # broker 10 (new, empty) is every planner's first choice; 1 holds the most
    "rf_up_cordoned": (
        lambda s: plan_replication_factor(kafka_cordons(s, 4), ["t00", "t03", "t06"], 3, cordoned_brokers=[10]),
        3,
    ),
    "decommission_cordoned": (lambda s: plan_decommission(kafka_cordons(s, 5), [1, 11], cordoned_brokers=[10]), None),
    "balance_cordoned": (lambda s: plan_replica_balance(kafka_cordons(s, 3), cordoned_brokers=[1, 10]), None),
    "balance_drain_cordoned": (lambda s: plan_replica_balance(s, exclude_brokers=[2], cordoned_brokers=[2, 10]), None),
    "election": (plan_preferred_election, None),
}


@pytest.mark.parametrize("name", sorted(PLANNERS))
def test_invariants(name: str) -> None:
    planner, rf = PLANNERS[name]
    snap = messy()
    plan = planner(snap)
    check_invariants(plan, snap, replication_factor=rf)
    assert plan.reassignments or plan.elections, "the messy cluster gives every planner work"


@pytest.mark.parametrize("name", sorted(PLANNERS))
def test_same_input_same_plan(name: str) -> None:
    planner, _ = PLANNERS[name]
    plans = [planner(messy(order_seed)) for order_seed in (None, 1, 2)]
    assert len({p.plan_id for p in plans}) == 1
    assert plans[0].reassignments == plans[1].reassignments == plans[2].reassignments
    assert plans[0].brokers == plans[2].brokers and plans[0].skipped == plans[2].skipped


def test_balance_meets_its_lower_bound_here() -> None:
    plan = plan_replica_balance(messy())
    assert plan.figures["residual_excess"] == 0
    assert plan.moves == plan.figures["lower_bound_moves"]
