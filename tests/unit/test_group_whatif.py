"""The assignor what-if on hand-built groups, through Kafka's own assignors (a JVM)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from kafka_ops.assignors import AssignorBridge, AssignorBridgeError, ClusterLayout
from kafka_ops.assignors.protocol import Subscription, encode_subscription
from kafka_ops.assignors.whatif import (
    MIGRATION_STEPS,
    GroupToday,
    MemberToday,
    Outcome,
    Spread,
    moved,
    spread_of,
    verdict_of,
    what_if,
)

TP = tuple[str, int]
TOPICS = ("a", "b", "c")
# the textbook range skew: 3 members, 3 topics x 4 partitions; m0 gets the extra partition of each
RANGE_TODAY = {
    "m0": [(t, p) for t in TOPICS for p in (0, 1)],
    "m1": [(t, 2) for t in TOPICS],
    "m2": [(t, 3) for t in TOPICS],
}


@pytest.fixture(scope="module")
def bridge() -> Iterator[AssignorBridge]:
    with AssignorBridge() as running:
        yield running


def member(
    member_id: str, assignment: Sequence[TP], topics: Sequence[str] = TOPICS, generation: int = 4
) -> MemberToday:
    """A kafka-clients 3.9 range/roundrobin member: it revoked everything before joining (eager)."""
    sub = encode_subscription(Subscription(tuple(topics), None, (), generation, None, 3))
    return MemberToday(member_id, None, f"client-{member_id}", sub, tuple(assignment))


def test_spread_and_moves() -> None:
    lags = {("a", 0): 5, ("a", 1): 7}
    assert spread_of({"x": [("a", 0), ("a", 1)], "y": []}, lags) == Spread(0, 2, 12)
    assert moved({"x": [("a", 0)], "y": [("a", 1)]}, {"x": [("a", 1)], "y": [("a", 0)], "z": [("a", 2)]}) == 3


def test_textbook_range_skew_gets_a_recommendation(bridge: AssignorBridge) -> None:
    group = GroupToday("billing", "range", tuple(member(m, tps) for m, tps in RANGE_TODAY.items()))
    layout = ClusterLayout.of_partition_counts(dict.fromkeys(TOPICS, 4))
    lags = {"billing": {tp: 10 for tps in RANGE_TODAY.values() for tp in tps}}
    outcomes, (verdict,) = what_if(bridge, layout, [group], lags)

    by = {o.assignor: o for o in outcomes if o.protocol == "classic"}
    assert by["range"].is_current and by["range"].spread == Spread(3, 6, 30) and by["range"].moved_partitions == 0
    for name in ("roundrobin", "sticky", "cooperative-sticky"):
        assert by[name].spread == Spread(4, 4, 0), name
    # sticky keeps all it can: only m0's two surplus partitions move; round-robin re-deals 8 of 12
    assert (by["sticky"].moved_partitions, by["roundrobin"].moved_partitions) == (2, 8)
    # cooperative: the first rebalance only revokes the two, the follow-up hands them out
    assert (by["cooperative-sticky"].rebalance_rounds, by["cooperative-sticky"].revoked_partitions) == (2, 2)

    assert verdict.prediction_matches is True and verdict.prediction_moves == 0
    assert verdict.today == Spread(3, 6, 30)
    assert verdict.recommended == "cooperative-sticky"
    assert "max-min 3 -> 0" in verdict.reason and "KIP-429" in verdict.reason


def test_balanced_group_needs_no_change(bridge: AssignorBridge) -> None:
    today = {"m0": [("a", 0), ("a", 2)], "m1": [("a", 1), ("a", 3)]}
    group = GroupToday("even", "roundrobin", tuple(member(m, tps, ["a"]) for m, tps in today.items()))
    _, (verdict,) = what_if(bridge, ClusterLayout.of_partition_counts({"a": 4}), [group], {})
    assert verdict.prediction_matches is True
    assert verdict.recommended is None and verdict.reason == "no assignor does materially better"


def test_partitions_added_since_the_last_rebalance_are_predicted_to_move(bridge: AssignorBridge) -> None:
    # topic a grew from 2 to 4 partitions: a, 2 and 3 belong to nobody until the next rebalance
    today = {"m0": [("a", 0)], "m1": [("a", 1)]}
    group = GroupToday("grown", "range", tuple(member(m, tps, ["a"]) for m, tps in today.items()))
    _, (verdict,) = what_if(bridge, ClusterLayout.of_partition_counts({"a": 4}), [group], {})
    assert verdict.prediction_matches is False and verdict.prediction_moves == 3  # a-1 moves to m0, a-2/a-3 new


def test_undecodable_metadata_is_reported_not_raised(bridge: AssignorBridge) -> None:
    bad = MemberToday("m0", None, "c", b"\x00\x03\x00", (("a", 0),))
    ok = GroupToday("fine", "range", (member("m0", [("a", 0)], ["a"]),))
    outcomes, verdicts = what_if(
        bridge, ClusterLayout.of_partition_counts({"a": 1}), [GroupToday("bad", "range", (bad,)), ok], {}
    )
    by = {v.group_id: v for v in verdicts}
    assert by["bad"].error is not None and "member 'm0'" in by["bad"].error
    assert by["fine"].error is None and {o.group_id for o in outcomes} == {"fine"}


def test_the_consumer_protocols_assignors_on_the_same_members(bridge: AssignorBridge) -> None:
    """The textbook range skew, as Kafka 4.4's group coordinator would assign it after an online
    upgrade: uniform balances it keeping today's partitions where it can; the server-side range
    ranges each topic over the members again, as the client's does."""
    group = GroupToday("billing", "range", tuple(member(m, tps) for m, tps in RANGE_TODAY.items()))
    layout = ClusterLayout.of_partition_counts(dict.fromkeys(TOPICS, 4))
    lags = {"billing": {tp: 10 for tps in RANGE_TODAY.values() for tp in tps}}
    outcomes, (verdict,) = what_if(bridge, layout, [group], lags)

    server = {o.assignor: o for o in outcomes if o.protocol == "consumer"}
    assert set(server) == {"uniform", "range"}
    uniform, server_range = server["uniform"], server["range"]
    assert uniform.error is None and uniform.spread == Spread(4, 4, 0)
    assert (uniform.moved_partitions, uniform.revoked_partitions, uniform.rebalance_rounds) == (2, 2, None)
    assert server_range.spread == Spread(3, 6, 30) and not server_range.is_current
    # as good as cooperative-sticky, which needs no client upgrade: the classic switch is advised
    assert verdict.recommended == "cooperative-sticky" and verdict.recommended_protocol == "classic"


