"""Kafka's `StickyAssignorTest` (apache/kafka 3.9): the cases of its own, beyond the inherited
`AbstractStickyAssignorTest` ones (in `test_abstract_sticky_assignor.py`, flavor `sticky`).

StickyAssignor is eager: a member's previous assignment and generation travel in its user data
(`StickyAssignor.serializeTopicPartitionAssignment`), which is what these cases exercise.
"""

from __future__ import annotations

import pytest

from kafka_ops.assignors import AssignorBridge, protocol
from tests.unit.assignors.kafka_harness import (
    DEFAULT_GENERATION,
    RACK_CONFIGS,
    RackConfig,
    StickyTest,
    Subscription,
    is_fully_balanced,
    tp,
)

RACK_AND_SUBSCRIPTION_COMBINATIONS = [(rc, equal) for equal in (True, False) for rc in RACK_CONFIGS]


@pytest.fixture
def t(bridge: AssignorBridge) -> StickyTest:
    return StickyTest(bridge, "sticky")


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
    assert assignment[t.consumer3] == [tp(t.topic, 0)]
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
    assert assignment[t.consumer3] == [tp(t.topic, 0)]
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)


@pytest.mark.parametrize(("rack_config", "all_equal"), RACK_AND_SUBSCRIPTION_COMBINATIONS)
def test_assignment_with_multiple_generations1(t: StickyTest, rack_config: RackConfig, all_equal: bool) -> None:
    t.initialize_racks(rack_config)  # testAssignmentWithMultipleGenerations1
    all_topics = [t.topic, t.topic2]
    consumer2_topics = all_topics if all_equal else [t.topic]
    ppt = {t.topic: t.partition_infos(t.topic, 6), t.topic2: t.partition_infos(t.topic2, 6)}
    t.subscriptions[t.consumer1] = t.subscription(all_topics, 0)
    t.subscriptions[t.consumer2] = t.subscription(consumer2_topics, 1)
    t.subscriptions[t.consumer3] = t.subscription(all_topics, 2)
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    r1p1, r1p2, r1p3 = assignment[t.consumer1], assignment[t.consumer2], assignment[t.consumer3]
    assert len(r1p1) == 4 and len(r1p2) == 4 and len(r1p3) == 4
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)

    t.subscriptions[t.consumer1] = t.build_subscription_v2_above(all_topics, r1p1, t.generation_id, 0)
    t.subscriptions[t.consumer2] = t.build_subscription_v2_above(consumer2_topics, r1p2, t.generation_id, 1)
    del t.subscriptions[t.consumer3]
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    r2p1, r2p2 = assignment[t.consumer1], assignment[t.consumer2]
    assert len(r2p1) == 6 and len(r2p2) == 6
    if all_equal:  # only true in all subscription equal case
        assert set(r1p1) <= set(r2p1)
    assert set(r1p2) <= set(r2p2)
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)
    assert set(r2p2) & set(r1p3)

    del t.subscriptions[t.consumer1]
    t.subscriptions[t.consumer2] = t.build_subscription_v2_above(consumer2_topics, r2p2, 2, 1)
    t.subscriptions[t.consumer3] = t.build_subscription_v2_above(all_topics, r1p3, 1, 2)
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    r3p2, r3p3 = assignment[t.consumer2], assignment[t.consumer3]
    assert len(r3p2) == 6 and len(r3p3) == 6
    assert not set(r3p2) & set(r3p3)
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)


@pytest.mark.parametrize(("rack_config", "all_equal"), RACK_AND_SUBSCRIPTION_COMBINATIONS)
def test_assignment_with_multiple_generations2(t: StickyTest, rack_config: RackConfig, all_equal: bool) -> None:
    t.initialize_racks(rack_config)  # testAssignmentWithMultipleGenerations2
    all_topics = [t.topic, t.topic2, t.topic3]
    consumer1_topics = all_topics if all_equal else [t.topic]
    consumer3_topics = all_topics if all_equal else [t.topic, t.topic2]
    ppt = {name: t.partition_infos(name, 4) for name in all_topics}
    t.subscriptions[t.consumer1] = t.subscription(consumer1_topics, 0)
    t.subscriptions[t.consumer2] = t.subscription(all_topics, 1)
    t.subscriptions[t.consumer3] = t.subscription(consumer3_topics, 2)
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    r1p1, r1p2, r1p3 = assignment[t.consumer1], assignment[t.consumer2], assignment[t.consumer3]
    assert len(r1p1) == 4 and len(r1p2) == 4 and len(r1p3) == 4
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)

    del t.subscriptions[t.consumer1]
    t.subscriptions[t.consumer2] = t.build_subscription_v2_above(all_topics, r1p2, 1, 1)
    del t.subscriptions[t.consumer3]
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    r2p2 = assignment[t.consumer2]
    assert len(r2p2) == 12
    assert set(r1p2) <= set(r2p2)
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)

    t.subscriptions[t.consumer1] = t.build_subscription_v2_above(consumer1_topics, r1p1, 1, 0)
    t.subscriptions[t.consumer2] = t.build_subscription_v2_above(all_topics, r2p2, 2, 1)
    t.subscriptions[t.consumer3] = t.build_subscription_v2_above(consumer3_topics, r1p3, 1, 2)
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    assert all(len(assignment[c]) == 4 for c in (t.consumer1, t.consumer2, t.consumer3))
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)


