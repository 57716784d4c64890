"""Kafka's group-coordinator assignor test fixtures, ported so its test cases read as in Java.

Mirrors of `AssignmentTestUtil` (`mkAssignment`, `mkTopicAssignment`, `assertAssignment`), the
topic metadata Kafka's tests build (`MetadataImageBuilder().addTopic(id, name, partitions)` or a
map of `TopicMetadata`), and `MemberSubscriptionAndAssignmentImpl`. `ServerAssignor` stands for the
assignor instance a Java test holds: `assign` sends the members through the bridge with the topic
ids the test chose (Kafka's assignors order topics by id in places), the subscription type the
test passes, and the member order of the test's map (`TreeMap`: sorted; `HashMap`: Java's).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from kafka_ops.assignors import AssignorBridge, ClusterLayout
from kafka_ops.assignors.server import (
    ConsumerGroupInput,
    ConsumerMember,
    ServerAssignorName,
    ServerTestHooks,
)

Uuid = str
MemberAssignment = dict[Uuid, set[int]]
GroupAssignment = dict[str, MemberAssignment]

HOMOGENEOUS: Literal["HOMOGENEOUS"] = "HOMOGENEOUS"
HETEROGENEOUS: Literal["HETEROGENEOUS"] = "HETEROGENEOUS"
EMPTY: MemberAssignment = {}


def uuid_of(name: str) -> Uuid:
    """A Kafka topic id (`Uuid.toString`: 16 bytes, url-safe base64 without padding) fixed by `name`,
    for Java tests that draw `Uuid.randomUuid()`."""
    return base64.urlsafe_b64encode(hashlib.md5(name.encode()).digest()).decode().rstrip("=")


def mk_topic_assignment(topic_id: Uuid, *partitions: int) -> tuple[Uuid, set[int]]:
    return topic_id, set(partitions)


def mk_assignment(*entries: tuple[Uuid, set[int]]) -> MemberAssignment:
    """`mkAssignment`: a HashMap (the bridge sends it as one)."""
    return dict(entries)


class OrderedAssignment(dict[Uuid, set[int]]):
    """`mkOrderedAssignment`: a LinkedHashMap, whose order the uniform assignor's result follows."""


def mk_ordered_assignment(*entries: tuple[Uuid, set[int]]) -> MemberAssignment:
    return OrderedAssignment(entries)


@dataclass
class MemberSpec:
    """`MemberSubscriptionAndAssignmentImpl(rackId, instanceId, subscribedTopicIds, assignment)`."""

    rack: str | None
    instance_id: str | None
    subscribed: set[Uuid]
    assignment: MemberAssignment = field(default_factory=dict)


@dataclass
class Metadata:
    """The topics a Java test's metadata image (or `TopicMetadata` map) holds: id -> (name, partitions)."""

    topics: dict[Uuid, tuple[str, int]] = field(default_factory=dict)

    def add_topic(self, topic_id: Uuid, name: str, partitions: int) -> Metadata:
        self.topics[topic_id] = (name, partitions)
        return self


class PartitionAssignorException(Exception):
    """Kafka's assignor threw `PartitionAssignorException` (its message is in the bridge's answer)."""


class ServerAssignor:
    def __init__(self, bridge: AssignorBridge, name: ServerAssignorName) -> None:
        self.bridge = bridge
        self.name = name

    def assign(
        self,
        members: Mapping[str, MemberSpec],
        subscription_type: Literal["HOMOGENEOUS", "HETEROGENEOUS"],
        metadata: Metadata,
        member_map: Literal["TreeMap", "HashMap", "LinkedHashMap"] = "TreeMap",
    ) -> GroupAssignment:
        """`assignor.assign(new GroupSpecImpl(members, type, invertedTargetAssignment(members)), describer)`,
        the members in a map of the test's kind (a LinkedHashMap keeps `members`' order)."""
        known = {topic_id: name for topic_id, (name, _) in metadata.topics.items()}
        # A topic id the metadata lacks travels under its id as its name (the bridge keeps it as Java does).
        name_of = {**{t: t for m in members.values() for t in (*m.subscribed, *m.assignment)}, **known}
        order = sorted(members) if member_map == "TreeMap" else list(members)
        given = member_map != "HashMap"
        group = ConsumerGroupInput(
            tuple(
                ConsumerMember(
                    member_id,
                    tuple(sorted(name_of[t] for t in members[member_id].subscribed)),
                    tuple(
                        (name_of[t], p) for t, ps in sorted(members[member_id].assignment.items()) for p in sorted(ps)
                    ),
                    instance_id=members[member_id].instance_id,
                    rack=members[member_id].rack,
                )
                for member_id in order
            )
        )
        cluster = ClusterLayout.of_partition_counts({name: n for name, n in metadata.topics.values()})
        hooks = ServerTestHooks(
            member_order="given" if given else "hash",
            subscription_type=subscription_type,
            keep_unknown_topics=True,
            ordered_assignments=frozenset(m for m, s in members.items() if isinstance(s.assignment, OrderedAssignment)),
        )
        (result,) = self.bridge.server_assign_many(
            cluster, [(group, self.name)], topic_ids={name: t for t, name in known.items()}, hooks=hooks
        )
        if not hasattr(result, "assignment"):
            raise PartitionAssignorException(getattr(result, "message", str(result)))
        id_of = {name: t for t, name in name_of.items()}
        out: GroupAssignment = {}
        for member_id, partitions in result.assignment.items():
            mine: MemberAssignment = out.setdefault(member_id, {})
            for topic, p in partitions:
                mine.setdefault(id_of[topic], set()).add(p)
        return out


def assert_assignment(expected: Mapping[str, MemberAssignment], computed: GroupAssignment) -> None:
    """`AssignmentTestUtil.assertAssignment`: as many members, each with exactly its expected partitions."""
    assert len(expected) == len(computed), (expected, computed)
    for member_id, partitions in computed.items():
        assert expected.get(member_id) == partitions, (member_id, expected.get(member_id), partitions)


def check_validity_and_balance(members: Mapping[str, MemberSpec], computed: GroupAssignment) -> None:
    """`UniformHomogeneousAssignmentBuilderTest.checkValidityAndBalance`: every partition a member gets
    is of a topic it subscribes to, no partition goes to two members, sizes differ by at most one."""
    owner: dict[tuple[Uuid, int], str] = {}
    for member_id, assignment in computed.items():
        for topic_id, partitions in assignment.items():
            assert topic_id in members[member_id].subscribed, (member_id, topic_id)
            for p in partitions:
                assert owner.setdefault((topic_id, p), member_id) == member_id, (topic_id, p)
    sizes = [sum(len(ps) for ps in a.values()) for a in computed.values()]
    assert not sizes or max(sizes) - min(sizes) <= 1, sizes
