"""A plan's before → after per broker as bar charts, from the stored plan document."""

from __future__ import annotations

import re

import pytest

from kafka_ops.planning import plan_replica_balance
from kafka_ops.planning.load import cluster_load
from kafka_ops.report.plan_charts import plan_charts
from tests.unit.planning.builders import Assignment
from tests.unit.planning.test_load_planning import GB, sized

TIP = re.compile(r"<title>(broker \d+): (\w+ ?\w*) ([0-9.]+)</title></rect>")


def bars(drawing: str) -> dict[tuple[str, str], float]:
    return {(broker, series): float(value) for broker, series, value in TIP.findall(drawing)}


def test_a_load_aware_plan_charts_disk_before_and_after_against_capacity_then_replicas_and_leaders() -> None:
    topics: Assignment = {"big": {p: (1,) for p in range(4)}, "small": {p: (1 if p < 8 else 2,) for p in range(12)}}
    snap = sized({1: None, 2: None, 3: None}, topics, {"big": 30 * GB, "small": 1_000})
    plan = plan_replica_balance(snap, load=cluster_load(snap))
    charts = plan_charts(plan.to_document()["brokers"])
    assert [caption.split(" ")[0] for caption, _ in charts] == ["Bytes", "Replicas", "Leaders"]
    disk = bars(charts[0][1])  # in GB: the largest figure is 120 GB
    after = {b.broker_id: b.disk_bytes_after for b in plan.brokers}
    assert disk[("broker 1", "before")] == 120.0
    assert {b: disk[(f"broker {b}", "after")] * GB for b in (1, 2, 3)} == pytest.approx(after, rel=1e-3)
    replicas = bars(charts[1][1])
    assert replicas[("broker 3", "replicas before")] == 0.0 and replicas[("broker 3", "replicas after")] >= 1.0


def test_a_count_based_plan_has_no_disk_chart_and_no_brokers_no_chart() -> None:
    snap = sized({1: None, 2: None}, {"t": {0: (1,), 1: (1,)}}, {"t": 5})
    snap.replica_sizes = []
    charts = plan_charts(plan_replica_balance(snap).to_document()["brokers"])
    assert [caption.split(" ")[0] for caption, _ in charts] == ["Replicas", "Leaders"]
    assert plan_charts([]) == []
