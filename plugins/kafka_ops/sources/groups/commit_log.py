"""Offset commits with their times, read from `__consumer_offsets` as Burrow reads them.

OffsetFetch answers a group's committed offset but not when it was committed, and a collection
sees at most one offset per partition per run: a consumer that commits the same offset again and
again (Burrow's STALL) looks like one that commits nothing (STOP), and a commit's lag can only be
taken at the next collection, with the producer's progress since mixed in. The group coordinator
appends every commit to `__consumer_offsets`, with the time it was added; reading those records
gives each commit's offset and time, as Burrow's Kafka consumer module does.

What is read: the partitions of `__consumer_offsets` that hold the collected groups (a group lives
on `abs(java hashCode(group id)) % partitions`, Kafka's `GroupCoordinator.partitionFor`), from the
first record appended at or after `since` (ListOffsets by time) to their end at the start of the
read, read_committed (a transaction's offset commits count once it commits). Each (group, topic,
partition) keeps its last `KEEP` commits of the read. Bounded: at most `MAX_RECORDS` records per
partition (the newest) and `timeout_s` in all; what the bounds leave out is a problem, never a hang.

Formats (Kafka's `OffsetCommitKey` / `OffsetCommitValue`, the group coordinator's generated classes):
* key: int16 record type; 0 or 1 is an offset commit: group STRING, topic STRING, partition INT32
  (STRING: int16 length, UTF-8); 2 is a classic group's metadata, 3 and above the consumer, share and
  streams groups' records: skipped;
* value: null is a tombstone (the offset was deleted); otherwise int16 version, then
  v0 and v2: offset INT64, metadata STRING, commit_timestamp INT64;
  v1: the same and expire_timestamp INT64;
  v3: offset INT64, leader_epoch INT32, metadata STRING, commit_timestamp INT64;
  v4 (flexible): offset INT64, leader_epoch INT32, metadata COMPACT_STRING (unsigned varint length
  + 1), commit_timestamp INT64, tagged fields (the topic id).
"""

from __future__ import annotations

import logging
import struct
import time
from collections import defaultdict, deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from kafka import KafkaConsumer
from kafka.errors import KafkaError
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_ops.model.groups import LoggedCommit

log = logging.getLogger(__name__)

TOPIC: Final = "__consumer_offsets"
KEEP: Final = 20
"""Commits kept per (group, topic, partition) and read: twice Burrow's default window of 10."""
MAX_RECORDS: Final = 200_000
"""Records read per `__consumer_offsets` partition and read at most, the newest."""
FIRST_LOOKBACK: Final = timedelta(minutes=10)
"""How far back the first read of a cluster starts (there is no collection before it)."""
MAX_LOOKBACK: Final = timedelta(hours=1)
OVERLAP: Final = timedelta(minutes=1)
READ_TIMEOUT_S: Final = 20.0
OFFSET_COMMIT_KEYS: Final = (0, 1)
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


class CommitLogFormatError(ValueError):
    """A `__consumer_offsets` record that is not what Kafka writes there."""


@dataclass
class CommitLog:
    """What one read found: the commits kept, what could not be read, and how much was read."""

    commits: list[LoggedCommit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    records_read: int = 0


def read_from(previous: datetime | None, now: datetime) -> datetime:
    """Where a collection's read starts: `OVERLAP` before the collection before it began (a commit
    logged while that one read is not missed; a commit read twice is one commit), at most
    `MAX_LOOKBACK` back; `FIRST_LOOKBACK` back when there was none."""
    if previous is None:
        return now - FIRST_LOOKBACK
    return max(previous - OVERLAP, now - MAX_LOOKBACK)


def java_hash(text: str) -> int:
    """Java's `String.hashCode()` (UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(group_id: str, partitions: int) -> int:
    """The `__consumer_offsets` partition holding `group_id` (Kafka's `Utils.abs(hash) % partitions`,
    where abs(Integer.MIN_VALUE) is 0)."""
    h = java_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def decode(key: bytes | None, value: bytes | None, timestamp_ms: int) -> LoggedCommit | None:
    """The commit a `__consumer_offsets` record holds, None for a record of another kind; raises
    `CommitLogFormatError` for bytes that are not Kafka's. `timestamp_ms` (the record's, the time the
    coordinator appended it) stands in for a tombstone's time."""
    if key is None:
        raise CommitLogFormatError("a record without a key")
    reader = _Reader(key)
    if reader.int16() not in OFFSET_COMMIT_KEYS:
        return None
    group, topic, partition = reader.string(), reader.string(), reader.int32()
    if value is None:
        return LoggedCommit(group, topic, partition, None, _time(timestamp_ms))
    reader = _Reader(value)
    version = reader.int16()
    if version not in (0, 1, 2, 3, 4):
        raise CommitLogFormatError(f"offset commit value version {version} (Kafka writes 0 to 4)")
    offset = reader.int64()
    if version >= 3:
        reader.int32()  # leader epoch
    if version == 4:
        reader.compact_string()
    else:
        reader.string()
    return LoggedCommit(group, topic, partition, offset, _time(reader.int64()))


