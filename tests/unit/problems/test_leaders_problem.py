from __future__ import annotations

from typing import Any

import pytest

from kafka_ops.problems.leaders import problems as leader_problems
from tests.unit.problems.tables import Tables


def cluster(source: str | None, severity: str) -> dict[str, Any]:
    return {"source": source, "severity": severity, "non_preferred": 2, "fixable": 1, "imbalanced_brokers": 0,
            "max_leaders": 6, "mean_leaders": 5.0}  # fmt: skip


OFF = [
    {"fixable": True, "blocked_reason": None},
    {"fixable": False, "blocked_reason": "preferred replica is down"},
]


@pytest.mark.parametrize(
    ("source", "severity", "rule"),
    [
        ("kraft", "warning", "the KRaft controller counts every partition not led by its preferred replica"),
        ("zookeeper", "info", "0 brokers above the imbalance threshold"),
        (None, "info", "0 brokers above the imbalance threshold"),  # analysed before the kind was recorded
    ],
)
def test_leader_imbalance_names_the_rule_of_the_clusters_controller(
    source: str | None, severity: str, rule: str
) -> None:
    (problem,) = leader_problems(
        Tables({"leader_balance_cluster": [cluster(source, severity)], "leader_balance_partitions": OFF})
    )
    assert (problem.severity, problem.title) == (severity, "2 partitions not on their preferred leader")
    assert problem.cause == f"leaders per broker: max 6, mean 5.0; {rule}"
    assert (
        problem.action
        == "run kafka_preferred_leader_election: 1 partition can move back to their preferred leader now; "
        "1 partition cannot move back yet (preferred replica is down): fix that first, then elect"
    )


def test_a_warning_by_the_controllers_rule_is_the_gates_problem_naming_the_brokers() -> None:
    brokers = [
        {"broker_id": 2, "preferred": 10, "preferred_led_by_other": 4, "imbalance_ratio": 0.4, "imbalanced": True},
        {"broker_id": 3, "preferred": 10, "preferred_led_by_other": 1, "imbalance_ratio": 0.1, "imbalanced": False},
    ]
    tables = {"leader_balance_brokers": brokers, "leader_balance_partitions": OFF}
    (zookeeper,) = leader_problems(Tables({**tables, "leader_balance_cluster": [cluster("zookeeper", "warning")]}))
    assert (zookeeper.severity, zookeeper.title) == ("warning", "leader imbalance beyond the threshold on 1 broker")
    assert zookeeper.cause == "broker 2 leads 6 of the 10 partitions it is preferred leader for (40%)"
    (kraft,) = leader_problems(Tables({**tables, "leader_balance_cluster": [cluster("kraft", "warning")]}))
    assert kraft.title == "partitions not led by their preferred replica on 2 brokers"  # KRaft counts broker 3 too
    assert kraft.action == zookeeper.action and kraft.action.startswith("run kafka_preferred_leader_election: 1")