def _outcome(assignor: str, protocol: str, spread: Spread, moved_partitions: int) -> Outcome:
    return Outcome(
        "g", assignor, assignor == "range" and protocol == "classic", spread, moved_partitions, 1, 0, None, protocol
    )  # type: ignore[arg-type]


def test_the_consumer_protocol_is_recommended_with_its_migration_steps() -> None:
    today = {"m0": [("a", 0), ("a", 1), ("a", 2)], "m1": [("a", 3)]}
    group = GroupToday("g", "range", tuple(member(m, tps, ["a"]) for m, tps in today.items()))
    outcomes = [
        _outcome("range", "classic", Spread(1, 3, 0), 0),
        _outcome("roundrobin", "classic", Spread(1, 3, 0), 2),
        _outcome("uniform", "consumer", Spread(2, 2, 0), 1),
        _outcome("range", "consumer", Spread(1, 3, 0), 0),
    ]
    verdict = verdict_of(group, outcomes, None, {}, 2)
    assert (verdict.recommended, verdict.recommended_protocol) == ("uniform", "consumer")
    assert "to the consumer protocol's uniform assignor: partitions per member max-min 2 -> 0" in verdict.reason
    assert MIGRATION_STEPS.format(assignor="uniform") in verdict.reason
    for step in (
        "group.protocol=consumer",
        "group.remote.assignor=uniform",
        "group.consumer.migration.policy",
        "kafka-clients 4.0+",
        "rolling restart",
    ):
        assert step in verdict.reason, step


def test_the_consumer_protocol_is_not_recommended_when_only_as_good() -> None:
    """Not materially better than today (spread down by less than `min_improvement`): no advice."""
    today = {"m0": [("a", 0), ("a", 1)], "m1": [("a", 2)]}
    group = GroupToday("g", "range", tuple(member(m, tps, ["a"]) for m, tps in today.items()))
    outcomes = [_outcome("range", "classic", Spread(1, 2, 0), 0), _outcome("uniform", "consumer", Spread(1, 2, 0), 0)]
    verdict = verdict_of(group, outcomes, None, {}, 2)
    assert verdict.recommended is None and verdict.recommended_protocol is None


def test_without_kafka4s_jars_the_client_side_rows_stand(
    bridge: AssignorBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Kafka 4 group coordinator to load (no Maven on a fresh machine, say): each server-side
    assignor gets an error row saying why; the client assignors' rows and the verdict stand."""

    def unavailable(*args: object, **kwargs: object) -> None:
        raise AssignorBridgeError("cannot build the server-side assignors (Kafka 4 group coordinator): no mvn")

    monkeypatch.setattr(bridge, "server_assign_many", unavailable)
    group = GroupToday("billing", "range", tuple(member(m, tps) for m, tps in RANGE_TODAY.items()))
    outcomes, (verdict,) = what_if(bridge, ClusterLayout.of_partition_counts(dict.fromkeys(TOPICS, 4)), [group], {})
    server = [o for o in outcomes if o.protocol == "consumer"]
    assert [o.assignor for o in server] == ["uniform", "range"]
    assert all(o.spread is None and o.error and "unavailable" in o.error and "no mvn" in o.error for o in server)
    assert len([o for o in outcomes if o.protocol == "classic" and o.error is None]) == 4
    assert verdict.recommended == "cooperative-sticky" and verdict.error is None
