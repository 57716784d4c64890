from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.report.digest import render_findings

AT = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
TIME = {"max_lag_topic": "orders", "max_lag_partition": 0, "max_lag_method": None, "max_is_lower_bound": False,
        "partitions": 1, "unknown_partitions": 0, "severity": "ok"}  # fmt: skip


def publish(lake: Lake, sid: str, source: str, at: datetime, findings: dict[str, list[dict[str, Any]]]) -> None:
    counts = {t: {"critical": 0, "warning": 0, "info": 0, "ok": 0} for t in findings}
    for table, rows in findings.items():
        for r in rows:
            counts[table][r["severity"]] += 1
    run = pa.table(
        {
            "snapshot_id": [sid],
            "captured_at": pa.array([at], pa.timestamp("us", tz="UTC")),
            "analysed_at": pa.array([at], pa.timestamp("us", tz="UTC")),
            "source": [source],
            "detectors": [["x"]],
            "findings": [json.dumps(counts)],
        }
    )
    tables = {t: pa.Table.from_pylist([{"snapshot_id": sid, **r} for r in rows]) for t, rows in findings.items()}
    lake.publish(Batch(f"{sid}.analysis", "c1", at, {"analysis_runs": run, **tables}, "analysis_runs"))


def test_latest_analysis_of_each_source(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    controller = {"controller_id": 1, "controller_epoch": 3, "elections_last_hour": 0, "zombie_partitions": 0,
                  "churn": False}  # fmt: skip
    publish(lake, "s1", "snapshots", AT - timedelta(minutes=5),
            {"controller_health": [{**controller, "no_controller": True, "severity": "critical"}]})  # fmt: skip
    publish(
        lake, "s2", "snapshots", AT, {"controller_health": [{**controller, "no_controller": False, "severity": "ok"}]}
    )
    lag = {
        "group_id": "billing",
        "state": "Empty",
        "status": "ERR",
        "cause": "1 partition STOP: no new commit for 9 min",
    }
    publish(lake, "g1", "group_snapshots", AT, {
        "lag_status_groups": [{**lag, "severity": "critical"}],
        "assignor_recommendations": [{"group_id": "analytics", "error": None, "severity": "warning",
                                      "reason": "switch analytics from range to cooperative-sticky: ..."}],
        "lag_time_groups": [
            # written before max_lag_method existed: only the lower-bound flag
            {**TIME, "group_id": "billing", "max_lag_seconds": 95.0, "max_is_lower_bound": True, "total_lag": 9},
            {**TIME, "group_id": "analytics", "max_lag_seconds": 0.0, "max_lag_method": "caught_up", "total_lag": 0},
            {**TIME, "group_id": "audit", "max_lag_seconds": 2025.0, "max_lag_method": "extrapolated", "total_lag": 4},
            {**TIME, "group_id": "mail", "max_lag_seconds": 44.6, "max_lag_method": "interpolated", "total_lag": 2},
        ],
    })  # fmt: skip

    text = render_findings(lake, "c1")
    zookeeper, groups = text.split("\n\n", 1)
    assert zookeeper.startswith("findings for cluster c1, snapshot s2") and "all ok" in zookeeper
    assert "no active controller" not in text  # s1 is older
    assert "consumer groups, collection g1" in groups
    assert "critical group billing (Empty): ERR, 1 partition STOP: no new commit for 9 min" in groups
    assert "group analytics: switch analytics from range to cooperative-sticky" in groups
    assert "ok       group billing: ≥ 1 min behind on orders-0" in groups  # shown below the thresholds too
    # an estimate reads as one
    assert "ok       group audit: ~33 min (extrapolated) behind on orders-0" in groups
    assert "ok       group mail: ~44 s (interpolated) behind on orders-0" in groups
    assert "group analytics: 0 s" not in groups  # caught up

    earlier = render_findings(lake, "c1", "s1")
    assert "no active controller" in earlier and "billing" not in earlier


def test_no_findings_is_an_error_naming_the_lake(tmp_path: Path) -> None:
    with pytest.raises(LakeError, match="no published findings for cluster 'c1'"):
        render_findings(Lake(tmp_path), "c1")
