from __future__ import annotations

import pytest

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import plan_preferred_election
from tests.unit.planning.builders import cluster, reassigning

RACKS = {1: "a", 2: "b", 3: "c", 4: "a"}


def _snapshot() -> ClusterSnapshot:
    """Broker 5 is not registered. Broker 2's only judged partitions are both led by others
    (ratio 1.0); broker 1 leads one of its three (ratio 2/3)."""
    snap = cluster(
        RACKS,
        {"t": {0: (1, 2, 3), 1: (1, 3, 2), 2: (2, 1, 3), 3: (3, 1, 2), 4: (5, 1, 2), 5: (1, 2, 3),
               6: (2, 3, 1), 7: (3, 2, 1), 8: (4, 1, 2)}},
        leaders={("t", 0): 2, ("t", 1): 3, ("t", 2): 1, ("t", 3): 1, ("t", 4): 1, ("t", 6): 3, ("t", 7): -1,
                 ("t", 8): 1},
        isr={("t", 3): (1, 2)},
    )  # fmt: skip
    reassigning(snap, "t", 6, (4,))
    snap.preferred_election_requests = [("t", 8)]
    return snap


def test_elects_where_the_preferred_replica_is_live_and_in_sync() -> None:
    plan = plan_preferred_election(_snapshot())
    assert [(e.partition, e.leader, e.preferred) for e in plan.elections] == [(0, 2, 1), (1, 3, 1), (2, 1, 2)]
    assert {s.partition: s.reason for s in plan.skipped} == {
        3: "preferred replica is not in the ISR",
        4: "preferred replica is down",
        6: "partition is being reassigned",
        7: "partition is offline (no live leader)",
        8: "a preferred-leader election is already requested",
    }
    assert plan.election_json() == {"version": 1, "partitions": [
        {"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}, {"topic": "t", "partition": 2}]}  # fmt: skip
    assert plan.reassignments == () and plan.moves == 0
    assert plan.figures["non_preferred_before"] == 8  # every partition but 5 (7 has no leader)
    assert plan.figures["non_preferred_after"] == 5
    loads = {b.broker_id: b for b in plan.brokers}
    assert (loads[1].leaders_before, loads[1].leaders_after) == (5, 6)  # gains 0 and 1, loses 2
    assert (loads[2].leaders_before, loads[2].leaders_after) == (1, 1)


def test_run_cap_keeps_the_most_imbalanced_broker_first() -> None:
    plan = plan_preferred_election(_snapshot(), max_elections=2)
    # broker 2 (ratio 1.0) first, then broker 1 (2/3); broker 1's second election is cut
    assert [e.partition for e in plan.elections] == [0, 2]
    assert ("t", 1, "cap reached: max_elections") in {(s.topic, s.partition, s.reason) for s in plan.skipped}


def test_per_broker_cap() -> None:
    plan = plan_preferred_election(_snapshot(), max_per_broker=1)
    assert [e.partition for e in plan.elections] == [0, 2]
    assert ("t", 1, "cap reached: max_per_broker") in {(s.topic, s.partition, s.reason) for s in plan.skipped}


def test_the_caps_are_shared_out_by_imbalance_not_spent_on_one_broker() -> None:
    # broker 1: 4 of 4 led by others; broker 2: 2 of 4. Ratios after each pick: 1: 1, 3/4, 2/4 ...
    topics = {"t": {p: (1, 2) for p in range(4)} | {p: (2, 1) for p in range(4, 8)}}
    leaders = {("t", p): 2 for p in range(4)} | {("t", 4): 1, ("t", 5): 1}
    plan = plan_preferred_election(cluster({1: "a", 2: "b"}, topics, leaders=leaders), max_elections=4)
    # 1 (4/4) -> 1 (3/4) -> then 1 at 2/4 ties 2 at 2/4: more such partitions wins, then the lower id
    assert [(e.partition, e.preferred) for e in plan.elections] == [(0, 1), (1, 1), (2, 1), (4, 2)]


def test_topic_filter() -> None:
    snap = cluster(RACKS, {"a": {0: (1, 2)}, "b": {0: (1, 2)}}, leaders={("a", 0): 2, ("b", 0): 2})
    plan = plan_preferred_election(snap, topics=["b"])
    assert [(e.topic, e.partition) for e in plan.elections] == [("b", 0)]
    assert plan.request["topics"] == ["b"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_elections": 0}, "max_elections: must be a positive integer, got 0"),
        ({"max_per_broker": -1}, "max_per_broker: must be a positive integer, got -1"),
        ({"topics": ["nope"]}, "topics: unknown topic"),
        ({"topics": []}, "topics: is empty"),
    ],
)
def test_refuses_bad_requests(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PlanError, match=message):
        plan_preferred_election(_snapshot(), **kwargs)  # type: ignore[arg-type]


def test_nothing_to_do_on_a_balanced_cluster() -> None:
    plan = plan_preferred_election(cluster(RACKS, {"t": {0: (1, 2), 1: (2, 1)}}))
    assert plan.is_empty and not plan.skipped
