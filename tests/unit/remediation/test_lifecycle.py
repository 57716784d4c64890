"""Each plan's lifecycle, read from what the executor, the approval and the automatic election really wrote
(the shared run loop driven by the fake executor of test_batch_runner, on a real lake): who moved it to
each state, and when."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from kafka_ops.errors import PlanCancelled, ReassignmentStuck, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.planning import Plan
from kafka_ops.remediation import AuditLog, save_plan
from kafka_ops.remediation.lifecycle import counts, lifecycles, oldest_awaiting, steps_table
from tests.unit.remediation.clusters import rf2_plan
from tests.unit.remediation.test_batch_runner import cancel_now, fresh, run, trusted


def plan_of(n: int) -> Plan:
    return dataclasses.replace(rf2_plan(), plan_id=f"{n:016x}")


def states(lake: Lake, plan: Plan) -> list[tuple[str, str | None]]:
    (found,) = [c for c in lifecycles(lake, plan.cluster) if c.plan_id == plan.plan_id]
    return [(s.state, s.by) for s in found.steps]


def test_a_plan_moves_from_planned_through_approval_and_execution_to_done(lake: Lake) -> None:
    plan = plan_of(1)
    save_plan(lake, plan, created_by="ana (run-0)")
    assert states(lake, plan) == [("planned", "ana (run-0)")]
    audit = AuditLog(lake, plan, "admin_api", "ana", "run-0")
    audit.record("approve", "requested", detail="from bo until 12:00")
    assert states(lake, plan)[-1] == ("awaiting_approval", "ana")
    waiting = lifecycles(lake, plan.cluster)
    assert counts(waiting)["awaiting_approval"] == 1
    assert oldest_awaiting(waiting, waiting[0].since + timedelta(minutes=5)) == 300
    AuditLog(lake, plan, "admin_api", "bo", "run-0").record("approve", "approved", detail="by bo")

    run(plan, lake, fresh(plan)).execute(trusted)

    assert states(lake, plan) == [("planned", "ana (run-0)"), ("awaiting_approval", "ana"), ("approved", "bo"),
                                  ("executing", "pytest"), ("done", "pytest")]  # fmt: skip
    assert counts(lifecycles(lake, plan.cluster))["done"] == 1
    table = steps_table(lifecycles(lake, plan.cluster))
    assert table.column("state").to_pylist() == ["planned", "awaiting_approval", "approved", "executing", "done"]
    assert table.column("at").to_pylist() == sorted(table.column("at").to_pylist())


def test_rejected_refused_stuck_resumed_and_cancelled_plans(lake: Lake) -> None:
    rejected, refused, stuck, cancelled = (plan_of(n) for n in (2, 3, 4, 5))
    for p in (rejected, refused, stuck, cancelled):
        save_plan(lake, p, created_by="ana")
    AuditLog(lake, rejected, "admin_api", "ana").record("approve", "requested")
    AuditLog(lake, rejected, "admin_api", "airflow").record("approve", "timed_out", detail="nobody answered")
    assert states(lake, rejected)[-1] == ("rejected", "airflow")

    def untrusted(*_: object) -> None:
        raise RemediationRefused(refused.plan_id, "base snapshot trusted", "not validated")

    with pytest.raises(RemediationRefused):
        run(refused, lake, fresh(refused)).execute(untrusted)
    (found,) = [c for c in lifecycles(lake, refused.cluster) if c.plan_id == refused.plan_id]
    assert found.state == "failed" and found.steps[-1].detail.startswith("refused: ")

    cluster = fresh(stuck)
    cluster.polls_to_copy = None
    with pytest.raises(ReassignmentStuck):
        run(stuck, lake, cluster).execute(trusted)
    assert [s for s, _ in states(lake, stuck)] == ["planned", "executing", "stuck"]
    cluster.polls_to_copy = cluster.polls + 1
    run(stuck, lake, cluster).execute(trusted)
    assert [s for s, _ in states(lake, stuck)] == ["planned", "executing", "stuck", "executing", "done"]

    cluster = fresh(cancelled)
    cluster.on_complete = cancel_now
    with pytest.raises(PlanCancelled):
        run(cancelled, lake, cluster).execute(trusted)
    assert [s for s, _ in states(lake, cancelled)][-1] == "cancelled"
    assert counts(lifecycles(lake, rejected.cluster)) == {
        "detected": 0, "planned": 0, "awaiting_approval": 0, "approved": 0, "rejected": 1, "executing": 0,
        "done": 1, "failed": 1, "stuck": 0, "cancelled": 1,
    }  # fmt: skip


def test_an_automatic_remediation_starts_at_its_detection(lake: Lake) -> None:
    plan = plan_of(6)
    detected = datetime.now(UTC) - timedelta(seconds=30)
    save_plan(lake, plan, created_by="kafka-ops auto-remediation")
    AuditLog(lake, plan, "admin_api", "kafka-ops auto-remediation").record(
        "detect", "ok", detail="leader imbalance persisted for 3 analyses", at=detected
    )
    (found,) = lifecycles(lake, plan.cluster)
    assert [s.state for s in found.steps] == ["detected", "planned"]
    assert found.steps[0].at == detected and "persisted" in found.steps[0].detail
