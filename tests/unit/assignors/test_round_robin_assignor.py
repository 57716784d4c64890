"""Kafka's `RoundRobinAssignorTest` (apache/kafka 3.9), every case, run through the bridge.

The Java tests call `assign(Map<String, Integer>, subscriptions)`: partitions without replica
nodes, which `without_racks` reproduces (`AbstractPartitionAssignor.partitionInfosWithoutRacks`).
"""

from __future__ import annotations

import pytest

from kafka_ops.assignors import AssignorBridge
from tests.unit.assignors.kafka_harness import Assignment, JavaAssignor, Subscription, tp, without_racks
from tests.unit.assignors.test_range_assignor import check_static_assignment

topic, consumer_id = "topic", "consumer"
topic1, topic2 = "topic1", "topic2"


@pytest.fixture
def assignor(bridge: AssignorBridge) -> JavaAssignor:
    return JavaAssignor(bridge, "roundrobin")


def static(topics: list[str], instance_id: str) -> Subscription:
    return Subscription(topics, group_instance_id=instance_id)


def test_one_consumer_no_topic(assignor: JavaAssignor) -> None:  # testOneConsumerNoTopic
    assignment = assignor.assign_partitions({}, {consumer_id: Subscription([])})
    assert set(assignment) == {consumer_id}
    assert assignment[consumer_id] == []


def test_one_consumer_nonexistent_topic(assignor: JavaAssignor) -> None:  # testOneConsumerNonexistentTopic
    assignment = assignor.assign_partitions({}, {consumer_id: Subscription([topic])})
    assert set(assignment) == {consumer_id}
    assert assignment[consumer_id] == []


def test_one_consumer_one_topic(assignor: JavaAssignor) -> None:  # testOneConsumerOneTopic
    assignment = assignor.assign_partitions(without_racks({topic: 3}), {consumer_id: Subscription([topic])})
    assert assignment[consumer_id] == [tp(topic, 0), tp(topic, 1), tp(topic, 2)]


def test_only_assigns_partitions_from_subscribed_topics(assignor: JavaAssignor) -> None:
    ppt = without_racks({topic: 3, "other": 3})  # testOnlyAssignsPartitionsFromSubscribedTopics
    assignment = assignor.assign_partitions(ppt, {consumer_id: Subscription([topic])})
    assert assignment[consumer_id] == [tp(topic, 0), tp(topic, 1), tp(topic, 2)]


def test_one_consumer_multiple_topics(assignor: JavaAssignor) -> None:  # testOneConsumerMultipleTopics
    ppt = without_racks({topic1: 1, topic2: 2})
    assignment = assignor.assign_partitions(ppt, {consumer_id: Subscription([topic1, topic2])})
    assert assignment[consumer_id] == [tp(topic1, 0), tp(topic2, 0), tp(topic2, 1)]


def test_two_consumers_one_topic_one_partition(assignor: JavaAssignor) -> None:
    consumers = {"consumer1": Subscription([topic]), "consumer2": Subscription([topic])}
    assignment = assignor.assign_partitions(without_racks({topic: 1}), consumers)
    assert assignment["consumer1"] == [tp(topic, 0)]  # testTwoConsumersOneTopicOnePartition
    assert assignment["consumer2"] == []


def test_two_consumers_one_topic_two_partitions(assignor: JavaAssignor) -> None:
    consumers = {"consumer1": Subscription([topic]), "consumer2": Subscription([topic])}
    assignment = assignor.assign_partitions(without_racks({topic: 2}), consumers)
    assert assignment["consumer1"] == [tp(topic, 0)]  # testTwoConsumersOneTopicTwoPartitions
    assert assignment["consumer2"] == [tp(topic, 1)]


def test_multiple_consumers_mixed_topics(assignor: JavaAssignor) -> None:  # testMultipleConsumersMixedTopics
    consumers = {
        "consumer1": Subscription([topic1]),
        "consumer2": Subscription([topic1, topic2]),
        "consumer3": Subscription([topic1]),
    }
    assignment = assignor.assign_partitions(without_racks({topic1: 3, topic2: 2}), consumers)
    assert assignment["consumer1"] == [tp(topic1, 0)]
    assert assignment["consumer2"] == [tp(topic1, 1), tp(topic2, 0), tp(topic2, 1)]
    assert assignment["consumer3"] == [tp(topic1, 2)]


