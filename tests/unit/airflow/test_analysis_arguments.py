from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_ops.airflow.analysis_arguments import spark_arguments
from kafka_ops.airflow.assets import GROUP_SNAPSHOT_ASSET, SNAPSHOT_ASSET
from kafka_ops.analysis.thresholds import Thresholds
from kafka_ops.lake.store import Lake
from kafka_ops.settings import ClusterConfig, Settings
from kafka_ops.snapshot_tables import snapshot_batch
from tests.unit.snapshots import small_snapshot


@dataclass
class Event:
    extra: dict[str, Any] = field(default_factory=dict)


def settings(lake: str = "/lake") -> Settings:
    clusters = (
        ClusterConfig(name="east"),
        ClusterConfig(name="west", thresholds=Thresholds(stuck_reassignment_minutes=30)),
    )
    return Settings(clusters=clusters, lake_root=lake)


def clusters(args: list[list[str]]) -> list[str]:
    return [a[a.index("--cluster") + 1] for a in args]


def test_manual_run_analyses_every_cluster_with_a_batch(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(small_snapshot("s1", cluster="east")))
    lake.publish(snapshot_batch(small_snapshot("s2", cluster="west")))
    args = spark_arguments(settings(str(tmp_path)), None, SNAPSHOT_ASSET, "snapshots")
    assert clusters(args) == ["east", "west"]
    west = args[1]
    assert west[:4] == ["--lake", str(tmp_path), "--cluster", "west"]
    assert json.loads(west[west.index("--thresholds") + 1])["stuck_reassignment_minutes"] == 30
    # no group collection yet: the consumer-group job has nothing to analyse
    assert spark_arguments(settings(str(tmp_path)), {}, GROUP_SNAPSHOT_ASSET, "group_snapshots") == []


def test_each_job_gets_only_the_clusters_its_asset_triggered() -> None:
    events = {SNAPSHOT_ASSET: [Event({"cluster": "west"})], GROUP_SNAPSHOT_ASSET: [Event({"cluster": "east"})]}
    assert clusters(spark_arguments(settings(), events, SNAPSHOT_ASSET, "snapshots")) == ["west"]
    assert clusters(spark_arguments(settings(), events, GROUP_SNAPSHOT_ASSET, "group_snapshots")) == ["east"]


def test_a_run_triggered_by_one_asset_runs_nothing_for_the_other() -> None:
    events = {GROUP_SNAPSHOT_ASSET: [Event({"cluster": "east"})]}
    assert spark_arguments(settings(), events, SNAPSHOT_ASSET, "snapshots") == []


def test_events_for_unconfigured_clusters_are_ignored() -> None:
    events = {SNAPSHOT_ASSET: [Event({"cluster": "gone"})]}
    assert spark_arguments(settings(), events, SNAPSHOT_ASSET, "snapshots") == []
