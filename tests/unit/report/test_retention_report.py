"""The health report on records lost, or about to be lost, to retention: the catalogue's problems and a table of
the partitions, worst first; nothing of it for an analysis from before the detector."""

from __future__ import annotations

from datetime import timedelta
from html import escape

from kafka_ops.lake.store import Lake
from kafka_ops.report.data import gather
from kafka_ops.report.html import render
from tests.unit.report import scenario
from tests.unit.report.scenario import COLLECTIONS, NOW
from tests.unit.validation.findings import retention_group, retention_partition

G4 = COLLECTIONS["g4"][0]
TITLE = "Partitions losing records to retention"


def test_lost_and_at_risk_partitions_worst_first_with_the_catalogues_problems(lake: Lake) -> None:
    scenario.build(lake, analyse=False)
    scenario.publish_findings(lake, "s4", "snapshots", scenario.zookeeper_findings())
    lost_at = G4 - timedelta(minutes=40)
    partitions = [
        retention_partition("late", "orders", 1, "at_risk", committed=100, start=0, end=500, severity="warning",
                            eta=2_400.0, basis="retention.ms"),
        retention_partition("billing", "orders", 2, "lost", committed=3_000, start=4_200, end=9_000,
                            severity="critical", lost_since=lost_at),
        retention_partition("fine", "orders", 0, "ok", committed=450, start=0, end=500, severity="ok",
                            eta=86_400.0, basis="retention.ms"),
    ]  # fmt: skip
    groups = [retention_group([p]) for p in partitions]
    findings = {**scenario.group_findings(), "retention_risk_partitions": partitions, "retention_risk_groups": groups}
    scenario.publish_findings(lake, "g4", "group_snapshots", findings)
    data = gather(lake, "c1", now=NOW)
    tables = {t.title: t for t in data.offenders}
    assert tables[TITLE].rows == (
        ("billing", "orders-2", "lost", 1_200, lost_at, None, None, 6_000),
        ("late", "orders-1", "at_risk", None, None, "in 40 min at the earliest", "retention.ms", 400),
    )
    titles = [p.title for p in data.problems.items]
    assert "consumer group billing lost 1,200 records of orders-2 to retention" in titles
    assert "consumer group late will lose unconsumed records of orders-1 in 40 min at the earliest" in titles
    page = render(data)
    assert escape(TITLE) in page and "in 40 min at the earliest" in page


def test_an_analysis_from_before_the_detector_shows_no_retention_table(lake: Lake) -> None:
    data = gather(scenario.build(lake), "c1", now=NOW)
    assert TITLE not in {t.title for t in data.offenders}
    assert not [p for p in data.problems.items if "retention" in p.title]
