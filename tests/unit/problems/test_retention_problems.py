"""What an on-call engineer reads about records lost, or about to be lost, to retention: `problems.retention`
over findings given as rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kafka_ops.problems import retention
from tests.unit.problems.tables import CAPTURED_AT, Tables
from tests.unit.validation.findings import retention_group, retention_partition

LOST_AT = CAPTURED_AT - timedelta(minutes=78)  # 10:42


def findings() -> Tables:
    """billing lost 1,200 records of orders-2 and orders-3 is next; late's first unconsumed record on orders-1 was
    written 20 min ago with retention.ms 1 h; sized fills retention.bytes on orders-5 at 250 records/s; fine is
    days from any deletion."""
    partitions = {
        "billing": [
            retention_partition("billing", "orders", 2, "lost", committed=3_000, start=4_200, end=9_000,
                                severity="critical", lost_since=LOST_AT),
            retention_partition("billing", "orders", 3, "at_risk", committed=5_000, start=4_200, end=9_000,
                                severity="warning", eta=2_400.0, basis="retention.ms"),
        ],
        "late": [
            retention_partition("late", "orders", 1, "at_risk", committed=100, start=0, end=500, severity="warning",
                                eta=2_400.0, basis="retention.ms", written=CAPTURED_AT - timedelta(minutes=20)),
        ],
        "sized": [
            retention_partition("sized", "orders", 5, "at_risk", committed=400_000, start=0, end=1_000_000,
                                severity="warning", eta=2_400.0, basis="retention.bytes", retention_bytes=10**9,
                                size_bytes=900_000_000, produce_rate=250.0),
        ],
        "fine": [
            retention_partition("fine", "orders", 0, "ok", committed=450, start=0, end=500, severity="ok",
                                eta=5 * 86_400.0, basis="retention.ms"),
        ],
    }  # fmt: skip
    return Tables({
        "retention_risk_partitions": [r for rows in partitions.values() for r in rows],
        "retention_risk_groups": [retention_group(rows) for rows in partitions.values()],
    })  # fmt: skip


def by_group(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["group_id"]: r for r in rows}


def test_each_failing_group_is_one_problem_worst_first_in_the_catalogues_words() -> None:
    f = findings()
    lost, late, sized = retention.problems(f)
    assert [p.title for p in (lost, late, sized)] == [
        "consumer group billing lost 1,200 records of orders-2 to retention",
        "consumer group late will lose unconsumed records of orders-1 in 40 min at the earliest",
        "consumer group sized will lose unconsumed records of orders-5 in ~40 min at the current rate",
    ]
    assert (lost.severity, lost.key, lost.since) == ("critical", retention.LOSING, LOST_AT)
    assert lost.cause == (
        "its committed offset 3,000 on orders-2 is below the log start offset 4,200: retention deleted 1,200 records "
        "it had not read, first seen by the collection of 2026-11-21 10:42:00 UTC; next: orders-3 in 40 min at the "
        "earliest"
    )
    assert lost.action is not None and lost.action.startswith("the records are gone: its consumers resume where")
    assert "--entity-name orders --add-config retention.ms=<ms>" in lost.action
    # an ETA by retention.ms is a lower bound, and the cause says why
    assert (late.severity, late.key, late.since) == ("warning", retention.AT_RISK, CAPTURED_AT)
    assert late.cause == (
        "the first record it has not read on orders-1 (offset 100, written 2026-11-21 11:40:00 UTC) passes "
        "retention.ms 1 h 00 min (topic override) in 40 min at the earliest: Kafka deletes whole segments once their "
        "newest record is that old, at its retention checks (log.retention.check.interval.ms, 5 min by default), so "
        "not sooner"
    )
    assert late.action == (
        "start or speed up its consumers (lag 400 on orders-1) before then, or give orders a longer retention.ms: "
        "kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name orders "
        "--add-config retention.ms=<longer>"
    )
    # one by retention.bytes is an estimate at the current rate
    assert sized.cause == (
        "orders-5 holds 900.0 MB against retention.bytes 1.0 GB (topic override) and grows 250.0 records/s: once the "
        "600,000 records from its offset 400,000 on hold that much, the segment with its first unread record goes: "
        "in ~40 min at the current rate"
    )
    assert sized.action is not None and sized.action.endswith("--add-config retention.bytes=<longer>")


def test_a_gate_sums_its_groups_and_each_group_keeps_its_own_problem() -> None:
    f = findings()
    groups = by_group(f.tables["retention_risk_groups"])
    failing = [{"group_id": g, "problem": "-"} for g in ("sized", "late")]  # gate rows: the frame's few columns
    problem = retention.gate(retention.AT_RISK)(failing, f, {})
    assert problem.title == "2 consumer groups at risk of losing unconsumed records to retention"
    assert problem.cause == (
        "consumer group late will lose unconsumed records of orders-1 in 40 min at the earliest; consumer group sized "
        "will lose unconsumed records of orders-5 in ~40 min at the current rate"
    )
    assert [r["group_id"] for r in problem.rows] == ["late", "sized"]
    assert problem.rows[0]["eta_partition"] == groups["late"]["eta_partition"] == 1  # typed as the findings
    own, listed = retention.per_group(failing, f)["late"], retention.problems(f)[1]
    assert (own.title, own.cause, own.action, own.since) == (listed.title, listed.cause, listed.action, listed.since)
    losing = retention.gate(retention.LOSING)([{"group_id": "billing"}], f, {})
    assert (losing.title, losing.since) == (
        "1 consumer group lost unconsumed records to retention or will within minutes", LOST_AT
    )  # fmt: skip


def test_several_lost_partitions_and_partitions_without_an_estimate() -> None:
    rows = [
        retention_partition("g", "t", 0, "lost", committed=0, start=500, end=900, severity="critical",
                            lost_since=LOST_AT),
        retention_partition("g", "t", 1, "lost", committed=0, start=700, end=900, severity="critical",
                            lost_since=LOST_AT + timedelta(minutes=5)),
        {**retention_partition("g", "t", 2, "unknown", committed=10, start=0, end=900, severity="info"),
         "reason": "retention.ms: the collection read no time for the first unconsumed record"},
    ]  # fmt: skip
    f = Tables({"retention_risk_partitions": rows, "retention_risk_groups": [retention_group(rows)]})
    (problem,) = retention.problems(f)
    assert problem.title == "consumer group g lost 1,200 records of t-1 and 1 more partition to retention"
    assert problem.cause.endswith("(1 partition without an estimate: see the findings)")
    assert problem.since == LOST_AT  # the earliest of its lost partitions
    assert [retention.partition_text(r) for r in rows] == [
        "group g lost 500 records of t-0 to retention (committed 0 < log start 500)",
        "group g lost 700 records of t-1 to retention (committed 0 < log start 700)",
        "group g on t-2: unknown: retention.ms: the collection read no time for the first unconsumed record",
    ]


def test_eta_phrases() -> None:
    assert retention.eta_phrase(2_400.0, True) == "in 40 min at the earliest"
    assert retention.eta_phrase(2_400.0, False) == "in ~40 min at the current rate"
    assert retention.eta_phrase(0.0, True) == "any time now"  # due: its segment's newer records, or the next check
    assert retention.eta_phrase(None, None) == "at an unknown time"
    assert retention.problems(Tables({})) == []  # an analysis from before the detector
