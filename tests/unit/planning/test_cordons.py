"""Cordoned brokers (the cluster's `cordoned_brokers` setting, or Kafka's own `cordoned.log.dirs`):
no planner adds a replica to one, each keeps the replicas it has, and a plan that only a cordon
blocks is refused naming `cordoned_brokers`."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from kafka_ops.errors import PlanError, PlanFormatError
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import plan_decommission, plan_preferred_election, plan_replica_balance, plan_replication_factor
from kafka_ops.planning.plan_json import plan_from_json
from kafka_ops.planning.plan_rollback import plan_rollback
from kafka_ops.planning.request import RemediationRequest
from kafka_ops.planning.review import Pacing, render_plan
from kafka_ops.planning.view import CORDON_LEVEL, ClusterView
from kafka_ops.remediation.store import plan_to_json
from kafka_ops.settings import ClusterConfig
from tests.unit.planning.builders import Assignment, check_invariants, cluster, replicas_per_broker

RACKS = {1: "a", 2: "b", 3: "c"}
NO_RACKS = {1: None, 2: None, 3: None, 4: None}
# broker 1 holds 5, 2 holds 4, 3 holds 3, 4 (new) none
SKEWED = {"t": {0: (1, 2), 1: (1, 3), 2: (1, 2), 3: (1, 3), 4: (1, 2), 5: (2, 3)}}


def kafka_cordoned(racks: dict[int, str | None], topics: Assignment, *brokers: int) -> ClusterSnapshot:
    """A cluster whose `brokers` Kafka cordons, as the KRaft source records it (`Broker.cordoned`)."""
    snap = cluster(racks, topics)
    snap.brokers = {b: replace(x, cordoned=b in brokers) for b, x in snap.brokers.items()}
    return snap


def test_the_view_says_who_is_cordoned_and_why() -> None:
    snap = kafka_cordoned(NO_RACKS, SKEWED, 2, 3)
    view = ClusterView(snap, frozenset({3, 4, 9}))
    assert view.placeable == {1}
    assert view.cordoned == {
        2: "Kafka's cordoned.log.dirs",
        3: "setting cordoned_brokers and Kafka's cordoned.log.dirs",
        4: "setting cordoned_brokers",
        9: "setting cordoned_brokers",  # not registered: harmless, and kept in the request
    }
    assert view.cordon_request() == {"cordoned_brokers": [3, 4, 9], "kafka_cordoned_brokers": [2, 3]}
    assert ClusterView(cluster(NO_RACKS, SKEWED)).cordon_request() == {}


# -- replication factor ------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["setting", "kafka"])
def test_new_replicas_never_go_to_a_cordoned_broker(how: str) -> None:
    topics = {"tp_re_02": {0: (2,), 1: (3,), 2: (1,)}}
    if how == "setting":
        snap = cluster(RACKS, topics)
        plan = plan_replication_factor(snap, ["tp_re_02"], 2, cordoned_brokers=[3])
        assert plan.request["cordoned_brokers"] == [3]
    else:
        snap = kafka_cordoned(RACKS, topics, 3)
        plan = plan_replication_factor(snap, ["tp_re_02"], 2)
        assert plan.request["kafka_cordoned_brokers"] == [3]
    # uncordoned, this is [2, 3], [3, 1], [1, 2]; broker 3 keeps its replica of partition 1
    assert [m.target for m in plan.reassignments] == [(2, 1), (3, 2), (1, 2)]
    assert replicas_per_broker(plan) == {1: 2, 2: 3, 3: 1}
    check_invariants(plan, snap, replication_factor=2)


def test_replication_factor_refused_when_only_cordoned_brokers_could_take_a_replica() -> None:
    snap = kafka_cordoned(RACKS, {"t": {0: (1,), 1: (1, 2, 3)}}, 3)
    with pytest.raises(PlanError) as caught:
        plan_replication_factor(snap, ["t"], 3, cordoned_brokers=[2])
    assert caught.value.field == "cordoned_brokers"
    assert str(caught.value) == (
        "cordoned_brokers: t-0 holds [1] and needs another replica, but every other registered broker is "
        "cordoned: 2 (setting cordoned_brokers), 3 (Kafka's cordoned.log.dirs); lift a cordon or ask for a "
        "lower replication factor"
    )


def test_going_down_drops_the_replica_on_a_cordoned_broker_first() -> None:
    snap = cluster(NO_RACKS, {"t": {0: (1, 2, 3)}})
    assert plan_replication_factor(snap, ["t"], 2).reassignments[0].target == (1, 2)
    assert plan_replication_factor(snap, ["t"], 2, cordoned_brokers=[2]).reassignments[0].target == (1, 3)


# -- decommission ------------------------------------------------------------------------------------


def test_decommissioned_replicas_never_go_to_a_cordoned_broker() -> None:
    six = {1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"}
    snap = kafka_cordoned(six, {"t": {0: (1, 2, 5), 1: (2, 1, 3), 2: (3, 5, 1), 3: (2, 3, 5)}}, 4)
    # uncordoned, broker 4 (rack a's other broker) takes all three; cordoned, rack a has no broker left
    # to take them (the spread drops, as when a rack's last broker leaves) and rack c only broker 3
    plan = plan_decommission(snap, [1], cordoned_brokers=[6])
    assert [(m.partition, m.target) for m in plan.reassignments] == [(0, (3, 2, 5)), (1, (2, 5, 3)), (2, (3, 5, 2))]
    assert plan.request == {"brokers": [1], "cordoned_brokers": [6], "kafka_cordoned_brokers": [4]}
    assert {b: n for b, n in replicas_per_broker(plan).items() if b in (4, 6)} == {4: 0, 6: 0}


def test_a_cordoned_broker_can_be_decommissioned() -> None:
    snap = cluster(NO_RACKS, SKEWED)
    plan = plan_decommission(snap, [1], cordoned_brokers=[1])
    assert replicas_per_broker(plan)[1] == 0 and plan.moves == 5
    check_invariants(plan, snap)


@pytest.mark.parametrize(("level", "first"), [(None, None), (CORDON_LEVEL - 1, None), (CORDON_LEVEL, [1, 3])])
def test_a_decommission_cordons_first_where_the_metadata_version_takes_kafkas_cordon(
    level: int | None, first: list[int] | None
) -> None:
    """From metadata.version 4.3-IV0 the leaving brokers are cordoned by the execution first, except one
    Kafka already cordons (the operator's cordon, which no cancel may lift) and one not registered."""
    snap = kafka_cordoned({**NO_RACKS, 5: None, 6: None}, {"t": {0: (1, 2), 1: (3, 4), 2: (5, 2)}}, 5)
    snap.metadata_version = level
    del snap.brokers[4]
    plan = plan_decommission(snap, [1, 3, 4, 5])
    assert plan.request.get("cordon_first") == first
    rollback = plan_rollback(snap, plan)
    assert rollback.request.get("uncordon_first") == first
    assert "uncordon_first" not in plan_rollback(snap, plan, finish=True).request
    assert plan_from_json(json.loads(json.dumps(plan_to_json(plan)))).request.get("cordon_first") == first
    request = RemediationRequest(ClusterConfig("c"), "lake", "decommission", True, None, brokers=(1, 3, 4, 5))
    review = render_plan(plan, request, Pacing(1, 0, "none"))
    assert ("cordon first     brokers [1, 3]: cordoned.log.dirs=*" in review) is (first is not None)


def test_a_rollback_with_nothing_left_to_move_back_still_lifts_the_cordon() -> None:
    """Every partition already back at the plan's base (someone moved them by hand): the rollback moves
    nothing, but it is not empty while its source plan's cordon stands, so it runs and lifts it."""
    snap = cluster(NO_RACKS, {"t": {0: (1, 2), 1: (3, 4)}})
    snap.metadata_version = CORDON_LEVEL
    plan = plan_decommission(snap, [1])
    rollback = plan_rollback(snap, plan)  # the snapshot is still the base: nothing moved
    assert not rollback.reassignments and rollback.request.get("uncordon_first") == [1]
    assert not rollback.is_empty
    assert plan_rollback(snap, plan, finish=True).is_empty is False  # a finish still has every move to make
    assert plan_rollback(snap, replace(plan, request={})).is_empty  # no cordon, no move: nothing to do


def test_a_plan_file_with_a_bad_cordon_list_is_refused() -> None:
    snap = cluster(NO_RACKS, SKEWED)
    snap.metadata_version = CORDON_LEVEL
    document = plan_to_json(plan_decommission(snap, [1]))
    document["request"]["cordon_first"] = [1, "x"]
    with pytest.raises(PlanFormatError, match=r"request\.cordon_first\[1\]"):
        plan_from_json(document)


@pytest.mark.parametrize(
    ("cordoned", "field", "message"),
    [
        ([2], "cordoned_brokers", r"t-0 has 2 replicas \[1, 3\]; of the brokers that would remain \[2, 3\] too few "
                                  r"are free to take 1, the others are cordoned: 2 \(setting cordoned_brokers\); "
                                  r"lift a cordon"),
        ([], "brokers", r"t-1 has 3 replicas \[1, 2, 3\] but only 2 registered broker\(s\) would remain"),
    ],
)  # fmt: skip
def test_decommission_refused_names_the_cordons_only_when_they_are_the_cause(
    cordoned: list[int], field: str, message: str
) -> None:
    topics = {"t": {0: (1, 3), 1: (1, 2, 3)}} if not cordoned else {"t": {0: (1, 3)}}
    snap = cluster(RACKS, topics)
    with pytest.raises(PlanError, match=message) as caught:
        plan_decommission(snap, [1], cordoned_brokers=cordoned)
    assert caught.value.field == field


# -- replica balance ---------------------------------------------------------------------------------


def test_a_cordoned_new_broker_receives_nothing() -> None:
    snap = cluster(NO_RACKS, SKEWED)
    assert replicas_per_broker(plan_replica_balance(snap)) == {1: 3, 2: 3, 3: 3, 4: 3}
    plan = plan_replica_balance(snap, cordoned_brokers=[4])
    assert replicas_per_broker(plan) == {1: 4, 2: 4, 3: 4, 4: 0}
    assert plan.moves == plan.figures["lower_bound_moves"] == 1
    check_invariants(plan, snap)


def test_a_cordoned_broker_keeps_its_replicas_and_the_others_share_theirs() -> None:
    """Broker 1 holds 5 of 12: cordoned, it keeps them (a cordon is not a decommission) and the mean
    is the other brokers' 7 replicas over 3."""
    snap = kafka_cordoned(NO_RACKS, SKEWED, 1)
    plan = plan_replica_balance(snap)
    assert replicas_per_broker(plan) == {1: 5, 2: 3, 3: 2, 4: 2}
    assert plan.moves == plan.figures["lower_bound_moves"] == 2
    assert plan.request["kafka_cordoned_brokers"] == [1]
    check_invariants(plan, snap)
    # both cordoned: 2 and 3 hold 4 and 3, already even
    assert plan_replica_balance(snap, cordoned_brokers=[4]).is_empty


def test_draining_a_cordoned_broker_moves_its_replicas() -> None:
    snap = cluster(NO_RACKS, SKEWED)
    plan = plan_replica_balance(snap, exclude_brokers=[1], cordoned_brokers=[1])
    assert replicas_per_broker(plan) == {1: 0, 2: 4, 3: 4, 4: 4}
    check_invariants(plan, snap)


def test_a_cordoned_brokers_rack_still_counts_for_the_spread() -> None:
    """Rack a's only broker (4) is cordoned and keeps its replicas, so rack c's broker 3, above its
    share, may not give t0-0's replica to rack b: the partition would be left on two racks."""
    racks = {1: "b", 2: "b", 3: "c", 4: "a"}
    snap = cluster(racks, {"t0": {0: (4, 3, 2), 1: (3, 1, 4)},
                           "t1": {0: (3, 2), 1: (3, 4), 2: (4, 2), 3: (1, 4), 4: (2, 3), 5: (3, 1)}})  # fmt: skip
    plan = plan_replica_balance(snap, cordoned_brokers=[4])
    assert [(m.topic, m.partition, m.target) for m in plan.reassignments] == [("t1", 1, (1, 4))]
    assert plan.figures["residual_excess"] == 1
    check_invariants(plan, snap)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"cordoned_brokers": [1, 2, 3, 4]}, "cordoned_brokers"),
     ({"cordoned_brokers": [1, 2], "exclude_brokers": [3, 4]}, "cordoned_brokers"),
     ({"cordoned_brokers": [1], "exclude_brokers": [1, 2, 3, 4]}, "exclude_brokers")],
)  # fmt: skip
def test_balance_refused_when_no_broker_is_left_to_balance_onto(kwargs: dict[str, list[int]], field: str) -> None:
    with pytest.raises(PlanError) as caught:
        plan_replica_balance(cluster(NO_RACKS, SKEWED), **kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("cordoned", "message"),
    [("3", "must be a list of broker ids, got the string '3'"), ([1, 1], r"lists broker\(s\) \[1\] more than once"),
     ([True], "broker ids are integers")],
)  # fmt: skip
def test_bad_cordons_are_refused(cordoned: object, message: str) -> None:
    with pytest.raises(PlanError, match=f"^cordoned_brokers: {message}"):
        plan_replica_balance(cluster(NO_RACKS, SKEWED), cordoned_brokers=cordoned)  # type: ignore[arg-type]


def test_preferred_election_ignores_cordons() -> None:
    topics = {"t": {0: (1, 2), 1: (2, 1)}}
    snap = kafka_cordoned(RACKS, topics, 1)
    snap.partition_states[("t", 0)] = replace(snap.partition_states[("t", 0)], leader=2)
    assert [(e.partition, e.preferred) for e in plan_preferred_election(snap).elections] == [(0, 1)]
