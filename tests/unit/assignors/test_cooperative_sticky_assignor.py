"""Kafka's `CooperativeStickyAssignorTest` (apache/kafka 3.9): the cases of its own, beyond the
inherited `AbstractStickyAssignorTest` ones (in `test_abstract_sticky_assignor.py`, flavor
`cooperative-sticky`). Its `verifyValidityAndBalance` runs the follow-up rebalances, so checks
after it see the settled assignment (see `StickyTest.verify_validity_and_balance`).
"""

from __future__ import annotations

import pytest

from kafka_ops.assignors import AssignorBridge, protocol
from tests.unit.assignors.kafka_harness import (
    DEFAULT_GENERATION,
    RACK_CONFIGS,
    RackConfig,
    StickyTest,
    is_fully_balanced,
    tp,
)


@pytest.fixture
def t(bridge: AssignorBridge) -> StickyTest:
    return StickyTest(bridge, "cooperative-sticky")


def test_encode_and_decode_generation(bridge: AssignorBridge, t: StickyTest) -> None:  # testEncodeAndDecodeGeneration
    # a consumer that has had no assignment yet encodes DEFAULT_GENERATION
    user_data = bridge.subscription_user_data("cooperative-sticky", [t.topic], None, DEFAULT_GENERATION)
    data = bridge.member_data("cooperative-sticky", protocol.Subscription((t.topic,), user_data))
    assert data.generation == DEFAULT_GENERATION

    generation = 10  # onAssignment(null, ConsumerGroupMetadata(..., generation, ...)): no partitions
    user_data = bridge.subscription_user_data(
        "cooperative-sticky", [t.topic], [], generation, member_id="dummy-member-id"
    )
    data = bridge.member_data("cooperative-sticky", protocol.Subscription((t.topic,), user_data))
    assert data.generation == generation


def test_decode_generation(bridge: AssignorBridge, t: StickyTest) -> None:  # testDecodeGeneration
    assert bridge.member_data("cooperative-sticky", protocol.Subscription((t.topic,))).generation is None


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_all_consumers_have_owned_partition_invalidated_when_claimed_by_multiple_consumers_in_same_generation_with_equal_partitions_per_consumer(  # noqa: E501
    t: StickyTest, rack_config: RackConfig
) -> None:
    t.initialize_racks(rack_config)
    ppt = {t.topic: t.partition_infos(t.topic, 3)}
    t.subscriptions[t.consumer1] = t.build_subscription_v2_above(
        [t.topic], [tp(t.topic, 0), tp(t.topic, 1)], t.generation_id, 0
    )
    t.subscriptions[t.consumer2] = t.build_subscription_v2_above(
        [t.topic], [tp(t.topic, 0), tp(t.topic, 2)], t.generation_id, 1
    )
    t.subscriptions[t.consumer3] = t.build_subscription_v2_above([t.topic], [], t.generation_id, 2)
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    assert assignment[t.consumer1] == [tp(t.topic, 1)]
    assert assignment[t.consumer2] == [tp(t.topic, 2)]
    # topic-0 has to be considered "owned" and so it cant be assigned until both have "revoked" it
    assert assignment[t.consumer3] == []
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_all_consumers_have_owned_partition_invalidated_when_claimed_by_multiple_consumers_in_same_generation_with_unequal_partitions_per_consumer(  # noqa: E501
    t: StickyTest, rack_config: RackConfig
) -> None:
    t.initialize_racks(rack_config)
    ppt = {t.topic: t.partition_infos(t.topic, 4)}
    t.subscriptions[t.consumer1] = t.build_subscription_v2_above(
        [t.topic], [tp(t.topic, 0), tp(t.topic, 1)], t.generation_id, 0
    )
    t.subscriptions[t.consumer2] = t.build_subscription_v2_above(
        [t.topic], [tp(t.topic, 0), tp(t.topic, 2)], t.generation_id, 1
    )
    t.subscriptions[t.consumer3] = t.build_subscription_v2_above([t.topic], [], t.generation_id, 2)
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    assert assignment[t.consumer1] == [tp(t.topic, 1), tp(t.topic, 3)]
    assert assignment[t.consumer2] == [tp(t.topic, 2)]
    assert assignment[t.consumer3] == []
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)