def _time(ms: int) -> datetime:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError) as e:
        raise CommitLogFormatError(f"commit timestamp {ms} ms is not a time") from e


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def _take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise CommitLogFormatError(f"{n} bytes wanted at byte {self.at} of a {len(self.data)}-byte field")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def int16(self) -> int:
        return int(_INT16.unpack(self._take(2))[0])

    def int32(self) -> int:
        return int(_INT32.unpack(self._take(4))[0])

    def int64(self) -> int:
        return int(_INT64.unpack(self._take(8))[0])

    def string(self) -> str:
        length = self.int16()
        return "" if length == -1 else self._text(length)

    def compact_string(self) -> str:
        length = self._varint() - 1
        return "" if length == -1 else self._text(length)

    def _text(self, length: int) -> str:
        try:
            return self._take(length).decode("utf-8")
        except UnicodeDecodeError as e:
            raise CommitLogFormatError(f"a string that is not UTF-8 at byte {self.at}") from e

    def _varint(self) -> int:
        value = 0
        for shift in range(0, 35, 7):
            byte = self._take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
        raise CommitLogFormatError(f"a varint longer than 5 bytes at byte {self.at}")


def read_commit_log(
    bootstrap_servers: str,
    options: Mapping[str, Any],
    groups: Collection[str],
    since: datetime,
    timeout_s: float,
) -> CommitLog:
    """The commits of `groups` appended to `__consumer_offsets` since `since`, at most `KEEP` per
    (group, topic, partition), oldest first. Never raises for what it cannot read: a problem says it."""
    result = CommitLog()
    if not groups:
        return result
    deadline = time.monotonic() + timeout_s
    known = {k: v for k, v in options.items() if k in KafkaConsumer.DEFAULT_CONFIG}
    try:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap_servers, group_id=None, enable_auto_commit=False,
            exclude_internal_topics=False, isolation_level="read_committed", **known,
        )  # fmt: skip
    except KafkaError as e:
        result.problems.append(f"cannot read {TOPIC}: {type(e).__name__}: {e}")
        return result
    try:
        _read(consumer, set(groups), since, deadline, result)
    except KafkaError as e:
        result.problems.append(f"reading {TOPIC} failed: {type(e).__name__}: {e}")
    finally:
        consumer.close()
    return result


def _read(consumer: KafkaConsumer, groups: set[str], since: datetime, deadline: float, result: CommitLog) -> None:
    count = consumer.partitions_for_topic(TOPIC)
    if not count:
        result.problems.append(f"no {TOPIC} topic: no group has committed on this cluster yet")
        return
    wanted = sorted({partition_for(g, len(count)) for g in groups})
    tps = [KafkaTopicPartition(TOPIC, p) for p in wanted]
    consumer.assign(tps)
    ends = consumer.end_offsets(tps)
    starts = consumer.offsets_for_times(dict.fromkeys(tps, int(since.timestamp() * 1000)))
    for tp in tps:
        found = starts.get(tp)
        start = ends[tp] if found is None else found.offset
        if ends[tp] - start > MAX_RECORDS:
            result.problems.append(
                f"{TOPIC}-{tp.partition}: {ends[tp] - start} records since {since.isoformat()}; "
                f"the newest {MAX_RECORDS} read"
            )
            start = ends[tp] - MAX_RECORDS
        consumer.seek(tp, start)
    kept: dict[tuple[str, str, int], deque[LoggedCommit]] = defaultdict(lambda: deque(maxlen=KEEP))
    malformed = 0
    pending = {tp for tp in tps if consumer.position(tp) < ends[tp]}
    while pending:
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            behind = ", ".join(f"{TOPIC}-{tp.partition}" for tp in sorted(pending))
            result.problems.append(f"the read of {TOPIC} ran out of time: commits on {behind} not all read")
            break
        for tp, records in consumer.poll(timeout_ms=min(left_ms, 1000)).items():
            for record in records:
                if record.offset >= ends[tp]:
                    continue
                result.records_read += 1
                try:
                    commit = decode(record.key, record.value, record.timestamp)
                except CommitLogFormatError as e:
                    malformed += 1
                    log.debug("%s-%d offset %d: %s", TOPIC, tp.partition, record.offset, e)
                    continue
                if commit is not None and commit.group_id in groups:
                    kept[(commit.group_id, commit.topic, commit.partition)].append(commit)
        pending = {tp for tp in pending if consumer.position(tp) < ends[tp]}
    if malformed:
        result.problems.append(f"{malformed} records of {TOPIC} were not Kafka's offset formats; skipped")
    result.commits = [c for key in sorted(kept) for c in kept[key]]
