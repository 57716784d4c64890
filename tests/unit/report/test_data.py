"""Gathering the health report's figures from a lake built with the real snapshot and group builders."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.store import Lake
from kafka_ops.report.data import gather
from kafka_ops.report.model import BrokerLoad, BrokerShrinks, Point
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.validation.gates import GateReport, GateResult
from tests.unit.report import scenario
from tests.unit.report.scenario import COLLECTIONS, NOW, SNAPSHOTS


def at(batch: str) -> datetime:
    return {**SNAPSHOTS, **COLLECTIONS}[batch][0]


def test_the_latest_analysed_batches_and_a_critical_verdict(lake: Lake) -> None:
    data = gather(scenario.build(lake), "c1", now=NOW)
    assert data.snapshot is not None and data.groups is not None
    assert (data.snapshot.snapshot_id, data.groups.snapshot_id) == ("s4", "g4")
    assert data.snapshot.figures["under_replicated_count"] == 1
    assert data.snapshot.figures["broker_count"] == 2
    assert data.snapshot.analysed_at == at("s4") + timedelta(seconds=30)
    assert data.status == "critical"
    assert data.status_reason == (
        "Broker 3 is down; 1 partition offline (no leader): produce and consume fail on them; "
        "consumer group stable is in ERR"
    )
    assert data.notes == ("snapshot s4 has not been validated", "group collection g4 has not been validated")
    assert data.report_id == "s4"


def test_problems_say_what_why_what_to_do_and_since_when(lake: Lake) -> None:
    problems = gather(scenario.build(lake), "c1", now=NOW).problems.items
    assert [(p.severity, p.title) for p in problems] == [
        ("critical", "Broker 3 is down"),
        ("critical", "1 partition offline (no leader): produce and consume fail on them"),
        ("critical", "consumer group stable is in ERR"),
        ("warning", "1 partition under-replicated"),
        ("warning", "disk use beyond its limits or skewed: 1 broker or log dir"),
        ("warning", "consumer group analytics is skewed (range)"),
    ]
    broker, _, group, under, disk, skew = problems
    assert broker.action == "bring broker 3 back (restart it, or replace it keeping broker id 3)"
    assert broker.since == at("s2")  # the under-replication streak it caused
    assert group.cause == "1 partition STOP: no new commit for 2 h; ~2 h 00 min (extrapolated) behind on orders-0"
    assert group.since == at("g2")  # its last commit
    assert under.cause == "replicas missing on broker 3; e.g. orders-0"
    assert skew.action == "switch analytics from range to cooperative-sticky"
    assert disk.cause == "broker 2 fills up in 10.0 days at its current growth of 10.0 GB/day"
    assert (disk.source, disk.since) == ("load_problems", NOW - timedelta(hours=20))


def test_disk_and_traffic_per_broker_from_the_load_findings(lake: Lake) -> None:
    disks = gather(scenario.build(lake), "c1", now=NOW).disks.items
    assert [(d.broker_id, d.used_bytes, d.days_to_full, d.severity) for d in disks] == [
        (1, 400 * 10**9, None, "ok"), (2, 900 * 10**9, 10.0, "warning"), (3, 100 * 10**9, 80.0, "ok")]  # fmt: skip
    assert (disks[1].capacity_bytes, disks[1].bytes_in_per_s, disks[1].network_in_capacity) == (1e12, 30e6, 125e6)


def test_leaders_and_replicas_per_broker_preferred_vs_actual(lake: Lake) -> None:
    brokers = gather(scenario.build(lake), "c1", now=NOW).brokers
    assert brokers.missing is None
    assert brokers.items == (
        BrokerLoad(1, True, "rack-a", preferred_leaders=2, leaders=2, replicas=3, in_sync_replicas=3),
        BrokerLoad(2, True, "rack-b", preferred_leaders=1, leaders=1, replicas=3, in_sync_replicas=3),
        BrokerLoad(3, False, None, preferred_leaders=1, leaders=0, replicas=3, in_sync_replicas=1),
    )


def test_isr_shrinks_per_broker_show_quiet_brokers_as_zero(lake: Lake) -> None:
    shrinks = gather(scenario.build(lake), "c1", now=NOW).shrinks.items
    assert shrinks == (BrokerShrinks(1, 0, 0), BrokerShrinks(2, 1, 1), BrokerShrinks(3, 1, 0))


def test_under_replicated_and_offline_over_the_last_day_only(lake: Lake) -> None:
    data = gather(scenario.build(lake), "c1", now=NOW)
    # s-old is two days older; broker 3 stops after s1: orders-0 under-replicated, solo-0 offline
    assert data.under_replicated.items == (
        Point(at("s1"), 0),
        Point(at("s2"), 1),
        Point(at("s3"), 1),
        Point(at("s4"), 1),
    )
    assert [p.value for p in data.offline.items] == [0, 1, 1, 1]


def test_lag_per_group_sums_known_lags_of_each_collection_worst_group_first(lake: Lake) -> None:
    lag = gather(scenario.build(lake), "c1", now=NOW).lag.items
    assert [(g.group_id, g.status) for g in lag] == [("stable", "ERR"), ("analytics", "OK")]
    # stable: orders-0 end - 120 (90 in g1) plus orders-1 at its end (0); orders-2 has no commit
    assert lag[0].points == (Point(at("g1"), 10), Point(at("g2"), 80), Point(at("g3"), 180), Point(at("g4"), 280))
    assert [p.value for p in lag[1].points] == [0, 0, 0, 0]


def test_lag_without_a_group_analysis_ranks_groups_by_lag_now(lake: Lake) -> None:
    scenario.build(lake, analyse=False)
    lag = gather(lake, "c1", now=NOW).lag.items
    assert [(g.group_id, g.status, g.points[-1].value) for g in lag] == [("stable", None, 280), ("analytics", None, 0)]


def test_a_collection_without_consumer_groups_charts_no_lag(lake: Lake) -> None:
    scenario.build(lake, analyse=False, groups=False)
    lake.publish(group_batch(replace(scenario.collection("g4"), groups=(), offsets=(), end_offsets={})))
    data = gather(lake, "c1", now=NOW)
    assert data.groups is not None and data.groups.snapshot_id == "g4"
    assert (data.lag.items, data.lag.missing) == ((), None)


def test_skewed_group_members_with_the_recommended_assignors_range(lake: Lake) -> None:
    (group,) = gather(scenario.build(lake), "c1", now=NOW).skewed.items
    assert group.group_id == "analytics"
    assert [(m.client_id, m.partitions, m.overloaded) for m in group.members] == [
        ("analytics-0", 3, True),
        ("analytics-1", 0, False),
    ]
    assert (group.recommended, group.whatif_min, group.whatif_max, group.moved_partitions) == (
        "cooperative-sticky",
        1,
        2,
        1,
    )


def test_offender_tables_worst_first_and_say_which_findings_are_missing(lake: Lake) -> None:
    tables = {t.title: t for t in gather(scenario.build(lake), "c1", now=NOW).offenders}
    at_risk = tables["Partitions at risk"]
    assert at_risk.rows == (
        ("solo-0", "offline", "none", "[3]", "[3]", 1, None),
        ("orders-0", "under_replicated", 1, "[1, 2, 3]", "[1, 2]", 1, at("s2")),
    )
    assert tables["Consumer groups in trouble"].rows == (
        (
            "stable",
            "classic",
            "Stable",
            "ERR",
            280,
            "orders-0",
            "~2 h 00 min (extrapolated)",
            "1 partition STOP: no new commit for 2 h",
        ),
    )
    reassignments = tables["Reassignments in flight"]
    assert reassignments.rows == ()
    assert reassignments.missing == "the analysis of s4 wrote no reassignments_in_flight (its detector did not run)"


def test_nothing_analysed_yet_is_unknown_and_every_part_says_why(lake: Lake) -> None:
    scenario.build(lake, analyse=False, groups=False)
    data = gather(lake, "c1", now=NOW)
    assert data.snapshot is not None and data.snapshot.snapshot_id == "s4"  # the latest, analysed or not
    assert data.groups is None
    assert data.status == "unknown"
    assert data.status_reason == "snapshot s4 is not analysed yet: its health is unknown"
    not_analysed = "ZooKeeper snapshot s4 is not analysed yet (no analysis_runs row): findings will show once it is"
    no_groups = "no consumer-group collection of cluster c1 is in the lake yet"
    assert data.brokers.missing == data.shrinks.missing == data.problems.missing == not_analysed
    assert data.lag.missing == data.skewed.missing == no_groups
    assert data.notes[:2] == (not_analysed, no_groups)
    assert data.under_replicated.items  # the snapshot history needs no analysis
    assert data.offenders == ()


def test_a_named_snapshot_uses_the_group_analysis_of_its_time(lake: Lake) -> None:
    scenario.build(lake)
    scenario.publish_findings(lake, "g2", "group_snapshots", scenario.group_findings())
    data = gather(lake, "c1", snapshot_id="s2", now=NOW)
    assert data.snapshot is not None and data.groups is not None
    assert (data.snapshot.snapshot_id, data.snapshot.analysed_at) == ("s2", None)
    assert data.groups.snapshot_id == "g2"
    assert data.status == "unknown"  # s2 has no analysis
    assert data.lag.items[0].points[-1] == Point(at("g2"), 80)
    assert data.under_replicated.items[-1] == Point(at("s2"), 1)


def test_a_stale_or_untrusted_batch_is_noted(lake: Lake) -> None:
    scenario.build(lake)
    scenario.publish_validation(lake, "s4", trusted=False, failed=["isr_within_replicas"], data_docs="/docs/s4.html")
    data = gather(lake, "c1", now=NOW + timedelta(hours=2))
    assert data.snapshot is not None
    assert (data.snapshot.trusted, data.snapshot.data_docs) == (False, "/docs/s4.html")
    assert data.notes == (
        "snapshot s4 failed integrity validation (isr_within_replicas): do not act on it",
        "the snapshot is 2 h 02 min old: is collection running?",
        "group collection g4 has not been validated",
        "the group collection is 2 h 01 min old: is collection running?",
    )


def test_naming_batches_that_are_not_committed_is_an_error(lake: Lake) -> None:
    scenario.build(lake)
    with pytest.raises(LakeError, match="'nope' of cluster 'c1' is not committed in 'snapshots'"):
        gather(lake, "c1", snapshot_id="nope")
    with pytest.raises(LakeError, match="'nope' of cluster 'c1' is not committed in 'group_snapshots'"):
        gather(lake, "c1", group_snapshot_id="nope")


def test_a_cluster_with_nothing_collected_is_an_error(lake: Lake) -> None:
    with pytest.raises(LakeError, match="nothing to report for cluster 'c1': no snapshot and no group collection"):
        gather(lake, "c1")


def gate(name: str, severity: str, passed: bool, cause: str | None = None) -> GateResult:
    return GateResult(name=name, severity=severity, passed=passed, count=0 if passed else 1, rows=(), cause=cause,
                      action="do it" if cause else None, since=None, meaning=f"{name} means", cluster="c1",
                      snapshot_id="s4", data_docs=None)  # fmt: skip


def test_a_gate_report_names_the_batches_and_its_failures_count(lake: Lake) -> None:
    scenario.build(lake)
    scenario.publish_findings(lake, "g3", "group_snapshots", scenario.group_findings())
    gates = GateReport("c1", "s4", "g3", (gate("no_offline_partitions", "critical", False, "1 offline"),), None, 0.1)
    data = gather(lake, "c1", gates=gates, now=NOW)
    assert data.groups is not None and data.groups.snapshot_id == "g3"
    assert data.status_reason.startswith("gate no_offline_partitions failed; Broker 3 is down")
    with pytest.raises(LakeError, match="the gate report judged snapshot s4, not s3"):
        gather(lake, "c1", snapshot_id="s3", gates=gates)
    with pytest.raises(LakeError, match="the gate report is about cluster 'c1', not 'c2'"):
        gather(lake, "c2", gates=gates)


def test_group_types_and_members_still_reconciling(lake: Lake) -> None:
    data = gather(scenario.build(lake), "c1", now=NOW)
    assert data.groups is not None
    assert data.groups.figures["group_types"] == "classic 2, consumer 1"
    assert data.groups.figures["reconciling_member_count"] == 1
    (reconciling,) = [t for t in data.offenders if t.source == "consumer_groups"]
    assert reconciling.columns[:3] == ("Group", "Type", "State")
    assert reconciling.rows == (("fresh", "consumer", "Reconciling", 6, 6, 1, 2),)
