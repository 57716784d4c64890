"""The intra-broker log dir balance: big replicas move to the emptier dir, never onto a dir in error,
never past a dir's disk share, never a replica already moving; the plan reads back from its JSON."""

from __future__ import annotations

import json

import pytest

from kafka_ops.errors import PlanError, PlanFormatError
from kafka_ops.model.cluster import ClusterSnapshot, LogDir, ReplicaSize
from kafka_ops.planning.load import DISK_CAPACITY
from kafka_ops.planning.log_dir_balance import LOG_DIR_SPREAD, MOVING_BETWEEN_DIRS, plan_log_dir_balance
from kafka_ops.planning.plan_json import plan_from_json
from kafka_ops.remediation.store import plan_to_json
from tests.unit.planning.builders import cluster

MB = 1_000_000


def jbod(sizes: dict[str, int], dirs: dict[str, int | None], *, where: dict[str, str] | None = None) -> ClusterSnapshot:
    """One broker (1) holding one partition per entry of `sizes` (topic -> bytes), all in dir /a unless
    `where` says otherwise; `dirs`: each dir's total bytes."""
    snap = cluster({1: None}, {t: {0: (1,)} for t in sizes})
    place = where or {}
    snap.replica_sizes = [ReplicaSize(t, 0, 1, place.get(t, "/a"), s) for t, s in sizes.items()]
    snap.log_dirs = [LogDir(1, p, None, total, total) for p, total in dirs.items()]
    return snap


def test_the_big_replicas_move_to_the_empty_dir_and_the_small_ones_stay() -> None:
    snap = jbod({"big1": 40 * MB, "big2": 30 * MB, "big3": 10 * MB, "small": 1_000}, {"/a": 10**9, "/b": 10**9})

    plan = plan_log_dir_balance(snap)

    assert plan.kind == "log_dir_balance" and not plan.reassignments
    assert [(d.topic, d.source_dir, d.target_dir) for d in plan.dir_moves] == [("big1", "/a", "/b")]
    assert plan.figures["bytes_moved"] == 40 * MB
    # /a 40.001 MB, /b 40 MB: within the 2 % band; the lower bound is what /a held above it
    assert plan.figures["lower_bound_bytes"] == round(80 * MB + 1_000 - (40 * MB + 500) * 1.02)
    (spread,) = [g for g in plan.goals if g.goal == LOG_DIR_SPREAD]
    assert spread.status == "improved" and spread.before == 2.0 and spread.after is not None and spread.after < 0.01
    assert {g.status for g in plan.goals if g.goal == DISK_CAPACITY} == {"held"}
    assert plan_from_json(json.loads(json.dumps(plan_to_json(plan)))) == plan


def test_dirs_are_filled_in_proportion_to_their_size() -> None:
    sizes = {f"t{i}": 10 * MB for i in range(9)}
    plan = plan_log_dir_balance(jbod(sizes, {"/a": 10**9, "/b": 2 * 10**9}))
    assert len(plan.dir_moves) == 6 and {d.target_dir for d in plan.dir_moves} == {"/b"}


def test_a_dir_in_error_never_receives_and_a_moving_replica_stays() -> None:
    snap = jbod({"big": 40 * MB, "moving": 30 * MB, "other": 20 * MB}, {"/a": 10**9, "/b": 10**9})
    snap.log_dirs.append(LogDir(1, "/broken", "KAFKA_STORAGE_ERROR"))
    snap.replica_sizes.append(ReplicaSize("moving", 0, 1, "/b", 1 * MB, offset_lag=5, is_future=True))

    plan = plan_log_dir_balance(snap)

    assert {d.target_dir for d in plan.dir_moves} == {"/b"}
    assert "moving" not in {d.topic for d in plan.dir_moves}
    assert [(s.topic, s.reason) for s in plan.skipped] == [("moving", f"{MOVING_BETWEEN_DIRS} on broker 1")]


def test_no_move_takes_a_dir_past_its_disk_share() -> None:
    # /a reports no total (so both dirs share the bytes equally); 80 % of /b's 35 MB is 28 MB: a 31 MB
    # replica would even the dirs best, but only the 20 MB one fits under the share
    snap = jbod({"big": 31 * MB, "other": 31 * MB, "mid": 20 * MB}, {"/a": None, "/b": 35 * MB})
    plan = plan_log_dir_balance(snap)
    assert [d.topic for d in plan.dir_moves] == ["mid"]
    shares = {g.detail: g.after for g in plan.goals if g.goal == DISK_CAPACITY}
    assert shares == {"log dir /b": pytest.approx(20 / 35)}
    assert [d.topic for d in plan_log_dir_balance(snap, max_disk_share=1.0).dir_moves] == ["big"]


def test_a_broker_with_one_dir_and_a_snapshot_without_log_dirs() -> None:
    assert plan_log_dir_balance(jbod({"t": MB}, {"/a": 10**9})).is_empty
    bare = cluster({1: None}, {"t": {0: (1,)}})
    with pytest.raises(PlanError, match="no log dirs"):
        plan_log_dir_balance(bare)
    with pytest.raises(PlanError, match=r"broker\(s\) \[7\]"):
        plan_log_dir_balance(jbod({"t": MB}, {"/a": 10**9}), brokers=[7])


def test_a_plan_moving_one_replica_twice_is_refused_on_read() -> None:
    plan = plan_log_dir_balance(jbod({"big1": 40 * MB, "big2": 30 * MB}, {"/a": 10**9, "/b": 10**9}))
    doc = plan_to_json(plan)
    doc["dir_moves"] = doc["dir_moves"] * 2
    with pytest.raises(PlanFormatError, match=r"dir_moves\[1\].*listed twice"):
        plan_from_json(doc)
