from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.airflow.analysis_arguments import Target, analysis_targets, spark_arguments
from kafka_ops.airflow.assets import GROUP_SNAPSHOT_ASSET, SNAPSHOT_ASSET
from kafka_ops.analysis.runner import parse_capacity
from kafka_ops.capacities import Capacities
from kafka_ops.errors import ConfigError
from kafka_ops.lake.open import open_lake
from kafka_ops.settings import ClusterConfig, Settings
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.thresholds import Thresholds
from tests.unit.report import scenario
from tests.unit.snapshots import group_snapshot, small_snapshot


@dataclass
class Event:
    extra: dict[str, Any] = field(default_factory=dict)


def settings(lake: str = "/lake") -> Settings:
    clusters = (
        ClusterConfig(name="east"),
        ClusterConfig(name="west", thresholds=Thresholds(stuck_reassignment_minutes=30)),
    )
    return Settings(clusters=clusters, lake_root=lake)


def targets(events: dict[Any, list[Event]] | None, lake: str = "/lake") -> list[Target]:
    return analysis_targets(settings(lake), events, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET)


def test_manual_run_analyses_every_cluster_with_batches(tmp_path: Path) -> None:
    lake = open_lake(tmp_path, settings(str(tmp_path)).lake_format)
    lake.publish(snapshot_batch(small_snapshot("s1", cluster="east")))
    lake.publish(snapshot_batch(small_snapshot("s2", cluster="west")))
    lake.publish(group_batch(group_snapshot("g1", cluster="west")))
    found = targets(None, str(tmp_path))
    assert found == [
        {"cluster": "east", "zookeeper": True, "snapshot_id": None, "groups": False, "group_snapshot_id": None},
        {"cluster": "west", "zookeeper": True, "snapshot_id": None, "groups": True, "group_snapshot_id": None},
    ]
    zookeeper = spark_arguments(settings(str(tmp_path)), found, "snapshots")
    assert [a[3] for a in zookeeper] == ["east", "west"]
    west = zookeeper[1]
    assert west[:4] == ["--lake", str(tmp_path), "--cluster", "west"] and "--snapshot-id" not in west  # the latest
    assert json.loads(west[west.index("--thresholds") + 1])["stuck_reassignment_minutes"] == 30
    assert [a[3] for a in spark_arguments(settings(str(tmp_path)), found, "group_snapshots")] == ["west"]


def test_a_delta_lake_is_read_as_delta_and_its_format_reaches_the_jobs(tmp_path: Path) -> None:
    open_lake(tmp_path, "delta").publish(snapshot_batch(small_snapshot("s1", cluster="east")))
    delta = replace(settings(str(tmp_path)), lake_format="delta")
    found = analysis_targets(delta, None, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET)
    assert [(t["cluster"], t["zookeeper"], t["groups"]) for t in found] == [("east", True, False)]
    (args,) = spark_arguments(delta, found, "snapshots")
    assert args[args.index("--lake-format") + 1] == "delta"


def test_the_as_of_param_reaches_both_jobs_and_a_bad_one_is_named() -> None:
    found = [Target(cluster="west", zookeeper=True, snapshot_id=None, groups=True, group_snapshot_id=None)]
    for source in ("snapshots", "group_snapshots"):
        (args,) = spark_arguments(settings(), found, source, "2026-11-21T03:10:00+00:00")
        assert args[args.index("--as-of") + 1] == "2026-11-21T03:10:00+00:00"
        (now,) = spark_arguments(settings(), found, source, None)
        assert "--as-of" not in now
    with pytest.raises(ConfigError, match=r"Param 'as_of': '2026-11-21T03:10' has no time zone"):
        spark_arguments(settings(), found, "snapshots", "2026-11-21T03:10")
    with pytest.raises(ConfigError, match=r"Param 'as_of': 'yesterday' is not an ISO 8601 time"):
        spark_arguments(settings(), found, "snapshots", "yesterday")


def test_a_cluster_never_collected_is_not_analysed(tmp_path: Path) -> None:
    assert targets({}, str(tmp_path)) == []


def test_each_job_gets_the_batches_that_triggered_it_when_the_lake_lists_no_newer() -> None:
    events = {
        SNAPSHOT_ASSET: [Event({"cluster": "west", "snapshot_id": "s9"})],
        GROUP_SNAPSHOT_ASSET: [Event({"cluster": "east", "snapshot_id": "g7"})],
    }
    found = targets(events)
    assert found == [
        {"cluster": "east", "zookeeper": False, "snapshot_id": None, "groups": True, "group_snapshot_id": "g7"},
        {"cluster": "west", "zookeeper": True, "snapshot_id": "s9", "groups": False, "group_snapshot_id": None},
    ]
    (west,) = spark_arguments(settings(), found, "snapshots")
    assert west[3] == "west" and west[-2:] == ["--snapshot-id", "s9"]
    (east,) = spark_arguments(settings(), found, "group_snapshots")
    assert east[3] == "east" and east[-2:] == ["--snapshot-id", "g7"]


