"""Kafka's assignor test fixtures, ported so its test cases read (and run) as they do in Java.

Mirrors of `AbstractPartitionAssignorTest` (racks, `partitionInfos`, `verifyRackAssignment`) and
`AbstractStickyAssignorTest` (subscription builders, `verifyValidityAndBalance`,
`isFullyBalanced`, canonical names) from apache/kafka 3.9. `JavaAssignor` stands for the one
assignor instance a Java test holds: `assign_partitions` sends its subscriptions through the
bridge (the leader's path: each subscription serialized at protocol v3 and decoded again) and
returns the single rebalance Kafka's `assignPartitions` computes, with the state Java tests
inspect (`partitionsTransferringOwnership`, `isSticky()`, `preferRackAwareLogic`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

from kafka_ops.assignors import AssignorBridge, ClusterLayout, GroupInput, KafkaTestHooks, Member, protocol
from kafka_ops.model.groups import TopicPartition

ALL_RACKS = ("a", "b", "c", "d", "e", "f")
DEFAULT_GENERATION = -1

Assignment = dict[str, list[TopicPartition]]


class RackConfig(Enum):
    NO_BROKER_RACK = "NO_BROKER_RACK"
    NO_CONSUMER_RACK = "NO_CONSUMER_RACK"
    BROKER_AND_CONSUMER_RACK = "BROKER_AND_CONSUMER_RACK"


RACK_CONFIGS = list(RackConfig)


def tp(topic: str, partition: int) -> TopicPartition:
    return (topic, partition)


def racks(num_racks: int) -> list[str | None]:
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(num_racks)]


def null_racks(num_racks: int) -> list[str | None]:
    return [None] * num_racks


@dataclass
class Subscription:
    """`ConsumerPartitionAssignor.Subscription` as a Java test builds it (before serialization)."""

    topics: list[str]
    user_data: bytes | None = None
    owned: list[TopicPartition] = field(default_factory=list)
    generation: int = DEFAULT_GENERATION
    rack: str | None = None
    group_instance_id: str | None = None


@dataclass(frozen=True)
class Topic:
    """A topic's `List<PartitionInfo>`: replica broker ids per partition, and those brokers' racks."""

    replicas: tuple[tuple[int, ...], ...]
    brokers: Mapping[int, str | None]

    def __len__(self) -> int:
        return len(self.replicas)


PartitionsPerTopic = dict[str, Topic]


def partition_infos_on(
    num_partitions: int, replication_factor: int, broker_racks: Sequence[str | None], next_node_index: int
) -> Topic:
    """`AbstractPartitionAssignorTest.partitionInfos(topic, n, rf, brokerRacks, nextNodeIndex)`."""
    num_brokers = len(broker_racks)
    shapes = [
        tuple((start + j) % num_brokers for j in range(replication_factor)) for start in range(num_brokers)
    ]  # only num_brokers distinct replica lists exist: share them
    replicas = tuple(shapes[(i + next_node_index) % num_brokers] for i in range(num_partitions))
    return Topic(replicas, dict(enumerate(broker_racks)))


def partition_infos(num_partitions: int, replication_factor: int, num_broker_racks: int, next_node_index: int) -> Topic:
    """`AbstractPartitionAssignorTest.partitionInfos(topic, n, rf, numBrokerRacks, nextNodeIndex)`."""
    num_brokers = replication_factor if num_broker_racks <= 0 else num_broker_racks * replication_factor
    broker_racks = [None if num_broker_racks <= 0 else ALL_RACKS[i % num_broker_racks] for i in range(num_brokers)]
    return partition_infos_on(num_partitions, replication_factor, broker_racks, next_node_index)


def without_racks(counts: Mapping[str, int]) -> PartitionsPerTopic:
    """`AbstractPartitionAssignor.partitionInfosWithoutRacks`: partitions with no replica nodes."""
    return {t: Topic(((),) * n, {}) for t, n in counts.items()}


def cluster_of(partitions_per_topic: PartitionsPerTopic) -> ClusterLayout:
    brokers: dict[int, str | None] = {}
    for name, t in partitions_per_topic.items():
        for broker, rack in t.brokers.items():
            if brokers.setdefault(broker, rack) != rack:
                raise AssertionError(f"topic {name}: broker {broker} has rack {rack}, elsewhere {brokers[broker]}")
    return ClusterLayout(brokers, {name: t.replicas for name, t in partitions_per_topic.items()})


class JavaAssignor:
    """The assignor instance a Kafka test holds (a fresh one per test method)."""

    def __init__(self, bridge: AssignorBridge, name: Literal["range", "roundrobin", "sticky", "cooperative-sticky"]):
        self.bridge = bridge
        self.name = name
        self.prefer_rack_aware_logic = False
        self.partitions_transferring_ownership: dict[TopicPartition, str] | None = None
        self._sticky: bool | None = None
        self.assign_seconds = 0.0  # time spent inside Kafka's assign(), summed over calls
        # StickyAssignor / CooperativeStickyAssignor's own member state (onAssignment)
        self.member_assignment: list[TopicPartition] | None = None
        self.generation = DEFAULT_GENERATION

    def assign_partitions(
        self, partitions_per_topic: PartitionsPerTopic, subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        """`assignor.assignPartitions(partitionsPerTopic, subscriptions)`: one rebalance."""
        group = GroupInput(
            tuple(
                Member(
                    member_id,
                    tuple(s.topics),
                    tuple(s.owned),
                    s.generation,
                    s.group_instance_id,
                    s.rack,
                    s.user_data,
                )
                for member_id, s in subscriptions.items()
            )
        )
        sticky = self.name in ("sticky", "cooperative-sticky")
        hooks = KafkaTestHooks(prefer_rack_aware_logic=self.prefer_rack_aware_logic, check_sticky=sticky)
        result = self.bridge.assign(group, cluster_of(partitions_per_topic), self.name, settle=False, hooks=hooks)
        assert len(result.rounds) == 1
        first = result.first_round
        self.assign_seconds += first.assign_seconds
        self.partitions_transferring_ownership = None if first.transferring is None else dict(first.transferring)
        self._sticky = first.sticky
        return {member: list(parts) for member, parts in first.assignment.items()}

    def is_sticky(self) -> bool:
        assert self._sticky is not None, "isSticky() read before any sticky assignment"
        return self._sticky

    def on_assignment(self, partitions: Sequence[TopicPartition], generation: int) -> None:
        self.member_assignment = list(partitions)
        self.generation = generation

    def subscription_user_data(self) -> bytes | None:
        """`subscriptionUserData(topics)` from this instance's state (cross-checked against Java)."""
        if self.name == "cooperative-sticky":
            return protocol.encode_cooperative_user_data(self.generation)
        if self.name == "sticky" and self.member_assignment is not None:
            return protocol.encode_sticky_user_data(self.member_assignment, self.generation)
        return None


