"""The same findings read the same in the page, the health report and the digest: one title, one action
and one since per problem, because all three take them from `kafka_ops.problems`. Pure Python over a
temporary lake (about 3 s, most of it Great Expectations running the gates)."""

from __future__ import annotations

from datetime import timedelta
from html import escape
from typing import Any

from kafka_ops.alerting.alert import Alert, Links
from kafka_ops.alerting.from_findings import gate_alerts
from kafka_ops.alerting.incidents import Notification
from kafka_ops.alerting.render import plain_text
from kafka_ops.lake.store import Lake
from kafka_ops.problems.retention import partition_text
from kafka_ops.problems.words import when
from kafka_ops.report.data import gather
from kafka_ops.report.digest import render_findings
from kafka_ops.report.html import render
from kafka_ops.validation.gates import run_gates
from tests.unit.report import scenario
from tests.unit.report.scenario import COLLECTIONS, NOW, SNAPSHOTS
from tests.unit.validation.findings import (
    group,
    healthy_zk,
    isr,
    leader_cluster,
    publish_analysis,
    retention_group,
    retention_partition,
)

S4, G4 = SNAPSHOTS["s4"][0], COLLECTIONS["g4"][0]


def broken_cluster() -> dict[str, list[dict[str, Any]]]:
    """Broker 3 down (solo-0 offline, orders-1 under min ISR), a controller that changed 3 times in the
    hour, broker 2 leading 6 of the 10 partitions it is preferred leader for (40 % > 10 %), and broker 1's
    disk full in 2.5 days."""
    tables = healthy_zk()
    tables["isr_health"] = [
        isr("orders", 0, [1, 2, 3], [1, 2], 1, min_isr=2),  # under-replicated: a report finding, no page
        isr("orders", 1, [3, 1, 2], [1], 1, min_isr=2),  # under min ISR since 20 min
        isr("solo", 0, [3], [3], -1),  # offline; never under-replicated: since = the capture
    ]
    tables["isr_under_replicated"] = [
        {"topic": "orders", "partition": p, "replicas": r, "isr": i, "missing": m,
         "under_replicated_since": S4 - timedelta(minutes=mins), "duration_seconds": mins * 60.0,
         "since_window_start": False, "severity": "warning"}
        for p, r, i, m, mins in ((0, [1, 2, 3], [1, 2], [3], 30), (1, [3, 1, 2], [1], [3, 2], 20))
    ]  # fmt: skip
    brokers = {r["broker_id"]: r for r in tables["broker_attribution"]}
    brokers[3].update(registered=False, rack=None, missing_from_isr=2, missing_broker_down=2, severity="critical",
                      cause="broker 3 is down: 2 partitions under-replicated")  # fmt: skip
    (controller,) = tables["controller_health"]
    controller.update(elections_last_hour=3, churn=True, severity="warning", last_change_at=S4 - timedelta(minutes=5))
    tables["controller_changes"] = [
        {"observed_at": S4 - timedelta(minutes=m), "previous_observed_at": None, "from_controller": 1,
         "to_controller": 2, "epoch_before": 6, "epoch_after": 7, "elections": 1, "change": "election",
         "severity": "warning"}
        for m in (45, 20, 5)
    ]  # fmt: skip
    tables["leader_balance_cluster"] = [leader_cluster(non_preferred=4, fixable=3, imbalanced_brokers=1)]
    tables["leader_balance_brokers"] = [
        {"broker_id": b, "registered": True, "leaders": leaders, "preferred": 10, "preferred_led_by_other": 10 - own,
         "imbalance_ratio": (10 - own) / 10, "imbalanced": own < 9, "severity": "warning" if own < 9 else "ok"}
        for b, leaders, own in ((1, 14, 10), (2, 6, 6), (3, 10, 10))
    ]  # fmt: skip
    tables["leader_balance_partitions"] = [
        {"topic": "orders", "partition": p, "preferred_leader": 2, "leader": 1, "replicas": [2, 1], "isr": [2, 1],
         "fixable": p < 3, "blocked_reason": None if p < 3 else "preferred replica is not in the ISR",
         "action": None, "severity": "warning"}
        for p in range(4)
    ]  # fmt: skip
    tables["load_problems"] = [
        {"kind": "disk_full_soon", "broker_id": 1, "log_dir": None, "topic": None, "partition": None, "value": 2.5,
         "problem": "broker 1 fills up in 2.5 days", "action": "add disk to broker 1 or move partitions off it",
         "since": S4 - timedelta(hours=20), "severity": "critical"}
    ]  # fmt: skip
    return tables


