"""The planner's byte rates: the newest analysis' `partition_load` findings of a recent snapshot, read
from a lake written by the real writers."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from kafka_ops.lake.store import Lake
from kafka_ops.planning.load import PartitionRates
from kafka_ops.planning.partition_rates import latest_partition_rates
from tests.unit.report import scenario

S3_AT, S4_AT = scenario.SNAPSHOTS["s3"][0], scenario.SNAPSHOTS["s4"][0]


def rate(topic: str, partition: int, bytes_in: float | None, bytes_out: float | None = None) -> dict[str, Any]:
    method = "unknown" if bytes_in is None else "size_growth"
    return {"topic": topic, "partition": partition, "bytes_in_per_s": bytes_in, "bytes_out_per_s": bytes_out,
            "method": method, "severity": "ok"}  # fmt: skip


def lake_with_rates(tmp_path: Path) -> Lake:
    lake = Lake(tmp_path / "lake")
    scenario.publish_findings(lake, "s3", "snapshots", {"partition_load": [rate("orders", 0, 1.0, 2.0)]})
    scenario.publish_findings(lake, "s4", "snapshots", {
        "partition_load": [rate("orders", 0, 500.0, 1500.0), rate("orders", 1, 20.0), rate("orders", 2, None)],
    })  # fmt: skip
    scenario.publish_findings(lake, "s-old", "snapshots", {"isr_health_partitions": []})
    return lake


def test_the_newest_analysis_rates_every_partition_with_a_known_rate(tmp_path: Path) -> None:
    rates = latest_partition_rates(lake_with_rates(tmp_path), "c1", S4_AT, timedelta(hours=2))
    assert rates == {("orders", 0): PartitionRates(500.0, 1500.0), ("orders", 1): PartitionRates(20.0, 0.0)}


def test_a_plan_on_an_older_snapshot_takes_the_analysis_of_its_time(tmp_path: Path) -> None:
    rates = latest_partition_rates(lake_with_rates(tmp_path), "c1", S3_AT, timedelta(hours=2))
    assert rates == {("orders", 0): PartitionRates(1.0, 2.0)}


def test_rates_older_than_the_allowed_age_or_never_measured_are_not_used(tmp_path: Path) -> None:
    lake = lake_with_rates(tmp_path)
    assert latest_partition_rates(lake, "c1", S4_AT + timedelta(hours=3), timedelta(hours=2)) == {}
    assert latest_partition_rates(lake, "other", S4_AT, timedelta(hours=2)) == {}
    assert latest_partition_rates(lake, "c1", S4_AT - timedelta(days=1), timedelta(days=3)) == {}
