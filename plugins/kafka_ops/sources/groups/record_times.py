"""The timestamp of the first unconsumed record of each lagging (group, partition): the record at
the group's committed offset, read with a small Fetch, so that lag in seconds is `now - that
timestamp` instead of an interpolation.

`first_record_times(admin, offsets)` takes the (topic, partition, committed offset) positions to
read (the same position of several groups is read once) and answers each with a `RecordTime`.

Cost: one Fetch per partition leader per round, every pending partition of the leader in it,
`SMALL_BYTES` per partition, read_uncommitted (what every consumer can read), no wait. A round
resolves every wanted offset its records reach, so positions of several groups on one partition
usually share a round. A later round (at most `MAX_ROUNDS` in all) asks again, only for what is
still open: a batch the broker cut at `SMALL_BYTES` (it sends whole batches only for the first
partition of a response) with exactly that batch's size, or offsets beyond the records returned.

How a record's timestamp is found, as a consumer would see it:

* the first data record at or after the offset: an offset compacted or deleted away moves on to
  the next record; transaction markers (control batches) are not records a consumer sees;
* `CreateTime`: the record's own time (batch base timestamp + its delta), so a committed offset in
  the middle of a batch gets its own record's time, not the batch's; `LogAppendTime`: the broker's
  append time, the batch's max timestamp, which applies to every record of the batch;
* from a cut batch's header alone when that is exact: with LogAppendTime every record of an
  uncompacted batch has the max timestamp; with CreateTime the batch's first record has the base
  timestamp (unless the header holds a compaction delete horizon instead);
* a committed offset below the log start (deleted by retention) has no answer: where the consumer
  resumes depends on its `auto.offset.reset`; a position at or beyond the end has no lag and is
  not asked.

A partition that cannot be read (no leader, an error) is a `problem`; the others still answer.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError, OffsetOutOfRangeError, for_code
from kafka.protocol.consumer import FetchRequest
from kafka.record import MemoryRecords

from kafka_ops.model.groups import RecordTime, TimestampType, TopicPartition

CREATE_TIME: Final = "CreateTime"
LOG_APPEND_TIME: Final = "LogAppendTime"

SMALL_BYTES: Final = 1024
"""Per partition in the first round: a batch header is 61 bytes, a few small records follow."""
MAX_ROUNDS: Final = 3
MAX_BATCH_BYTES: Final = 8 * 1024 * 1024
"""The largest cut batch asked for whole (Kafka's default `message.max.bytes` is 1 MiB)."""
FETCH_VERSION: Final = 12
"""The last Fetch version that names topics (13+ use topic ids); Kafka 4 serves 4 and above."""
READ_UNCOMMITTED: Final = 0

# v2 record batch header: base offset, length, leader epoch, magic, crc, attributes, last offset
# delta, base timestamp, max timestamp, producer id, producer epoch, base sequence, record count
_HEADER = struct.Struct(">qiibIhiqqqhii")
_LENGTH_END = 12  # base offset + length: the batch's size is length + 12
_MAGIC_AT = 16
_LOG_APPEND = 0x08
_CONTROL = 0x20
_DELETE_HORIZON = 0x40


Position = tuple[str, int, int]
"""(topic, partition, committed offset)."""


@dataclass
class RecordTimes:
    """What one read found: a time per position, and what could not be read, in words."""

    times: dict[Position, RecordTime] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


@dataclass
class _Pending:
    offsets: list[int]  # ascending, still unanswered
    fetch_bytes: int = SMALL_BYTES


def first_record_times(admin: KafkaAdminClient, positions: Iterable[Position]) -> RecordTimes:
    """The `RecordTime` of each (topic, partition, offset) position, read with one Fetch per
    leader per round. Never raises for one partition: its failure is a `problem`."""
    wanted: dict[TopicPartition, set[int]] = defaultdict(set)
    for topic, partition, offset in positions:
        wanted[(topic, partition)].add(offset)
    result = RecordTimes()
    if wanted:
        pending = {tp: _Pending(sorted(offsets)) for tp, offsets in sorted(wanted.items())}
        admin._manager.run(_read, admin, pending, result)
    return result


async def _read(admin: KafkaAdminClient, pending: dict[TopicPartition, _Pending], result: RecordTimes) -> None:
    try:
        metadata = await admin._get_cluster_metadata({t for t, _ in pending})
    except KafkaError as e:
        result.problems.append(f"cannot find the leaders of {len(pending)} partitions: {type(e).__name__}: {e}")
        return
    led = _leaders(metadata, pending, result)
    for _ in range(MAX_ROUNDS):
        rounds = {leader: [tp for tp in tps if tp in pending] for leader, tps in led.items()}
        rounds = {leader: tps for leader, tps in rounds.items() if tps}
        if not rounds:
            return
        # every leader's request is on the wire before the first answer is awaited
        sent = [(tps, _fetch(admin, leader, tps, pending)) for leader, tps in rounds.items()]
        for tps, future in sent:
            try:
                answer = await future
            except (KafkaError, OSError) as e:
                result.problems.append(f"fetch of {len(tps)} partitions failed: {type(e).__name__}: {e}")
                for tp in tps:
                    pending.pop(tp, None)
                continue
            _take(answer, pending, result)
    for (topic, partition), left in sorted(pending.items()):
        result.problems.append(
            f"{topic}-{partition}: no record time for offsets {left.offsets} after {MAX_ROUNDS} fetches"
        )


def _leaders(
    metadata: dict[str, Any], pending: dict[TopicPartition, _Pending], result: RecordTimes
) -> dict[int, list[TopicPartition]]:
    """Each leader's pending partitions, from a Metadata answer. A partition without a leader, or gone
    from the cluster (its topic deleted since the offsets were read), is a problem of its own and
    leaves `pending`: the others are still read."""
    leader_of = {
        (t["name"], p["partition_index"]): p["leader_id"]
        for t in metadata.get("topics", ())
        for p in t.get("partitions", ())
    }
    led: dict[int, list[TopicPartition]] = defaultdict(list)
    for tp in sorted(pending):
        leader = leader_of.get(tp)
        if leader is None or leader < 0:
            why = "no leader" if leader is not None else "not in the cluster's metadata (deleted?)"
            result.problems.append(f"{tp[0]}-{tp[1]}: {why}, first record time unknown")
            del pending[tp]
            continue
        led[leader].append(tp)
    return dict(led)


def _fetch(
    admin: KafkaAdminClient, leader: int, tps: list[TopicPartition], pending: dict[TopicPartition, _Pending]
) -> Any:
    """Send one Fetch to `leader` for its pending partitions; the caller awaits the answer."""
    topics: dict[str, list[Any]] = defaultdict(list)
    for topic, partition in tps:
        state = pending[(topic, partition)]
        topics[topic].append(
            FetchRequest.FetchTopic.FetchPartition(
                partition=partition, current_leader_epoch=-1, fetch_offset=state.offsets[0],
                last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=state.fetch_bytes,
            )
        )  # fmt: skip
    request = FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        # the first partition with data is answered with a whole batch whatever its limit: room for
        # that, or the broker sends the partitions after it nothing
        max_bytes=sum(pending[tp].fetch_bytes for tp in tps) + MAX_BATCH_BYTES,
        isolation_level=READ_UNCOMMITTED,
        session_id=0,
        session_epoch=-1,  # no fetch session: a one-off full fetch
        topics=[FetchRequest.FetchTopic(topic=t, partitions=parts) for t, parts in topics.items()],
        forgotten_topics_data=[],
        rack_id="",
        min_version=4,
        max_version=FETCH_VERSION,
    )
    return admin._manager.send(request, node_id=leader)


