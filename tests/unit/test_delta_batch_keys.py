"""A Delta lake keeps what each Parquet batch file meant: a plan and each audit event are their own
batch (keyed by `plan_id`, `event_id`), and a new analysis or validation of a snapshot replaces the
last one (keyed by `snapshot_id`, as `<snapshot_id>.analysis.parquet` was overwritten)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import batch_key
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Batch
from kafka_ops.remediation.store import AuditLog, load_plan, read_audit, save_plan
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.validation.lake_batches import find_commit, read_batch_table
from tests.unit.remediation.clusters import rf2_plan
from tests.unit.snapshots import AT, small_snapshot


def analysis(snapshot_id: str, severity: str) -> Batch:
    ts = pa.timestamp("us", tz="UTC")
    run = pa.table({"snapshot_id": [snapshot_id], "captured_at": pa.array([AT], ts), "analysed_at": pa.array([AT], ts),
                    "source": ["snapshots"], "detectors": [["x"]], "findings": ["{}"]})  # fmt: skip
    rows = pa.table({"snapshot_id": [snapshot_id, snapshot_id], "severity": [severity, severity]})
    return Batch(f"{snapshot_id}.analysis", "c1", AT, {"analysis_runs": run, "x_findings": rows}, "analysis_runs")


def test_plans_and_audit_events_are_batches_of_their_own(tmp_path: Path) -> None:
    lake = open_lake(tmp_path, "delta")
    plan = rf2_plan()
    save_plan(lake, plan, created_by="pytest")
    assert load_plan(lake, plan.cluster, plan.plan_id).plan_id == plan.plan_id
    audit = AuditLog(lake, plan, "zookeeper", "pytest")
    for action in ("set_throttle", "reassign", "verify"):
        audit.record(action, "ok")
    assert [r["action"] for r in sorted(read_audit(lake, plan.cluster, plan.plan_id), key=lambda r: r["at"])] == [
        "set_throttle",
        "reassign",
        "verify",
    ]


def test_a_new_analysis_of_a_snapshot_replaces_the_last(tmp_path: Path) -> None:
    lake = open_lake(tmp_path, "delta")
    lake.publish(snapshot_batch(small_snapshot("s1")))
    lake.publish(analysis("s1", "warning"))
    lake.publish(analysis("s1", "critical"))
    assert lake.read("x_findings", "c1").column("severity").to_pylist() == ["critical", "critical"]
    batch = find_commit(lake, "analysis_runs", "c1", "s1.analysis")
    assert batch is not None and batch.commit["snapshot_id"] == "s1"
    findings = read_batch_table(lake, batch, "x_findings")
    assert findings is not None and findings.num_rows == 2
    assert find_commit(lake, "analysis_runs", "c1", "s2.analysis") is None


def test_an_empty_findings_table_exists_as_its_parquet_file_would(tmp_path: Path) -> None:
    lake = open_lake(tmp_path, "delta")
    empty = analysis("s1", "ok")
    lake.publish(Batch(empty.batch_id, "c1", AT, {**empty.tables, "x_findings": empty.tables["x_findings"].slice(0, 0)},
                       "analysis_runs"))  # fmt: skip
    assert lake.read("x_findings", "c1").num_rows == 0  # a table with no rows, not "no lake table"


def test_a_batch_whose_rows_cannot_be_told_apart_is_refused() -> None:
    assert batch_key("s1", {"snapshot_id": "s1"}) == ("snapshot_id", "s1")
    assert batch_key("p-1", {"snapshot_id": "s1", "plan_id": "p-1"}) == ("plan_id", "p-1")
    assert batch_key("s1.validation", {"snapshot_id": "s1"}) == ("snapshot_id", "s1")
    with pytest.raises(LakeError, match="batch 'b7': its commit row holds it in none of"):
        batch_key("b7", {"snapshot_id": "s1"})
