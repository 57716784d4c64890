"""The analysis DAG's steps around Spark, on a hand-built lake."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from kafka_ops.alerting.alert import Links
from kafka_ops.alerting.firing import firing_alerts
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.model.cluster import CollectionIssue
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.gates import GateReport, GateResult
from kafka_ops.validation.pipeline import validate_batches
from tests.unit.snapshots import small_snapshot

AT = datetime(2026, 11, 21, 10, 5, tzinfo=UTC)


def test_collection_issues_are_tolerated_up_to_the_cluster_threshold(tmp_path: Path) -> None:
    snap = small_snapshot("s1")
    snap.issues.append(CollectionIssue("/brokers/topics/x", "field 'partitions': expected an object"))
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(snap))

    strict = validate_batches(lake, "c1", AT)
    assert strict["snapshots"]["trusted"] is False
    assert "collection_issues_within_threshold" in strict["snapshots"]["failed"]

    tolerant = validate_batches(lake, "c1", AT, thresholds=Thresholds(max_collection_issues=1))
    assert tolerant["snapshots"]["trusted"] is True
    assert "group_snapshots" not in tolerant  # no group collection yet: nothing to validate


def publish_analysis(lake: Lake, sid: str, source: str, findings: dict[str, list[dict[str, object]]]) -> None:
    """An `analysis_runs` row for `sid` with these findings tables."""
    run = pa.table({
        "snapshot_id": [sid], "captured_at": pa.array([AT], pa.timestamp("us", tz="UTC")),
        "analysed_at": pa.array([AT], pa.timestamp("us", tz="UTC")), "source": [source], "detectors": [["x"]],
        "findings": ["{}"],
    })  # fmt: skip
    tables = {t: pa.Table.from_pylist([{"snapshot_id": sid, **r} for r in rows]) for t, rows in findings.items()}
    lake.publish(Batch(f"{sid}.analysis", "c1", AT, {"analysis_runs": run, **tables}, "analysis_runs"))


def test_group_alerts_carry_the_time_behind_and_its_method(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    publish_analysis(lake, "s1", "snapshots", {})
    publish_analysis(lake, "g1", "group_snapshots", {"lag_time_groups": [
        {"group_id": "audit", "max_lag_seconds": 2025.0, "max_lag_method": "extrapolated", "max_is_lower_bound": False,
         "max_lag_topic": "orders", "max_lag_partition": 0, "severity": "critical"},
    ]})  # fmt: skip
    gate = GateResult(name="no_group_in_err", severity="critical", passed=False, count=1,
                      rows=({"group_id": "audit", "problem": "ERR: 1 partition STOP"},), cause=None, action=None,
                      since=None, meaning="no group in ERR", cluster="c1", snapshot_id="g1",
                      data_docs=None)  # fmt: skip
    (alert,) = firing_alerts(lake, "c1", GateReport("c1", "s1", "g1", (gate,), None, 0.1), Links())
    assert alert.cause == "ERR: 1 partition STOP; ~33 min (extrapolated) behind on orders-0"
    assert alert.details["lag_seconds_method"] == "extrapolated"