def test_member_data_with_inconsistent_data(bridge: AssignorBridge, t: StickyTest) -> None:
    in_user_data, in_subscription = [t.tp1], [t.tp0]  # testMemberDataWithInconsistentData
    user_data = bridge.subscription_user_data(
        "cooperative-sticky", [t.topic], in_user_data, t.generation_id, member_id=t.consumer1
    )
    # generation only in user data, other owned partitions in the subscription, which has no generation:
    # the user data's generation and the subscription's partitions are honored
    data = bridge.member_data(
        "cooperative-sticky", protocol.Subscription((t.topic,), user_data, tuple(in_subscription))
    )
    assert list(data.partitions) == in_subscription
    assert data.generation == t.generation_id


def test_member_data_with_empty_partitions_and_equal_generation(bridge: AssignorBridge, t: StickyTest) -> None:
    topics = [t.topic]  # testMemberDataWithEmptyPartitionsAndEqualGeneration
    owned = [tp(t.topic1, 0), tp(t.topic2, 1)]
    sub = protocol.Subscription(
        tuple(topics), t.generate_user_data(topics, owned, t.generation_id), (), t.generation_id
    )
    data = bridge.member_data("cooperative-sticky", sub)
    assert list(data.partitions) == []  # the subscription is honored: v1+ only
    assert data.generation == t.generation_id


def test_member_data_with_empty_partitions_and_higher_generation(bridge: AssignorBridge, t: StickyTest) -> None:
    topics = [t.topic]  # testMemberDataWithEmptyPartitionsAndHigherGeneration
    owned = [tp(t.topic1, 0), tp(t.topic2, 1)]
    sub = protocol.Subscription(
        tuple(topics), t.generate_user_data(topics, owned, t.generation_id - 1), (), t.generation_id
    )
    data = bridge.member_data("cooperative-sticky", sub)
    assert list(data.partitions) == []
    assert data.generation == t.generation_id


def test_assignor_with_old_version_subscriptions(t: StickyTest) -> None:  # testAssignorWithOldVersionSubscriptions
    ppt = {t.topic1: t.partition_infos(t.topic1, 3)}
    topics = [t.topic1]
    # cooperative sticky assignor only supports ConsumerProtocolSubscription V1 or above
    t.subscriptions[t.consumer1] = t.build_subscription_v1(topics, [tp(t.topic1, 0)], t.generation_id, 0)
    t.subscriptions[t.consumer2] = t.build_subscription_v1(topics, [tp(t.topic1, 1)], t.generation_id, 1)
    t.subscriptions[t.consumer3] = t.build_subscription_v2_above(topics, [], t.generation_id, 2)
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    assert assignment[t.consumer1] == [tp(t.topic1, 0)]
    assert assignment[t.consumer2] == [tp(t.topic1, 1)]
    assert assignment[t.consumer3] == [tp(t.topic1, 2)]
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)


def test_uniform_subscription_transfer_ownership_list_is_right(t: StickyTest) -> None:
    t.replication_factor = 1  # testUniformSubscriptionTransferOwnershipListIsRight (KAFKA-15170)
    t.num_broker_racks = 2
    t.has_consumer_rack = True
    ppt = {t.topic1: t.partition_infos(t.topic1, 4)}
    t.subscriptions["c0"] = t.build_subscription_v2_above(
        [t.topic1], [tp(t.topic1, 0), tp(t.topic1, 1)], t.generation_id, 0
    )
    t.subscriptions["c1"] = t.build_subscription_v2_above(
        [t.topic1], [tp(t.topic1, 2), tp(t.topic1, 3)], t.generation_id, 1
    )
    t.assignor.assign_partitions(ppt, t.subscriptions)
    assert t.assignor.partitions_transferring_ownership is not None
    assert len(t.assignor.partitions_transferring_ownership) == 2
