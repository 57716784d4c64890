"""How record_times reads a fetched record batch: per-record CreateTime, LogAppendTime from a header,
a batch the broker cut, transaction markers. Batches are built with kafka-python's own builder; the
sandbox test (`tests/integration/test_record_times_kraft.py`) reads real ones from Kafka 4.4."""

from __future__ import annotations

import struct

from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_ops.model.groups import RecordTime
from kafka_ops.sources.groups.record_times import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    SMALL_BYTES,
    RecordTimes,
    _Pending,
    _records,
    _resolve,
)

ATTRIBUTES_AT, MAX_TIMESTAMP_AT = 21, 35  # in the v2 batch header


def batch(base: int, timestamps: list[int], *, attributes: int = 0, max_timestamp: int | None = None) -> bytes:
    """A v2 batch of records `base`, `base + 1`, ... with these CreateTimes, its attribute bits
    or-ed with `attributes` (as a broker sets LogAppendTime or a control batch)."""
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    for i, ts in enumerate(timestamps):
        builder.append(i, ts, None, b"value-" * 10, [])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base)
    old = struct.unpack_from(">h", data, ATTRIBUTES_AT)[0]
    struct.pack_into(">h", data, ATTRIBUTES_AT, old | attributes)
    if max_timestamp is not None:
        struct.pack_into(">q", data, MAX_TIMESTAMP_AT, max_timestamp)
    return bytes(data)


def test_every_record_has_its_own_create_time_from_the_start_offset_on() -> None:
    data = batch(10, [1000, 1010, 1020, 1030, 1040])
    assert list(_records(data, 12)) == [(12, 1020, CREATE_TIME), (13, 1030, CREATE_TIME), (14, 1040, CREATE_TIME)]


def test_a_cut_batch_gives_only_what_its_header_tells_exactly_then_its_size() -> None:
    whole = batch(10, [1000, 1010, 1020])
    cut = whole[:70]
    assert list(_records(cut, 10)) == [(10, 1000, CREATE_TIME), len(whole)]  # the first record: base timestamp
    assert list(_records(cut, 11)) == [len(whole)]  # a later record's delta is not in the header
    appended = batch(10, [1000, 1010, 1020], attributes=0x08, max_timestamp=5000)[:70]
    assert list(_records(appended, 11)) == [(11, 5000, LOG_APPEND_TIME), (12, 5000, LOG_APPEND_TIME), len(whole)]


def test_log_append_time_applies_the_batch_max_timestamp_to_every_record() -> None:
    data = batch(0, [1, 2], attributes=0x08, max_timestamp=9000)
    assert list(_records(data, 0)) == [(0, 9000, LOG_APPEND_TIME), (1, 9000, LOG_APPEND_TIME)]


def test_markers_are_skipped_and_each_pending_offset_gets_the_first_record_at_or_after_it() -> None:
    data = batch(0, [100, 200]) + batch(2, [300], attributes=0x20) + batch(3, [400])
    found = RecordTimes()
    state = _Pending([1, 2])
    _resolve(("t", 0), state, data, found)
    assert found.times == {
        ("t", 0, 1): RecordTime(1, 200, CREATE_TIME),
        ("t", 0, 2): RecordTime(3, 400, CREATE_TIME),  # 2 is the marker's offset
    }
    assert state.offsets == []


def test_an_offset_beyond_the_bytes_stays_pending_with_the_cut_batch_size_asked_next() -> None:
    second = batch(2, list(range(300, 340)))  # larger than the first fetch's share
    data = batch(0, [100, 200]) + second[:70]
    found, state = RecordTimes(), _Pending([1, 3])
    _resolve(("t", 0), state, data, found)
    assert found.times == {("t", 0, 1): RecordTime(1, 200, CREATE_TIME)}
    assert len(second) > SMALL_BYTES and (state.offsets, state.fetch_bytes) == ([3], len(second))
