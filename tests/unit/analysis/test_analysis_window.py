"""The analysis reads its window's days only: the latest batch found on the newest day, each input
table and its commit table read from the window's days (here yesterday's and today's), never an
older day's files, so a run costs as much on a lake keeping 35 days as on one keeping a day."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse, read_history
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.thresholds import Thresholds
from tests.unit.snapshots import AT, small_snapshot


@pytest.mark.parametrize("lake_format", ["parquet", "delta"])
def test_an_analysis_opens_no_file_of_a_day_before_its_window(
    spark: SparkSession, tmp_path: Path, lake_format: str
) -> None:
    lake = open_lake(tmp_path, lake_format)
    for snapshot_id, hours_ago in (("old", 48), ("yesterday", 7), ("today", 0)):  # AT is 06:00
        snap = small_snapshot(snapshot_id)
        snap.captured_at = AT - timedelta(hours=hours_ago)
        lake.publish(snapshot_batch(snap))
    old_day = tmp_path.glob(f"*/cluster=c1/dt={AT - timedelta(hours=48):%Y-%m-%d}/*.parquet")
    for file in old_day:  # any read that opened one, Spark's or the commit log's, would fail
        file.write_bytes(b"not a parquet file")

    window = read_history(
        spark, str(tmp_path), "partitions", "c1", since=AT - timedelta(hours=24), until=AT, lake_format=lake_format
    )
    assert {r.snapshot_id for r in window.select("snapshot_id").distinct().collect()} == {"yesterday", "today"}
    result = analyse(spark, str(tmp_path), "c1", [DETECTORS["isr_health"]], Thresholds(), lake_format=lake_format)
    assert result.snapshot_id == "today"
    assert result.counts["isr_health"]["critical"] > 0  # `solo` is offline in the latest snapshot
