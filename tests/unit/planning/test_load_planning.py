"""The load-aware planners: bytes balanced under the hard goals, and bad capacities refused or reported."""

from __future__ import annotations

import json

import pytest

from kafka_ops.capacities import BrokerCapacity, Capacities
from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot, LogDir, ReplicaSize
from kafka_ops.planning import plan_decommission, plan_replica_balance, plan_replication_factor
from kafka_ops.planning.load import (
    DISK_CAPACITY,
    DISK_SPREAD,
    NETWORK_IN_CAPACITY,
    NETWORK_IN_SPREAD,
    REPLICA_CAPACITY,
    PartitionRates,
    cluster_load,
)
from kafka_ops.planning.plan_json import plan_from_json
from kafka_ops.remediation.store import plan_to_json
from tests.unit.planning.builders import Assignment, check_invariants, cluster

GB = 1_000_000_000


def sized(racks: dict[int, str | None], topics: Assignment, sizes: dict[str, int]) -> ClusterSnapshot:
    """`cluster` with every replica of topic t sized `sizes[t]` bytes on log dir /data."""
    snap = cluster(racks, topics)
    snap.replica_sizes = [
        ReplicaSize(t, p, b, "/data", sizes[t]) for t, parts in topics.items() for p, rs in parts.items() for b in rs
    ]
    return snap


def disks(plan_brokers: object) -> dict[int, int | None]:
    return {b.broker_id: b.disk_bytes_after for b in plan_brokers}  # type: ignore[attr-defined]


def goal(plan: object, name: str) -> list[object]:
    return [g for g in plan.goals if g.goal == name]  # type: ignore[attr-defined]


# -- the load model ------------------------------------------------------------------------------------


def test_partition_size_is_its_largest_replica_and_disk_defaults_to_the_log_dirs() -> None:
    snap = cluster({1: None, 2: None}, {"t": {0: (1, 2), 1: (1, 2)}})
    snap.replica_sizes = [
        ReplicaSize("t", 0, 1, "/a", 100),
        ReplicaSize("t", 0, 2, "/a", 90),  # a lagging follower
        ReplicaSize("t", 1, 1, "/a", 5, is_future=True),  # only a future replica: its size counts
    ]
    snap.log_dirs = [LogDir(1, "/a", None, 1000, 400), LogDir(1, "/b", None, 500, 100), LogDir(2, "/a", None, None)]
    load = cluster_load(snap, Capacities(), {("t", 0): PartitionRates(10.0, 20.0)})
    assert load.sizes == {("t", 0): 100, ("t", 1): 5}
    assert load.disk_capacity == {1: 1500, 2: None}  # broker 2 reports no total: unknown, not guessed
    assert "broker(s) [2]" in load.missing[DISK_CAPACITY]
    assert DISK_SPREAD not in load.missing and NETWORK_IN_SPREAD not in load.missing
    settings = Capacities(
        default=BrokerCapacity(disk_bytes=10_000),
        brokers=(
            (
                1,
                BrokerCapacity(disk_bytes=7),
            ),
        ),
    )
    assert cluster_load(snap, settings).disk_capacity == {1: 7, 2: 10_000}


def test_without_sizes_the_plan_is_the_count_based_one() -> None:
    topics: Assignment = {"t": {p: (1 + p % 2,) for p in range(6)}}
    snap = cluster({1: None, 2: None, 3: None}, topics)
    load = cluster_load(snap, Capacities())
    assert DISK_SPREAD in load.missing
    assert plan_replica_balance(snap, load=load) == plan_replica_balance(snap)


# -- replica balance by bytes --------------------------------------------------------------------------


def test_balance_moves_the_big_partitions_off_the_fullest_broker_and_leaves_the_small_ones() -> None:
    topics: Assignment = {"big": {p: (1,) for p in range(4)}, "small": {p: (1 if p < 8 else 2,) for p in range(12)}}
    snap = sized({1: None, 2: None, 3: None}, topics, {"big": 30 * GB, "small": 1_000})
    plan = plan_replica_balance(snap, load=cluster_load(snap))
    check_invariants(plan, snap)
    assert {m.topic for m in plan.reassignments} == {"big"}, "small partitions are left alone"
    after = disks(plan.brokers)
    assert max(after.values()) - min(after.values()) <= 30 * GB + 12_000  # one big partition's worth at most
    assert plan.figures["bytes_moved"] == 2 * 30 * GB
    assert (
        plan.figures["lower_bound_bytes"]
        and plan.figures["bytes_moved"] <= 1.05 * plan.figures["lower_bound_bytes"] + 30 * GB
    )
    # a count-based balance would even the small partitions' counts instead
    assert {m.topic for m in plan_replica_balance(snap).reassignments} != {"big"}


