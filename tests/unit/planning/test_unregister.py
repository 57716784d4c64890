"""The unregister step's plan: only a fenced broker of a KRaft cluster that holds no replica, refused
otherwise naming `brokers` and why."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning.plan import Plan
from kafka_ops.planning.registry import plan_for
from kafka_ops.planning.request import REASSIGNMENT_FORM, ParamError, RemediationRequest, parse_request
from kafka_ops.planning.review import Pacing, next_step, render_plan
from kafka_ops.planning.unregister import plan_unregister
from kafka_ops.settings import ClusterConfig, Settings
from tests.unit.planning.builders import cluster


def kraft(topics: dict[str, dict[int, tuple[int, ...]]]) -> ClusterSnapshot:
    """Brokers 1 and 2 serve, broker 3 is fenced (stopped, still registered)."""
    snap = cluster({1: None, 2: None, 3: None}, topics)
    snap.source = "kraft"
    snap.fenced_brokers = {3: snap.brokers.pop(3)}
    return snap


def test_a_fenced_empty_broker_is_a_plan_with_nothing_to_move_and_one_write() -> None:
    plan = plan_unregister(kraft({"t": {0: (1, 2)}}), 3)
    assert (plan.kind, dict(plan.request), plan.moves) == ("unregister_broker", {"brokers": [3]}, 0)
    assert not plan.is_empty  # it writes: a review, an approval and an execution like any plan


def no_plans(request: RemediationRequest, plan_id: str) -> Plan:
    raise AssertionError("a dry run reads no stored plan")


def test_the_reassignment_form_plans_it_for_exactly_one_broker_and_the_review_says_what_it_writes() -> None:
    settings = Settings(clusters=[ClusterConfig("c")])
    request = parse_request({"cluster": "c", "action": "unregister_broker", "brokers": [3]}, settings,
                            REASSIGNMENT_FORM, stored=no_plans)  # fmt: skip
    plan = plan_for(request, kraft({"t": {0: (1, 2)}}))
    assert (plan.kind, plan.request["brokers"]) == ("unregister_broker", [3])
    review = render_plan(plan, request, Pacing(0, 0, "none"))
    assert "unregister       broker 3: fenced and holding no replica" in review
    assert "nothing to do" not in next_step(plan, request)
    for brokers in ([], [2, 3]):
        with pytest.raises(ParamError, match="Param 'brokers': name the one broker to unregister"):
            parse_request({"cluster": "c", "action": "unregister_broker", "brokers": brokers}, settings,
                          REASSIGNMENT_FORM, stored=no_plans)  # fmt: skip
    with pytest.raises(ParamError, match="Param 'brokers': broker 1 is serving"):
        plan_for(replace(request, brokers=(1,)), kraft({"t": {0: (1, 2)}}))


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
