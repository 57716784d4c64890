from __future__ import annotations

from kafka_ops.planning import plan_replication_factor
from kafka_ops.planning.plan_rollback import plan_rollback
from tests.unit.planning.builders import cluster

RACKS = {1: "a", 2: "b", 3: "c"}
BASE = {"t": {0: (1,), 1: (2,), 2: (3,), 3: (1,)}}


def test_rollback_and_finish_of_a_half_applied_plan() -> None:
    plan = plan_replication_factor(cluster(RACKS, BASE), ["t"], 2)
    target = {m.partition: m.target for m in plan.reassignments}
    # batch 0 applied (t-0, t-1), t-2 moved elsewhere by someone else, t-3 still at the base
    now = cluster(RACKS, {"t": {0: target[0], 1: target[1], 2: (1,), 3: (1,)}}, snapshot_id="s2")

    back = plan_rollback(now, plan)
    assert (back.kind, back.request, back.snapshot_id) == ("rollback", {"plan_id": plan.plan_id}, "s2")
    assert [(m.partition, m.current, m.target) for m in back.reassignments] == [
        (0, target[0], (1,)), (1, target[1], (2,))
    ]  # fmt: skip
    assert [(s.partition, s.reason) for s in back.skipped] == [
        (2, f"now [1], neither the plan's base [3] nor its target {list(target[2])}: changed since by someone else")
    ]

    ahead = plan_rollback(now, plan, finish=True)
    assert ahead.kind == "finish" and ahead.plan_id != back.plan_id
    assert [(m.partition, m.target) for m in ahead.reassignments] == [(3, target[3])]
    assert [s.partition for s in ahead.skipped] == [2]
