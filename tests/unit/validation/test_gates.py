"""Health gates over published findings: verdict and severity from Great Expectations, then the
offending rows, cause, action and since an on-call operator reads first."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.alerting.alert import Links
from kafka_ops.alerting.from_findings import gate_alerts
from kafka_ops.errors import HealthGateFailed, LakeError
from kafka_ops.lake.store import Lake
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.gates import GateReport, GateResult, run_gates, run_group_gates
from kafka_ops.validation.pipeline import gate_report_from_dict, gate_report_to_dict
from tests.unit.snapshots import AT, GROUPS_AT
from tests.unit.validation.docs import table_rows
from tests.unit.validation.findings import (
    group,
    healthy_groups,
    healthy_zk,
    isr,
    leader_cluster,
    publish_analysis,
    publish_group_analysis,
    retention_group,
    retention_partition,
)

GATES = [
    "no_offline_partitions",
    "no_under_min_isr_partitions",
    "leader_imbalance_within_threshold",
    "controller_elections_within_threshold",
    "quorum_has_a_majority",
    "quorum_replicas_keep_up",
    "no_fenced_brokers",
    "migration_dual_write_runs",
    "migration_not_stalled",
    "migration_views_agree",
    "snapshots_read_live_metadata",
    "no_disk_running_out",
    "disk_within_limits",
    "no_hot_spots",
]


def gate(report: GateReport, name: str) -> GateResult:
    (result,) = [r for r in report.results if r.name == name]
    return result


def test_a_healthy_cluster_passes_every_gate(lake: Lake) -> None:
    publish_analysis(lake, "s1", healthy_zk())
    publish_group_analysis(lake, "g1", healthy_groups())
    report = run_gates(lake, "c1", "s1", group_snapshot_id="g1")
    assert [r.name for r in report.results] == [
        *GATES,
        "no_group_in_err",
        "no_group_in_warn",
        "no_group_losing_records",
        "no_group_at_retention_risk",
        "no_hanging_transactions",
        "no_long_open_transactions",
    ]
    assert report.passed and report.failed() == []
    for r in report.results:
        assert (r.count, r.rows, r.cause, r.action, r.since) == (0, (), None, None, None)
        assert r.data_docs is not None and Path(r.data_docs).is_file()
    assert gate(report, "no_group_in_err").snapshot_id == "g1"
    assert gate(report, "no_offline_partitions").snapshot_id == "s1"
    assert Path(report.data_docs or "").name == "index.html"
    report.raise_for(("critical", "warning"))  # nothing to raise
    assert report.summary()["passed"] is True


def broker_3_down() -> dict[str, list[dict[str, Any]]]:
    """Broker 3 is down: solo-0 (its only replica) is offline, orders-1 is under min ISR (broker 2
    lags too), orders-0 is only under-replicated."""
    tables = healthy_zk()
    tables["isr_health"] = [
        isr("orders", 0, [1, 2, 3], [1, 2], 1, min_isr=2),
        isr("orders", 1, [3, 1, 2], [1], 1, min_isr=2),
        isr("solo", 0, [3], [3], -1),
    ]
    tables["isr_under_replicated"] = [
        {"topic": "orders", "partition": p, "replicas": r, "isr": i, "missing": m,
         "under_replicated_since": AT - timedelta(minutes=mins), "duration_seconds": mins * 60.0,
         "since_window_start": False, "severity": "warning"}
        for p, r, i, m, mins in ((0, [1, 2, 3], [1, 2], [3], 30), (1, [3, 1, 2], [1], [3, 2], 20))
    ]  # fmt: skip
    attribution = {r["broker_id"]: r for r in tables["broker_attribution"]}
    attribution[3].update(
        registered=False,
        rack=None,
        missing_from_isr=2,
        missing_broker_down=2,
        severity="critical",
        cause="broker 3 is down: 2 partitions under-replicated, still in the ISR of 1 partitions",
    )
    attribution[2].update(missing_from_isr=1, missing_alive_lagging=1, severity="warning",
                          cause="broker 2 is alive but out of sync in 1 partitions")  # fmt: skip
    return tables


def test_offline_and_under_min_isr_partitions_are_critical_with_cause_action_and_since(lake: Lake) -> None:
    publish_analysis(lake, "s1", broker_3_down())
    report = run_gates(lake, "c1", "s1")
    assert [r.name for r in report.failed()] == ["no_offline_partitions", "no_under_min_isr_partitions"]
    assert [r.name for r in report.failed("warning")] == []

    offline = gate(report, "no_offline_partitions")
    assert (offline.severity, offline.passed, offline.count) == ("critical", False, 1)
    (row,) = offline.rows
    assert (row["topic"], row["partition"], row["leader"], row["replicas"], row["isr"]) == ("solo", 0, -1, [3], [3])
    assert row["problem"] == "offline, no leader: replicas [3], ISR [3]"
    assert offline.cause == (
        "1 partition offline: broker 3 is down: 2 partitions under-replicated, still in the ISR of 1 partitions"
    )
    assert offline.action is not None and offline.action.startswith("bring broker 3 back")
    assert offline.since == AT  # not under-replicated (ISR = replicas): first seen in this snapshot
    assert ["offline, no leader: replicas [3], ISR [3]", "1", "solo", "0"] in table_rows(offline.data_docs or "")

    under = gate(report, "no_under_min_isr_partitions")
    assert (under.severity, under.count) == ("critical", 1)
    assert [(r["topic"], r["partition"]) for r in under.rows] == [("orders", 1)]  # solo-0 is the offline gate's
    assert under.rows[0]["problem"] == "ISR [1] holds 1, min.insync.replicas is 2 (topic)"
    assert under.rows[0]["missing"] == [3, 2]
    assert (
        under.cause is not None
        and "broker 3 is down" in under.cause
        and "broker 2 is alive but out of sync" in under.cause
    )
    assert under.action == (
        "bring broker 3 back; check broker 2 (disk, network, GC, replication throttles): alive but out of sync"
    )
    assert under.since == AT - timedelta(minutes=20)  # orders-1's under-replication streak
    rows = table_rows(under.data_docs or "")
    assert ["ISR [1] holds 1, min.insync.replicas is 2 (topic)", "1", "orders", "1"] in rows

    with pytest.raises(
        HealthGateFailed, match="no_offline_partitions \\[critical\\] 1 failing: 1 partition offline"
    ) as e:
        report.raise_for()
    assert e.value.failed == ("no_offline_partitions", "no_under_min_isr_partitions")
    report.raise_for(("warning",))  # no warning gate failed


def imbalanced(source: str = "zookeeper") -> dict[str, list[dict[str, Any]]]:
    """Broker 2 leads 6 of its 10 preferred partitions (40 %), broker 3 9 of 10 (10 %: within the
    ZooKeeper threshold, yet off its preferred leader by KRaft's rule); 3 of the 5 are fixable."""
    tables = healthy_zk()
    tables["leader_balance_cluster"] = [leader_cluster(source, non_preferred=5, fixable=3, imbalanced_brokers=1)]
    tables["leader_balance_brokers"] = [
        {"broker_id": 1, "registered": True, "leaders": 15, "preferred": 10, "preferred_led_by_other": 0,
         "imbalance_ratio": 0.0, "imbalanced": False, "severity": "ok"},
        {"broker_id": 2, "registered": True, "leaders": 6, "preferred": 10, "preferred_led_by_other": 4,
         "imbalance_ratio": 0.4, "imbalanced": True, "severity": "warning"},
        {"broker_id": 3, "registered": True, "leaders": 9, "preferred": 10, "preferred_led_by_other": 1,
         "imbalance_ratio": 0.1, "imbalanced": False, "severity": "ok"},
    ]  # fmt: skip
    tables["leader_balance_partitions"] = [
        {"topic": "orders", "partition": p, "preferred_leader": 2, "leader": 1, "replicas": [2, 1], "isr": [2, 1],
         "fixable": p < 3, "blocked_reason": None if p < 3 else "preferred replica is not in the ISR",
         "action": "run kafka_preferred_leader_election" if p < 3 else None,
         "severity": "warning" if p < 3 else "info"}
        for p in range(4)
    ]  # fmt: skip
    return tables


def test_leader_imbalance_beyond_the_threshold_is_a_warning_with_an_election_to_run(lake: Lake) -> None:
    publish_analysis(lake, "s1", imbalanced())
    report = run_gates(lake, "c1", "s1")
    result = gate(report, "leader_imbalance_within_threshold")
    assert (result.severity, result.passed, result.count) == ("warning", False, 1)  # 10% is not beyond 10%
    assert [(r["broker_id"], r["imbalance_percent"]) for r in result.rows] == [(2, 40.0)]
    assert result.cause == "broker 2 leads 6 of the 10 partitions it is preferred leader for (40% > 10%)"
    assert result.action == (
        "run kafka_preferred_leader_election: 3 partitions can move back to their preferred leader now; "
        "1 partition cannot move back yet (preferred replica is not in the ISR): fix that first, then elect"
    )
    assert result.since == AT
    assert ["40.0", "1", "2"] in table_rows(result.data_docs or "")
    report.raise_for()  # a warning only
    with pytest.raises(HealthGateFailed, match="leader_imbalance_within_threshold \\[warning\\]"):
        report.raise_for(("warning",))
    relaxed = run_gates(lake, "c1", "s1", thresholds=Thresholds(leader_imbalance_percent=50.0), data_docs=False)
    assert relaxed.passed
    assert report.source == "zookeeper"
    (alert,) = gate_alerts(report, Links(), AT)
    assert alert.title == "leader imbalance beyond the threshold on 1 broker"


def test_on_kraft_every_partition_off_its_preferred_replica_fails_the_leader_gate(lake: Lake) -> None:
    publish_analysis(lake, "s1", imbalanced("kraft"))
    report = run_gates(lake, "c1", "s1")
    assert report.source == "kraft"
    result = gate(report, "leader_imbalance_within_threshold")
    # broker 3's 10 % is within leader_imbalance_percent, but KRaft has no such threshold
    assert (result.severity, result.passed, result.count) == ("warning", False, 2)
    assert [(r["broker_id"], r["preferred_led_by_other"]) for r in result.rows] == [(2, 4), (3, 1)]
    assert result.cause == (
        "5 partitions not led by their preferred replica, 3 of them fixable now (preferred replica alive and "
        "in the ISR); KRaft counts every one, it has no imbalance percentage: broker 2 leads 6 of the 10 "
        "partitions it is preferred leader for; broker 3 leads 9 of the 10 partitions it is preferred leader for"
    )
    assert result.action == (
        "run kafka_preferred_leader_election: 3 partitions can move back to their preferred leader now; "
        "1 partition cannot move back yet (preferred replica is not in the ISR): fix that first, then elect"
    )
    assert result.since == AT
    docs = table_rows(result.data_docs or "")
    assert ["40.0", "1", "2"] in docs and ["10.0", "1", "3"] in docs
    # the percentage does not apply: relaxing it changes nothing
    relaxed = run_gates(lake, "c1", "s1", thresholds=Thresholds(leader_imbalance_percent=50.0), data_docs=False)
    assert not gate(relaxed, "leader_imbalance_within_threshold").passed
    (alert,) = gate_alerts(report, Links(), AT)
    assert alert.title == "partitions not led by their preferred replica on 2 brokers"
    assert alert.cause == result.cause


def test_on_kraft_leaders_all_on_their_preferred_replica_pass(lake: Lake) -> None:
    tables = healthy_zk()
    tables["leader_balance_cluster"] = [leader_cluster("kraft")]
    publish_analysis(lake, "s1", tables)
    report = run_gates(lake, "c1", "s1", data_docs=False)
    assert report.source == "kraft" and report.passed


def test_an_analysis_without_the_cluster_kind_is_judged_by_the_zookeeper_rule(lake: Lake) -> None:
    # written before the leader_balance detector recorded the kind: the rule the gate applied then
    tables = imbalanced()
    tables["leader_balance_cluster"][0]["source"] = None
    publish_analysis(lake, "s1", tables)
    report = run_gates(lake, "c1", "s1", data_docs=False)
    assert report.source == "zookeeper"
    assert [r["broker_id"] for r in gate(report, "leader_imbalance_within_threshold").rows] == [2]


def test_controller_churn_is_a_warning_since_the_first_election_of_the_hour(lake: Lake) -> None:
    tables = healthy_zk()
    tables["controller_health"][0].update(
        controller_id=2, controller_epoch=7, elections_last_hour=3, elections_in_window=4, churn=True,
        last_change_at=AT - timedelta(minutes=5), severity="warning",
    )  # fmt: skip
    tables["controller_changes"] = [
        {"observed_at": AT - timedelta(minutes=m), "previous_observed_at": AT - timedelta(minutes=m + 5),
         "from_controller": 1, "to_controller": 2, "epoch_before": 7 - i - 1, "epoch_after": 7 - i, "elections": 1,
         "change": "elected", "severity": "info"}
        for i, m in enumerate((5, 20, 50, 120))
    ]  # fmt: skip
    publish_analysis(lake, "s1", tables)
    result = gate(run_gates(lake, "c1", "s1"), "controller_elections_within_threshold")
    assert (result.severity, result.passed, result.count) == ("warning", False, 1)
    assert result.cause == (
        "3 controller elections in the last hour (threshold 2); the controller is now broker 2 at epoch 7"
    )
    assert result.action is not None and "ZooKeeper" in result.action
    assert result.since == AT - timedelta(minutes=50)
    assert result.rows[0]["controller_id"] == 2
    assert ["3", "1", "2"] in table_rows(result.data_docs or "")


def test_groups_in_err_are_critical_and_in_warn_a_warning(lake: Lake) -> None:
    publish_analysis(lake, "s1", healthy_zk())
    stop = "2 partitions STOP: no new commit for 30 min while lag grew to 4,000"
    warn = "1 partitions WARN: lag grew from 10 to 900 over the window"
    publish_group_analysis(
        lake,
        "g1",
        {
            "lag_status_groups": [
                {**group("billing", "ERR", stop, max_lag=4000), "stop_partitions": 2},
                {**group("audit", "WARN", warn, max_lag=900), "warn_partitions": 1},
                group("search", "OK", None, max_lag=0),
            ],
            "lag_status_partitions": [
                {"group_id": "billing", "topic": "orders", "partition": p, "status": "STOP", "committed_offset": 10,
                 "end_offset": 4010, "lag": 4000, "last_commit_at": GROUPS_AT - timedelta(minutes=m),
                 "severity": "critical"}
                for p, m in ((0, 25), (1, 30))
            ] + [
                {"group_id": "audit", "topic": "orders", "partition": 0, "status": "WARN", "committed_offset": 100,
                 "end_offset": 1000, "lag": 900, "last_commit_at": GROUPS_AT - timedelta(minutes=1),
                 "severity": "warning"}
            ],
        },
    )  # fmt: skip
    report = run_gates(lake, "c1", "s1", group_snapshot_id="g1")
    # the group gates alone (a group's page, before or without the metadata analysis): the same results
    alone = run_group_gates(lake, "c1", "g1")
    assert (alone.snapshot_id, alone.group_snapshot_id, alone.data_docs) == ("g1", "g1", None)
    grouped = tuple(replace(r, data_docs=None) for r in report.results if r.snapshot_id == "g1")
    assert alone.results == grouped and len(grouped) == 6
    err, warning = gate(report, "no_group_in_err"), gate(report, "no_group_in_warn")
    assert (err.severity, err.count, [r["group_id"] for r in err.rows]) == ("critical", 1, ["billing"])
    assert err.cause == f"group billing: {stop}"
    assert (
        err.action == "group billing: it stopped committing: check that its consumers run and are not stuck rebalancing"
    )
    assert err.since == GROUPS_AT - timedelta(minutes=30) and err.snapshot_id == "g1"
    assert (warning.severity, warning.count, [r["group_id"] for r in warning.rows]) == ("warning", 1, ["audit"])
    assert warning.action == (
        "group audit: lag keeps growing: add consumers (up to the partition count) or speed up processing"
    )
    assert warning.since == GROUPS_AT - timedelta(minutes=1)
    assert [f"ERR: {stop}", "1", "billing"] in table_rows(err.data_docs or "")
    assert [r.name for r in report.failed("critical")] == ["no_group_in_err"]


def test_a_gate_report_passed_between_tasks_keeps_each_groups_problem(lake: Lake) -> None:
    """The DAG hands the gates to the alerting task as a dict: a group gate's problems come back as
    `Problem`s, so each group's alert says its own title, cause and action."""
    publish_analysis(lake, "s1", healthy_zk())
    stop = "1 partitions STOP: no new commit for 30 min while lag grew to 4,000"
    publish_group_analysis(
        lake,
        "g1",
        {
            "lag_status_groups": [{**group("billing", "ERR", stop, max_lag=4000), "stop_partitions": 1}],
            "lag_status_partitions": [
                {"group_id": "billing", "topic": "orders", "partition": 0, "status": "STOP", "committed_offset": 10,
                 "end_offset": 4010, "lag": 4000, "last_commit_at": GROUPS_AT - timedelta(minutes=30),
                 "severity": "critical"}
            ],
        },
    )  # fmt: skip
    report = run_gates(lake, "c1", "s1", group_snapshot_id="g1")
    passed = gate_report_from_dict(gate_report_to_dict(report))
    assert passed == report
    assert gate_alerts(passed, Links(), GROUPS_AT) == gate_alerts(report, Links(), GROUPS_AT)
    (alert,) = [a for a in gate_alerts(passed, Links(), GROUPS_AT) if a.key == "no_group_in_err:billing"]
    assert alert.cause == stop


def test_top_limits_the_rows_not_the_count(lake: Lake) -> None:
    tables = healthy_zk()
    tables["isr_health"] = [isr("t", p, [3], [3], -1) for p in range(30)]
    publish_analysis(lake, "s1", tables)
    result = gate(run_gates(lake, "c1", "s1", top=5, data_docs=False), "no_offline_partitions")
    assert result.count == 30 and [r["partition"] for r in result.rows] == [0, 1, 2, 3, 4]
    assert result.cause == "30 partitions offline, e.g. t-0"  # no broker_attribution cause for broker 3 here
    assert result.data_docs is None


def test_gates_never_pass_for_want_of_findings(lake: Lake) -> None:
    with pytest.raises(LakeError, match=r"no analysis of 's1' \(cluster 'c1'\) is committed .* run the analysis"):
        run_gates(lake, "c1", "s1")
    tables = healthy_zk()
    del tables["controller_health"]
    publish_analysis(lake, "s1", tables)
    with pytest.raises(LakeError, match=r"has no findings table 'controller_health' .*: run its detector"):
        run_gates(lake, "c1", "s1")
    tables = healthy_zk()
    del tables["leader_balance_cluster"]  # the cluster kind, and so the leader-balance rule, is unknown
    publish_analysis(lake, "s3", tables)
    with pytest.raises(LakeError, match=r"has no findings table 'leader_balance_cluster' .*: run its detector"):
        run_gates(lake, "c1", "s3")
    publish_analysis(lake, "s2", healthy_zk())
    with pytest.raises(LakeError, match="no analysis of 'g9'"):
        run_gates(lake, "c1", "s2", group_snapshot_id="g9")


def quorum_row(kind: str, replica_id: int, status: str, severity: str, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "replica_id": replica_id, "is_leader": status == "leader", "status": status,
            "severity": severity, "problem": extra.pop("problem", None), "action": extra.pop("action", None),
            **extra}  # fmt: skip


def test_a_kraft_quorum_without_majority_and_a_fenced_broker_fail_their_gates(lake: Lake) -> None:
    tables = healthy_zk()
    tables["quorum_health"] = [
        quorum_row("voter", 101, "leader", "ok"),
        quorum_row("voter", 102, "not_fetching", "critical", problem="controller 102 has not fetched for 95 s",
                   action="check controller 102"),
        quorum_row("voter", 103, "not_fetching", "critical", problem="controller 103 has not fetched for 80 s",
                   action="check controller 103"),
        quorum_row("observer", 1, "ok", "ok"),
        quorum_row("fenced_broker", 2, "fenced", "warning", problem="broker 2 is registered but fenced",
                   action="start broker 2 again", fenced_since=AT - timedelta(minutes=7)),
    ]  # fmt: skip
    publish_analysis(lake, "s1", tables)
    report = run_gates(lake, "c1", "s1")
    assert [r.name for r in report.failed("critical")] == ["quorum_has_a_majority"]
    assert [r.name for r in report.failed("warning")] == ["quorum_replicas_keep_up", "no_fenced_brokers"]
    majority = gate(report, "quorum_has_a_majority")
    assert majority.count == 2 and [r["replica_id"] for r in majority.rows] == [102, 103]
    assert majority.cause == "controller 102 has not fetched for 95 s; controller 103 has not fetched for 80 s"
    assert majority.action == "check controller 102; check controller 103"
    fenced = gate(report, "no_fenced_brokers")
    assert (fenced.cause, fenced.action, fenced.since) == (
        "broker 2 is registered but fenced",
        "start broker 2 again",
        AT - timedelta(minutes=7),
    )
    alerts = {a.key: a for a in gate_alerts(report, Links(), AT)}
    assert alerts["quorum_has_a_majority"].title == "the KRaft controller quorum has lost its majority: 2 replicas"
    assert [x.text for x in alerts["quorum_has_a_majority"].affected] == [
        "controller 102: controller 102 has not fetched for 95 s",
        "controller 103: controller 103 has not fetched for 80 s",
    ]
    assert alerts["no_fenced_brokers"].severity == "warning"


def migration_row(kind: str, status: str, severity: str, **extra: Any) -> dict[str, Any]:
    none = dict.fromkeys(["phase_since", "zookeeper_written_at", "zookeeper_brokers", "waiting_brokers",
                          "topic", "partition", "field", "zookeeper", "kraft", "diverging_since", "problem",
                          "action"])  # fmt: skip
    return {**none, "kind": kind, "phase": "dual_write", "status": status, "severity": severity, **extra}


def test_a_migration_that_stopped_dual_writing_and_diverges_fails_its_gates(lake: Lake) -> None:
    tables = healthy_zk()
    tables["migration_health"] = [
        migration_row("phase", "stalled", "critical", phase_since=AT - timedelta(hours=2),
                      problem="the KRaft controllers stopped writing to ZooKeeper", action="read the controller's log"),
        migration_row("divergence", "diverged", "warning", topic="orders", partition=1, field="isr",
                      diverging_since=AT - timedelta(minutes=15), problem="orders-1 isr: ZooKeeper has [1, 2]"),
        migration_row("divergence", "diverged", "warning", topic="ghost", field="topic",
                      diverging_since=AT - timedelta(minutes=40), problem="ghost topic: ZooKeeper has nothing"),
    ]  # fmt: skip
    publish_analysis(lake, "s1", tables)
    report = run_gates(lake, "c1", "s1")
    assert [r.name for r in report.failed("critical")] == ["migration_dual_write_runs"]
    assert [r.name for r in report.failed("warning")] == ["migration_views_agree"]
    stalled = gate(report, "migration_dual_write_runs")
    assert (stalled.cause, stalled.action, stalled.since) == (
        "the KRaft controllers stopped writing to ZooKeeper",
        "read the controller's log",
        AT - timedelta(hours=2),
    )
    views = gate(report, "migration_views_agree")
    assert [r["subject"] for r in views.rows] == ["ghost topic", "orders-1 isr"]
    assert views.since == AT - timedelta(minutes=40)
    alerts = {a.key: a for a in gate_alerts(report, Links(), AT)}
    assert alerts["migration_views_agree"].title == (
        "ZooKeeper and the KRaft metadata disagree on 2 partition fields during the migration"
    )
    assert alerts["migration_dual_write_runs"].severity == "critical"


def test_a_finalized_migration_still_read_from_zookeeper_is_a_warning(lake: Lake) -> None:
    tables = healthy_zk()
    tables["migration_health"] = [
        migration_row("phase", "finalized", "warning", phase="post_migration", problem="the migration is finalized",
                      action='set this cluster\'s metadata_source to "kraft"'),
    ]  # fmt: skip
    publish_analysis(lake, "s1", tables)
    report = run_gates(lake, "c1", "s1")
    assert [r.name for r in report.failed()] == ["snapshots_read_live_metadata"]
    assert gate(report, "snapshots_read_live_metadata").action == 'set this cluster\'s metadata_source to "kraft"'


def _transaction(partition: int, severity: str, *, hanging: bool = False, age: float | None = 600.0) -> dict[str, Any]:
    problem = f"transaction tx-{partition} open on orders-{partition} since offset 40 for {age} s"
    command = "kafka-transactions.sh --bootstrap-server k1:9092 abort --topic orders"
    action = f"{command} --partition {partition} --start-offset 40"
    return {"transactional_id": None if hanging else f"tx-{partition}", "producer_id": partition, "producer_epoch": 0,
            "state": None if hanging else "Ongoing", "topic": "orders", "partition": partition,
            "start_time": None if age is None else GROUPS_AT - timedelta(seconds=age), "age_seconds": age,
            "timeout_ms": 60_000, "start_offset": 40, "hanging": hanging, "overdue": False, "end_offset": 100,
            "last_stable_offset": 40, "groups": ["billing"], "problem": problem, "action": action,
            "severity": severity}  # fmt: skip


def test_hanging_and_long_open_transactions_alert_with_id_partition_age_and_command(lake: Lake) -> None:
    publish_analysis(lake, "s1", healthy_zk())
    tables = healthy_groups()
    tables["transactions"] = [
        _transaction(0, "critical", hanging=True, age=None),
        _transaction(1, "warning"),
        _transaction(2, "ok", age=3.0),
    ]
    publish_group_analysis(lake, "g1", tables)
    report = run_gates(lake, "c1", "s1", group_snapshot_id="g1")
    hanging, long_open = gate(report, "no_hanging_transactions"), gate(report, "no_long_open_transactions")
    assert (hanging.severity, hanging.count, [r["partition"] for r in hanging.rows]) == ("critical", 1, [0])
    assert hanging.action == _transaction(0, "critical")["action"] and hanging.since == GROUPS_AT
    assert (long_open.severity, long_open.count, [r["partition"] for r in long_open.rows]) == ("warning", 1, [1])
    assert long_open.since == GROUPS_AT - timedelta(seconds=600)
    alerts = {a.key: a for a in gate_alerts(report, Links(), GROUPS_AT)}
    alert = alerts["no_long_open_transactions"]
    assert alert.title == "1 transaction open for long: read_committed consumers wait behind them"
    assert [a.text for a in alert.affected] == [
        "orders-1: transaction tx-1 open on orders-1 since offset 40 for 600.0 s"
    ]
    assert "--start-offset 40" in alert.action


def test_groups_losing_records_to_retention_page_per_group_and_those_at_risk_warn(lake: Lake) -> None:
    publish_analysis(lake, "s1", healthy_zk())
    lost_at = GROUPS_AT - timedelta(minutes=30)
    partitions = {
        "billing": [retention_partition("billing", "orders", 2, "lost", committed=3_000, start=4_200, end=9_000,
                                        severity="critical", lost_since=lost_at)],
        "soon": [retention_partition("soon", "orders", 0, "at_risk", committed=10, start=0, end=90,
                                     severity="critical", eta=300.0, basis="retention.ms")],
        "late": [retention_partition("late", "orders", 1, "at_risk", committed=10, start=0, end=90,
                                     severity="warning", eta=2_400.0, basis="retention.ms")],
        "fine": [retention_partition("fine", "orders", 1, "ok", committed=10, start=0, end=90, severity="ok",
                                     eta=86_400.0, basis="retention.ms")],
    }  # fmt: skip
    tables = healthy_groups()
    tables["retention_risk_partitions"] = [r for rows in partitions.values() for r in rows]
    tables["retention_risk_groups"] = [retention_group(rows) for rows in partitions.values()]
    publish_group_analysis(lake, "g1", tables)
    report = run_gates(lake, "c1", "s1", group_snapshot_id="g1")
    losing, at_risk = gate(report, "no_group_losing_records"), gate(report, "no_group_at_retention_risk")
    assert (losing.severity, losing.count, [r["group_id"] for r in losing.rows]) == ("critical", 2, ["billing", "soon"])
    assert (at_risk.severity, at_risk.count, [r["group_id"] for r in at_risk.rows]) == ("warning", 1, ["late"])
    assert losing.since == lost_at and losing.snapshot_id == "g1"
    assert [r.name for r in report.failed("critical")] == ["no_group_losing_records"]
    # one alert per group, in the catalogue's words, keyed by gate and group
    alerts = {a.key: a for a in gate_alerts(report, Links(), GROUPS_AT)}
    assert sorted(alerts) == [
        "no_group_at_retention_risk:late", "no_group_losing_records:billing", "no_group_losing_records:soon"
    ]  # fmt: skip
    billing = alerts["no_group_losing_records:billing"]
    assert (billing.severity, billing.title, billing.since) == (
        "critical", "consumer group billing lost 1,200 records of orders-2 to retention", lost_at
    )  # fmt: skip
    assert [a.text for a in billing.affected] == ["billing: lost 1,200 records of orders-2 to retention"]
    assert billing.cause.startswith("its committed offset 3,000 on orders-2 is below the log start offset 4,200")
    soon = alerts["no_group_losing_records:soon"]
    assert soon.title == "consumer group soon will lose unconsumed records of orders-0 in 5 min at the earliest"
    assert alerts["no_group_at_retention_risk:late"].severity == "warning"


def _load_problem(kind: str, severity: str, value: float, *, broker: int | None = None, log_dir: str | None = None,
                  topic: str | None = None, since: datetime = AT) -> dict[str, Any]:  # fmt: skip
    where = f"{topic}-0" if topic else f"broker {broker}" + (f" {log_dir}" if log_dir else "")
    return {"kind": kind, "broker_id": broker, "log_dir": log_dir, "topic": topic, "partition": 0 if topic else None,
            "value": value, "problem": f"{where}: {kind} {value:g}", "action": f"fix {kind}", "since": since,
            "severity": severity}  # fmt: skip


def test_load_problems_gate_disk_running_out_limits_and_hot_spots(lake: Lake) -> None:
    tables = healthy_zk()
    tables["load_problems"] = [
        _load_problem("disk_full_soon", "critical", 2.5, broker=1, since=AT - timedelta(hours=20)),
        _load_problem("disk_full_soon", "critical", 0.5, broker=2),
        _load_problem("log_dir_error", "warning", 0.0, broker=3, log_dir="/d2"),
        _load_problem("hot_partition", "warning", 5e6, topic="clicks"),
        _load_problem("hot_broker_in", "warning", 9e6, broker=1),
    ]
    publish_analysis(lake, "s1", tables)
    report = run_gates(lake, "c1", "s1")
    assert [r.name for r in report.failed()] == ["no_disk_running_out", "disk_within_limits", "no_hot_spots"]
    running_out = gate(report, "no_disk_running_out")
    # fewest days left first; since: the earliest evidence
    assert [r["broker_id"] for r in running_out.rows] == [2, 1]
    assert running_out.cause == "broker 2: disk_full_soon 0.5; broker 1: disk_full_soon 2.5"
    assert (running_out.action, running_out.since) == ("fix disk_full_soon", AT - timedelta(hours=20))
    alerts = {a.key: a for a in gate_alerts(report, Links(), AT)}
    assert alerts["no_disk_running_out"].severity == "critical"
    assert (
        alerts["no_disk_running_out"].title == "disk running out: 2 brokers or log dirs full or filling up within days"
    )
    assert [a.text for a in alerts["disk_within_limits"].affected] == ["broker 3: broker 3 /d2: log_dir_error 0"]
    hot = alerts["no_hot_spots"]
    assert hot.title == "2 hot partitions or brokers far above their peers or near network capacity"
    assert sorted(a.text for a in hot.affected) == ["broker 1: broker 1: hot_broker_in 9e+06",
                                                    "clicks-0: clicks-0: hot_partition 5e+06"]  # fmt: skip
