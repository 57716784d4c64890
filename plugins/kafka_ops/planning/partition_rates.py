"""The byte rates the latest analysis measured (`partition_load` findings), for the load-aware planner.

A plan is made from a fresh snapshot; the rates come from the newest analysis of a snapshot captured
at most `max_age` before it (rates are averages over `thresholds.load_window_hours`: an analysis much
older than that describes another traffic). A partition whose rate is unknown (method `unknown`) is
left out, so the planner counts it as unknown rather than idle.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.load import PartitionRates
from kafka_ops.report.reads import Row, findings_table, latest_commit_row

TABLE = "partition_load"


def latest_partition_rates(
    lake: Lake, cluster: str, at: datetime, max_age: timedelta
) -> dict[TopicPartition, PartitionRates]:
    """(topic, partition) → rates from the newest analysis with `partition_load` findings of a
    snapshot captured in [at - max_age, at]; empty when there is none."""

    def measured(row: Row) -> bool:
        return TABLE in json.loads(row["findings"] or "{}") and row["captured_at"] >= at - max_age

    analysis = latest_commit_row(lake, ANALYSIS_COMMIT_TABLE, cluster, keep=measured, until=at)
    if analysis is None:
        return {}
    table = findings_table(lake, cluster, analysis, TABLE)
    if table is None:
        return {}
    rows = table.select(["topic", "partition", "bytes_in_per_s", "bytes_out_per_s"]).to_pylist()
    return {
        (r["topic"], r["partition"]): PartitionRates(r["bytes_in_per_s"], r["bytes_out_per_s"] or 0.0)
        for r in rows
        if r["bytes_in_per_s"] is not None
    }