def stopped_group() -> dict[str, list[dict[str, Any]]]:
    """Group `stable` stopped committing 2 h before the collection; a transaction has hung on orders-2 for 1 h;
    retention deleted 1,200 records of orders-2 group `billing` had not read, first seen 40 min before the
    collection, and can delete group `late`'s first unconsumed record on orders-1 in 40 min at the earliest."""
    billing = [
        retention_partition(
            "billing",
            "orders",
            2,
            "lost",
            committed=3_000,
            start=4_200,
            end=9_000,
            severity="critical",
            lost_since=G4 - timedelta(minutes=40),
        )
    ]
    late = [retention_partition("late", "orders", 1, "at_risk", committed=100, start=0, end=500, severity="warning",
                                eta=2_400.0, basis="retention.ms", written=G4 - timedelta(minutes=20))]  # fmt: skip
    return {
        "retention_risk_partitions": [*billing, *late],
        "retention_risk_groups": [retention_group(billing), retention_group(late)],
        "lag_status_groups": [
            {**group("stable", "ERR", "1 partition STOP: no new commit for 2 h", max_lag=280), "stop_partitions": 1}
        ],
        "lag_status_partitions": [
            {"group_id": "stable", "topic": "orders", "partition": 0, "status": "STOP", "committed_offset": 120,
             "end_offset": 400, "lag": 280, "last_commit_at": G4 - timedelta(hours=2), "severity": "critical"}
        ],
        "transactions": [
            {"transactional_id": None, "producer_id": 7, "producer_epoch": 0, "state": "Ongoing", "topic": "orders",
             "partition": 2, "start_time": G4 - timedelta(hours=1), "age_seconds": 3600.0, "timeout_ms": 60000,
             "start_offset": 40, "hanging": True, "overdue": True, "end_offset": 90, "last_stable_offset": 40,
             "groups": ["stable"], "problem": "a hanging transaction holds orders-2 at offset 40",
             "action": "kafka-transactions.sh abort --topic orders --partition 2 --start-offset 40",
             "severity": "critical"}
        ],
    }  # fmt: skip


def test_the_page_the_report_and_the_digest_agree_on_title_action_and_since(lake: Lake) -> None:
    scenario.build(lake, analyse=False)
    publish_analysis(lake, "s4", broken_cluster(), captured_at=S4)
    publish_analysis(lake, "g4", stopped_group(), captured_at=G4, source="group_snapshots")
    gates = run_gates(lake, "c1", "s4", group_snapshot_id="g4", data_docs=False)
    alerts = {a.title: a for a in gate_alerts(gates, Links(), seen_at=S4)}
    data = gather(lake, "c1", gates=gates, now=NOW)
    report = {p.title: p for p in data.problems.items}
    html = render(data)
    digest = render_findings(lake, "c1").splitlines()

    assert sorted(alerts) == [
        "1 partition offline (no leader): produce and consume fail on them",
        "1 partition under min ISR: producers with acks=all are refused",
        "1 transaction hanging or open too long: read_committed consumers are stalled",
        "consumer group billing lost 1,200 records of orders-2 to retention",
        "consumer group late will lose unconsumed records of orders-1 in 40 min at the earliest",
        "consumer group stable is in ERR",
        "controller churn: 3 elections in the last hour",
        "disk running out: 1 broker or log dir full or filling up within days",
        "leader imbalance beyond the threshold on 1 broker",
    ]
    for title, alert in alerts.items():
        problem = report[title]  # the report names it the same
        assert (problem.severity, problem.action, problem.since) == (alert.severity, alert.action, alert.since), title
        page = plain_text(Notification("open", "log", alert, at=NOW, opened_at=NOW))
        assert f"Suggested action: {alert.action}" in page and f"Since:    {when(alert.since)}" in page
        assert escape(title) in html and escape(alert.action) in html
        at = digest.index(f"  - {alert.severity:<8} {title}")  # the digest too, with the same since and action
        assert digest[at + 1].startswith(f"      since {when(alert.since)} (")
        assert f"      do: {alert.action}" in digest[at + 2 : at + 4]

    # since: the under-replication streak, the first election of the hour, the oldest stuck commit, the
    # disk's growth, the transaction's start, the first collection that saw the records lost, and the capture
    # time where the findings record no start
    assert _since(alerts, "under min ISR") == S4 - timedelta(minutes=20)
    assert _since(alerts, "controller churn") == S4 - timedelta(minutes=45)
    assert _since(alerts, "consumer group stable") == G4 - timedelta(hours=2)
    assert _since(alerts, "disk running out") == S4 - timedelta(hours=20)
    assert _since(alerts, "transaction") == G4 - timedelta(hours=1)
    assert _since(alerts, "group billing lost") == G4 - timedelta(minutes=40)
    assert _since(alerts, "group late") == G4
    # the digest's retention rows are the catalogue's too
    lost, at_risk = stopped_group()["retention_risk_partitions"]
    assert f"  - critical {partition_text(lost)}" in digest and f"  - warning  {partition_text(at_risk)}" in digest
    assert _since(alerts, "offline") == _since(alerts, "leader imbalance") == S4


def _since(alerts: dict[str, Alert], part: str) -> object:
    (alert,) = [a for t, a in alerts.items() if part in t]
    return alert.since