def group_of(subscriptions: Mapping[str, Subscription]) -> GroupInput:
    """The members a leader would decode from these subscriptions (each sent at protocol v3)."""
    return GroupInput(
        tuple(
            Member(member_id, tuple(s.topics), tuple(s.owned), s.generation, s.group_instance_id, s.rack, s.user_data)
            for member_id, s in subscriptions.items()
        )
    )


def to_sorted_string(partitions: Sequence[TopicPartition]) -> str:
    return ", ".join(sorted(f"{t}-{p}" for t, p in partitions))


def _parse_owned(owned: Sequence[str] | None, num_consumers: int) -> list[list[TopicPartition]]:
    out: list[list[TopicPartition]] = []
    for i in range(num_consumers):
        if owned is None or len(owned) <= i:
            out.append([])
            continue
        parts = []
        for name in owned[i].split(", "):
            topic, _, p = name.rpartition("-")
            parts.append((topic, int(p)))
        out.append(parts)
    return out


def verify_rack_assignment(
    assignor: JavaAssignor,
    num_partitions_per_topic: Mapping[str, int],
    replication_factor: int,
    broker_racks: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    consumer_topics: Sequence[Sequence[str]],
    consumer_owned_partitions: Sequence[str] | None,
    expected_assignments: Sequence[str],
    num_partitions_with_rack_mismatch: int,
) -> None:
    """`AbstractPartitionAssignorTest.verifyRackAssignment` (both overloads: pass owned=None)."""
    consumers = [f"consumer{i}" for i in range(len(consumer_racks))]
    owned = _parse_owned(consumer_owned_partitions, len(consumer_topics))
    subscriptions = {
        consumers[i]: Subscription(list(consumer_topics[i]), None, owned[i], DEFAULT_GENERATION, consumer_racks[i])
        for i in range(len(consumer_topics))
    }
    partitions_per_topic: PartitionsPerTopic = {}
    next_index = 0
    for topic, n in num_partitions_per_topic.items():
        partitions_per_topic[topic] = partition_infos_on(n, replication_factor, broker_racks, next_index)
        next_index += n

    assignment = assignor.assign_partitions(partitions_per_topic, subscriptions)
    actual = {c: to_sorted_string(parts) for c, parts in assignment.items()}
    expected = dict(zip(consumers, expected_assignments, strict=True))
    assert actual == expected, f"assignment {actual} != expected {expected}"

    if num_partitions_with_rack_mismatch >= 0:
        mismatched = []
        for consumer, rack in zip(consumers, consumer_racks, strict=True):
            if rack is None:
                continue
            for topic, p in assignment[consumer]:
                t = partitions_per_topic[topic]
                if all(t.brokers.get(b) != rack for b in t.replicas[p]):
                    mismatched.append((topic, p))
        assert len(mismatched) == num_partitions_with_rack_mismatch, f"Partitions with rack mismatch {mismatched}"


