from __future__ import annotations

from kafka_ops.planning import Move, plan_decommission, plan_replication_factor
from tests.unit.planning.builders import cluster

RACKS = {1: "a", 2: "b", 3: "c"}


def _plan(snapshot_id: str = "s1"):  # type: ignore[no-untyped-def]
    snap = cluster(RACKS, {"t": {0: (1,), 1: (2, 3)}}, snapshot_id=snapshot_id)
    return plan_replication_factor(snap, ["t"], 2, partition_sizes={("t", 0): 1000})


def test_move_counts_replicas_added() -> None:
    move = Move("t", 0, (1, 2, 3), (1, 4, 5), 10)
    assert move.added == (4, 5)
    assert move.removed == (2, 3)
    assert move.moves == 2
    assert move.estimated_bytes == 20
    assert Move("t", 0, (1, 2), (2, 1)).moves == 0  # a reorder moves no data


def test_reassignment_and_rollback_files_are_kafkas_format() -> None:
    plan = _plan()
    expected = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]}
    assert plan.to_reassignment_json() == expected
    assert plan.rollback_json() == {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1]}]}
    assert plan.to_reassignment_json(log_dirs=True)["partitions"][0]["log_dirs"] == ["any", "any"]
    assert plan.election_json() == {"version": 1, "partitions": []}


def test_plan_records_its_base_and_what_it_skipped() -> None:
    plan = _plan()
    assert (plan.kind, plan.cluster, plan.snapshot_id) == ("replication_factor", "c1", "s1")
    assert plan.captured_at == "2026-11-21T06:00:00+00:00"
    assert plan.request == {"topics": ["t"], "replication_factor": 2}
    assert [(s.topic, s.partition, s.reason) for s in plan.skipped] == [
        ("t", 1, "already at the requested replication factor")
    ]


def test_estimated_bytes_only_where_sizes_are_known() -> None:
    plan = _plan()
    assert plan.moves == 1
    assert plan.estimated_bytes == 1000
    assert plan.moves_without_size == 0
    snap = cluster(RACKS, {"t": {0: (1,)}})
    assert plan_replication_factor(snap, ["t"], 2).estimated_bytes is None


def test_broker_counts_before_and_after() -> None:
    loads = {b.broker_id: b for b in _plan().brokers}
    assert (loads[2].replicas_before, loads[2].replicas_after) == (1, 2)
    assert (loads[1].preferred_before, loads[1].preferred_after) == (1, 1)
    assert (loads[1].leaders_before, loads[1].leaders_after) == (1, 1)
    assert loads[1].rack == "a" and loads[1].registered


def test_plan_id_is_deterministic_and_tied_to_the_snapshot() -> None:
    assert _plan().plan_id == _plan().plan_id
    assert _plan().plan_id != _plan("s2").plan_id


def test_summary_and_document_are_json_ready() -> None:
    plan = _plan()
    summary = plan.summary()
    assert summary["moves"] == 1 and summary["partitions"] == 1 and summary["snapshot_id"] == "s1"
    document = plan.to_document()
    assert document["rollback"] == plan.rollback_json()
    reason = "already at the requested replication factor"
    assert document["skipped"] == [{"topic": "t", "partition": 1, "reason": reason}]
    assert document["brokers"][0]["broker_id"] == 1


def test_throttles_as_kafkas_tool_sets_them() -> None:
    snap = cluster({1: "a", 2: "b", 3: "c", 4: "a"}, {"t": {p: (1, 2) for p in range(11)}})
    plan = plan_decommission(snap, [1])
    throttles = plan.throttles()
    leader = throttles["topics"]["t"]["leader.replication.throttled.replicas"]
    follower = throttles["topics"]["t"]["follower.replication.throttled.replicas"]
    # every current replica is a source, every new one a destination; a string-sorted set (TreeSet)
    assert leader.split(",")[:4] == ["0:1", "0:2", "10:1", "10:2"]
    assert len(leader.split(",")) == 22
    assert set(follower.split(",")) == {f"{p}:{m.added[0]}" for p, m in enumerate(plan.reassignments)}
    assert throttles["brokers"] == sorted({1, 2} | {m.added[0] for m in plan.reassignments})
