from __future__ import annotations

import random

import pytest

from kafka_ops.errors import PlanError
from kafka_ops.planning import plan_replica_balance
from kafka_ops.planning.kafka_generate import generate_full_replacement, topics_to_move_json
from kafka_ops.planning.placement import kafka_assignment
from kafka_ops.planning.view import ClusterView
from tests.unit.planning.builders import check_invariants, cluster, reassigning, replicas_per_broker

NO_RACKS = {1: None, 2: None, 3: None}
RF2 = {"t": {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 3), 4: (2, 1), 5: (3, 2)}}


def test_a_new_broker_gets_its_share_with_the_fewest_moves() -> None:
    snap = cluster({**NO_RACKS, 4: None}, RF2)
    plan = plan_replica_balance(snap)
    assert plan.figures["lower_bound_moves"] == plan.moves == 3
    assert replicas_per_broker(plan) == {1: 3, 2: 3, 3: 3, 4: 3}
    # followers moved: no preferred leader changed
    assert all(m.target[0] == m.current[0] for m in plan.reassignments)
    assert all(m.added == (4,) for m in plan.reassignments)
    assert plan.figures["residual_excess"] == 0
    check_invariants(plan, snap)


def test_when_racks_bind_replicas_stay_in_their_rack() -> None:
    # RF 3 on racks a/b/c: the new broker 4 (rack a) can only take rack a's replicas
    partitions = {p: [(1, 2, 3), (2, 3, 1), (3, 1, 2)][p % 3] for p in range(6)}
    snap = cluster({1: "a", 2: "b", 3: "c", 4: "a"}, {"t": partitions})
    plan = plan_replica_balance(snap)
    assert replicas_per_broker(plan) == {1: 3, 2: 6, 3: 6, 4: 3}
    assert plan.moves == plan.figures["lower_bound_moves"] == 3
    assert plan.figures["count_lower_bound_moves"] == 4  # 5/5/4/4: only reachable by breaking the rack spread
    assert all(m.removed == (1,) and m.added == (4,) and m.target[0] != 4 for m in plan.reassignments)
    check_invariants(plan, snap)


def test_replicas_cross_racks_when_a_rack_is_over_its_share() -> None:
    snap = cluster({1: "a", 2: "a", 3: "b"}, {"solo": {p: ((1,) if p % 2 else (2,)) for p in range(4)}})
    plan = plan_replica_balance(snap)
    assert plan.moves == plan.figures["lower_bound_moves"] == 1
    assert sorted(replicas_per_broker(plan).values()) == [1, 1, 2]
    check_invariants(plan, snap)


def test_excluded_brokers_are_drained() -> None:
    snap = cluster({**NO_RACKS, 4: None}, RF2)
    plan = plan_replica_balance(snap, exclude_brokers=[3])
    after = replicas_per_broker(plan)
    assert after[3] == 0 and sorted(after[b] for b in (1, 2, 4)) == [4, 4, 4]
    assert plan.moves == plan.figures["lower_bound_moves"] == 4
    check_invariants(plan, snap)


def test_skips_partitions_it_must_not_touch() -> None:
    topics = {"t": {0: (1, 2), 1: (1, 2), 2: (1, 9), 3: (1, 2)}}
    snap = cluster({**NO_RACKS, 4: None}, topics)
    reassigning(snap, "t", 3, (3,))
    plan = plan_replica_balance(snap)
    assert {s.partition: s.reason for s in plan.skipped} == {
        2: "a replica is on a broker that is not registered (decommission it first)",
        3: "partition is being reassigned",
    }
    assert {m.partition for m in plan.reassignments} <= {0, 1}
    check_invariants(plan, snap)


def test_max_moves_caps_the_plan() -> None:
    snap = cluster({**NO_RACKS, 4: None}, RF2)
    plan = plan_replica_balance(snap, max_moves=2)
    assert plan.moves == 2 and plan.figures["max_moves_reached"] == 1


def test_generate_baseline_is_kafkas_algorithm_under_a_fixed_seed() -> None:
    snap = cluster({**NO_RACKS, 4: None}, RF2)
    plan = plan_replica_balance(snap, generate_seed=5)
    assert plan.figures["generate_moves"] >= plan.moves
    assert plan.figures["generate_seed"] == 5
    proposal = generate_full_replacement(ClusterView(snap), [1, 2, 3, 4], seed=5)
    assert proposal == generate_full_replacement(ClusterView(snap), [1, 2, 3, 4], seed=5)
    # one topic: two draws from Random(5), then AdminUtils over the four brokers
    rng = random.Random(5)
    start, shift = rng.randrange(4), rng.randrange(4)
    expected = kafka_assignment(dict.fromkeys([1, 2, 3, 4]), 6, 2, start_index=start, shift=shift)
    assert proposal == {("t", p): tuple(r) for p, r in expected.items()}
    assert "generate_moves" not in plan_replica_balance(snap, generate_seed=None).figures


def test_balanced_cluster_needs_nothing() -> None:
    plan = plan_replica_balance(cluster(NO_RACKS, RF2))
    assert plan.is_empty and plan.figures["lower_bound_moves"] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"exclude_brokers": [7]}, r"exclude_brokers: broker\(s\) \[7\] are not registered"),
        ({"exclude_brokers": [1, 2, 3]}, r"exclude_brokers: excludes every registered broker \[1, 2, 3\]"),
        ({"max_moves": 0}, "max_moves: must be a positive integer, got 0"),
    ],
)
def test_refuses_bad_requests(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PlanError, match=message):
        plan_replica_balance(cluster(NO_RACKS, RF2), **kwargs)  # type: ignore[arg-type]


def test_topics_to_move_file_for_kafkas_generate() -> None:
    view = ClusterView(cluster(NO_RACKS, {"b": {0: (1,)}, "a": {0: (2,)}}))
    assert topics_to_move_json(view) == {"version": 1, "topics": [{"topic": "a"}, {"topic": "b"}]}