def is_fully_balanced(assignment: Mapping[str, Sequence[TopicPartition]]) -> bool:
    sizes = [len(parts) for parts in assignment.values()]
    return not sizes or max(sizes) - min(sizes) <= 1


def canonical_name(prefix: str, i: int, max_num: int) -> str:
    return prefix + str(i).zfill(len(str(max_num)))


def topic_name(i: int, max_num: int) -> str:
    return canonical_name("t", i, max_num)


def consumer_name(i: int, max_num: int) -> str:
    return canonical_name("c", i, max_num)


class StickyTest:
    """One `AbstractStickyAssignorTest` instance for `flavor` (StickyAssignorTest or
    CooperativeStickyAssignorTest): its fields, builders and verification, per Java subclass."""

    consumer_id = "consumer"
    consumer1, consumer2, consumer3, consumer4 = "consumer1", "consumer2", "consumer3", "consumer4"
    topic, topic1, topic2, topic3 = "topic", "topic1", "topic2", "topic3"
    group_id = "group"
    generation_id = 1

    def __init__(self, bridge: AssignorBridge, flavor: Literal["sticky", "cooperative-sticky"]) -> None:
        self.bridge = bridge
        self.flavor = flavor
        self.assignor = self.create_assignor()
        self.subscriptions: dict[str, Subscription] = {}
        self.num_broker_racks = 0
        self.has_consumer_rack = False
        self.replication_factor = 2
        self.next_partition_index = 0
        self.tp0, self.tp1, self.tp2 = tp(self.topic, 0), tp(self.topic, 1), tp(self.topic, 2)

    @property
    def cooperative(self) -> bool:
        return self.flavor == "cooperative-sticky"

    def create_assignor(self) -> JavaAssignor:
        return JavaAssignor(self.bridge, self.flavor)

    def initialize_racks(self, rack_config: RackConfig) -> None:
        self.replication_factor = 3
        self.num_broker_racks = 3 if rack_config != RackConfig.NO_BROKER_RACK else 0
        self.has_consumer_rack = rack_config != RackConfig.NO_CONSUMER_RACK
        self.assignor.prefer_rack_aware_logic = True

    def partition_infos(self, topic: str, num_partitions: int) -> Topic:
        index = self.next_partition_index
        self.next_partition_index += 1
        return partition_infos(num_partitions, self.replication_factor, self.num_broker_racks, index)

    def consumer_rack_id(self, consumer_index: int) -> str | None:
        if not self.has_consumer_rack:
            return None
        num_racks = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        if consumer_index < 0:  # Java: ALL_RACKS[-1 % n] is an ArrayIndexOutOfBoundsException
            raise IndexError(f"rack index {consumer_index}")
        return ALL_RACKS[consumer_index % num_racks]

    def subscription(self, topics: Sequence[str], consumer_index: int) -> Subscription:
        return Subscription(list(topics), None, [], DEFAULT_GENERATION, self.consumer_rack_id(consumer_index))

    # -- the subclass builders (StickyAssignorTest / CooperativeStickyAssignorTest)

    def build_subscription_v0(
        self, topics: Sequence[str], partitions: Sequence[TopicPartition], generation: int, consumer_index: int
    ) -> Subscription | None:
        if self.cooperative:
            return None  # cooperative sticky assignor only supports ConsumerProtocolSubscription V1 or above
        data = protocol.encode_sticky_user_data(partitions, generation)
        return Subscription(list(topics), data, [], DEFAULT_GENERATION, self.consumer_rack_id(consumer_index))

    def build_subscription_v1(
        self, topics: Sequence[str], partitions: Sequence[TopicPartition], generation: int, consumer_index: int
    ) -> Subscription:
        if self.cooperative:
            self.assignor.on_assignment(partitions, generation)
            return Subscription(
                list(topics), self.assignor.subscription_user_data(), list(partitions), DEFAULT_GENERATION
            )
        data = protocol.encode_sticky_user_data(partitions, generation)
        return Subscription(list(topics), data, list(partitions), DEFAULT_GENERATION, None)

    def build_subscription_v2_above(
        self, topics: Sequence[str], partitions: Sequence[TopicPartition], generation: int, consumer_index: int
    ) -> Subscription:
        if self.cooperative:
            return Subscription(
                list(topics),
                self.assignor.subscription_user_data(),
                list(partitions),
                generation,
                self.consumer_rack_id(consumer_index),
            )
        data = protocol.encode_sticky_user_data(partitions, generation)
        return Subscription(list(topics), data, list(partitions), generation, None)

    def generate_user_data(
        self, topics: Sequence[str], partitions: Sequence[TopicPartition], generation: int
    ) -> bytes | None:
        if self.cooperative:
            # CooperativeStickyAssignorTest passes the test's generationId, not `generation`
            self.assignor.on_assignment(partitions, self.generation_id)
            return self.assignor.subscription_user_data()
        return protocol.encode_sticky_user_data(partitions, generation)

    # -- verification

    def verify_validity_and_balance(
        self, subscriptions: dict[str, Subscription], assignments: Assignment, partitions_per_topic: PartitionsPerTopic
    ) -> int:
        """Returns the number of follow-up rebalances the cooperative flavor ran (0 for sticky)."""
        rebalances = 0
        if self.cooperative:
            # CooperativeStickyAssignorTest: partitions being revoked mean a follow-up rebalance;
            # run it (the test updates both maps in place) and check the final assignment.
            while self._verify_cooperative_validity(subscriptions, assignments):
                for consumer, parts in assignments.items():
                    old = subscriptions[consumer]
                    rack_index = ALL_RACKS.index(old.rack) if old.rack is not None else -1
                    subscriptions[consumer] = self.build_subscription_v2_above(
                        old.topics, parts, self.generation_id, rack_index
                    )
                new = self.assignor.assign_partitions(partitions_per_topic, subscriptions)
                assignments.clear()
                assignments.update(new)
                rebalances += 1
                assert rebalances <= 4
        verify_validity_and_balance(subscriptions, assignments)
        return rebalances

    @staticmethod
    def _verify_cooperative_validity(subscriptions: Mapping[str, Subscription], assignments: Assignment) -> bool:
        added: set[TopicPartition] = set()
        revoked: set[TopicPartition] = set()
        for consumer, assigned in assignments.items():
            owned = set(subscriptions[consumer].owned)
            revoked |= owned - set(assigned)
            added |= set(assigned) - owned
        assert not added & revoked, (
            f"Some partitions were assigned to a new consumer during the same rebalance they are being "
            f"revoked from their previous owner. Partitions: {added & revoked}"
        )
        return bool(revoked)


