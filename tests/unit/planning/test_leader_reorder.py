from __future__ import annotations

import pytest

from kafka_ops.errors import PlanError
from kafka_ops.planning import plan_leader_reorder
from tests.unit.planning.builders import check_invariants, cluster, reassigning

NO_RACKS = {1: None, 2: None, 3: None}


def test_reorders_without_moving_data_then_elects() -> None:
    snap = cluster(NO_RACKS, {"t": {p: (1, 2, 3) for p in range(6)}})
    plan = plan_leader_reorder(snap)
    assert [(m.partition, m.target) for m in plan.reassignments] == [
        (0, (2, 1, 3)), (1, (3, 2, 1)), (2, (2, 1, 3)), (3, (3, 2, 1))]  # fmt: skip
    assert plan.moves == 0
    assert plan.figures["lower_bound_changes"] == plan.figures["reordered"] == 4
    elections = [(e.partition, e.leader, e.preferred) for e in plan.elections]
    assert elections == [(0, 1, 2), (1, 1, 3), (2, 1, 2), (3, 1, 3)]
    after = {b.broker_id: (b.preferred_after, b.leaders_after) for b in plan.brokers}
    assert after == {1: (2, 2), 2: (2, 2), 3: (2, 2)}
    check_invariants(plan, snap)


def test_prefers_the_current_leader_so_no_election_is_needed() -> None:
    snap = cluster(NO_RACKS, {"t": {0: (1, 2, 3), 1: (1, 2, 3), 2: (1, 3, 2)}}, leaders={("t", 1): 3})
    plan = plan_leader_reorder(snap)
    assert [(m.partition, m.target) for m in plan.reassignments] == [(0, (2, 1, 3)), (1, (3, 2, 1))]
    assert [e.partition for e in plan.elections] == [0]


def test_only_live_in_sync_replicas_below_target_take_the_lead() -> None:
    snap = cluster(NO_RACKS, {"t": {0: (1, 2, 3), 1: (1, 2, 3), 2: (1, 2, 3)}}, isr={("t", 0): (1, 3), ("t", 1): (1,)})
    reassigning(snap, "t", 2, (9,))
    plan = plan_leader_reorder(snap)
    assert [(m.partition, m.target) for m in plan.reassignments] == [(0, (3, 2, 1))]
    assert [(s.partition, s.reason) for s in plan.skipped] == [(2, "partition is being reassigned")]
    assert plan.figures["residual_excess"] == 1


def test_max_partitions_caps_the_plan() -> None:
    snap = cluster(NO_RACKS, {"t": {p: (1, 2, 3) for p in range(6)}})
    plan = plan_leader_reorder(snap, max_partitions=1)
    assert len(plan.reassignments) == 1
    assert [s.reason for s in plan.skipped] == ["cap reached: max_partitions"] * 3


def test_refuses_bad_requests() -> None:
    snap = cluster(NO_RACKS, {"t": {0: (1, 2, 3)}})
    with pytest.raises(PlanError, match="max_partitions: must be a positive integer"):
        plan_leader_reorder(snap, max_partitions=0)
    with pytest.raises(PlanError, match="topics: unknown topic"):
        plan_leader_reorder(snap, topics=["nope"])


def test_a_chain_of_swaps_reaches_a_broker_no_surplus_partition_touches() -> None:
    # broker 1 leads two, 3 none; 1's partitions only have 2 as another replica, and 2 is at its target
    snap = cluster(NO_RACKS, {"t": {0: (1, 2), 1: (1, 2), 2: (2, 3)}})
    plan = plan_leader_reorder(snap)
    assert [(m.partition, m.target) for m in plan.reassignments] == [(1, (2, 1)), (2, (3, 2))]
    assert {b.broker_id: b.preferred_after for b in plan.brokers} == {1: 1, 2: 1, 3: 1}
    assert plan.figures["lower_bound_changes"] == 1 and plan.figures["reordered"] == 2
    assert plan.figures["residual_excess"] == 0
