"""A typed, pure model of a cluster's consumer groups at one moment, and the lag rules.

Models hold data, never sockets: `groups_collector` fills them from the Admin API and
`groups_tables` turns them into lake tables. `offset_rows` is the one place that decides
which (group, partition) rows exist and how their lag and flags are computed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

TopicPartition = tuple[str, int]
Task = tuple[str, int]
"""A Kafka Streams task: (subtopology id, partition), e.g. ("0", 2) for task 0_2."""

STABLE = "Stable"

GroupType = Literal["classic", "consumer", "share", "streams"]
GROUP_TYPES: tuple[GroupType, ...] = ("classic", "consumer", "share", "streams")
"""ListGroups v5's group types (KIP-848). A broker without v5 (Kafka before 4, ZooKeeper clusters)
has only classic groups."""


@dataclass(frozen=True, slots=True)
class StreamsTasks:
    """The tasks a streams-group member holds, or is to hold, by kind; each sorted."""

    active: tuple[Task, ...] = ()
    standby: tuple[Task, ...] = ()
    warmup: tuple[Task, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupMember:
    """One member of a group, as the coordinator describes it.

    `assignment` is what the member holds: sorted in a classic group; in the broker's order in the
    others (the order the coordinator's assignor reads it in). In a classic group it is the decoded
    consumer-protocol assignment, empty unless the group is Stable and speaks the `consumer`
    protocol (other states carry no assignment); in a consumer-protocol group (KIP-848) it is the
    member's current assignment, which `target_assignment` is what the broker's assignor wants it
    to hold: they differ while the member is `reconciling`.

    `subscription` is a classic member's protocol metadata exactly as it sent it in its last
    JoinGroup (for the consumer protocol: topics, owned partitions, generation, rack, assignor
    user data); a consumer-protocol member has none (its broker keeps `subscribed_topics` or
    `subscribed_regex`, `rack` and `member_epoch` instead). The consumer-protocol fields are
    None for classic members, which cannot have them.
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: tuple[TopicPartition, ...] = ()
    subscription: bytes | None = None
    member_epoch: int | None = None
    rack: str | None = None
    subscribed_topics: tuple[str, ...] | None = None
    subscribed_regex: str | None = None
    target_assignment: tuple[TopicPartition, ...] | None = None
    process_id: str | None = None
    tasks: StreamsTasks | None = None
    target_tasks: StreamsTasks | None = None

    @property
    def reconciling(self) -> bool:
        """Its assignment is not yet its target (only consumer-protocol and streams members have a
        target; a streams member's tasks, standby and warmup included, are compared)."""
        if self.tasks is not None and self.tasks != self.target_tasks:
            return True
        target = self.target_assignment
        return target is not None and sorted(self.assignment) != sorted(target)  # both in the broker's order


@dataclass(frozen=True, slots=True)
class ConsumerGroup:
    """A group's description: its type (`classic`, or `consumer` for KIP-848's consumer
    protocol), state (classic: `Stable`, `Empty`, `PreparingRebalance`, `Dead`, ...; consumer:
    `Stable`, `Empty`, `Assigning`, `Reconciling`, `Dead`), protocol type (`consumer`, `connect`,
    or `""` for groups that only commit offsets) and the assignor name (classic: the selected
    client protocol, e.g. `range`, empty when no generation is active; consumer: the broker's
    assignor, e.g. `uniform`).

    `group_epoch` and `assignment_epoch` exist for consumer-protocol, share and streams groups
    (None for classic ones): the group epoch moves with every membership or subscription change,
    the assignment epoch (a streams group's target assignment epoch) catches up once the assignor
    has computed the target for it. `topology_epoch` is a streams group's only.

    Share groups (KIP-932): protocol type `share`, assignor `simple`, state `Stable`, `Empty` or
    `Dead`; members hold partitions with no target (the broker assigns at once). Streams groups
    (KIP-1071): protocol type `streams`, assignor e.g. `sticky`, state `Stable`, `Empty`,
    `Assigning`, `Reconciling`, `NotReady` or `Dead`; each member's `tasks` and `target_tasks`,
    and its `assignment` / `target_assignment` are the input partitions of its active tasks.
    `coordinator_id`: the broker that coordinates the group (FindCoordinator), when known."""

    group_id: str
    state: str
    protocol_type: str
    assignor: str
    members: tuple[GroupMember, ...] = ()
    group_type: GroupType = "classic"
    group_epoch: int | None = None
    assignment_epoch: int | None = None
    topology_epoch: int | None = None
    coordinator_id: int | None = None

    @property
    def assigned(self) -> set[TopicPartition]:
        return {tp for m in self.members for tp in m.assignment}

    @property
    def reconciling_members(self) -> int:
        return sum(m.reconciling for m in self.members)


@dataclass(frozen=True, slots=True)
class GroupOffset:
    """A group's position on one partition.

    Rows exist for every committed partition and every assigned partition (as
    `kafka-consumer-groups --describe` shows them). `lag` is `end_offset - committed_offset`,
    clamped at 0 when the commit is above the end (`committed_above_end`); it is None when
    either side is unknown: no commit (`no_commit`), the topic or partition no longer exists
    (`topic_deleted`), or its end offset could not be read (a collection issue says why).

    A share group (KIP-932) commits no offsets: its rows come from DescribeShareGroupOffsets,
    with `committed_offset` None (and `no_commit` False) and `start_offset` the share-partition
    start offset (every record below it is acknowledged or archived; records above it may be too,
    one by one). Their `lag` is the broker's own (v1+: records not yet acknowledged, which
    `end_offset - start_offset` would overstate), None when the broker does not report it.
    """

    group_id: str
    topic: str
    partition: int
    committed_offset: int | None
    metadata: str | None
    end_offset: int | None
    lag: int | None
    no_commit: bool = False
    committed_above_end: bool = False
    topic_deleted: bool = False
    start_offset: int | None = None

    @property
    def position(self) -> int | None:
        """The first record the group has not consumed, whose time is the exact lag in seconds: the
        committed offset; for a share group the start offset, but only when every record from it on is
        unacknowledged (the broker's lag is end - start): the start offset trails acknowledgements (on
        Kafka 4.4 it stayed at 0 with ten records acknowledged and five not), and then the oldest
        unacknowledged record is somewhere above it. None when unknown."""
        if self.committed_offset is not None:
            return self.committed_offset
        whole = (
            self.start_offset is not None
            and self.end_offset is not None
            and self.lag == self.end_offset - self.start_offset
        )
        return self.start_offset if whole else None


@dataclass(frozen=True, slots=True)
class GroupIssue:
    """Something that could not be collected; the rest of the snapshot still completes.

    `group_id` is None for cluster-wide problems (e.g. end offsets of a leaderless partition).
    """

    group_id: str | None
    kind: str
    problem: str


@dataclass(frozen=True, slots=True)
class Described:
    """What one describe API answered for a batch of groups: the groups it could describe and
    the problems with the others (a group it could not describe is in `issues`, never here)."""

    groups: dict[str, ConsumerGroup] = field(default_factory=dict)
    issues: list[GroupIssue] = field(default_factory=list)


TimestampType = Literal["CreateTime", "LogAppendTime"]


@dataclass(frozen=True, slots=True)
class RecordTime:
    """The first record at or after a committed offset: its `offset` (higher than the committed
    one when that offset was compacted away or is a transaction marker's), its timestamp in
    milliseconds since the epoch and what that timestamp means."""

    offset: int
    timestamp_ms: int
    timestamp_type: TimestampType


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    """An open transaction on one partition. `transactional_id`, `state` and `start_time` come from
    its coordinator, `start_offset` (its first offset on the partition, which pins the last stable
    offset) from the partition's leader; `hanging` when the leader holds it open and no coordinator
    has it as ongoing on that partition (then the coordinator's fields are None)."""

    transactional_id: str | None
    producer_id: int
    producer_epoch: int
    state: str | None
    coordinator_id: int | None
    topic: str
    partition: int
    start_time: datetime | None
    timeout_ms: int | None
    start_offset: int | None
    hanging: bool = False


def read_committed_lag(row: GroupOffset, stable_offsets: Mapping[TopicPartition, int]) -> int | None:
    """A read_committed consumer's lag: last stable offset - committed offset, clamped at 0."""
    stable = stable_offsets.get((row.topic, row.partition))
    if stable is None or row.committed_offset is None or row.topic_deleted:
        return None
    return max(stable - row.committed_offset, 0)


@dataclass(frozen=True, slots=True)
class LoggedCommit:
    """One offset commit as the group coordinator logged it in `__consumer_offsets`, with the time
    it was added; `offset` None is the offset's deletion (a tombstone)."""

    group_id: str
    topic: str
    partition: int
    offset: int | None
    committed_at: datetime


@dataclass(frozen=True, slots=True)
class GroupSnapshot:
    """Every selected group of one cluster, their offsets, and the end offsets they were
    measured against (`end_offsets` is also the per-partition (end offset, time) history the
    lag-in-time analysis reads: `captured_at` is the time)."""

    cluster: str
    snapshot_id: str
    captured_at: datetime
    bootstrap_servers: str
    groups: tuple[ConsumerGroup, ...]
    offsets: tuple[GroupOffset, ...]
    end_offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    issues: tuple[GroupIssue, ...] = ()
    completed_at: datetime | None = None
    record_times: Mapping[tuple[str, int, int], RecordTime] = field(default_factory=dict)
    """The first unconsumed record of each lagging (topic, partition, committed offset)."""
    stable_offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    """Last stable offsets (ListOffsets read_committed)."""
    start_offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    """Log start offsets (ListOffsets earliest) of the partitions with an end offset; a partition whose
    leader refused or did not answer has none (a collection issue says why)."""
    transactions: tuple[OpenTransaction, ...] = ()
    commits: tuple[LoggedCommit, ...] = ()
    """The groups' commits logged in `__consumer_offsets` since the collection before (the last few
    of each partition), oldest first; empty when not read."""


@dataclass(frozen=True, slots=True)
class Commit:
    """A committed offset as OffsetFetch returns it."""

    offset: int
    metadata: str | None = None


def offset_rows(
    group_id: str,
    committed: Mapping[TopicPartition, Commit],
    assigned: Iterable[TopicPartition],
    existing: set[TopicPartition] | frozenset[TopicPartition],
    end_offsets: Mapping[TopicPartition, int],
) -> list[GroupOffset]:
    """The group's rows, sorted by (topic, partition).

    `existing` holds every partition of the topics the group refers to that the cluster still
    has; a referenced partition outside it is `topic_deleted`. A negative committed offset
    (Kafka's "none") counts as no commit.
    """
    rows = []
    for tp in sorted(set(committed) | set(assigned)):
        commit = committed.get(tp)
        offset = commit.offset if commit is not None and commit.offset >= 0 else None
        deleted = tp not in existing
        end = None if deleted else end_offsets.get(tp)
        above = offset is not None and end is not None and offset > end
        lag = None if offset is None or end is None else max(end - offset, 0)
        rows.append(
            GroupOffset(
                group_id=group_id,
                topic=tp[0],
                partition=tp[1],
                committed_offset=offset,
                metadata=commit.metadata if commit is not None else None,
                end_offset=end,
                lag=lag,
                no_commit=offset is None,
                committed_above_end=above,
                topic_deleted=deleted,
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class ShareOffset:
    """A share group's position on one partition as DescribeShareGroupOffsets returns it: the
    share-partition start offset and the broker's lag (None before v1, or when it says -1)."""

    start_offset: int
    lag: int | None


def share_offset_rows(
    group_id: str,
    offsets: Mapping[TopicPartition, ShareOffset],
    existing: set[TopicPartition] | frozenset[TopicPartition],
    end_offsets: Mapping[TopicPartition, int],
) -> list[GroupOffset]:
    """A share group's rows, sorted by (topic, partition): one per partition it has a start
    offset on (`GroupOffset` says what its fields hold for share groups)."""
    rows = []
    for tp in sorted(offsets):
        deleted = tp not in existing
        rows.append(
            GroupOffset(
                group_id=group_id,
                topic=tp[0],
                partition=tp[1],
                committed_offset=None,
                metadata=None,
                end_offset=None if deleted else end_offsets.get(tp),
                lag=None if deleted else offsets[tp].lag,
                topic_deleted=deleted,
                start_offset=offsets[tp].start_offset,
            )
        )
    return rows
