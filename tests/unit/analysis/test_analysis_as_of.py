"""The analysis as of a past time on a Delta lake: the batch current then, every input table at its
Delta version current then (time travel, not a scan of captured_at); refused on a Parquet lake."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse, read_history
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.errors import LakeError
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.time_travel import version_as_of
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.thresholds import Thresholds
from tests.unit.snapshots import AT, small_snapshot

DETECTOR = [DETECTORS["isr_health"]]


def publish(lake_root: Path, snapshot_id: str, minutes_ago: int, lake_format: str = "delta") -> None:
    snap = small_snapshot(snapshot_id)
    snap.captured_at = AT - timedelta(minutes=minutes_ago)
    open_lake(lake_root, lake_format).publish(snapshot_batch(snap))


def moment() -> datetime:
    """A time strictly between the Delta commits before and after it (their times are in ms)."""
    time.sleep(0.02)
    at = datetime.now(UTC)
    time.sleep(0.02)
    return at


def test_an_analysis_as_of_a_past_time_sees_the_lake_as_it_was(spark: SparkSession, tmp_path: Path) -> None:
    before_lake = moment()
    publish(tmp_path, "s1", 10)
    then = moment()
    publish(tmp_path, "s2", 0)  # the latest now, not then
    publish(tmp_path, "s0", 20)  # published late: older than s1, but not in the lake at `then`
    lake = open_lake(tmp_path, "delta")

    result = analyse(spark, lake.root, "c1", DETECTOR, Thresholds(), lake_format="delta", as_of=then)
    assert result.snapshot_id == "s1"
    assert {r["snapshot_id"] for r in lake.read("analysis_runs", "c1").to_pylist()} == {"s1"}
    assert analyse(spark, lake.root, "c1", DETECTOR, Thresholds(), lake_format="delta").snapshot_id == "s2"

    window = {"since": AT - timedelta(hours=1), "until": AT - timedelta(minutes=10)}
    versions = {t: version_as_of(lake, t, then) for t in ("partitions", "snapshots")}
    as_of = read_history(spark, lake.root, "partitions", "c1", **window, lake_format="delta", versions=versions)
    now = read_history(spark, lake.root, "partitions", "c1", **window, lake_format="delta")
    assert {r.snapshot_id for r in as_of.select("snapshot_id").distinct().collect()} == {"s1"}
    assert {r.snapshot_id for r in now.select("snapshot_id").distinct().collect()} == {"s0", "s1"}

    with pytest.raises(LakeError, match="has no version at or before"):
        analyse(spark, lake.root, "c1", DETECTOR, Thresholds(), lake_format="delta", as_of=before_lake)


def test_a_parquet_lake_refuses_an_analysis_as_of_a_past_time(spark: SparkSession, tmp_path: Path) -> None:
    publish(tmp_path, "s1", 0, "parquet")
    with pytest.raises(LakeError, match="Parquet lake, which keeps no past versions"):
        analyse(spark, str(tmp_path), "c1", DETECTOR, Thresholds(), lake_format="parquet", as_of=datetime.now(UTC))