@pytest.mark.parametrize(("rack_config", "all_equal"), RACK_AND_SUBSCRIPTION_COMBINATIONS)
def test_assignment_with_conflicting_previous_generations(
    t: StickyTest, rack_config: RackConfig, all_equal: bool
) -> None:
    t.initialize_racks(rack_config)  # testAssignmentWithConflictingPreviousGenerations
    ppt = {name: t.partition_infos(name, 4) for name in (t.topic, t.topic2, t.topic3)}
    all_topics = [t.topic, t.topic2, t.topic3]
    consumer1_topics = all_topics if all_equal else [t.topic]
    consumer2_topics = all_topics if all_equal else [t.topic, t.topic2]
    t.subscriptions[t.consumer1] = t.subscription(consumer1_topics, 0)
    t.subscriptions[t.consumer2] = t.subscription(consumer2_topics, 1)
    t.subscriptions[t.consumer3] = t.subscription(all_topics, 2)

    tp0, tp1, tp2, tp3 = (tp(t.topic, i) for i in range(4))
    t2p0, t2p1, t2p2, t2p3 = (tp(t.topic2, i) for i in range(4))
    t3p0, t3p1, t3p2, t3p3 = (tp(t.topic3, i) for i in range(4))
    c1_before = [tp0, tp1, tp2, t2p2, t2p3, t3p0] if all_equal else [tp0, tp1, tp2, tp3]
    c2_before = [tp0, tp1, t2p0, t2p1, t2p2, t2p3]
    c3_before = [tp2, tp3, t3p0, t3p1, t3p2, t3p3]
    t.subscriptions[t.consumer1] = t.build_subscription_v2_above(consumer1_topics, c1_before, 1, 0)
    t.subscriptions[t.consumer2] = t.build_subscription_v2_above(consumer2_topics, c2_before, 2, 1)
    t.subscriptions[t.consumer3] = t.build_subscription_v2_above(all_topics, c3_before, 2, 2)

    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    c1, c2, c3 = assignment[t.consumer1], assignment[t.consumer2], assignment[t.consumer3]
    assert len(c1) == 4 and len(c2) == 4 and len(c3) == 4
    assert set(c2) <= set(c2_before)
    assert set(c3) <= set(c3_before)
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_schema_backward_compatibility(
    t: StickyTest, rack_config: RackConfig
) -> None:  # testSchemaBackwardCompatibility
    t.initialize_racks(rack_config)
    ppt = {t.topic: t.partition_infos(t.topic, 3)}
    t.subscriptions[t.consumer1] = t.subscription([t.topic], 0)
    t.subscriptions[t.consumer2] = t.subscription([t.topic], 1)
    t.subscriptions[t.consumer3] = t.subscription([t.topic], 2)

    c1_before = [t.tp0, t.tp2]
    c2_before = [t.tp1]
    t.subscriptions[t.consumer1] = t.build_subscription_v2_above([t.topic], c1_before, 1, 0)
    # buildSubscriptionWithOldSchema: StickyAssignor user data v0 (no generation), the consumer's rack
    old_schema = protocol.encode_sticky_user_data(c2_before, None)
    t.subscriptions[t.consumer2] = Subscription([t.topic], old_schema, [], DEFAULT_GENERATION, t.consumer_rack_id(1))
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    c1, c2, c3 = assignment[t.consumer1], assignment[t.consumer2], assignment[t.consumer3]
    assert len(c1) == 1 and len(c2) == 1 and len(c3) == 1
    assert set(c1) <= set(c1_before)
    assert set(c2) <= set(c2_before)
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_member_data_with_inconsistent_data(bridge: AssignorBridge, t: StickyTest, rack_config: RackConfig) -> None:
    t.initialize_racks(rack_config)  # testMemberDataWithInconsistentData
    in_user_data, in_subscription = [t.tp1], [t.tp0]
    # assignor.onAssignment(Assignment(inUserData), generationId); subscriptionUserData(topics), in Java
    user_data = bridge.subscription_user_data("sticky", [t.topic], in_user_data, t.generation_id, member_id=t.consumer1)
    sub = protocol.Subscription((t.topic,), user_data, tuple(in_subscription))  # generation -1, no rack
    data = bridge.member_data("sticky", sub)
    # In StickyAssignor, owned partitions are serialized into user data, which is always honored
    assert list(data.partitions) == in_user_data
    assert data.generation == t.generation_id


def test_member_data_will_honor_user_data(bridge: AssignorBridge, t: StickyTest) -> None:
    topics = [t.topic]  # testMemberDataWillHonorUserData
    owned = [tp(t.topic1, 0), tp(t.topic2, 1)]
    generation_in_user_data = t.generation_id - 1
    sub = protocol.Subscription(
        tuple(topics), t.generate_user_data(topics, owned, generation_in_user_data), (), t.generation_id
    )
    data = bridge.member_data("sticky", sub)
    # with the eager protocol, StickyAssignor always honors the data in user data
    assert list(data.partitions) == owned
    assert data.generation == generation_in_user_data


def test_assignor_with_old_version_subscriptions(t: StickyTest) -> None:  # testAssignorWithOldVersionSubscriptions
    ppt = {t.topic1: t.partition_infos(t.topic1, 3)}
    topics = [t.topic1]
    v0 = t.build_subscription_v0(topics, [tp(t.topic1, 0)], t.generation_id, 0)
    assert v0 is not None
    t.subscriptions[t.consumer1] = v0
    t.subscriptions[t.consumer2] = t.build_subscription_v1(topics, [tp(t.topic1, 1)], t.generation_id, 1)
    t.subscriptions[t.consumer3] = t.build_subscription_v2_above(topics, [], t.generation_id, 2)
    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    assert assignment[t.consumer1] == [tp(t.topic1, 0)]
    assert assignment[t.consumer2] == [tp(t.topic1, 1)]
    assert assignment[t.consumer3] == [tp(t.topic1, 2)]
    t.verify_validity_and_balance(t.subscriptions, assignment, ppt)
    assert is_fully_balanced(assignment)
