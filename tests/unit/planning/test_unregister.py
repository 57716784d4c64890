"""The unregister step's plan: only a fenced broker of a KRaft cluster that holds no replica, refused
otherwise naming `brokers` and why."""

from __future__ import annotations

import pytest

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning.unregister import plan_unregister
from tests.unit.planning.builders import cluster


def kraft(topics: dict[str, dict[int, tuple[int, ...]]]) -> ClusterSnapshot:
    """Brokers 1 and 2 serve, broker 3 is fenced (stopped, still registered)."""
    snap = cluster({1: None, 2: None, 3: None}, topics)
    snap.source = "kraft"
    snap.fenced_brokers = {3: snap.brokers.pop(3)}
    return snap


def test_a_fenced_empty_broker_is_a_plan_with_nothing_to_move() -> None:
    plan = plan_unregister(kraft({"t": {0: (1, 2)}}), 3)
    assert (plan.kind, dict(plan.request), plan.is_empty) == ("unregister_broker", {"brokers": [3]}, True)


@pytest.mark.parametrize(
    ("broker", "topics", "zookeeper", "message"),
    [
        (1, {"t": {0: (1, 2)}}, False, "broker 1 is serving .*: stop it first"),
        (9, {"t": {0: (1, 2)}}, False, r"broker 9 is not registered \(fenced brokers: \[3\]\)"),
        (3, {"t": {0: (3, 1), 1: (1, 2)}, "u": {0: (3,)}}, False, "broker 3 still holds replicas of t-0, u-0: "
                                                                  "decommission it first"),
        (3, {"t": {0: (1, 2)}}, True, "runs on ZooKeeper"),
    ],
)  # fmt: skip
def test_refused_naming_why(broker: int, topics: dict[str, dict[int, tuple[int, ...]]], zookeeper: bool,
                            message: str) -> None:  # fmt: skip
    snap = kraft(topics)
    if zookeeper:
        snap.source = "zookeeper"
    with pytest.raises(PlanError, match=message) as caught:
        plan_unregister(snap, broker)
    assert caught.value.field == "brokers"