def test_balance_reaches_the_byte_lower_bound_when_partitions_are_fine_grained() -> None:
    topics: Assignment = {"t": {p: (1,) for p in range(300)}}
    sizes = {"t": 1 * GB}
    snap = sized({1: None, 2: None, 3: None, 4: None}, topics, sizes)
    plan = plan_replica_balance(snap, load=cluster_load(snap))
    assert plan.figures["bytes_moved"] == plan.figures["lower_bound_bytes"] or (
        plan.figures["bytes_over_lower_bound"] is not None and float(plan.figures["bytes_over_lower_bound"]) <= 1.05
    )
    after = disks(plan.brokers)
    assert max(after.values()) <= 75 * GB * 1.02 and min(after.values()) >= 75 * GB * 0.98


def test_a_new_broker_receives_enough_replicas_to_lead_its_share_not_the_fewest_that_fill_it() -> None:
    """Two brokers hold 30 partitions of 1..30 GB; a third joins. Filled by the fewest, largest replicas it
    would hold about 6 and could lead only those, a fifth of its share (10); replicas of about the bytes it
    needs per partition it should lead fill it as well, to the same band."""
    topics: Assignment = {f"t{gb}": {0: (1 + gb % 2,)} for gb in range(1, 31)}
    snap = sized({1: None, 2: None, 3: None}, topics, {f"t{gb}": gb * GB for gb in range(1, 31)})
    plan = plan_replica_balance(snap, load=cluster_load(snap))
    check_invariants(plan, snap)
    received = [m for m in plan.reassignments if 3 in m.added]
    assert len(received) >= 9, [m.topic for m in received]
    after = disks(plan.brokers)
    assert all(abs(after[b] - 155 * GB) <= 0.02 * 155 * GB + 30 * GB for b in (1, 2, 3)), after  # type: ignore[operator]
    assert float(plan.figures["bytes_over_lower_bound"]) <= 1.2


def test_balance_follows_capacities_and_keeps_racks() -> None:
    racks: dict[int, str | None] = {1: "a", 2: "b", 3: "a", 4: "b"}
    topics: Assignment = {"t": {p: (1, 2) for p in range(40)}}
    snap = sized(racks, topics, {"t": GB})
    big = BrokerCapacity(disk_bytes=300 * GB)
    caps = Capacities(default=BrokerCapacity(disk_bytes=100 * GB), brokers=((3, big), (4, big)))
    plan = plan_replica_balance(snap, load=cluster_load(snap, caps))
    check_invariants(plan, snap)
    after = disks(plan.brokers)
    assert after[3] == pytest.approx(3 * after[1], rel=0.1), "disk share, not bytes, is evened"
    for m in plan.reassignments:
        assert {racks[b] for b in m.target} == {"a", "b"}
    unchecked = (REPLICA_CAPACITY, NETWORK_IN_CAPACITY)
    assert all(g.status == "held" for g in plan.goals if g.hard and g.goal not in unchecked)
    assert [g.status for g in goal(plan, NETWORK_IN_CAPACITY)] == ["unchecked"], "no rates"  # type: ignore[attr-defined]


def test_a_broker_over_its_disk_before_the_plan_is_relieved() -> None:
    topics: Assignment = {"t": {p: (1,) for p in range(10)}}
    snap = sized({1: None, 2: None}, topics, {"t": 10 * GB})
    plan = plan_replica_balance(snap, load=cluster_load(snap, Capacities(BrokerCapacity(disk_bytes=100 * GB))))
    assert disks(plan.brokers) == {1: 50 * GB, 2: 50 * GB}
    assert [g.status for g in goal(plan, DISK_CAPACITY)] == ["held"]  # type: ignore[attr-defined]


def test_hard_goals_out_of_reach_are_refused_naming_the_goal_and_brokers() -> None:
    topics: Assignment = {"t": {p: (1,) for p in range(10)}}
    snap = sized({1: None, 2: None}, topics, {"t": 10 * GB})
    with pytest.raises(PlanError) as e:
        plan_replica_balance(snap, load=cluster_load(snap, Capacities(BrokerCapacity(disk_bytes=60 * GB))))
    assert e.value.field == DISK_CAPACITY and "above their limit now: [1]" in str(e.value)
    with pytest.raises(PlanError) as e:
        plan_replica_balance(snap, load=cluster_load(snap, Capacities(max_replicas_per_broker=4)))
    assert e.value.field == REPLICA_CAPACITY and "above it now: [1]" in str(e.value)


