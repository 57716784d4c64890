from __future__ import annotations

import json
import re

import pytest

from kafka_ops.errors import ProgressFormatError, RemediationRefused
from kafka_ops.remediation.progress import Progress, Step, decide
from tests.unit.remediation.clusters import assign, live, moving, rf2_plan

PLAN = rf2_plan()
BATCH = [m for m in PLAN.reassignments if m.partition in (0, 1)]  # orders-0 [1]→[1,3], orders-1 [2]→[2,3]


def step(state: str = "pending") -> Step:
    return Step(0, tuple((m.topic, m.partition) for m in BATCH), state)  # type: ignore[arg-type]


def test_moves_are_what_the_fixture_says() -> None:
    assert [(m.partition, m.current, m.target) for m in BATCH] == [(0, (1,), (1, 3)), (1, (2,), (2, 3))]


@pytest.mark.parametrize("state", ["pending", "submitting"])
def test_a_batch_at_its_base_is_submitted(state: str) -> None:
    decision = decide(PLAN.plan_id, step(state), BATCH, live())
    assert decision.action == "submit" and decision.submit == tuple(BATCH)


def test_only_the_partitions_still_at_base_are_submitted() -> None:
    snap = live()
    assign(snap, "orders", 0, (1, 3))
    decision = decide(PLAN.plan_id, step("submitting"), BATCH, snap)
    assert decision.action == "submit" and [m.partition for m in decision.submit] == [1]


@pytest.mark.parametrize("state", ["pending", "submitting", "submitted"])
def test_a_batch_in_flight_is_waited_on_never_resubmitted(state: str) -> None:
    snap = live()
    moving(snap, "orders", 0, (1, 3))
    assign(snap, "orders", 1, (2, 3))
    assert decide(PLAN.plan_id, step(state), BATCH, snap).action == "wait"


@pytest.mark.parametrize("state", ["pending", "submitting", "submitted"])
def test_a_batch_already_at_its_target_is_marked_done_without_a_write(state: str) -> None:
    snap = live()
    assign(snap, "orders", 0, (1, 3))
    assign(snap, "orders", 1, (2, 3))
    assert decide(PLAN.plan_id, step(state), BATCH, snap).action == "mark_done"


def test_a_done_batch_is_skipped_without_reading() -> None:
    snap = live()
    assign(snap, "orders", 0, (3,))  # would be drift, but a done batch is not looked at again
    assert decide(PLAN.plan_id, step("done"), BATCH, snap).action == "skip"


def test_a_submitted_batch_back_at_its_base_is_never_submitted_twice() -> None:
    s = step("submitted")
    s.submitted_at, s.submitted_by = "2026-11-21T06:00:00+00:00", "alice (manual__1)"
    with pytest.raises(RemediationRefused) as e:
        decide(PLAN.plan_id, s, BATCH, live())
    assert str(e.value) == (
        f"plan {PLAN.plan_id}: refused (never apply a batch twice): batch 0 was submitted "
        "(2026-11-21T06:00:00+00:00 by alice (manual__1)) but orders-0, orders-1 are back at the original "
        "replicas with nothing in flight: the reassignment was cancelled or rolled back. Not submitting it again; "
        "make a new plan"
    )


def test_drift_is_refused_naming_partition_now_and_base() -> None:
    snap = live()
    assign(snap, "orders", 0, (2,))
    moving(snap, "orders", 1, (2, 1))
    message = (
        f"cluster changed since plan {PLAN.plan_id}: orders-0 is now [2], the plan was based on [1]; "
        "orders-1 is being reassigned to [2, 1], the plan was based on [2]. Make a new plan from a fresh snapshot"
    )
    with pytest.raises(RemediationRefused, match=re.escape(message)):
        decide(PLAN.plan_id, step(), BATCH, snap)


def test_progress_round_trips_through_json() -> None:
    progress = Progress(PLAN.plan_id, "c1", "zookeeper", [step("submitted"), Step(1, (("orders", 2),))],
                        [Step(0, (("logs", 0),), "done")], status="stuck", throttled_topics=["orders"],
                        throttled_brokers=[3, 1], runs=["alice"], message="stuck")  # fmt: skip
    back = Progress.from_json(json.loads(json.dumps(progress.to_json())), "p.json")
    assert back.to_json() == progress.to_json()
    assert back.throttled_brokers == [1, 3] and back.batches[0].partitions == (("orders", 0), ("orders", 1))
    assert back.submitted_any


@pytest.mark.parametrize(("change", "message"), [
    ({"version": 2}, "unknown version 2"),
    ({"status": "paused"}, "status: expected one of"),
    ({"batches": [{"index": 0, "partitions": [["t", "0"]], "state": "pending"}]}, r"batches\[0\]\.partitions"),
    ({"batches": [{"index": 0, "partitions": [], "state": "half"}]}, r"batches\[0\]\.state"),
])  # fmt: skip
def test_a_foreign_progress_document_is_refused(change: dict[str, object], message: str) -> None:
    data = {**Progress(PLAN.plan_id, "c1", "admin_api", [], []).to_json(), **change}
    expected = rf"p\.json: not a progress document this executor wrote: .*{message}"
    with pytest.raises(ProgressFormatError, match=expected):
        Progress.from_json(data, "p.json")


def test_a_progress_document_must_be_an_object() -> None:
    with pytest.raises(ProgressFormatError, match=r"p\.json: .* expected a JSON object, got \[\]"):
        Progress.from_json([], "p.json")  # type: ignore[arg-type]
