"""Pages straight from a snapshot (the snapshot DAG's `page_from_snapshot`), and the analysis DAG's
alerting of the same keys later: one incident per problem, and the newest snapshot's word wins."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kafka_ops.airflow import health_tasks, snapshot_paging
from kafka_ops.alerting.pipeline_status import PipelineStatus
from kafka_ops.errors import KafkaUnreachable
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.validation.pipeline import validate_batches
from tests.unit.snapshots import AT, GROUPS_AT, broker, small_snapshot, state
from tests.unit.validation.findings import group, healthy_groups, healthy_zk, isr, publish_analysis

TARGET = {"cluster": "c1", "zookeeper": True, "snapshot_id": None, "groups": False, "group_snapshot_id": None}


def publish(root: Path, snapshot_id: str, minutes: float, *, broker_3_up: bool) -> datetime:
    """`small_snapshot` (broker 3 down: `solo-0` offline, `orders` under-replicated) captured at AT +
    `minutes`, or the same cluster healthy again."""
    snap = small_snapshot(snapshot_id, cluster="c1")
    snap.captured_at = AT + timedelta(minutes=minutes)
    if broker_3_up:
        snap.brokers[3] = broker(3, "rack-c")
        snap.partition_states[("orders", 0)] = state("orders", 0, 1, (1, 2, 3))
        snap.partition_states[("orders", 2)] = state("orders", 2, 1, (1, 2, 3))
        snap.partition_states[("solo", 0)] = state("solo", 0, 3, (3,))
    open_lake(root, "parquet").publish(snapshot_batch(snap))
    return snap.captured_at


def page(snapshot_id: str, minutes: float) -> dict[str, Any]:
    at = AT + timedelta(minutes=minutes)
    return snapshot_paging.page_from_snapshot("c1", snapshot_id, at, "kafka_metadata_snapshot", "run")


def sent(root: Path) -> list[tuple[str, str]]:
    lines = (root / "_alerting" / "c1.alerts.jsonl").read_text().splitlines()
    return [(a["event"], a["key"]) for a in map(json.loads, lines)]


def test_a_snapshot_pages_the_dead_broker_and_its_offline_partition_then_resolves_them(lake_root: Path) -> None:
    publish(lake_root, "s1", 0, broker_3_up=False)
    first = page("s1", 0.5)
    assert first["problems"] == {"no_offline_partitions": 1, "no_broker_down": 1}
    assert sorted(first["alerts"]["opened"]) == ["no_broker_down", "no_offline_partitions"]
    lines = (lake_root / "_alerting" / "c1.alerts.jsonl").read_text().splitlines()
    alert = next(a for a in map(json.loads, lines) if a["key"] == "no_offline_partitions")
    assert alert["title"] == "1 partition offline (no leader): produce and consume fail on them"
    assert "bring broker 3 back" in alert["action"]

    assert not page("s1", 1)["alerts"]["opened"]  # the same snapshot again: one incident each, silent
    publish(lake_root, "s2", 2, broker_3_up=True)
    assert sorted(page("s2", 2.5)["alerts"]["resolved"]) == ["no_broker_down", "no_offline_partitions"]
    assert sent(lake_root) == [
        ("open", "no_broker_down"), ("open", "no_offline_partitions"),
        ("resolve", "no_broker_down"), ("resolve", "no_offline_partitions"),
    ]  # fmt: skip


def test_an_analysis_finishing_after_a_newer_snapshot_neither_repages_nor_resolves(lake_root: Path) -> None:
    """The analysis of s1 (broker 3 dead, `solo-0` offline) ends after s2 (healthy) was paged from: it
    must not open the offline partition again; nor may it resolve `no_broker_down`, which no gate of
    the analysis judges."""
    lake = open_lake(lake_root, "parquet")
    captured = publish(lake_root, "s1", 0, broker_3_up=False)
    page("s1", 0.5)
    validate_batches(lake, "c1", AT + timedelta(minutes=1), snapshot_id="s1")
    findings = healthy_zk()
    findings["isr_health"] = [*findings["isr_health"], isr("solo", 0, [3], [], -1)]
    publish_analysis(lake, "s1", findings, captured_at=captured)

    run = AT + timedelta(minutes=3)
    analysis = health_tasks.alerts(health_tasks.gates(TARGET, run), run, "kafka_health_analysis", "a1")
    assert not analysis["opened"] and not analysis["resolved"]  # s1's pages are open already
    assert "no_broker_down" in analysis["open_incidents"]  # outside the analysis' judgement: kept

    publish(lake_root, "s2", 4, broker_3_up=True)
    page("s2", 4.5)  # the newer snapshot: both resolved
    run = AT + timedelta(minutes=6)
    late = health_tasks.alerts(health_tasks.gates(TARGET, run), run, "kafka_health_analysis", "a2")
    assert not late["opened"] and not late["open_incidents"]
    assert [e for e in sent(lake_root) if e[0] == "open"] == [
        ("open", "no_broker_down"), ("open", "no_offline_partitions"),
    ]  # fmt: skip
    assert datetime.fromisoformat(late["at"]).tzinfo == UTC


def test_the_snapshot_dag_resolves_its_blind_spot_page_once_both_collections_work(lake_root: Path) -> None:
    """ "cannot see cluster" resolves from the snapshot run that sees again, not minutes later from the
    analysis; the cluster's other incidents are left to their own judges."""
    publish(lake_root, "s1", 0, broker_3_up=False)
    page("s1", 0.5)  # no_broker_down and no_offline_partitions open
    status = PipelineStatus(str(lake_root))
    status.record("c1", "Kafka", AT + timedelta(minutes=1), KafkaUnreachable("no broker answered"), "kafka_default")
    blind = snapshot_paging.page_blind_spots("c1", "kafka_metadata_snapshot", "r1")
    assert blind["opened"] == ["cannot_see:kafka"]
    status.record("c1", "Kafka", AT + timedelta(minutes=2), None, "kafka_default")
    seeing = snapshot_paging.page_blind_spots("c1", "kafka_metadata_snapshot", "r2")
    assert seeing["resolved"] == ["cannot_see:kafka"]
    assert ("resolve", "no_broker_down") not in sent(lake_root)