def verify_validity_and_balance(subscriptions: Mapping[str, Subscription], assignments: Assignment) -> None:
    """`AbstractStickyAssignorTest.verifyValidityAndBalance`: every partition assigned to a subscriber
    of its topic and to one member only; members 2+ partitions apart share no topic."""
    size = len(subscriptions)
    assert size == len(assignments)
    consumers = sorted(assignments)
    for i, consumer in enumerate(consumers):
        partitions = assignments[consumer]
        for topic, p in partitions:
            assert topic in subscriptions[consumer].topics, (
                f"Partition {topic}-{p} is assigned to c{i}, but it is not subscribed to Topic t{topic}"
            )
        for j in range(i + 1, size):
            other = assignments[consumers[j]]
            common = set(partitions) & set(other)
            assert not common, f"Consumers c{i} and c{j} have common partitions assigned to them: {common}"
            if abs(len(partitions) - len(other)) <= 1:
                continue
            other_topics = {t for t, _ in other}
            for topic in {t for t, _ in partitions}:
                assert topic not in other_topics, (
                    f"Some partitions can be moved from c{i if len(partitions) > len(other) else j} to "
                    f"c{j if len(partitions) > len(other) else i} to achieve a better balance: "
                    f"c{i} has {len(partitions)} partitions, and c{j} has {len(other)} partitions."
                )
