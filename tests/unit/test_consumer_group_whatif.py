"""The what-if for a group already on the consumer protocol (KIP-848): Kafka 4.4's server-side
assignors only, through the bridge's JVM; the group's own assignor is the prediction."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafka_ops.assignors import AssignorBridge, ClusterLayout, ConsumerMember
from kafka_ops.assignors.consumer_whatif import ConsumerProtocolGroup, what_if_consumer_groups
from kafka_ops.assignors.whatif import Spread

TOPICS = ("a", "b", "c")
# what the server-side range gives 3 members on 3 topics x 4 partitions: m0 the extra of each topic
RANGE_TODAY = {
    "m0": tuple((t, p) for t in TOPICS for p in (0, 1)),
    "m1": tuple((t, 2) for t in TOPICS),
    "m2": tuple((t, 3) for t in TOPICS),
}


@pytest.fixture(scope="module")
def bridge() -> Iterator[AssignorBridge]:
    with AssignorBridge() as running:
        yield running


def test_a_range_group_is_advised_to_ask_for_uniform(bridge: AssignorBridge) -> None:
    group = ConsumerProtocolGroup(
        "orders", "range", tuple(ConsumerMember(m, TOPICS, tps) for m, tps in RANGE_TODAY.items())
    )
    layout = ClusterLayout.of_partition_counts(dict.fromkeys(TOPICS, 4))
    lags = {"orders": {tp: 10 for tps in RANGE_TODAY.values() for tp in tps}}
    outcomes, (verdict,) = what_if_consumer_groups(bridge, layout, [group], lags)

    by = {o.assignor: o for o in outcomes}
    assert {o.protocol for o in outcomes} == {"consumer"} and set(by) == {"uniform", "range"}
    assert by["range"].is_current and by["range"].spread == Spread(3, 6, 30) and by["range"].moved_partitions == 0
    assert not by["uniform"].is_current and by["uniform"].spread == Spread(4, 4, 0)
    assert by["uniform"].moved_partitions == 2
    # the broker's range, fed today's members, reproduces today's assignment
    assert verdict.prediction_matches is True and verdict.prediction_moves == 0
    assert (verdict.recommended, verdict.recommended_protocol) == ("uniform", "consumer")
    assert "set group.remote.assignor=uniform on the consumers" in verdict.reason
    assert "group.consumer.migration.policy" not in verdict.reason  # no migration: it is on the protocol already


def test_a_regex_subscription_is_reported_not_guessed(bridge: AssignorBridge) -> None:
    group = ConsumerProtocolGroup("logs", "uniform", (ConsumerMember("m0", (), (("a", 0),)),), regex_members=("m0",))
    outcomes, (verdict,) = what_if_consumer_groups(bridge, ClusterLayout.of_partition_counts({"a": 1}), [group], {})
    assert outcomes == []
    assert verdict.error is not None and "m0 subscribe by regex" in verdict.error
    assert verdict.today == Spread(1, 1, 0)