def scenario_lake(root: Path) -> Settings:
    """The report scenario's lake (cluster c1: snapshots s-old..s4, collections g-old..g4), no findings yet."""
    config = Settings(clusters=(ClusterConfig(name="c1"),), lake_root=str(root))
    lake = open_lake(root, config.lake_format)
    for sid in scenario.SNAPSHOTS:
        lake.publish(snapshot_batch(scenario.snapshot(sid)))
    for gid in scenario.COLLECTIONS:
        lake.publish(group_batch(scenario.collection(gid)))
    return config


def test_a_run_queued_behind_others_analyses_each_jobs_newest_batch_not_the_one_that_triggered_it(
    tmp_path: Path,
) -> None:
    config = scenario_lake(tmp_path)
    events = {SNAPSHOT_ASSET: [Event({"cluster": "c1", "snapshot_id": "s2"})],
              GROUP_SNAPSHOT_ASSET: [Event({"cluster": "c1", "snapshot_id": "g1"})]}  # fmt: skip
    found = analysis_targets(config, events, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET)
    assert found == [
        {"cluster": "c1", "zookeeper": True, "snapshot_id": "s4", "groups": True, "group_snapshot_id": "g4"}
    ]
    # pinned: the jobs analyse the batch validation and the gates will judge, not "the latest" when they run
    (args,) = spark_arguments(config, found, "group_snapshots")
    assert args[-2:] == ["--snapshot-id", "g4"]
    # a job its events do not name is not run, whatever is new for it
    (groups_only,) = analysis_targets(config, {GROUP_SNAPSHOT_ASSET: events[GROUP_SNAPSHOT_ASSET]}, SNAPSHOT_ASSET,
                                      GROUP_SNAPSHOT_ASSET)  # fmt: skip
    assert (groups_only["zookeeper"], groups_only["snapshot_id"]) == (False, None)


def test_a_job_whose_newest_batch_an_earlier_run_analysed_is_left_out(tmp_path: Path) -> None:
    config = scenario_lake(tmp_path)
    lake = open_lake(tmp_path, config.lake_format)
    scenario.publish_findings(lake, "s4", "snapshots", {})
    scenario.publish_findings(lake, "g3", "group_snapshots", {})  # an older collection's: g4 is still due
    events = {SNAPSHOT_ASSET: [Event({"cluster": "c1", "snapshot_id": "s3"})],
              GROUP_SNAPSHOT_ASSET: [Event({"cluster": "c1", "snapshot_id": "g3"})]}  # fmt: skip
    found = analysis_targets(config, events, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET)
    assert found == [
        {"cluster": "c1", "zookeeper": False, "snapshot_id": None, "groups": True, "group_snapshot_id": "g4"}
    ]
    assert spark_arguments(config, found, "snapshots") == []
    scenario.publish_findings(lake, "g4", "group_snapshots", {})
    assert analysis_targets(config, events, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET) == []  # nothing left to do
    # a manual run analyses the latest batches whatever was analysed before
    (manual,) = analysis_targets(config, None, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET)
    assert manual["zookeeper"] and manual["groups"]


def test_events_for_unconfigured_clusters_are_ignored() -> None:
    assert targets({SNAPSHOT_ASSET: [Event({"cluster": "gone", "snapshot_id": "s1"})]}) == []


def test_the_static_min_isr_of_each_cluster_reaches_its_job() -> None:
    config = Settings(clusters=(ClusterConfig(name="west", min_insync_replicas_default=2),), lake_root="/lake")
    found = [Target(cluster="west", zookeeper=True, snapshot_id=None, groups=False, group_snapshot_id=None)]
    (args,) = spark_arguments(config, found, "snapshots")
    assert args[args.index("--min-insync-replicas-default") + 1] == "2"


def test_the_capacities_of_each_cluster_reach_its_job_unchanged() -> None:
    capacity = Capacities.from_mapping(
        {"disk_bytes": 2_000, "network_in_bytes_per_s": 125.5, "max_disk_share": 0.7,
         "brokers": {"4": {"disk_bytes": 4_000}, "2": {"network_out_bytes_per_s": 9.0}}},
        "test",
    )  # fmt: skip
    config = Settings(clusters=(ClusterConfig(name="west", capacity=capacity),), lake_root="/lake")
    found = [Target(cluster="west", zookeeper=True, snapshot_id=None, groups=False, group_snapshot_id=None)]
    (args,) = spark_arguments(config, found, "snapshots")
    assert parse_capacity(args[args.index("--capacity") + 1]) == capacity


def test_a_capacity_argument_that_is_not_a_table_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"--capacity is not a JSON object"):
        parse_capacity("{disk")
    with pytest.raises(ConfigError, match=r"--capacity: 'disk_bytes' must be a whole number"):
        parse_capacity('{"disk_bytes": -1}')
