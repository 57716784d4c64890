"""The consumer protocol's broker-side assignors (KIP-848): inputs, results and their wire form.

A consumer-protocol group is assigned by the group coordinator, not by a member: `uniform` (the
default of `group.consumer.assignors`) or `range`, picked per member with `group.remote.assignor`.
Its input is not JoinGroup bytes but what the coordinator holds per member: subscribed topic names
(resolved to topic ids; names the metadata does not know are skipped), rack, `group.instance.id`,
and the member's current target assignment, which the assignors keep where they can (stickiness).
`ServerAssignorBridge.java` builds Kafka's own `GroupSpecImpl` from that and runs Kafka 4's
`UniformAssignor` / `RangeAssignor` in the assignor JVM (see `AssignorBridge.server_assign_many`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from kafka_ops.assignors import wire
from kafka_ops.assignors.model import AssignFailure, AssignorInputError, ClusterLayout
from kafka_ops.model.groups import TopicPartition

ServerAssignorName = Literal["uniform", "range"]
SERVER_ASSIGNORS: tuple[ServerAssignorName, ...] = get_args(ServerAssignorName)

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ConsumerMember:
    """One member as the group coordinator holds it: subscription, rack, and its current assignment."""

    member_id: str
    topics: tuple[str, ...]
    assigned: tuple[TopicPartition, ...] = ()
    instance_id: str | None = None
    rack: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.topics, str):
            raise AssignorInputError(f"member {self.member_id!r}: topics must be a sequence of names, not a string")
        for topic, partition in self.assigned:
            if not isinstance(topic, str) or not isinstance(partition, int):
                raise AssignorInputError(
                    f"member {self.member_id!r}: assigned partition {(topic, partition)!r} is not (topic, int)"
                )


@dataclass(frozen=True, slots=True)
class ConsumerGroupInput:
    """A consumer-protocol group's members (the coordinator keeps them in a HashMap: order is Java's)."""

    members: tuple[ConsumerMember, ...]
    group_id: str = ""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        owner: dict[TopicPartition, str] = {}
        for m in self.members:
            if m.member_id in seen:
                raise AssignorInputError(f"group {self.group_id!r}: member id {m.member_id!r} appears twice")
            seen.add(m.member_id)
            for tp in m.assigned:
                first = owner.setdefault(tp, m.member_id)
                if first != m.member_id:
                    where = f"group {self.group_id!r}: {tp[0]}-{tp[1]}"
                    raise AssignorInputError(f"{where} is assigned to both {first!r} and {m.member_id!r}")


@dataclass(frozen=True, slots=True)
class ServerTestHooks:
    """Switches for transcribing Kafka's own tests; a what-if never needs them.

    `member_order="given"` hands the members to the assignor in this order (Kafka's tests build
    their member maps as TreeMaps) instead of the coordinator's HashMap; `subscription_type`
    overrides the type Kafka's `ModernGroup.subscriptionType` derives from the subscriptions;
    `keep_unknown_topics` keeps a subscription to a topic the metadata does not hold (as a Java
    test passing a topic id the image lacks) instead of skipping it as the coordinator does;
    `ordered_assignments` names members whose current assignment goes to Java in its given order
    (a test's `mkOrderedAssignment`, a LinkedHashMap) rather than in a HashMap.
    """

    member_order: Literal["hash", "given"] = "hash"
    subscription_type: Literal["HOMOGENEOUS", "HETEROGENEOUS"] | None = None
    keep_unknown_topics: bool = False
    ordered_assignments: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ServerAssignResult:
    """What Kafka's server-side assignor gave a group, each member's partitions sorted (Kafka's
    answer is a map of sets). Members given nothing are absent, as in Kafka's `GroupAssignment`
    only where the assignor leaves them out."""

    group_id: str
    assignor: ServerAssignorName
    assignment: Mapping[str, tuple[TopicPartition, ...]]
    subscription_type: str
    assign_seconds: float


def cluster_json(cluster: ClusterLayout, topic_ids: Mapping[str, str]) -> Json:
    """The cluster as the client side sends it, plus each topic's id where known (else the bridge
    derives one from the name)."""
    out = wire.cluster_json(cluster)
    out["topics"] = [[name, layout, topic_ids.get(name)] for name, layout in out["topics"]]
    return out


def member_json(member: ConsumerMember, names: wire.NameTable) -> Json:
    return {
        "member_id": member.member_id,
        "instance_id": member.instance_id,
        "rack": member.rack,
        "topics": [names.index(t) for t in member.topics],
        "assigned": names.flat(member.assigned),
    }


def group_json(
    group: ConsumerGroupInput, assignor: ServerAssignorName, hooks: ServerTestHooks, names: wire.NameTable
) -> Json:
    out: Json = {
        "group_id": group.group_id,
        "assignor": assignor,
        "members": [member_json(m, names) for m in group.members],
    }
    if hooks.member_order != "hash":
        out["member_order"] = hooks.member_order
    if hooks.subscription_type is not None:
        out["subscription_type"] = hooks.subscription_type
    if hooks.keep_unknown_topics:
        out["keep_unknown_topics"] = True
    if hooks.ordered_assignments:
        out["ordered_assignments"] = sorted(hooks.ordered_assignments)
    return out


def parse_result(
    value: Json, group: ConsumerGroupInput, assignor: ServerAssignorName, names: Sequence[str]
) -> ServerAssignResult | AssignFailure:
    if "error" in value:
        return AssignFailure(group.group_id, assignor, str(value["error"]))
    return ServerAssignResult(
        group_id=group.group_id,
        assignor=assignor,
        assignment={member: wire.from_flat(parts, names) for member, parts in value["assignment"]},
        subscription_type=str(value["subscription_type"]),
        assign_seconds=float(value["assign_seconds"]),
    )
