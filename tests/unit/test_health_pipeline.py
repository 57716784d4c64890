"""The analysis DAG's steps around Spark, on a hand-built lake."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from kafka_ops.analysis.thresholds import Thresholds
from kafka_ops.health_pipeline import validate_batches
from kafka_ops.lake.store import Lake
from kafka_ops.model import CollectionIssue
from kafka_ops.snapshot_tables import snapshot_batch
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
