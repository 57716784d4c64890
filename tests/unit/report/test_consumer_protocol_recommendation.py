"""A what-if recommending the consumer protocol (KIP-848) in the health report: the skewed group's
chart shows the server-side assignor's figures (not the client's `range` of the same name), and
the problem's action carries the migration steps the detector wrote."""

from __future__ import annotations

from kafka_ops.assignors.whatif import MIGRATION_STEPS
from kafka_ops.lake.store import Lake
from kafka_ops.report.data import gather
from tests.unit.report import scenario
from tests.unit.report.scenario import NOW


def test_the_consumer_protocols_uniform_is_shown_with_its_migration_steps(lake: Lake) -> None:
    scenario.build(lake, analyse=False)
    steps = MIGRATION_STEPS.format(assignor="uniform")
    findings = scenario.group_findings()
    findings["assignor_recommendations"] = [
        {
            "group_id": "analytics",
            "recommended": "uniform",
            "recommended_protocol": "consumer",
            "prediction_matches": True,
            "prediction_moves": 0,
            "error": None,
            "severity": "warning",
            "reason": f"switch analytics from range to the consumer protocol's uniform assignor: ...; {steps}",
        },
    ]
    findings["assignor_whatif"] = [
        {"group_id": "analytics", "assignor": "range", "protocol": "classic", "min_partitions": 0,
         "max_partitions": 3, "moved_partitions": 0, "severity": "info"},
        {"group_id": "analytics", "assignor": "uniform", "protocol": "consumer", "min_partitions": 1,
         "max_partitions": 2, "moved_partitions": 1, "severity": "info"},
        {"group_id": "analytics", "assignor": "range", "protocol": "consumer", "min_partitions": 0,
         "max_partitions": 3, "moved_partitions": 0, "severity": "info"},
    ]  # fmt: skip
    scenario.publish_findings(lake, "s4", "snapshots", scenario.zookeeper_findings())
    scenario.publish_findings(lake, "g4", "group_snapshots", findings)

    data = gather(lake, "c1", now=NOW)
    (group,) = data.skewed.items
    assert (group.recommended, group.whatif_min, group.whatif_max, group.moved_partitions) == (
        "uniform (consumer protocol)",
        1,
        2,
        1,
    )
    (skewed,) = [p for p in data.problems.items if p.source == "assignor_skew_groups"]
    assert skewed.action is not None and "group.protocol=consumer" in skewed.action and steps in skewed.action
