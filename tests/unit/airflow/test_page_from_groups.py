"""Pages straight from a group collection (the snapshot DAG's `collect_groups`), and the analysis DAG's
paging of the same groups later: one incident per group, and the newer collection's word wins."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from kafka_ops.airflow import health_tasks, snapshot_paging
from kafka_ops.lake.open import open_lake
from tests.unit.group_history import START, collections
from tests.unit.validation.findings import healthy_groups, publish_analysis

TARGET = {"cluster": "c1", "zookeeper": False, "snapshot_id": None, "groups": True, "group_snapshot_id": None}
ERR = ["no_group_in_err:logged", "no_group_in_err:stopped"]


def sent(root: Path) -> list[tuple[str, str]]:
    lines = (root / "_alerting" / "c1.alerts.jsonl").read_text().splitlines()
    return [(a["event"], a["key"]) for a in map(json.loads, lines)]


def test_a_collection_pages_its_groups_in_err_and_a_later_one_resolves_them(lake_root: Path) -> None:
    ids = collections(open_lake(lake_root, "parquet"), 17, 1, caught_up=True)
    at = START + timedelta(minutes=16, seconds=5)
    first = snapshot_paging.page_from_groups("c1", ids[-2], at, "kafka_metadata_snapshot", "r1")
    assert (first["problems"], first["groups"]) == (ERR, 4)
    assert sorted(first["alerts"]["opened"]) == ERR
    page = next(a for a in map(json.loads, (lake_root / "_alerting" / "c1.alerts.jsonl").read_text().splitlines())
                if a["key"] == "no_group_in_err:stopped")  # fmt: skip
    assert page["title"] == "consumer group stopped is in ERR"
    assert page["cause"].startswith("3 partitions STALL: assigned to a live member but no new commit for 8 min")
    assert page["action"].startswith("a member holds the partitions but does not move")

    again = snapshot_paging.page_from_groups("c1", ids[-2], at + timedelta(seconds=30), "kafka_metadata_snapshot", "r2")
    assert not again["alerts"]["opened"]  # one incident per group: the same collection again is silent
    back = snapshot_paging.page_from_groups("c1", ids[-1], at + timedelta(minutes=1), "kafka_metadata_snapshot", "r3")
    assert (back["problems"], sorted(back["alerts"]["resolved"])) == ([], ERR)
    assert sorted(sent(lake_root)) == sorted([("open", k) for k in ERR] + [("resolve", k) for k in ERR])


def test_an_analysis_of_an_older_collection_neither_resolves_nor_reopens_what_a_newer_one_paged(
    lake_root: Path,
) -> None:
    """The analysis DAG's `page_groups` rates g05 (every group OK then) after the collection g15 paged
    its groups in ERR: it must not resolve them; nor, once g16 resolved them, may an analysis of g15,
    finishing later still, open them again."""
    lake = open_lake(lake_root, "parquet")
    ids = collections(lake, 17, 1, caught_up=True)
    at = START + timedelta(minutes=16, seconds=5)
    snapshot_paging.page_from_groups("c1", ids[-2], at, "kafka_metadata_snapshot", "r1")
    healthy = healthy_groups()["lag_status_groups"][0]
    ok = {"lag_status_groups": [{**healthy, "group_id": g} for g in ("logged", "rewound", "stopped", "moving")],
          "lag_status_partitions": []}  # fmt: skip
    publish_analysis(lake, ids[5], ok, captured_at=START + timedelta(minutes=5), source="group_snapshots")
    late = health_tasks.group_pages({**TARGET, "group_snapshot_id": ids[5]}, at, "kafka_health_analysis", "a1")  # type: ignore[arg-type]
    assert (late["resolved"], sorted(late["open_incidents"])) == ([], ERR)

    snapshot_paging.page_from_groups("c1", ids[-1], at + timedelta(minutes=1), "kafka_metadata_snapshot", "r2")
    stopped = {**ok, "lag_status_groups": [{**r, "status": "ERR", "severity": "critical", "cause": "STOP"}
                                           for r in ok["lag_status_groups"]]}  # fmt: skip
    publish_analysis(lake, ids[-2], stopped, captured_at=START + timedelta(minutes=15), source="group_snapshots")
    later = health_tasks.group_pages({**TARGET, "group_snapshot_id": ids[-2]}, at, "kafka_health_analysis", "a2")  # type: ignore[arg-type]
    assert (later["opened"], later["open_incidents"]) == ([], [])


def test_paging_at_once_never_fails_the_collection(lake_root: Path) -> None:
    """A collection the lake does not hold (or any other failure) is reported, not raised."""
    (lake_root / "x").mkdir(parents=True)
    paged = snapshot_paging.page_groups_at_once("c1", "g99", "kafka_metadata_snapshot", "r1")
    assert paged["error"].startswith("LakeError: no group collection 'g99' of cluster 'c1'")


def test_a_group_page_goes_to_the_team_that_owns_the_group(
    lake_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[[owners]]` in the settings: the stopped group's page reaches its owner's sink (an Airflow
    connection) and not the cluster's; the other group's, nobody's, reaches the cluster's."""
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(
        settings.read_text()
        + '[[owners]]\nname = "billing-team"\ngroups = ["stop.*"]\nalert_conn_ids = ["billing_log"]\n'
    )
    team = tmp_path / "billing-team.jsonl"
    monkeypatch.setenv("AIRFLOW_CONN_BILLING_LOG", json.dumps({"conn_type": "fs", "extra": {"path": str(team)}}))
    ids = collections(open_lake(lake_root, "parquet"), 17, 1)
    snapshot_paging.page_from_groups("c1", ids[-1], START + timedelta(minutes=17), "kafka_metadata_snapshot", "r1")
    mine = [json.loads(line) for line in team.read_text().splitlines()]
    assert [(e["key"], e["owner"]) for e in mine] == [("no_group_in_err:stopped", "billing-team")]
    assert sent(lake_root) == [("open", "no_group_in_err:logged")]
