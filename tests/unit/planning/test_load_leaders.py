"""Leadership at no byte cost in the load-aware plans (`planning.load_leaders`)."""

from __future__ import annotations

from kafka_ops.planning import plan_decommission, plan_replica_balance
from kafka_ops.planning.load import LEADER_BYTES_IN_SPREAD, LEADER_SPREAD, PartitionRates, cluster_load
from tests.unit.planning.builders import Assignment, check_invariants
from tests.unit.planning.test_load_planning import GB, goal, sized


def leaders_after(plan: object) -> dict[int, int]:
    return {b.broker_id: b.leaders_after for b in plan.brokers}  # type: ignore[attr-defined]


def test_leader_bytes_in_is_evened_by_reordering_with_no_byte_moved() -> None:
    # disk is even (every partition on both brokers), but broker 1 leads everything
    topics: Assignment = {"t": {p: (1, 2) for p in range(4)}}
    snap = sized({1: None, 2: None}, topics, {"t": GB})
    rates = {("t", 0): PartitionRates(300.0), **{("t", p): PartitionRates(100.0) for p in (1, 2, 3)}}
    plan = plan_replica_balance(snap, load=cluster_load(snap, rates=rates))
    check_invariants(plan, snap)
    assert plan.moves == 0 and plan.figures["bytes_moved"] == 0
    # one reorder does it: the 300 B/s partition's leadership goes to broker 2
    assert [(m.partition, m.target) for m in plan.reassignments] == [(0, (2, 1))]
    assert [(e.partition, e.leader, e.preferred) for e in plan.elections] == [(0, 1, 2)]
    lead_in = {b.broker_id: b.leader_bytes_in_after for b in plan.brokers}
    assert lead_in == {1: 300.0, 2: 300.0}
    (bytes_goal,) = goal(plan, LEADER_BYTES_IN_SPREAD)
    assert (bytes_goal.status, bytes_goal.before, bytes_goal.after) == ("improved", 600.0, 0.0)  # type: ignore[attr-defined]
    # leader bytes-in outranks leader counts: 3 vs 1 leaders stays, evening them would undo the bytes
    assert leaders_after(plan) == {1: 3, 2: 1}
    assert plan.figures["leader_reorders"] == plan.figures["leader_reorders_unmoved"] == 1


def test_leader_counts_are_evened_in_a_decommission_without_moving_more() -> None:
    # broker 4 leads six small partitions; broker 1, the emptiest disk, takes all of them
    topics: Assignment = {
        "t": {p: (4, 2 if p < 3 else 3) for p in range(6)},
        "fill": {0: (2,), 1: (3,)},
    }
    snap = sized({1: None, 2: None, 3: None, 4: None}, topics, {"t": GB, "fill": 100 * GB})
    plan = plan_decommission(snap, [4], load=cluster_load(snap))
    check_invariants(plan, snap)
    assert {m.target for m in plan.reassignments} <= {(1, 2), (2, 1), (1, 3), (3, 1)}, "every replica went to 1"
    assert plan.figures["bytes_moved"] == plan.figures["lower_bound_bytes"] == 6 * GB
    after = leaders_after(plan)
    assert after[4] == 0 and sorted(after[b] for b in (1, 2, 3)) == [2, 3, 3], "not 6, 1, 1"
    (count_goal,) = goal(plan, LEADER_SPREAD)
    assert count_goal.after == 1  # type: ignore[attr-defined]  # over brokers 1-3: 0, 1, 1 before
    assert plan.figures["leader_reorders"] == 3
    assert plan.figures["leader_reorders_unmoved"] == 0, "a decommission touches no other partition"
    # the new first replicas of the moved partitions lead by themselves: broker 4 leaves, nothing to elect
    assert not plan.elections
