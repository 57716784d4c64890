"""Kafka's `RangeAssignorTest` (apache/kafka 3.9), every case, run through the bridge.

Each test is named after the Java test it transcribes; `@ParameterizedTest` over `RackConfig`
or `hasConsumerRack` becomes `pytest.mark.parametrize`. A `RangeTest` is one instance of the Java
test class (fresh per test method, as JUnit makes them).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kafka_ops.assignors import AssignorBridge
from kafka_ops.model.groups import TopicPartition
from tests.unit.assignors.kafka_harness import (
    ALL_RACKS,
    RACK_CONFIGS,
    Assignment,
    JavaAssignor,
    PartitionsPerTopic,
    RackConfig,
    Subscription,
    null_racks,
    partition_infos,
    racks,
    tp,
    verify_rack_assignment,
)

topic1, topic2 = "topic1", "topic2"
consumer1, consumer2, consumer3 = "consumer1", "consumer2", "consumer3"
instance1, instance2, instance3 = "instance1", "instance2", "instance3"


class RangeTest:
    def __init__(self, bridge: AssignorBridge) -> None:
        self.assignor = JavaAssignor(bridge, "range")
        self.num_broker_racks = 0
        self.has_consumer_rack = False
        self.replication_factor = 3
        self.static_member_infos = [(consumer1, instance1), (consumer2, instance2), (consumer3, instance3)]

    def initialize_racks(self, rack_config: RackConfig, max_consumers: int = 3) -> None:
        self.replication_factor = max_consumers
        self.num_broker_racks = max_consumers if rack_config != RackConfig.NO_BROKER_RACK else 0
        self.has_consumer_rack = rack_config != RackConfig.NO_CONSUMER_RACK
        # Rack and consumer ordering are the same in all the tests, so rack-aware logic is verified by the same tests.
        self.assignor.prefer_rack_aware_logic = True

    def two_topics(self, n1: int, n2: int) -> PartitionsPerTopic:
        return {
            topic1: partition_infos(n1, self.replication_factor, self.num_broker_racks, 0),
            topic2: partition_infos(n2, self.replication_factor, self.num_broker_racks, 0),
        }

    def subscription(self, topics: Sequence[str], consumer_index: int) -> Subscription:
        num_racks = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        rack = ALL_RACKS[consumer_index % num_racks] if self.has_consumer_rack else None
        return Subscription(list(topics), None, [], -1, rack)


def assert_assignment(expected: Sequence[TopicPartition], actual: Sequence[TopicPartition]) -> None:
    # order doesn't matter for assignment, so convert to a set
    assert set(expected) == set(actual)


def check_static_assignment(
    assignor: JavaAssignor, partitions_per_topic: PartitionsPerTopic, consumers: dict[str, Subscription]
) -> Assignment:
    """`RangeAssignorTest.checkStaticAssignment`: the assignment keyed by group.instance.id."""
    by_member = assignor.assign_partitions(partitions_per_topic, consumers)
    return {s.group_instance_id: by_member[m] for m, s in consumers.items() if s.group_instance_id is not None}


@pytest.mark.parametrize("has_consumer_rack", [True, False])
def test_one_consumer_no_topic(bridge: AssignorBridge, has_consumer_rack: bool) -> None:  # testOneConsumerNoTopic
    t = RangeTest(bridge)
    t.initialize_racks(RackConfig.BROKER_AND_CONSUMER_RACK if has_consumer_rack else RackConfig.NO_CONSUMER_RACK)
    assignment = t.assignor.assign_partitions({}, {consumer1: t.subscription([], 0)})
    assert set(assignment) == {consumer1}
    assert assignment[consumer1] == []


@pytest.mark.parametrize("has_consumer_rack", [True, False])
def test_one_consumer_nonexistent_topic(bridge: AssignorBridge, has_consumer_rack: bool) -> None:
    t = RangeTest(bridge)  # testOneConsumerNonexistentTopic
    t.initialize_racks(RackConfig.BROKER_AND_CONSUMER_RACK if has_consumer_rack else RackConfig.NO_CONSUMER_RACK)
    assignment = t.assignor.assign_partitions({}, {consumer1: t.subscription([topic1], 0)})
    assert set(assignment) == {consumer1}
    assert assignment[consumer1] == []


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_one_consumer_one_topic(bridge: AssignorBridge, rack_config: RackConfig) -> None:  # testOneConsumerOneTopic
    t = RangeTest(bridge)
    t.initialize_racks(rack_config)
    ppt = {topic1: partition_infos(3, t.replication_factor, t.num_broker_racks, 0)}
    assignment = t.assignor.assign_partitions(ppt, {consumer1: t.subscription([topic1], 0)})
    assert set(assignment) == {consumer1}
    assert_assignment([tp(topic1, 0), tp(topic1, 1), tp(topic1, 2)], assignment[consumer1])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_only_assigns_partitions_from_subscribed_topics(bridge: AssignorBridge, rack_config: RackConfig) -> None:
    t = RangeTest(bridge)  # testOnlyAssignsPartitionsFromSubscribedTopics
    t.initialize_racks(rack_config)
    ppt = {
        topic1: partition_infos(3, t.replication_factor, t.num_broker_racks, 0),
        "other": partition_infos(3, t.replication_factor, t.num_broker_racks, 0),
    }
    assignment = t.assignor.assign_partitions(ppt, {consumer1: t.subscription([topic1], 0)})
    assert set(assignment) == {consumer1}
    assert_assignment([tp(topic1, 0), tp(topic1, 1), tp(topic1, 2)], assignment[consumer1])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_one_consumer_multiple_topics(bridge: AssignorBridge, rack_config: RackConfig) -> None:
    t = RangeTest(bridge)  # testOneConsumerMultipleTopics
    t.initialize_racks(rack_config)
    assignment = t.assignor.assign_partitions(t.two_topics(1, 2), {consumer1: t.subscription([topic1, topic2], 0)})
    assert set(assignment) == {consumer1}
    assert_assignment([tp(topic1, 0), tp(topic2, 0), tp(topic2, 1)], assignment[consumer1])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_two_consumers_one_topic_one_partition(bridge: AssignorBridge, rack_config: RackConfig) -> None:
    t = RangeTest(bridge)  # testTwoConsumersOneTopicOnePartition
    t.initialize_racks(rack_config)
    ppt = {topic1: partition_infos(1, t.replication_factor, t.num_broker_racks, 0)}
    consumers = {consumer1: t.subscription([topic1], 0), consumer2: t.subscription([topic1], 1)}
    assignment = t.assignor.assign_partitions(ppt, consumers)
    assert_assignment([tp(topic1, 0)], assignment[consumer1])
    assert_assignment([], assignment[consumer2])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_two_consumers_one_topic_two_partitions(bridge: AssignorBridge, rack_config: RackConfig) -> None:
    t = RangeTest(bridge)  # testTwoConsumersOneTopicTwoPartitions
    t.initialize_racks(rack_config)
    ppt = {topic1: partition_infos(2, t.replication_factor, t.num_broker_racks, 0)}
    consumers = {consumer1: t.subscription([topic1], 0), consumer2: t.subscription([topic1], 1)}
    assignment = t.assignor.assign_partitions(ppt, consumers)
    assert_assignment([tp(topic1, 0)], assignment[consumer1])
    assert_assignment([tp(topic1, 1)], assignment[consumer2])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_multiple_consumers_mixed_topics(bridge: AssignorBridge, rack_config: RackConfig) -> None:
    t = RangeTest(bridge)  # testMultipleConsumersMixedTopics
    t.initialize_racks(rack_config)
    consumers = {
        consumer1: t.subscription([topic1], 0),
        consumer2: t.subscription([topic1, topic2], 1),
        consumer3: t.subscription([topic1], 2),
    }
    assignment = t.assignor.assign_partitions(t.two_topics(3, 2), consumers)
    assert_assignment([tp(topic1, 0)], assignment[consumer1])
    assert_assignment([tp(topic1, 1), tp(topic2, 0), tp(topic2, 1)], assignment[consumer2])
    assert_assignment([tp(topic1, 2)], assignment[consumer3])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_two_consumers_two_topics_six_partitions(bridge: AssignorBridge, rack_config: RackConfig) -> None:
    t = RangeTest(bridge)  # testTwoConsumersTwoTopicsSixPartitions
    t.initialize_racks(rack_config)
    consumers = {consumer1: t.subscription([topic1, topic2], 0), consumer2: t.subscription([topic1, topic2], 1)}
    assignment = t.assignor.assign_partitions(t.two_topics(3, 3), consumers)
    assert_assignment([tp(topic1, 0), tp(topic1, 1), tp(topic2, 0), tp(topic2, 1)], assignment[consumer1])
    assert_assignment([tp(topic1, 2), tp(topic2, 2)], assignment[consumer2])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_two_static_consumers_two_topics_six_partitions(bridge: AssignorBridge, rack_config: RackConfig) -> None:
    t = RangeTest(bridge)  # testTwoStaticConsumersTwoTopicsSixPartitions
    t.initialize_racks(rack_config)
    # although consumer high has a higher rank than consumer low, the comparison happens on instance id level.
    consumer_id_low, consumer_id_high = "consumer-b", "consumer-a"
    low = t.subscription([topic1, topic2], 0)
    low.group_instance_id = instance1
    high = t.subscription([topic1, topic2], 1)
    high.group_instance_id = instance2
    assignment = t.assignor.assign_partitions(t.two_topics(3, 3), {consumer_id_low: low, consumer_id_high: high})
    assert_assignment([tp(topic1, 0), tp(topic1, 1), tp(topic2, 0), tp(topic2, 1)], assignment[consumer_id_low])
    assert_assignment([tp(topic1, 2), tp(topic2, 2)], assignment[consumer_id_high])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_one_static_consumer_and_one_dynamic_consumer_two_topics_six_partitions(
    bridge: AssignorBridge, rack_config: RackConfig
) -> None:  # testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions
    t = RangeTest(bridge)
    t.initialize_racks(rack_config)
    # although consumer high has a higher rank than low, consumer low wins: it has an instance id.
    consumer_id_low, consumer_id_high = "consumer-b", "consumer-a"
    low = t.subscription([topic1, topic2], 0)
    low.group_instance_id = instance1
    consumers = {consumer_id_low: low, consumer_id_high: t.subscription([topic1, topic2], 1)}
    assignment = t.assignor.assign_partitions(t.two_topics(3, 3), consumers)
    assert_assignment([tp(topic1, 0), tp(topic1, 1), tp(topic2, 0), tp(topic2, 1)], assignment[consumer_id_low])
    assert_assignment([tp(topic1, 2), tp(topic2, 2)], assignment[consumer_id_high])


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_static_member_range_assignment_persistent(bridge: AssignorBridge, rack_config: RackConfig) -> None:
    t = RangeTest(bridge)  # testStaticMemberRangeAssignmentPersistent
    t.initialize_racks(rack_config, 5)
    ppt = t.two_topics(5, 4)
    consumers: dict[str, Subscription] = {}
    index = 0
    for member_id, instance_id in t.static_member_infos:
        s = t.subscription([topic1, topic2], index)
        index += 1
        s.group_instance_id = instance_id
        consumers[member_id] = s
    consumer4 = "consumer4"  # a dynamic member
    consumers[consumer4] = t.subscription([topic1, topic2], index)
    index += 1

    # Have 3 static members instance1, instance2, instance3 to be persistent across generations.
    expected = {
        consumer1: [tp(topic1, 0), tp(topic1, 1), tp(topic2, 0)],
        consumer2: [tp(topic1, 2), tp(topic2, 1)],
        consumer3: [tp(topic1, 3), tp(topic2, 2)],
        consumer4: [tp(topic1, 4), tp(topic2, 3)],
    }
    assert t.assignor.assign_partitions(ppt, consumers) == expected

    # Replace dynamic member 4 with a new dynamic member 5.
    del consumers[consumer4]
    consumer5 = "consumer5"
    consumers[consumer5] = t.subscription([topic1, topic2], index)
    del expected[consumer4]
    expected[consumer5] = [tp(topic1, 4), tp(topic2, 3)]
    assert t.assignor.assign_partitions(ppt, consumers) == expected


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_static_member_range_assignment_persistent_after_member_id_changes(
    bridge: AssignorBridge, rack_config: RackConfig
) -> None:  # testStaticMemberRangeAssignmentPersistentAfterMemberIdChanges
    t = RangeTest(bridge)
    t.initialize_racks(rack_config)
    ppt = t.two_topics(5, 5)
    consumers: dict[str, Subscription] = {}
    for index, (member_id, instance_id) in enumerate(t.static_member_infos):
        s = t.subscription([topic1, topic2], index)
        s.group_instance_id = instance_id
        consumers[member_id] = s
    expected = {
        instance1: [tp(topic1, 0), tp(topic1, 1), tp(topic2, 0), tp(topic2, 1)],
        instance2: [tp(topic1, 2), tp(topic1, 3), tp(topic2, 2), tp(topic2, 3)],
        instance3: [tp(topic1, 4), tp(topic2, 4)],
    }
    static_assignment = check_static_assignment(t.assignor, ppt, consumers)
    assert static_assignment == expected

    # Now switch the member.id fields for each member info, the assignment should stay the same.
    consumers["consumer4"] = consumers.pop(consumer3)
    consumers["consumer5"] = consumers.pop(consumer2)
    assert check_static_assignment(t.assignor, ppt, consumers) == static_assignment


def test_rack_aware_static_member_range_assignment_persistent_after_member_id_changes(bridge: AssignorBridge) -> None:
    t = RangeTest(bridge)  # testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges
    t.initialize_racks(RackConfig.BROKER_AND_CONSUMER_RACK)
    ppt = {topic1: partition_infos(5, 2, 3, 0), topic2: partition_infos(5, 2, 3, 0)}
    consumers: dict[str, Subscription] = {}
    for index, (member_id, instance_id) in enumerate(t.static_member_infos):
        # MemberInfo racks ALL_RACKS[0..2] are not used by the subscriptions: they take subscription(...)'s rack
        s = t.subscription([topic1, topic2], index)
        s.group_instance_id = instance_id
        consumers[member_id] = s
    expected = {
        instance1: [tp(topic1, 0), tp(topic1, 2), tp(topic2, 0), tp(topic2, 2)],
        instance2: [tp(topic1, 1), tp(topic1, 3), tp(topic2, 1), tp(topic2, 3)],
        instance3: [tp(topic1, 4), tp(topic2, 4)],
    }
    static_assignment = check_static_assignment(t.assignor, ppt, consumers)
    assert static_assignment == expected

    consumers["consumer4"] = consumers.pop(consumer3)
    consumers["consumer5"] = consumers.pop(consumer2)
    assert check_static_assignment(t.assignor, ppt, consumers) == static_assignment


def verify_non_rack_aware_assignment(
    assignor: JavaAssignor, topics: dict[str, int], consumer_topics: list[list[str]], non_rack_aware: list[str]
) -> None:
    """`RangeAssignorTest.verifyNonRackAwareAssignment`."""
    verify_rack_assignment(assignor, topics, 3, null_racks(3), racks(3), consumer_topics, None, non_rack_aware, -1)
    verify_rack_assignment(assignor, topics, 3, racks(3), null_racks(3), consumer_topics, None, non_rack_aware, -1)
    verify_rack_assignment(assignor, topics, 3, racks(3), racks(3), consumer_topics, None, non_rack_aware, 0)
    verify_rack_assignment(assignor, topics, 4, racks(4), racks(3), consumer_topics, None, non_rack_aware, 0)
    verify_rack_assignment(assignor, topics, 3, racks(3), ["d", "e", "f"], consumer_topics, None, non_rack_aware, -1)
    verify_rack_assignment(assignor, topics, 3, racks(3), [None, "e", "f"], consumer_topics, None, non_rack_aware, -1)
    assignor.prefer_rack_aware_logic = True
    verify_rack_assignment(assignor, topics, 3, racks(3), racks(3), consumer_topics, None, non_rack_aware, 0)
    assignor.prefer_rack_aware_logic = False


def test_rack_aware_assignment_with_uniform_subscription(bridge: AssignorBridge) -> None:
    a = RangeTest(bridge).assignor  # testRackAwareAssignmentWithUniformSubscription
    topics = {"t1": 6, "t2": 7, "t3": 2}
    all_topics = ["t1", "t2", "t3"]
    consumer_topics = [all_topics, all_topics, all_topics]
    verify_non_rack_aware_assignment(
        a,
        topics,
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"],
    )
    # Best-effort rack-aware assignment for lower replication factor where racks have a subset of partitions.
    verify_rack_assignment(
        a,
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        None,
        ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"],
        0,
    )
    verify_rack_assignment(
        a,
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        None,
        ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"],
        1,
    )
    # One consumer on a rack with no partitions
    verify_rack_assignment(
        a,
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        None,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"],
        4,
    )


def test_rack_aware_assignment_with_non_equal_subscription(bridge: AssignorBridge) -> None:
    a = RangeTest(bridge).assignor  # testRackAwareAssignmentWithNonEqualSubscription
    topics = {"t1": 6, "t2": 7, "t3": 2}
    all_topics = ["t1", "t2", "t3"]
    consumer_topics = [all_topics, all_topics, ["t1", "t3"]]
    verify_non_rack_aware_assignment(
        a,
        topics,
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"],
    )
    verify_rack_assignment(
        a,
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        None,
        ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"],
        2,
    )
    verify_rack_assignment(
        a,
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        None,
        ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"],
        0,
    )
    # One consumer on a rack with no partitions
    verify_rack_assignment(
        a,
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        None,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"],
        2,
    )


def test_rack_aware_assignment_with_uniform_partitions(bridge: AssignorBridge) -> None:
    a = RangeTest(bridge).assignor  # testRackAwareAssignmentWithUniformPartitions
    topics = {"t1": 5, "t2": 5, "t3": 5}
    all_topics = ["t1", "t2", "t3"]
    consumer_topics = [all_topics, all_topics, all_topics]
    non_rack_aware = ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"]
    verify_non_rack_aware_assignment(a, topics, consumer_topics, non_rack_aware)
    # Co-partitioning is prioritized over rack-alignment
    verify_rack_assignment(a, topics, 1, racks(3), racks(3), consumer_topics, None, non_rack_aware, 10)
    verify_rack_assignment(a, topics, 2, racks(3), racks(3), consumer_topics, None, non_rack_aware, 5)
    verify_rack_assignment(a, topics, 3, racks(2), racks(3), consumer_topics, None, non_rack_aware, 3)


def test_rack_aware_assignment_with_uniform_partitions_non_equal_subscription(bridge: AssignorBridge) -> None:
    a = RangeTest(bridge).assignor  # testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription
    topics = {"t1": 5, "t2": 5, "t3": 5}
    all_topics = ["t1", "t2", "t3"]
    consumer_topics = [all_topics, all_topics, ["t1", "t3"]]
    verify_non_rack_aware_assignment(
        a,
        topics,
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"],
    )
    # Co-partitioning is prioritized over rack-alignment for topics with equal subscriptions
    verify_rack_assignment(
        a,
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        None,
        ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"],
        9,
    )
    verify_rack_assignment(
        a,
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        None,
        ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"],
        0,
    )
    # One consumer on a rack with no partitions
    verify_rack_assignment(
        a,
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        None,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"],
        2,
    )


def test_rack_aware_assignment_with_co_partitioning(bridge: AssignorBridge) -> None:
    a = RangeTest(bridge).assignor  # testRackAwareAssignmentWithCoPartitioning
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    consumer_topics = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    consumer_racks: list[str | None] = [ALL_RACKS[0], ALL_RACKS[1], ALL_RACKS[1], ALL_RACKS[0]]
    non_rack_aware = [
        "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
        "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
        "t3-0, t4-0",
        "t3-1, t4-1",
    ]
    verify_rack_assignment(a, topics, 3, racks(2), consumer_racks, consumer_topics, None, non_rack_aware, -1)
    verify_rack_assignment(a, topics, 3, racks(2), consumer_racks, consumer_topics, None, non_rack_aware, -1)
    verify_rack_assignment(a, topics, 2, racks(2), consumer_racks, consumer_topics, None, non_rack_aware, 0)
    verify_rack_assignment(
        a,
        topics,
        1,
        racks(2),
        consumer_racks,
        consumer_topics,
        None,
        ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"],
        0,
    )

    all_topics = ["t1", "t2", "t3", "t4"]
    consumer_topics = [all_topics, all_topics, all_topics, all_topics]
    non_rack_aware = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
        "t1-4, t2-4",
        "t1-5, t2-5",
    ]
    verify_rack_assignment(a, topics, 3, racks(2), consumer_racks, consumer_topics, None, non_rack_aware, -1)
    verify_rack_assignment(a, topics, 3, racks(2), consumer_racks, consumer_topics, None, non_rack_aware, -1)
    verify_rack_assignment(a, topics, 2, racks(2), consumer_racks, consumer_topics, None, non_rack_aware, 0)
    verify_rack_assignment(
        a,
        topics,
        1,
        racks(2),
        consumer_racks,
        consumer_topics,
        None,
        ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1", "t1-5, t2-5", "t1-4, t2-4"],
        0,
    )
    verify_rack_assignment(
        a,
        topics,
        1,
        racks(3),
        consumer_racks,
        consumer_topics,
        None,
        ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"],
        6,
    )


def test_co_partitioned_assignment_with_same_subscription(bridge: AssignorBridge) -> None:
    a = RangeTest(bridge).assignor  # testCoPartitionedAssignmentWithSameSubscription
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
    topic_list = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]
    consumer_topics = [topic_list, topic_list, topic_list]
    consumer_racks: list[str | None] = [ALL_RACKS[0], ALL_RACKS[1], ALL_RACKS[2]]
    non_rack_aware = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
    ]
    verify_rack_assignment(a, topics, 3, null_racks(3), consumer_racks, consumer_topics, None, non_rack_aware, -1)
    a.prefer_rack_aware_logic = True
    verify_rack_assignment(a, topics, 3, racks(3), consumer_racks, consumer_topics, None, non_rack_aware, 0)
    rack_aware = [
        "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
        "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3",
    ]
    verify_rack_assignment(a, topics, 2, racks(3), consumer_racks, consumer_topics, None, rack_aware, 0)
