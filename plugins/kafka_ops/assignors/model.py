"""Typed inputs and outputs of a consumer-group assignment what-if (pure data, no JVM).

A `GroupInput` holds what the group leader receives from each member in JoinGroup (a `Member`:
subscription, owned partitions, generation, rack, user data, protocol version); a `ClusterLayout`
holds the metadata it assigns from (brokers' racks, each partition's replicas). An
`AssignResult` is what Kafka's assignor gave back, round by round (see `AssignResult`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from kafka_ops.assignors import protocol
from kafka_ops.errors import KafkaOpsError
from kafka_ops.model.groups import TopicPartition

AssignorName = Literal["range", "roundrobin", "sticky", "cooperative-sticky"]
ASSIGNORS: tuple[AssignorName, ...] = get_args(AssignorName)
COOPERATIVE: frozenset[str] = frozenset({"cooperative-sticky"})


class AssignorInputError(KafkaOpsError, ValueError):
    """A member, group or cluster description that cannot be given to the leader as it stands."""


@dataclass(frozen=True, slots=True)
class Member:
    """One member as the leader sees it: its subscription plus `member.id` and `group.instance.id`.

    `version` is the consumer-protocol version its client speaks (3 for kafka-clients >= 3.5):
    the bridge serializes the subscription at that version, so fields the version cannot carry
    (owned partitions below 1, generation below 2, rack below 3) are lost exactly as on the wire.
    `metadata`, when set (see `from_subscription`), is the JoinGroup metadata exactly as the member
    sent it, and is what the leader decodes; the other fields are then its decoded content.
    """

    member_id: str
    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = protocol.NO_GENERATION
    group_instance_id: str | None = None
    rack: str | None = None
    user_data: bytes | None = None
    version: int = protocol.HIGHEST_VERSION
    metadata: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.topics, str):
            raise AssignorInputError(f"member {self.member_id!r}: topics must be a sequence of names, not a string")
        if self.version < 0:
            raise AssignorInputError(f"member {self.member_id!r}: protocol version {self.version} is negative")
        for topic, partition in self.owned:
            if not isinstance(topic, str) or not isinstance(partition, int):
                raise AssignorInputError(
                    f"member {self.member_id!r}: owned partition {(topic, partition)!r} is not (topic, int)"
                )

    @classmethod
    def from_subscription(cls, member_id: str, group_instance_id: str | None, metadata: bytes) -> Member:
        """A member from the JoinGroup metadata it sent (e.g. `DescribeGroups`' member metadata)."""
        sub = protocol.decode_subscription(metadata, where=f"subscription of member {member_id!r}")
        return cls(
            member_id=member_id,
            topics=sub.topics,
            owned=sub.owned_partitions,
            generation=sub.generation_id,
            group_instance_id=group_instance_id,
            rack=sub.rack_id,
            user_data=sub.user_data,
            version=sub.version,
            metadata=bytes(metadata),
        )

    @classmethod
    def rejoining(
        cls,
        member_id: str,
        topics: Iterable[str],
        assignor: AssignorName,
        previous: Sequence[TopicPartition] | None,
        generation: int,
        *,
        group_instance_id: str | None = None,
        rack: str | None = None,
    ) -> Member:
        """What a kafka-clients 3.9 consumer configured with `assignor` sends when it (re)joins.

        `previous` is the assignment it holds from the rebalance of `generation`; None for a
        consumer that never completed a rebalance (its generation is then -1). Mirrors
        `ConsumerCoordinator.metadata()`: eager assignors revoke everything before rejoining, so
        only cooperative members report owned partitions; `sticky` carries the previous
        assignment in its user data instead, `cooperative-sticky` its generation; `range` and
        `roundrobin` send no user data.
        """
        held = tuple(previous or ())
        if previous is None:
            generation = protocol.NO_GENERATION
        user_data: bytes | None = None
        if assignor == "sticky" and previous is not None:
            user_data = protocol.encode_sticky_user_data(held, generation)
        elif assignor == "cooperative-sticky":
            user_data = protocol.encode_cooperative_user_data(generation)
        return cls(
            member_id=member_id,
            topics=tuple(sorted(set(topics))),
            owned=held if assignor in COOPERATIVE else (),
            generation=generation,
            group_instance_id=group_instance_id,
            rack=rack,
            user_data=user_data,
        )


@dataclass(frozen=True, slots=True)
class GroupInput:
    """A group's members in JoinGroup response order (the order the leader fills its map in)."""

    members: tuple[Member, ...]
    group_id: str = ""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for m in self.members:
            if m.member_id in seen:
                raise AssignorInputError(f"group {self.group_id!r}: member id {m.member_id!r} appears twice")
            seen.add(m.member_id)


@dataclass(frozen=True, slots=True)
class ClusterLayout:
    """The metadata the leader assigns from: each broker's rack, each partition's replica brokers.

    Rack-aware assignment (KIP-881) happens only where both members and replicas have racks.
    A replica on a broker missing from `brokers` counts as rackless, as in Kafka's metadata.
    """

    brokers: Mapping[int, str | None]
    topics: Mapping[str, tuple[tuple[int, ...], ...]]

    @classmethod
    def of_partition_counts(cls, partitions: Mapping[str, int]) -> ClusterLayout:
        """Topics with partition counts only: no replica placement, so no rack awareness."""
        return cls(brokers={}, topics={t: ((),) * n for t, n in partitions.items()})


@dataclass(frozen=True, slots=True)
class Round:
    """One call of the assignor (one rebalance).

    `assignment` keeps the order Java's assignor returned. `transferring` is the sticky assignors'
    `partitionsTransferringOwnership` (None where Kafka leaves it unset, and for range/roundrobin);
    `sticky` is `AbstractStickyAssignor.isSticky()` when asked for (`KafkaTestHooks`).
    """

    assignment: Mapping[str, tuple[TopicPartition, ...]]
    user_data: Mapping[str, bytes]
    transferring: Mapping[TopicPartition, str] | None
    sticky: bool | None
    assign_seconds: float


@dataclass(frozen=True, slots=True)
class AssignResult:
    """What Kafka's assignor gives a group.

    `cooperative-sticky` never hands a partition to a new owner in the rebalance that takes it
    from the old one: that rebalance withholds it, the old owner revokes it and rejoins, and the
    follow-up rebalance assigns it. With `settle` the bridge runs those follow-ups as the members
    would (each now owning exactly what it was given, all at the generation just completed) until
    nothing more is revoked: `rounds` holds every rebalance, `assignment` the last one, `revoked`
    what each member gave up on the way. Eager assignors always take a single round.
    """

    group_id: str
    assignor: AssignorName
    rounds: tuple[Round, ...]
    settled: bool
    revoked: Mapping[str, tuple[TopicPartition, ...]]

    @property
    def assignment(self) -> Mapping[str, tuple[TopicPartition, ...]]:
        return self.rounds[-1].assignment

    @property
    def first_round(self) -> Round:
        return self.rounds[0]

    @property
    def assign_seconds(self) -> float:
        """Time spent inside Kafka's `assign()`, summed over rounds (no JSON, no process I/O)."""
        return sum(r.assign_seconds for r in self.rounds)


@dataclass(frozen=True, slots=True)
class AssignFailure:
    """A group of a batch that Kafka's assignor (or the bridge) refused, with its message."""

    group_id: str
    assignor: str
    message: str


@dataclass(frozen=True, slots=True)
class KafkaTestHooks:
    """Switches Kafka's own unit tests use; a what-if never needs them.

    `prefer_rack_aware_logic` is `AbstractPartitionAssignor.preferRackAwareLogic` (use the
    rack-aware algorithm even when every rack holds every partition); `check_sticky` asks for
    `AbstractStickyAssignor.isSticky()` after each round.
    """

    prefer_rack_aware_logic: bool = False
    check_sticky: bool = False


def revoked_along(members: Sequence[Member], rounds: Sequence[Round]) -> dict[str, tuple[TopicPartition, ...]]:
    """Per member, the partitions it owned going into a round that the round did not give back."""
    owned = {m.member_id: m.owned for m in members}
    revoked: dict[str, dict[TopicPartition, None]] = {m.member_id: {} for m in members}
    for r in rounds:
        for member_id, held in owned.items():
            kept = set(r.assignment.get(member_id, ()))
            revoked[member_id].update((tp, None) for tp in held if tp not in kept)
        owned = {member_id: r.assignment.get(member_id, ()) for member_id in owned}
    return {member_id: tuple(tps) for member_id, tps in revoked.items()}