def test_two_dynamic_consumers_two_topics_six_partitions(assignor: JavaAssignor) -> None:
    consumers = {"consumer1": Subscription([topic1, topic2]), "consumer2": Subscription([topic1, topic2])}
    assignment = assignor.assign_partitions(without_racks({topic1: 3, topic2: 3}), consumers)
    assert assignment["consumer1"] == [tp(topic1, 0), tp(topic1, 2), tp(topic2, 1)]  # testTwoDynamic...
    assert assignment["consumer2"] == [tp(topic1, 1), tp(topic2, 0), tp(topic2, 2)]


def test_two_static_consumers_two_topics_six_partitions(assignor: JavaAssignor) -> None:
    # although consumer 2 has a higher rank than 1, the comparison happens on instance id level.
    consumer1, consumer2 = "consumer-b", "consumer-a"  # testTwoStaticConsumersTwoTopicsSixPartitions
    consumers = {consumer1: static([topic1, topic2], "instance1"), consumer2: static([topic1, topic2], "instance2")}
    assignment = assignor.assign_partitions(without_racks({topic1: 3, topic2: 3}), consumers)
    assert assignment[consumer1] == [tp(topic1, 0), tp(topic1, 2), tp(topic2, 1)]
    assert assignment[consumer2] == [tp(topic1, 1), tp(topic2, 0), tp(topic2, 2)]


def test_one_static_consumer_and_one_dynamic_consumer_two_topics_six_partitions(assignor: JavaAssignor) -> None:
    # although consumer 2 has a higher rank than 1, consumer 1 wins: it has an instance id and 2 has not.
    consumer1, consumer2 = "consumer-b", "consumer-a"  # testOneStaticConsumerAndOneDynamicConsumer...
    consumers = {consumer1: static([topic1, topic2], "instance1"), consumer2: Subscription([topic1, topic2])}
    assignment = assignor.assign_partitions(without_racks({topic1: 3, topic2: 3}), consumers)
    assert assignment[consumer1] == [tp(topic1, 0), tp(topic1, 2), tp(topic2, 1)]
    assert assignment[consumer2] == [tp(topic1, 1), tp(topic2, 0), tp(topic2, 2)]


def test_static_member_round_robin_assignment_persistent(assignor: JavaAssignor) -> None:
    # Have 3 static members instance1, instance2, instance3 to be persistent across generations.
    ppt = without_racks({topic1: 3, topic2: 3})  # testStaticMemberRoundRobinAssignmentPersistent
    consumers = {f"consumer{i}": static([topic1, topic2], f"instance{i}") for i in (1, 2, 3)}
    consumers["consumer4"] = Subscription([topic1, topic2])  # a dynamic member
    expected: Assignment = {
        "consumer1": [tp(topic1, 0), tp(topic2, 1)],
        "consumer2": [tp(topic1, 1), tp(topic2, 2)],
        "consumer3": [tp(topic1, 2)],
        "consumer4": [tp(topic2, 0)],
    }
    assert assignor.assign_partitions(ppt, consumers) == expected

    # Replace dynamic member 4 with a new dynamic member 5.
    del consumers["consumer4"]
    consumers["consumer5"] = Subscription([topic1, topic2])
    del expected["consumer4"]
    expected["consumer5"] = [tp(topic2, 0)]
    assert assignor.assign_partitions(ppt, consumers) == expected


def test_static_member_round_robin_assignment_persistent_after_member_id_changes(assignor: JavaAssignor) -> None:
    ppt = without_racks({topic1: 5, topic2: 5})  # testStaticMemberRoundRobinAssignmentPersistentAfterMemberIdChanges
    expected = {
        "instance1": [tp(topic1, 0), tp(topic1, 3), tp(topic2, 1), tp(topic2, 4)],
        "instance2": [tp(topic1, 1), tp(topic1, 4), tp(topic2, 2)],
        "instance3": [tp(topic1, 2), tp(topic2, 0), tp(topic2, 3)],
    }
    # Java fills `consumers` from a HashMap of member id -> instance id: iteration order consumer1..3
    consumers = {f"consumer{i}": static([topic1, topic2], f"instance{i}") for i in (1, 2, 3)}
    static_assignment = check_static_assignment(assignor, ppt, consumers)
    assert static_assignment == expected

    # Now switch the member.id fields for each member info, the assignment should stay the same.
    consumers["consumer4"] = consumers.pop("consumer3")
    consumers["consumer5"] = consumers.pop("consumer2")
    assert check_static_assignment(assignor, ppt, consumers) == static_assignment
