"""The topics' DescribeConfigs answers as kafka-python's connection parser reads them (`topic_configs.request`
picks `decode_overrides` as their decoder) against hostile bytes: whatever frame answers the request (no
bytes, a cut or garbled header, a body cut, flipped or given varints of 2^35 and more in place of any
byte), the parser returns the overrides or raises its `KafkaProtocolError`, the one error on which
kafka-python fails the request at once (and the collector records an issue naming the broker); anything
else would escape its read loop and leave the request to wait out its timeout. And no claimed count or
length makes the decoder loop: each answer is refused or read at once.

Costs about 2 s."""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.errors import KafkaProtocolError as ParserError
from kafka.protocol.parser import KafkaProtocol

from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.kraft.topic_configs import (
    DYNAMIC_TOPIC,
    TopicConfigsAnswer,
    decode_overrides,
    request,
    topic_overrides,
)
from tests.unit.snapshots import small_snapshot
from tests.unit.sources.hostile_peers import framed
from tests.unit.sources.test_kraft_topic_configs import encoded

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
ANSWER = [
    ("orders", 0, {"retention.ms": ("1000", DYNAMIC_TOPIC), "cleanup.policy": ("delete", 5)}),
    ("gone", 3, {}),
    ("payments", 0, {"min.insync.replicas": ("2", DYNAMIC_TOPIC), "segment.ms": (None, 4)}),
]
"""Two topics with overrides and one the broker no longer has."""
VARINTS = {
    "largest-5-byte": b"\xff\xff\xff\xff\x0f",  # 2^35 - 1: five bytes, as long as Kafka's get
    "6-byte": b"\xff" * 5 + b"\x01",
    "2^70": b"\xff" * 10 + b"\x01",
    "null": b"\x00",
}
AT_ONCE_S = 2.0
"""Far longer than reading an answer takes, far shorter than a loop over 2^35 claimed entries."""


def parsed(version: int, frame: bytes) -> TopicConfigsAnswer | Exception:
    """What kafka-python's parser made of `frame`, answering the request it just sent at `version`: the
    decoded answer, or the exception it raised."""
    parser = KafkaProtocol(client_id="kafka-ops")
    asked = request(["orders", "gone", "payments"])
    asked.API_VERSION = version
    parser.send_request(asked, correlation_id=0)
    try:
        [(_, answer)] = parser.receive_bytes(frame)
    except Exception as e:  # asserted on by the caller
        return e
    return answer  # type: ignore[no-any-return]


def answer_frame(version: int, body: bytes, correlation_id: int = 0) -> bytes:
    """`body` framed as a broker answers: its correlation id, then (flexible versions) a tagged-fields byte."""
    return framed(struct.pack(">i", correlation_id) + (b"\x00" if version >= 4 else b"") + body)


def assert_read_or_refused_by_the_parser(outcome: TopicConfigsAnswer | Exception) -> None:
    """Decoded into overrides the snapshot can hold, or the parser's own protocol error."""
    if isinstance(outcome, Exception):
        assert isinstance(outcome, ParserError), repr(outcome)
        return
    assert all(isinstance(t.name, str) and t.name for t in outcome.results)
    assert all(isinstance(k, str) and k for t in outcome.results for k in t.overrides)
    found, _ = topic_overrides([outcome], "broker 1")
    snap = small_snapshot()
    snap.configs.extend(found)
    snapshot_batch(snap)


def test_a_true_answer_is_read() -> None:
    outcome = parsed(4, answer_frame(4, encoded(ANSWER, 4)))
    assert isinstance(outcome, TopicConfigsAnswer), repr(outcome)
    assert {t.name: t.overrides for t in outcome.results} == {
        "orders": {"retention.ms": "1000"},
        "gone": {},
        "payments": {"min.insync.replicas": "2"},
    }


@pytest.mark.parametrize("version", [1, 4])
@pytest.mark.parametrize(
    "frame",
    [b"", b"\x00\x00", b"\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\x01", b"\x00\x00\x00\x07"],
    ids=["zero-length", "cut-correlation-id", "huge-header-tags", "another-correlation-id"],
)
def test_a_broken_header_is_the_parsers_protocol_error(version: int, frame: bytes) -> None:
    """kafka-python reads a header outside the guard it puts around a body: a header error was a
    struct.error out of its read loop."""
    outcome = parsed(version, framed(frame))
    assert isinstance(outcome, ParserError), repr(outcome)


@FUZZ
@given(
    version=st.sampled_from([1, 4]),
    how=st.sampled_from(["cut", "flip", *VARINTS]),
    at=st.integers(0, 1 << 16),
    byte=st.integers(0, 255),
)
def test_a_mutated_body_is_read_or_the_parsers_protocol_error(version: int, how: str, at: int, byte: int) -> None:
    body = encoded(ANSWER, version)
    at %= len(body) + 1
    if how == "cut":
        body = body[:at]
    elif how == "flip":
        body = body[:at] + bytes([byte]) + body[at + 1 :]
    else:
        body = body[:at] + VARINTS[how] + body[at + 1 :]
    assert_read_or_refused_by_the_parser(parsed(version, answer_frame(version, body)))


@pytest.mark.parametrize("varint", VARINTS.values(), ids=VARINTS.keys())
def test_no_claimed_count_or_length_makes_the_decoder_loop(varint: bytes) -> None:
    """Every byte of a flexible answer in turn (so every count and length in it) replaced by `varint`:
    refused or read at once, never a loop over a count of 2^35 entries."""
    body = encoded(ANSWER, 4)
    for at in range(len(body)):
        started = time.monotonic()
        outcome: Any
        try:
            outcome = decode_overrides(body[:at] + varint + body[at + 1 :], 4)
        except ValueError:
            outcome = None
        took = time.monotonic() - started
        assert took < AT_ONCE_S, f"byte {at}: {took:.2f} s"
        if outcome is not None:
            assert_read_or_refused_by_the_parser(outcome)
