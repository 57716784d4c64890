"""The consumer protocol's bytes, read and written exactly as kafka-clients 3.9 does.

What a member sends in JoinGroup (`Subscription`), what the leader hands back in SyncGroup
(`Assignment`), and the user data the sticky assignors put inside a subscription. Formats, from
kafka-clients' own schemas (`common/message/ConsumerProtocol{Subscription,Assignment}.json` in
the jar, `ConsumerProtocol`, `StickyAssignor`, `CooperativeStickyAssignor`); all big-endian:

- Subscription: int16 version, then topics `[string]`, user data `bytes?`, owned partitions
  `[(string, [int32])]` (v1+), generation int32 (v2+), rack `string?` (v3+).
- Assignment: int16 version, then `[(string, [int32])]`, user data `bytes?` (same for v0-v3).
- StickyAssignor user data, no version prefix: `[(string, [int32])]` then an int32 generation
  (its v1; v0 has no generation). CooperativeStickyAssignor user data: one int32, the generation.

Strings carry an int16 length (-1 = null), bytes and arrays an int32 one. Decoding follows
Java's reader: versions above 3 are read as 3, trailing bytes are ignored, malformed UTF-8 is
replaced, an empty rack means none. Anything else malformed raises `ProtocolError` saying where.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kafka_ops.errors import KafkaOpsError
from kafka_ops.model.groups import TopicPartition

HIGHEST_VERSION = 3
NO_GENERATION = -1


class ProtocolError(KafkaOpsError, ValueError):
    """Bytes that are not a valid consumer-protocol message; `where` names the message and field."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Subscription:
    """One member's JoinGroup metadata, as `ConsumerProtocol.deserializeSubscription` yields it.

    `generation_id` is -1 when absent (v0-v1) and `rack_id` None when absent or empty; `version` is
    the one on the wire (what the member's client speaks).
    """

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = NO_GENERATION
    rack_id: str | None = None
    version: int = HIGHEST_VERSION


@dataclass(frozen=True, slots=True)
class Assignment:
    """What the leader gives one member: partitions in wire order, and the assignor's user data."""

    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None
    version: int = HIGHEST_VERSION


@dataclass(frozen=True, slots=True)
class StickyUserData:
    """StickyAssignor's user data: the member's previous assignment and, from its v1, generation."""

    partitions: tuple[TopicPartition, ...]
    generation: int | None


class _Reader:
    """Big-endian reads with the byte offset and field path in every error."""

    def __init__(self, data: bytes, where: str) -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.where = where

    def fail(self, field: str, problem: str) -> ProtocolError:
        return ProtocolError(self.where, f"{field}: {problem} (at byte {self.pos} of {len(self.data)})")

    def _take(self, size: int, field: str) -> memoryview:
        if self.pos + size > len(self.data):
            left = len(self.data) - self.pos
            raise self.fail(field, f"truncated: needs {size} bytes, {left} left")
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def int16(self, field: str) -> int:
        value: int = struct.unpack(">h", self._take(2, field))[0]
        return value

    def int32(self, field: str) -> int:
        value: int = struct.unpack(">i", self._take(4, field))[0]
        return value

    def string(self, field: str, nullable: bool = False) -> str | None:
        length = self.int16(field)
        if length < 0:
            if nullable:  # Java's generated readers take any negative length as null
                return None
            raise self.fail(field, f"string length {length} is negative (the field is not nullable)")
        return bytes(self._take(length, field)).decode("utf-8", errors="replace")

    def required_string(self, field: str) -> str:
        value = self.string(field)
        if value is None:  # unreachable: non-nullable strings raise above
            raise self.fail(field, "is null")
        return value

    def nullable_bytes(self, field: str) -> bytes | None:
        length = self.int32(field)
        if length < 0:  # as in Java's generated readers, any negative length is null
            return None
        return bytes(self._take(length, field))

    def array_length(self, field: str) -> int:
        length = self.int32(field)
        if length < 0:
            raise self.fail(field, f"array length {length} is negative (the field is not nullable)")
        # Java refuses a count larger than the bytes left before allocating anything.
        if length > len(self.data) - self.pos:
            raise self.fail(field, f"array of {length} entries cannot fit in {len(self.data) - self.pos} bytes")
        return length

    def partitions_by_topic(self, field: str) -> tuple[TopicPartition, ...]:
        out: list[TopicPartition] = []
        for i in range(self.array_length(field)):
            topic = self.required_string(f"{field}[{i}].topic")
            out.extend(
                (topic, self.int32(f"{field}[{i}].partitions[{j}]"))
                for j in range(self.array_length(f"{field}[{i}].partitions"))
            )
        return tuple(out)


