from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.schema import COMMIT_TABLES, REMEDIATION_AUDIT_TABLE, REMEDIATION_PLANS_TABLE, commit_table_of
from kafka_ops.lake.store import Lake
from kafka_ops.planning import plan_decommission, plan_preferred_election
from kafka_ops.remediation.progress import Progress, Step
from kafka_ops.remediation.store import (
    AuditLog,
    load_plan,
    plan_dir,
    plan_from_json,
    plan_to_json,
    progress_lock,
    progress_path,
    read_audit,
    read_progress,
    save_plan,
    write_progress,
)
from tests.unit.remediation.clusters import live, rf2_plan

AT = datetime(2026, 11, 21, 7, 30, tzinfo=UTC)


def plans() -> list[object]:
    base = live({"t": {0: (1, 2), 1: (2, 3)}}, leaders={("t", 0): 2}, snapshot_id="base")
    return [rf2_plan(), plan_preferred_election(base), plan_decommission(base, [3])]


@pytest.mark.parametrize("plan", plans(), ids=lambda p: p.kind)  # type: ignore[attr-defined]
def test_plan_json_round_trip(plan: object) -> None:
    assert plan_from_json(json.loads(json.dumps(plan_to_json(plan)))) == plan  # type: ignore[arg-type]


def test_remediation_tables_are_their_own_commit_logs() -> None:
    for table in (REMEDIATION_PLANS_TABLE, REMEDIATION_AUDIT_TABLE):
        assert table in COMMIT_TABLES and commit_table_of(table) == table
    assert commit_table_of("partitions") == "snapshots"


def test_save_plan_writes_kafka_files_and_one_row(lake: Lake) -> None:
    plan = rf2_plan()
    saved = save_plan(lake, plan, created_by="alice", created_at=AT)
    assert saved.published
    folder = Path(plan_dir(lake, "c1", plan.plan_id))
    assert folder == Path(lake.base) / "_plans" / "c1" / plan.plan_id
    assert json.loads((folder / "reassignment.json").read_text()) == plan.to_reassignment_json()
    assert json.loads((folder / "rollback.json").read_text()) == plan.rollback_json()
    assert json.loads((folder / "election.json").read_text()) == {"version": 1, "partitions": []}
    assert load_plan(lake, "c1", plan.plan_id) == plan

    again = save_plan(lake, plan, created_by="bob")
    assert not again.published
    rows = lake.commit_log(REMEDIATION_PLANS_TABLE, "c1").to_pylist()
    assert len(rows) == 1
    row = rows[0]
    assert (row["plan_id"], row["kind"], row["snapshot_id"], row["created_by"]) == (
        plan.plan_id, "replication_factor", "base", "alice"
    )  # fmt: skip
    assert (row["partitions"], row["moves"], row["elections"], row["dt"]) == (4, 4, 0, "2026-11-21")
    assert json.loads(row["document"]) == json.loads(json.dumps(plan.to_document()))
    assert json.loads(row["request"]) == {"replication_factor": 2, "topics": ["orders"]}
    assert json.loads(row["rollback"]) == plan.rollback_json()


def test_load_unknown_plan_names_it(lake: Lake) -> None:
    with pytest.raises(LakeError, match="no plan 'nope' for cluster 'c1' in remediation_plans"):
        load_plan(lake, "c1", "nope")


def test_progress_is_replaced_atomically(lake: Lake) -> None:
    assert read_progress(lake, "c1", "p1") is None
    progress = Progress("p1", "c1", "admin_api", [Step(0, (("t", 0),))], [])
    write_progress(lake, progress)
    progress.batches[0].state = "submitted"
    write_progress(lake, progress)
    back = read_progress(lake, "c1", "p1")
    assert back is not None and back.batches[0].state == "submitted" and back.updated_at
    folder = Path(progress_path(lake, "c1", "p1")).parent
    assert [p.name for p in folder.iterdir()] == ["p1.json"], "no temporary file is left behind"


def test_a_corrupt_progress_document_is_refused(lake: Lake) -> None:
    path = Path(progress_path(lake, "c1", "p1"))
    path.parent.mkdir(parents=True)
    path.write_text("{half")
    with pytest.raises(LakeError, match=r"p1\.json: not a progress document this executor wrote"):
        read_progress(lake, "c1", "p1")


def test_audit_rows_are_appended_per_event(lake: Lake) -> None:
    plan = rf2_plan()
    audit = AuditLog(lake, plan, "zookeeper", "alice", "manual__1")
    audit.record("set_throttle", "ok", batch=0, partitions=2, detail="1000 B/s")
    audit.record("reassign", "ok", batch=0, partitions=2, detail="{}")
    AuditLog(lake, plan, "zookeeper", "bob").record("cancel", "refused", detail="no")
    rows = read_audit(lake, "c1", plan.plan_id)
    assert [(r["batch"], r["action"], r["outcome"], r["actor"], r["run_id"]) for r in rows] == [
        (0, "set_throttle", "ok", "alice", "manual__1"),
        (0, "reassign", "ok", "alice", "manual__1"),
        (None, "cancel", "refused", "bob", None),
    ]
    assert {(r["plan_id"], r["kind"], r["backend"], r["snapshot_id"]) for r in rows} == {
        (plan.plan_id, "replication_factor", "zookeeper", "base")
    }
    assert len({r["event_id"] for r in rows}) == 3
    assert read_audit(lake, "c1", "other") == [] and read_audit(lake, "c2") == []


def test_progress_lock_excludes_a_second_holder_until_released(lake: Lake) -> None:
    """The compare-and-set behind a cancel: while one holder has the plan's lock, another waits and
    gives up with a `LakeError` naming the lock file; once released, the next holder gets it."""
    with progress_lock(lake, "c1", "abcd"):
        with pytest.raises(
            LakeError,
            match=r"plan abcd of cluster c1: the lock .*_executions/c1/abcd\.json\.lock was held by another run",
        ):
            with progress_lock(lake, "c1", "abcd", timeout_s=0.2):
                pass
        with progress_lock(lake, "c1", "other", timeout_s=0.2):  # another plan's lock is its own
            pass
    with progress_lock(lake, "c1", "abcd", timeout_s=0.2):
        pass