def test_a_group_in_err_is_paged_once_its_analysis_is_published_and_the_rest_is_left_to_send_alerts(
    lake_root: Path,
) -> None:
    """`page_groups` runs right after the groups' analysis: it opens and resolves the group gates'
    incidents only (a dead broker's page is the snapshot's and the whole analysis' to judge), before
    any metadata snapshot is analysed if need be, and the run's `send_alerts` after it pages nothing twice."""
    lake = open_lake(lake_root, "parquet")
    publish(lake_root, "s1", 0, broker_3_up=False)
    page("s1", 0.5)  # no_broker_down and no_offline_partitions open
    stop = "2 partitions STOP: no new commit for 30 min while lag grew to 4,000"
    stopped = {**healthy_groups(), "lag_status_groups": [{**group("billing", "ERR", stop, max_lag=4000),
                                                          "stop_partitions": 2}]}  # fmt: skip
    publish_analysis(lake, "g1", stopped, captured_at=GROUPS_AT, source="group_snapshots")

    run = GROUPS_AT + timedelta(minutes=1)
    target = {**TARGET, "groups": True, "group_snapshot_id": "g1"}
    paged = health_tasks.group_pages(target, run, "kafka_health_analysis", "a1")  # type: ignore[arg-type]
    assert (paged["group_snapshot_id"], paged["opened"], paged["resolved"]) == ("g1", ["no_group_in_err:billing"], [])
    assert sorted(paged["open_incidents"]) == ["no_broker_down", "no_group_in_err:billing", "no_offline_partitions"]
    publish_analysis(lake, "s1", healthy_zk())  # the cluster-health job, done after the groups' page
    later = health_tasks.alerts(health_tasks.gates(target, run), run, "kafka_health_analysis", "a1")  # type: ignore[arg-type]
    assert "no_group_in_err:billing" not in later["opened"]

    later_at = GROUPS_AT + timedelta(minutes=5)
    publish_analysis(lake, "g2", healthy_groups(), captured_at=later_at, source="group_snapshots")
    run += timedelta(minutes=5)
    back = health_tasks.group_pages({**target, "group_snapshot_id": "g2"}, run, "kafka_health_analysis", "a2")  # type: ignore[arg-type]
    assert (back["opened"], back["resolved"]) == ([], ["no_group_in_err:billing"])
    assert "no_broker_down" in back["open_incidents"]  # outside its judgement: kept
    assert [e for e in sent(lake_root) if "group" in e[1]] == [
        ("open", "no_group_in_err:billing"), ("resolve", "no_group_in_err:billing"),
    ]  # fmt: skip

    # nothing to page from: a run that analysed no group collection, and a run about the past
    assert health_tasks.group_pages(TARGET, run, "kafka_health_analysis", "a3")["skipped"]  # type: ignore[arg-type]
    past = {**target, "as_of": "2026-11-21T03:10:00+00:00"}
    assert health_tasks.group_pages(past, run, "kafka_health_analysis", "a4")["skipped"]  # type: ignore[arg-type]
