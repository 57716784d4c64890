"""Partition runs carried from one analysis to the next give exactly the findings of runs rebuilt from
the window's rows: as the window moves past old snapshots, when an analysis skipped a snapshot, and
when the lake got a snapshot committed late, below one already analysed."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from kafka_ops.analysis import runner
from kafka_ops.analysis.partition_runs import COVERAGE_TABLE, RUNS_TABLE
from kafka_ops.analysis.runner import AnalysisResult, analyse
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.thresholds import Thresholds

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from synthetic_history import snapshot_batches

CLUSTER = "synth"
PER_DAY = 12
"""Snapshots a day: the 24-hour window holds 12, so the window moves past the first ones."""
RUNS_READERS = [DETECTORS[n] for n in ("isr_events", "broker_attribution", "reassignments")]


def _findings(lake: Lake, result: AnalysisResult) -> dict[str, list[tuple[Any, ...]]]:
    tables = [*result.counts, RUNS_TABLE]
    return {
        t: sorted(tuple(str(v) for v in r.values()) for r in lake.read(t, CLUSTER, [result.snapshot_id]).to_pylist())
        for t in tables
    }


def _analyse(spark: SparkSession, lake: Lake) -> AnalysisResult:
    return analyse(spark, str(lake.root), CLUSTER, RUNS_READERS, Thresholds(), lake_format="delta")


def test_carried_runs_give_the_findings_of_rebuilt_runs(spark: SparkSession, tmp_path: Path) -> None:
    batches = list(snapshot_batches(CLUSTER, 120, snapshots=20, per_day=PER_DAY, seed=3))
    late = batches.pop(15)  # committed after the analysis of the snapshot after it
    carried, rebuilt = open_lake(tmp_path / "carried", "delta"), open_lake(tmp_path / "rebuilt", "delta")
    for batch in batches[:14]:
        carried.publish(batch)
    assert _analyse(spark, carried).partition_runs == {"carried_from": None, "snapshots_read": PER_DAY + 1}

    steps = [batches[14:16], [late], batches[16:19]]  # two at once (one skipped); the late one; three more
    for published in steps:
        for batch in published:
            carried.publish(batch)
        result = _analyse(spark, carried)
    assert result.partition_runs["carried_from"] is not None
    assert result.partition_runs["snapshots_read"] == 3

    for batch in [*batches, late]:
        rebuilt.publish(batch)
    fresh = _analyse(spark, rebuilt)
    assert fresh.partition_runs["carried_from"] is None
    assert fresh.snapshot_id == result.snapshot_id
    assert fresh.counts == result.counts
    assert sum(n for t in ("isr_events", "isr_flapping", "reassignments_in_flight") for n in fresh.counts[t].values())
    assert _findings(carried, result) == _findings(rebuilt, fresh)


def test_a_longer_window_than_the_previous_analysis_rebuilds(spark: SparkSession, tmp_path: Path) -> None:
    lake = open_lake(tmp_path, "delta")
    batches = list(snapshot_batches(CLUSTER, 30, snapshots=16, per_day=PER_DAY, seed=4))
    for batch in batches[:15]:
        lake.publish(batch)
    _analyse(spark, lake)
    lake.publish(batches[15])
    longer = Thresholds(history_hours=30)
    result = analyse(spark, str(lake.root), CLUSTER, RUNS_READERS, longer, lake_format="delta")
    assert result.partition_runs == {"carried_from": None, "snapshots_read": 16}
    covered = lake.read(COVERAGE_TABLE, CLUSTER, [result.snapshot_id]).to_pylist()
    assert len(covered) == 16
    assert {r["window_start"] for r in covered} == {batches[15].captured_at - timedelta(hours=30)}


def test_state_tables_are_published_but_not_counted_as_findings(spark: SparkSession, tmp_path: Path) -> None:
    lake = open_lake(tmp_path, "delta")
    for batch in snapshot_batches(CLUSTER, 10, snapshots=3, per_day=PER_DAY, seed=5):
        lake.publish(batch)
    result = _analyse(spark, lake)
    assert not {RUNS_TABLE, COVERAGE_TABLE} & set(result.counts)
    assert lake.read(RUNS_TABLE, CLUSTER, [result.snapshot_id]).num_rows >= 10


def test_tables_read_at_the_latest_snapshot_only_give_the_findings_of_whole_windows(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every `latest_only` a detector declares is true: reading each table over the whole window, as the
    analysis read every input before, finds the same."""
    lake = open_lake(tmp_path, "delta")
    for batch in snapshot_batches(CLUSTER, 60, snapshots=14, per_day=PER_DAY, seed=6):
        lake.publish(batch)
    detectors = list(DETECTORS.values())
    assert any(d.latest_only for d in detectors)
    latest = analyse(spark, str(lake.root), CLUSTER, detectors, Thresholds(), lake_format="delta")
    latest_rows = _findings(lake, latest)
    monkeypatch.setattr(runner, "window_tables", lambda ds: frozenset(runner.input_tables(ds)))
    whole = analyse(spark, str(lake.root), CLUSTER, detectors, Thresholds(), lake_format="delta")
    assert whole.counts == latest.counts
    assert _findings(lake, whole) == latest_rows
