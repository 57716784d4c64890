"""The `__consumer_offsets` decoder against bytes Kafka 4.4's own classes wrote (`OffsetCommitKey` /
`OffsetCommitValue`, `MessageUtil.toVersionPrefixedBytes`, every version), the partition a group lives
on against Java's `String.hashCode`, and hostile bytes: only `CommitLogFormatError` escapes."""

from __future__ import annotations

import contextlib
import struct
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_ops.model.groups import LoggedCommit
from kafka_ops.sources.groups.commit_log import CommitLogFormatError, decode, partition_for

KEYS = {
    0: "0000000a62696c6c696e672dc3a900066f726465727300000007",
    1: "0001000a62696c6c696e672dc3a900066f726465727300000007",
}
VALUES = {
    0: "00000000001cbe991a1400046d6574610000019ace6f6c7b",
    1: "00010000001cbe991a1400046d6574610000019ace6f6c7b0000019ace78943b",
    2: "00020000001cbe991a1400046d6574610000019ace6f6c7b",
    3: "00030000001cbe991a140000000500046d6574610000019ace6f6c7b",
    4: "00040000001cbe991a1400000005056d6574610000019ace6f6c7b01001000000000000000000000000000000001",
}
COMMITTED_AT = datetime.fromtimestamp(1764400000123 / 1000, UTC)


@pytest.mark.parametrize("key_version", sorted(KEYS))
@pytest.mark.parametrize("value_version", sorted(VALUES))
def test_every_version_kafka_writes_is_read(key_version: int, value_version: int) -> None:
    commit = decode(bytes.fromhex(KEYS[key_version]), bytes.fromhex(VALUES[value_version]), 0)
    assert commit == LoggedCommit("billing-é", "orders", 7, 123456789012, COMMITTED_AT)


def test_a_tombstone_is_the_offset_deleted_at_the_record_time() -> None:
    assert decode(bytes.fromhex(KEYS[1]), None, 1764400000123) == LoggedCommit(
        "billing-é", "orders", 7, None, COMMITTED_AT
    )


def test_records_of_other_kinds_are_skipped() -> None:
    for record_type in (2, 3, 8, 16):  # group metadata, consumer / share / streams group records
        assert decode(struct.pack(">h", record_type) + b"\x00\x01g", b"\x00\x00", 0) is None


def test_the_group_partition_is_kafkas() -> None:
    # Java: Math.abs("billing-é".hashCode()) % 50 == 29; "polygenelubricants".hashCode() is
    # Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0
    assert partition_for("billing-é", 50) == 29
    assert partition_for("polygenelubricants", 50) == 0


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        (None, b"", "without a key"),
        (bytes.fromhex(KEYS[1])[:-2], bytes.fromhex(VALUES[3]), "bytes wanted"),
        (bytes.fromhex(KEYS[1]), bytes.fromhex(VALUES[3])[:-1], "bytes wanted"),
        (bytes.fromhex(KEYS[1]), b"\x00\x09" + bytes(30), "version 9"),
        (b"\x00\x01\xff\xfe", None, "bytes wanted"),
        (bytes.fromhex(KEYS[1]), b"\x00\x04" + bytes(12) + b"\xff" * 6, "varint"),
        (bytes.fromhex(KEYS[1]), b"\x00\x00" + bytes(8) + b"\x00\x01\xff" + b"\x7f" * 8, "not UTF-8"),
        (bytes.fromhex(KEYS[1]), b"\x00\x00" + bytes(8) + b"\x00\x00" + b"\x7f" * 8, "not a time"),
    ],
)
def test_bytes_that_are_not_kafkas_are_refused_by_name(key: bytes | None, value: bytes | None, why: str) -> None:
    with pytest.raises(CommitLogFormatError, match=why):
        decode(key, value, 0)


@given(st.binary(max_size=64), st.none() | st.binary(max_size=64), st.integers(-(2**63), 2**63 - 1))
def test_hostile_bytes_decode_or_raise_the_format_error_only(key: bytes, value: bytes | None, at: int) -> None:
    with contextlib.suppress(CommitLogFormatError):
        decode(key, value, at)
