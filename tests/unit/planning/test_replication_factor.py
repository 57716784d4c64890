from __future__ import annotations

import pytest

from kafka_ops.errors import PlanError
from kafka_ops.planning import plan_replication_factor
from tests.unit.planning.builders import check_invariants, cluster, reassigning

RACKS = {1: "a", 2: "b", 3: "c"}


def test_seed_case_tp_re_02_from_one_to_two_replicas() -> None:
    # the sandbox's racks a/b/c; kafka-topics placed the three single replicas from a random start
    snap = cluster(RACKS, {"tp_re_02": {0: (2,), 1: (3,), 2: (1,)}})
    plan = plan_replication_factor(snap, ["tp_re_02"], 2)
    assert plan.to_reassignment_json() == {"version": 1, "partitions": [
        {"topic": "tp_re_02", "partition": 0, "replicas": [2, 3]},
        {"topic": "tp_re_02", "partition": 1, "replicas": [3, 1]},
        {"topic": "tp_re_02", "partition": 2, "replicas": [1, 2]},
    ]}  # fmt: skip
    assert plan.rollback_json() == {"version": 1, "partitions": [
        {"topic": "tp_re_02", "partition": 0, "replicas": [2]},
        {"topic": "tp_re_02", "partition": 1, "replicas": [3]},
        {"topic": "tp_re_02", "partition": 2, "replicas": [1]},
    ]}  # fmt: skip
    assert plan.moves == 3 and plan.figures["lower_bound_moves"] == 3
    # every broker gains one follower; leaders stay where they are
    assert {b.broker_id: (b.replicas_after, b.leaders_after) for b in plan.brokers} == {1: (2, 1), 2: (2, 1), 3: (2, 1)}
    assert not plan.skipped and not plan.elections
    check_invariants(plan, snap, replication_factor=2)


def test_seed_case_with_kafkas_own_start_matches_kafka() -> None:
    # created with start index 0: Kafka's RF-2 placement would be [1,2], [2,3], [3,1]
    snap = cluster(RACKS, {"tp_re_02": {0: (1,), 1: (2,), 2: (3,)}})
    plan = plan_replication_factor(snap, ["tp_re_02"], 2)
    assert [m.target for m in plan.reassignments] == [(1, 2), (2, 3), (3, 1)]


def test_new_replicas_go_to_unused_racks_first() -> None:
    racks = {1: "a", 2: "a", 3: "b", 4: "c"}
    snap = cluster(racks, {"t": {0: (1,)}, "busy": {0: (3,), 1: (3,), 2: (4,), 3: (4,)}})
    plan = plan_replication_factor(snap, ["t"], 3)
    assert plan.reassignments[0].target == (1, 3, 4)  # broker 2 (empty, but rack a) is not chosen
    check_invariants(plan, snap, replication_factor=3)


def test_new_replicas_balance_the_topic_then_the_broker() -> None:
    racks = {1: None, 2: None, 3: None, 4: None}
    snap = cluster(racks, {"t": {0: (1,), 1: (1,), 2: (1,)}, "other": {0: (2,), 1: (2,)}})
    plan = plan_replication_factor(snap, ["t"], 2)
    # brokers 2, 3, 4 hold no replica of t: each gets one; 3 and 4 (emptier) before 2
    assert [m.target for m in plan.reassignments] == [(1, 3), (1, 4), (1, 2)]


def test_going_down_keeps_leader_and_rack_spread_and_drops_out_of_sync_first() -> None:
    racks = {1: "a", 2: "a", 3: "b", 4: "c"}
    snap = cluster(
        racks,
        {"t": {0: (1, 2, 3), 1: (3, 1, 4), 2: (1, 3, 4)}},
        leaders={("t", 1): 1},
        isr={("t", 2): (1, 3)},
    )
    plan = plan_replication_factor(snap, ["t"], 2)
    targets = {m.partition: m.target for m in plan.reassignments}
    assert targets[0] == (1, 3)  # 2 shares rack a with the preferred leader 1
    assert targets[1] == (3, 1)  # 1 leads now: kept with the preferred replica 3
    assert targets[2] == (1, 3)  # 4 is out of the ISR
    assert plan.moves == 0
    check_invariants(plan, snap, replication_factor=2)


def test_going_to_one_replica_keeps_the_current_leader() -> None:
    snap = cluster(RACKS, {"t": {0: (1, 2)}}, leaders={("t", 0): 2})
    plan = plan_replication_factor(snap, ["t"], 1)
    assert plan.reassignments[0].target == (2,)


def test_skips_partitions_it_must_not_touch() -> None:
    snap = cluster(RACKS, {"t": {0: (1,), 1: (2,), 2: (3,), 3: (1, 2)}}, leaders={("t", 2): -1})
    reassigning(snap, "t", 1, (3,))
    plan = plan_replication_factor(snap, ["t"], 2)
    assert [m.partition for m in plan.reassignments] == [0]
    assert {s.partition: s.reason for s in plan.skipped} == {
        1: "partition is being reassigned",
        2: "partition is offline (no live leader)",
        3: "already at the requested replication factor",
    }
    check_invariants(plan, snap, replication_factor=2)


@pytest.mark.parametrize(
    ("topics", "rf", "message"),
    [
        (["t"], 0, "replication_factor: must be an integer of at least 1, got 0"),
        (["t"], 4, r"replication_factor: 4 is larger than the 3 live \(registered\) brokers \[1, 2, 3\]"),
        (["nope"], 2, "topics: unknown topic\\(s\\) 'nope': not in snapshot s1 of cluster c1"),
        ([], 2, "topics: is empty"),
        (["t", "t"], 2, "topics: lists t more than once"),
        ("t", 2, "topics: must be a list of topic names"),
        (["gone"], 2, "topics: topic\\(s\\) 'gone' are being deleted"),
    ],
)
def test_refuses_bad_requests(topics: list[str], rf: int, message: str) -> None:
    snap = cluster(RACKS, {"t": {0: (1,)}, "gone": {0: (2,)}})
    snap.pending_topic_deletions = ["gone"]
    with pytest.raises(PlanError, match=message):
        plan_replication_factor(snap, topics, rf)


def test_same_input_same_plan_whatever_the_collection_order() -> None:
    a = cluster(RACKS, {"x": {0: (1,), 1: (2,)}, "y": {1: (3,), 0: (1,)}})
    b = cluster(dict(reversed(RACKS.items())), {"y": {0: (1,), 1: (3,)}, "x": {1: (2,), 0: (1,)}})
    plan_a, plan_b = (plan_replication_factor(s, ["y", "x"], 3) for s in (a, b))
    assert plan_a.reassignments == plan_b.reassignments
    assert plan_a.plan_id == plan_b.plan_id
