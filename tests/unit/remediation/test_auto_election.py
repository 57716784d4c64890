"""The automatic preferred-election rule: pure, and read from published analyses in a lake."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.remediation.auto_election import persistent_imbalance, should_auto_elect

AT = datetime(2026, 11, 21, 7, 0, tzinfo=UTC)
IMBALANCED = {"zk_rule_triggered": True, "fixable": 4}
BALANCED = {"zk_rule_triggered": False, "fixable": 0}
STUCK = {"zk_rule_triggered": True, "fixable": 0}  # imbalanced, but the preferred replicas are out of the ISR


def rows(*findings: dict[str, Any]) -> list[dict[str, Any]]:
    """Newest first, snapshot ids s0 (newest), s1, ..."""
    return [{"snapshot_id": f"s{i}", **f} for i, f in enumerate(findings)]


def test_elects_after_n_imbalanced_analyses_in_a_row() -> None:
    decision = persistent_imbalance(rows(IMBALANCED, IMBALANCED, IMBALANCED, BALANCED), 3)
    assert decision.elect
    assert decision.snapshot_ids == ("s0", "s1", "s2")
    assert "each of the last 3 analyses (4 partitions now)" in decision.reason


def test_a_kraft_cluster_is_judged_by_the_kraft_controllers_rule() -> None:
    # one partition off its preferred replica: below the ZooKeeper percentage, but the KRaft controller's
    # rule counts every such partition
    kraft = {"source": "kraft", "zk_rule_triggered": False, "kraft_rule_triggered": True, "fixable": 1}
    assert persistent_imbalance(rows(kraft, kraft, kraft), 3).elect
    zookeeper = {**kraft, "source": "zookeeper"}
    assert not persistent_imbalance(rows(zookeeper, zookeeper, zookeeper), 3).elect


@pytest.mark.parametrize(
    ("analyses", "reason"),
    [
        (rows(IMBALANCED, IMBALANCED), "only 2 analysed snapshot(s), 3 needed"),
        (rows(IMBALANCED, BALANCED, IMBALANCED), "snapshot s1: leaders within the imbalance threshold"),
        (rows(IMBALANCED, STUCK, IMBALANCED), "snapshot s1: imbalanced, but no partition is fixable"),
        (rows(IMBALANCED, {}, IMBALANCED), "snapshot s1: no leader-balance finding"),
        ([], "only 0 analysed snapshot(s)"),
    ],
)
def test_no_election_unless_it_persists(analyses: list[dict[str, Any]], reason: str) -> None:
    decision = persistent_imbalance(analyses, 3)
    assert not decision.elect
    assert reason in decision.reason


@pytest.mark.parametrize("runs", [0, -1, True, 2.0])
def test_runs_must_be_a_positive_whole_number(runs: Any) -> None:
    with pytest.raises(ConfigError, match="auto_election_after_runs must be a whole number >= 1"):
        persistent_imbalance(rows(IMBALANCED), runs)


def publish_analysis(
    lake: Lake, snapshot_id: str, at: datetime, finding: dict[str, Any] | None, cluster: str = "c1"
) -> None:
    """One published analysis of a ZooKeeper snapshot, with a `leader_balance_cluster` row unless None."""
    tables = {}
    counts: dict[str, dict[str, int]] = {"isr_health": {"ok": 1}}
    if finding is not None:
        row = {"snapshot_id": snapshot_id, "non_preferred": finding["fixable"], "severity": "warning", **finding}
        tables["leader_balance_cluster"] = pa.Table.from_pylist([row])
        counts["leader_balance_cluster"] = {"warning": 1}
    commit = {
        "snapshot_id": snapshot_id,
        "captured_at": at,
        "analysed_at": at + timedelta(seconds=30),
        "source": "snapshots",
        "detectors": ["leader_balance"],
        "findings": json.dumps(counts),
    }
    tables[ANALYSIS_COMMIT_TABLE] = pa.Table.from_pylist([commit])
    lake.publish(Batch(f"{snapshot_id}.analysis", cluster, at, tables, ANALYSIS_COMMIT_TABLE))


def test_reads_the_latest_analyses_from_the_lake(tmp_path: Any) -> None:
    lake = Lake(tmp_path / "lake")
    assert not should_auto_elect(lake, "c1", 2).elect  # nothing analysed yet
    publish_analysis(lake, "a", AT, BALANCED)
    publish_analysis(lake, "b", AT + timedelta(minutes=5), IMBALANCED)
    publish_analysis(lake, "c", AT + timedelta(minutes=10), IMBALANCED)
    decision = should_auto_elect(lake, "c1", 2)
    assert decision.elect and decision.snapshot_ids == ("c", "b")
    assert not should_auto_elect(lake, "c1", 3).elect  # "a" was balanced
    assert should_auto_elect(lake, "other", 1).snapshot_ids == ()
    publish_analysis(lake, "d", AT + timedelta(minutes=15), None)  # an analysis without the detector
    decision = should_auto_elect(lake, "c1", 2)
    assert not decision.elect and "snapshot d: no leader-balance finding" in decision.reason