def _take(response: Any, pending: dict[TopicPartition, _Pending], result: RecordTimes) -> None:
    """Answer what `response` reaches; keep the rest pending with what the next fetch needs."""
    for topic in response.responses:
        for part in topic.partitions:
            tp = (topic.topic, part.partition_index)
            state = pending.get(tp)
            if state is None:
                continue
            if part.error_code == OffsetOutOfRangeError.errno:
                # below the log start: those offsets have no answer, the later ones still do
                start = part.log_start_offset if part.log_start_offset > state.offsets[0] else state.offsets[0] + 1
                gone = [o for o in state.offsets if o < start]
                state.offsets = state.offsets[len(gone) :]
                where = f"{tp[0]}-{tp[1]} at offsets {gone}"
                result.problems.append(f"{where}: below the log start (deleted by retention); no record time")
                if not state.offsets:
                    del pending[tp]
                continue
            if part.error_code:
                del pending[tp]
                problem = f"{tp[0]}-{tp[1]} at offset {state.offsets[0]}: {for_code(part.error_code).__name__}"
                result.problems.append(problem)
                continue
            data = part.records
            _resolve(tp, state, bytes(data) if data else b"", result)
            if not state.offsets or state.fetch_bytes > MAX_BATCH_BYTES:
                del pending[tp]


def _resolve(tp: TopicPartition, state: _Pending, data: bytes, result: RecordTimes) -> None:
    """Answer the pending offsets `data` (the bytes fetched at `state.offsets[0]`) reaches."""
    start = state.offsets[0]
    before = len(state.offsets)
    for item in _records(data, start):
        if isinstance(item, int):  # a batch the broker cut: ask for it whole next time
            state.fetch_bytes = max(item, state.fetch_bytes)
            return
        offset, timestamp, kind = item
        while state.offsets and state.offsets[0] <= offset:
            result.times[(*tp, state.offsets.pop(0))] = RecordTime(offset, timestamp, kind)
        if not state.offsets:
            return
    if len(state.offsets) == before:
        # nothing readable from here (markers only, or no data sent): ask for more, up to a limit
        state.fetch_bytes *= 64


_Record = tuple[int, int, TimestampType]


def _records(data: bytes, start: int) -> Iterator[_Record | int]:
    """The data records at or after `start` in fetched bytes, in offset order; at a batch the
    broker cut, what its header alone tells exactly, then the batch's size."""
    position = 0
    while position + _LENGTH_END <= len(data):
        length = struct.unpack_from(">i", data, 8 + position)[0]
        size = length + _LENGTH_END
        if position + _HEADER.size > len(data) or data[position + _MAGIC_AT] < 2:
            header = None
        else:
            header = _HEADER.unpack_from(data, position)
        if position + size > len(data):
            if header is not None:
                yield from _from_header(header, start)
            yield size
            return
        if header is None or not header[5] & _CONTROL:  # markers hold no record a consumer sees
            batch = MemoryRecords(data[position : position + size]).next_batch()
            kind: TimestampType = LOG_APPEND_TIME if batch.timestamp_type == 1 else CREATE_TIME
            for record in batch:
                if record.offset >= start:
                    yield record.offset, record.timestamp, kind
        position += size


def _from_header(header: tuple[Any, ...], start: int) -> Iterator[_Record]:
    """A cut batch's records whose time its header gives exactly (none when compacted)."""
    base, attributes, last_delta, base_time, max_time, count = (header[i] for i in (0, 5, 6, 7, 8, 12))
    if attributes & _CONTROL or count != last_delta + 1:
        return
    if attributes & _LOG_APPEND:
        for offset in range(max(base, start), base + last_delta + 1):
            yield offset, max_time, LOG_APPEND_TIME
    elif base >= start and not attributes & _DELETE_HORIZON:
        yield base, base_time, CREATE_TIME