def test_a_standing_violation_no_move_can_relieve_is_reported_per_broker() -> None:
    # one 90 GB partition on broker 1 (limit 80 GB): moving it would only move the violation
    topics: Assignment = {"huge": {0: (1,)}, "t": {p: (2,) for p in range(2)}}
    snap = sized({1: None, 2: None}, topics, {"huge": 90 * GB, "t": GB})
    plan = plan_replica_balance(snap, load=cluster_load(snap, Capacities(BrokerCapacity(disk_bytes=100 * GB))))
    assert plan.is_empty
    (disk,) = goal(plan, DISK_CAPACITY)
    assert (disk.status, disk.broker) == ("violated", 1)  # type: ignore[attr-defined]
    assert "before the plan" in disk.detail  # type: ignore[attr-defined]
    assert plan.figures["hard_goals_violated"] == 1


# -- decommission and replication factor ---------------------------------------------------------------


def test_decommission_sends_bytes_where_the_disk_is_emptiest() -> None:
    topics: Assignment = {"big": {0: (3,)}, "t": {p: (1,) for p in range(5)}, "u": {p: (3,) for p in range(4)}}
    snap = sized({1: None, 2: None, 3: None}, topics, {"big": 50 * GB, "t": 10 * GB, "u": GB})
    plan = plan_decommission(snap, [3], load=cluster_load(snap))
    check_invariants(plan, snap)
    assert disks(plan.brokers)[3] == 0
    assert {m.target for m in plan.reassignments if m.topic == "big"} == {(2,)}, "the emptiest broker takes it"
    assert plan.figures["bytes_moved"] == plan.figures["lower_bound_bytes"] == 54 * GB


def test_decommission_that_cannot_fit_is_refused() -> None:
    topics: Assignment = {"t": {p: (1 + p % 2,) for p in range(10)}}
    snap = sized({1: None, 2: None}, topics, {"t": 10 * GB})
    with pytest.raises(PlanError) as e:
        plan_decommission(snap, [2], load=cluster_load(snap, Capacities(BrokerCapacity(disk_bytes=70 * GB))))
    assert e.value.field == DISK_CAPACITY and "brokers [1]" in str(e.value)


def test_replication_factor_puts_new_replicas_on_the_emptiest_disk_and_refuses_past_capacity() -> None:
    topics: Assignment = {"t": {0: (1,)}, "fill": {0: (2,)}}
    snap = sized({1: None, 2: None, 3: None}, topics, {"t": 5 * GB, "fill": 40 * GB})
    plan = plan_replication_factor(snap, ["t"], 2, load=cluster_load(snap))
    assert [m.target for m in plan.reassignments] == [(1, 3)]
    assert plan.figures["bytes_moved"] == plan.figures["lower_bound_bytes"] == 5 * GB
    caps = Capacities(BrokerCapacity(disk_bytes=50 * GB), brokers=((3, BrokerCapacity(disk_bytes=5 * GB)),))
    with pytest.raises(PlanError) as e:
        plan_replication_factor(snap, ["fill"], 3, load=cluster_load(snap, caps))
    assert e.value.field == DISK_CAPACITY and "fill-0" in str(e.value)


def test_a_load_aware_plan_round_trips_through_json() -> None:
    topics: Assignment = {"t": {p: (1,) for p in range(8)}}
    snap = sized({1: None, 2: None}, topics, {"t": GB})
    rates = {("t", p): PartitionRates(1000.0 * (p + 1)) for p in range(8)}
    plan = plan_replica_balance(snap, load=cluster_load(snap, Capacities(BrokerCapacity(disk_bytes=100 * GB)), rates))
    document = json.loads(json.dumps(plan.to_document()))
    assert document["brokers"][0]["disk_share_before"] == pytest.approx(0.08)
    back = plan_from_json(json.loads(json.dumps(plan_to_json(plan))))
    assert back.brokers == plan.brokers and back.goals == plan.goals
    assert {g.goal for g in back.goals if not g.hard and g.status != "unchecked"} >= {DISK_SPREAD, NETWORK_IN_SPREAD}
