from __future__ import annotations

import pytest

from kafka_ops.errors import PlanError
from kafka_ops.planning import plan_decommission
from tests.unit.planning.builders import check_invariants, cluster, reassigning, replicas_per_broker

SIX = {1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"}


def test_every_replica_leaves_and_stays_in_its_rack() -> None:
    snap = cluster(SIX, {"t": {0: (1, 2, 3), 1: (2, 1, 3), 2: (3, 5, 1), 3: (2, 3, 5)}})
    plan = plan_decommission(snap, [1])
    # rack a's only other broker is 4; each replacement takes the leaver's slot
    assert [(m.partition, m.target) for m in plan.reassignments] == [(0, (4, 2, 3)), (1, (2, 4, 3)), (2, (3, 5, 4))]
    assert plan.moves == plan.figures["lower_bound_moves"] == 3
    assert replicas_per_broker(plan)[1] == 0
    check_invariants(plan, snap)


def test_replacements_spread_over_the_least_loaded_brokers() -> None:
    racks = {1: None, 2: None, 3: None, 4: None, 5: None}
    snap = cluster(racks, {"t": {p: (1, 2) for p in range(4)}, "u": {0: (2, 3), 1: (3, 2)}})
    plan = plan_decommission(snap, [1])
    after = replicas_per_broker(plan)
    assert after == {1: 0, 2: 6, 3: 3, 4: 2, 5: 1}  # 3 holds one of t's; 4 and 5 the rest: t stays spread
    assert plan.moves == 4
    # the leaver was the preferred leader: the new replica takes the first slot
    assert all(m.target[1] == 2 for m in plan.reassignments)


def test_rack_spread_drops_only_when_a_rack_loses_its_last_broker() -> None:
    snap = cluster({1: "a", 2: "b", 3: "c", 4: "b"}, {"t": {0: (1, 2, 3)}})
    plan = plan_decommission(snap, [1])
    assert plan.reassignments[0].target == (4, 2, 3)


def test_a_broker_that_is_gone_can_be_decommissioned() -> None:
    snap = cluster(SIX, {"t": {0: (1, 9), 1: (9, 2)}}, leaders={("t", 1): 2})
    plan = plan_decommission(snap, [9])
    # racks b and c are free for t-0; t-1 keeps rack b (broker 2) and takes the emptiest other rack
    assert [m.target for m in plan.reassignments] == [(1, 3), (4, 2)]
    check_invariants(plan, snap)


def test_skips_partitions_it_must_not_touch() -> None:
    snap = cluster(SIX, {"t": {0: (1, 2), 1: (1, 3), 2: (4, 1)}}, leaders={("t", 1): -1})
    reassigning(snap, "t", 2, (6,))
    plan = plan_decommission(snap, [1])
    assert [m.partition for m in plan.reassignments] == [0]
    assert {s.partition: s.reason for s in plan.skipped} == {
        1: "partition is offline (no live leader)",
        2: "partition is being reassigned",
    }
    assert plan.figures["replicas_left_behind"] == 2
    check_invariants(plan, snap)


@pytest.mark.parametrize(
    ("brokers", "message"),
    [
        ([], "brokers: is empty"),
        ([7], r"brokers: broker\(s\) \[7\] are neither registered nor holding any replica in snapshot s1"),
        ([1, 1], r"brokers: lists broker\(s\) \[1\] more than once"),
        ([1, 2, 3], r"brokers: decommissioning every registered broker \[1, 2, 3\] leaves none"),
        ([1, 2], r"brokers: t-0 has 3 replicas \[1, 2, 3\] but only 1 registered broker\(s\) would remain \[3\]"),
        (["1"], "brokers: broker ids are integers"),
    ],
)
def test_refuses_bad_requests(brokers: list[int], message: str) -> None:
    snap = cluster({1: "a", 2: "b", 3: "c"}, {"t": {0: (1, 2, 3)}})
    with pytest.raises(PlanError, match=message):
        plan_decommission(snap, brokers)


def test_a_skipped_partition_does_not_block_the_rest() -> None:
    # t-0 could not be moved (RF 3, 2 brokers left) but it is offline: skipped, not refused
    snap = cluster({1: "a", 2: "b", 3: "c"}, {"t": {0: (1, 2, 3), 1: (1, 2)}}, leaders={("t", 0): -1})
    plan = plan_decommission(snap, [1])
    assert [(m.partition, m.target) for m in plan.reassignments] == [(1, (3, 2))]
    assert [s.partition for s in plan.skipped] == [0]