def _check_version(version: int, where: str) -> int:
    if version < 0:
        raise ProtocolError(where, f"unsupported version {version}")
    return min(version, HIGHEST_VERSION)


def decode_subscription(data: bytes, where: str = "subscription") -> Subscription:
    """A member's JoinGroup metadata, decoded as the group leader decodes it."""
    reader = _Reader(data, where)
    version = reader.int16("version")
    layout = _check_version(version, where)
    topics = tuple(reader.required_string(f"topics[{i}]") for i in range(reader.array_length("topics")))
    user_data = reader.nullable_bytes("user_data")
    owned = reader.partitions_by_topic("owned_partitions") if layout >= 1 else ()
    generation = reader.int32("generation_id") if layout >= 2 else NO_GENERATION
    rack = reader.string("rack_id", nullable=True) if layout >= 3 else None
    return Subscription(topics, user_data, owned, generation, rack or None, version)


def decode_assignment(data: bytes, where: str = "assignment") -> Assignment:
    """A member's SyncGroup assignment, decoded as the member decodes it."""
    reader = _Reader(data, where)
    version = reader.int16("version")
    _check_version(version, where)
    partitions = reader.partitions_by_topic("assigned_partitions")
    return Assignment(partitions, reader.nullable_bytes("user_data"), version)


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, value: int) -> None:
        self.parts.append(struct.pack(">h", value))

    def int32(self, value: int) -> None:
        self.parts.append(struct.pack(">i", value))

    def string(self, value: str | None) -> None:
        self.parts.append(b"\xff\xff" if value is None else _encoded_string(value))

    def nullable_bytes(self, value: bytes | None) -> None:
        if value is None:
            self.int32(-1)
            return
        self.int32(len(value))
        self.parts.append(bytes(value))

    def partitions_by_topic(self, groups: Sequence[tuple[str, Sequence[int]]]) -> None:
        self.int32(len(groups))
        for topic, partitions in groups:
            self.string(topic)
            self.parts.append(struct.pack(f">i{len(partitions)}i", len(partitions), *partitions))

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def _consecutive_runs(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    runs: list[tuple[str, list[int]]] = []
    for topic, p in partitions:
        if not runs or runs[-1][0] != topic:
            runs.append((topic, []))
        runs[-1][1].append(p)
    return runs


def _first_seen_groups(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    groups: dict[str, list[int]] = {}
    for topic, p in partitions:
        groups.setdefault(topic, []).append(p)
    return list(groups.items())


def encode_subscription(subscription: Subscription, version: int | None = None) -> bytes:
    """`ConsumerProtocol.serializeSubscription`: topics sorted, owned partitions sorted and grouped;
    fields the version cannot carry are dropped (they are `ignorable` in Kafka's schema)."""
    wire_version = subscription.version if version is None else version
    layout = _check_version(wire_version, "subscription")
    out = _Writer()
    out.int16(layout)
    topics = sorted(subscription.topics)
    out.int32(len(topics))
    for topic in topics:
        out.string(topic)
    out.nullable_bytes(subscription.user_data)
    if layout >= 1:
        out.partitions_by_topic(_consecutive_runs(sorted(subscription.owned_partitions)))
    if layout >= 2:
        out.int32(subscription.generation_id)
    if layout >= 3:
        out.string(subscription.rack_id)
    return out.getvalue()


def encode_assignment(assignment: Assignment, version: int | None = None) -> bytes:
    """`ConsumerProtocol.serializeAssignment`: partitions grouped by topic in order of first appearance."""
    layout = _check_version(assignment.version if version is None else version, "assignment")
    out = _Writer()
    out.int16(layout)
    out.partitions_by_topic(_first_seen_groups(assignment.partitions))
    out.nullable_bytes(assignment.user_data)
    return out.getvalue()


def decode_sticky_user_data(data: bytes, where: str = "sticky user data") -> StickyUserData:
    """StickyAssignor's user data, read as `StickyAssignor.deserializeTopicPartitionAssignment` does:
    first as v1 (with generation), else as v0. Where both fail, Java's assignor silently treats the
    member as having no previous assignment (generation -1); this decoder raises instead."""
    v1 = _Reader(data, where)
    try:
        partitions = v1.partitions_by_topic("previous_assignment")
        return StickyUserData(partitions, v1.int32("generation"))
    except ProtocolError:
        v0 = _Reader(data, where)
        return StickyUserData(v0.partitions_by_topic("previous_assignment"), None)


def encode_sticky_user_data(partitions: Sequence[TopicPartition], generation: int | None) -> bytes:
    """`StickyAssignor.serializeTopicPartitionAssignment`, byte for byte: topics in the iteration
    order of the Java `HashMap` its `CollectionUtils.groupPartitionsByTopic` builds."""
    groups = dict(_first_seen_groups(partitions))
    order = java_hashmap_order([topic for topic, _ in partitions])
    out = _Writer()
    out.partitions_by_topic([(topic, groups[topic]) for topic in order])
    if generation is not None:
        out.int32(generation)
    return out.getvalue()


def decode_cooperative_user_data(data: bytes, where: str = "cooperative-sticky user data") -> int:
    """CooperativeStickyAssignor's user data: the generation the member last took part in."""
    return _Reader(data, where).int32("generation")


def encode_cooperative_user_data(generation: int) -> bytes:
    """`CooperativeStickyAssignor.subscriptionUserData`: one int32, -1 before the first assignment."""
    return struct.pack(">i", generation)


@functools.lru_cache(maxsize=1 << 16)
def _encoded_string(value: str) -> bytes:
    """An int16 length and the UTF-8 bytes (topic names repeat across members: cached)."""
    raw = value.encode("utf-8")
    if len(raw) > 0x7FFF:
        raise ValueError(f"string of {len(raw)} bytes is too long for the consumer protocol: {value[:40]!r}...")
    return struct.pack(">h", len(raw)) + raw


@functools.lru_cache(maxsize=1 << 16)
def _java_string_hash(value: str) -> int:
    h = 0
    raw = value.encode("utf-16-be")
    for i in range(0, len(raw), 2):
        h = (31 * h + (raw[i] << 8 | raw[i + 1])) & 0xFFFFFFFF
    return h


def java_hashmap_order(calls: Sequence[str]) -> list[str]:
    """The iteration order of a `java.util.HashMap<String, ?>` after `computeIfAbsent` with each of
    `calls` in turn (names may repeat), as `CollectionUtils.groupPartitionsByTopic` fills it.

    OpenJDK 17: buckets are indexed by the spread hash modulo a power-of-two table (16 at first);
    `computeIfAbsent` links a new key at the *head* of its bucket and grows the table at the start
    of the call *after* the one that took it past 3/4 full, or when a bucket reaches 8 keys in a
    table under 64. A resize splits each bucket without reordering it, and keys sharing a final
    bucket shared every earlier one, so a bucket ends in reverse insertion order. Exact except
    for a bucket of 8+ keys in a table of 64+ (Java makes it a tree), which needs crafted names.
    """
    capacity, threshold = 16, 12  # the table the first call creates
    spread: dict[str, int] = {}  # key -> spread hash, in insertion order
    small_table_counts: dict[int, int] = {}

    def resize() -> None:
        nonlocal capacity, threshold
        capacity, threshold = capacity * 2, threshold * 2
        small_table_counts.clear()
        if capacity < 64:
            for h in spread.values():
                small_table_counts[h & (capacity - 1)] = small_table_counts.get(h & (capacity - 1), 0) + 1

    for key in calls:
        if len(spread) > threshold:
            resize()
        if key in spread:
            continue
        h = _java_string_hash(key)
        spread[key] = h = h ^ (h >> 16)
        if capacity < 64:
            index = h & (capacity - 1)
            small_table_counts[index] = small_table_counts.get(index, 0) + 1
            if small_table_counts[index] >= 8:  # treeifyBin on a small table resizes instead
                resize()
    mask = capacity - 1
    keys = list(spread)
    order = sorted(range(len(keys)), key=lambda i: (spread[keys[i]] & mask, -i))
    return [keys[i] for i in order]
