"""DescribeQuorum through kafka-python's admin client (`quorum.ask`, as the KRaft collector and the change
poll send it) against a hostile broker on 127.0.0.1 (`fake_kafka_broker.FakeBroker`, which bootstraps the
client truly and then spoils the quorum's answer):

- an answer that is no quorum (null or empty arrays, a mutated body, one kafka-python overflows on) is a
  `KafkaProtocolError` naming the broker's id and host:port, and the snapshot keeps the rest with a
  `DescribeQuorum` issue (the change poll: an issue, and the quorum's parts unknown), at once;
- a broker that trickles its answer one byte every 0.2 s, never sends it, or trickles the ApiVersions
  that opens the connection the request waits on (kafka-python's request clock starts only after it,
  and its setup timeout is 10 s) cannot hold a 1 s request past its deadline: `KafkaUnreachable`
  naming the broker and the request; in the snapshot, that is an issue and the rest is kept.

Costs about 5 s: the hostile answers end at once; the four deadline cases wait their 1 s."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kafka.errors import KafkaProtocolError as ParserError
from kafka.protocol.parser import KafkaProtocol

from kafka_ops.errors import KafkaProtocolError, KafkaUnreachable
from kafka_ops.model.cluster import ClusterSnapshot, Quorum
from kafka_ops.sources import change_digest
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.kraft import change_poll, quorum
from kafka_ops.sources.kraft.collector import KRaftCollector
from tests.unit.sources.fake_kafka_broker import (
    API_VERSIONS,
    DESCRIBE_QUORUM,
    LEADER,
    TOPIC,
    Call,
    FakeBroker,
    overflowing,
    quorum_partition,
    replica,
)
from tests.unit.sources.hostile_peers import Spoiled, framed, timed

TIMEOUT_S = 1.0
MARGIN_S = 1.5
"""How late past its deadline a call may end on a loaded machine."""
OPTIONS = {"request_timeout_ms": int(TIMEOUT_S * 1000), "bootstrap_timeout_ms": int(TIMEOUT_S * 1000)}
PATIENT = {"request_timeout_ms": 10_000, "bootstrap_timeout_ms": 10_000}
"""The options of a test that an answer fails at once: a timeout would take 10 s."""
AT_ONCE_S = 5.0
"""Half the patient timeout: a client's bootstrap and one exchange, on a machine as loaded as CI's."""
FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def at_quorum(replace: Callable[[bytes], Spoiled]) -> Callable[[Call, bytes], Spoiled | None]:
    """DescribeQuorum's answer replaced by `replace(true answer)`; every other answer sent as it is."""
    return lambda call, answer: replace(answer) if call.api_key == DESCRIBE_QUORUM else None


def live_read(broker: FakeBroker, options: dict[str, int] = OPTIONS) -> tuple[object, float]:
    """What the collector's live read (the quorum, brokers and these topics: none) made of `broker`,
    bootstrap included, and how long it took."""
    return timed(lambda: KRaftCollector("fake", KafkaTarget(broker.address, options)).collect(topics=[]))


def poll(broker: FakeBroker, options: dict[str, int] = OPTIONS) -> tuple[object, float]:
    """What one change poll of `broker` returned (parts and issues) or raised, and how long it took."""

    def polled() -> object:
        admin = KafkaTarget(broker.address, options)()
        try:
            return change_poll.poll(admin)
        finally:
            admin.close()

    return timed(polled)


def asked(broker: FakeBroker, options: dict[str, int] = OPTIONS) -> tuple[object, float]:
    """What `quorum.ask` returned or raised on a fresh client of `broker`, and how long it took."""

    def ask() -> object:
        admin = KafkaTarget(broker.address, options)()
        try:
            return quorum.ask(admin)
        finally:
            admin.close()

    return timed(ask)


def test_the_fake_broker_is_a_kraft_cluster_both_read() -> None:
    """Unspoiled, the live read and the change poll see its quorum: the tests below spoil a broker that works."""
    with FakeBroker() as broker:
        snap, _ = live_read(broker)
        found, _ = poll(broker)
    assert isinstance(snap, ClusterSnapshot), repr(snap)
    assert snap.quorum is not None and snap.quorum.leader_id == LEADER
    assert snap.controller is not None and snap.controller.broker_id == LEADER
    assert not [i for i in snap.issues if i.path == quorum.REQUEST]
    parts, issues = found
    assert parts[change_digest.CONTROLLER] == (LEADER, 5) and issues == []


# -- answers that are no quorum: an issue, the rest kept ------------------------------------------------


def names_the_broker(problem: str, broker: FakeBroker) -> bool:
    return f"DescribeQuorum answered by broker 1 at {broker.address}" in problem


@pytest.mark.parametrize(
    "quorum_topics, problem",
    [
        (None, "is not a quorum: topics is None"),
        ([], "is not a quorum: no topic"),
        ([TOPIC(topic_name="__cluster_metadata", partitions=None)], "is not a quorum: partitions is None"),
        ([TOPIC(topic_name="__cluster_metadata", partitions=[])], "is not a quorum: no partition"),
        ([TOPIC(topic_name="__cluster_metadata", partitions=[quorum_partition(None, [replica(1, 9)])])],
         "is not a quorum: current_voters is None"),
    ],
    ids=["null-topics", "no-topics", "null-partitions", "no-partitions", "null-voters"],
)  # fmt: skip
def test_an_answer_without_the_quorum_is_an_issue_naming_the_broker(
    quorum_topics: list[Any] | None, problem: str
) -> None:
    with FakeBroker(quorum=quorum_topics) as broker:
        snap, took = live_read(broker, PATIENT)
    assert isinstance(snap, ClusterSnapshot), repr(snap)
    assert snap.quorum is None and snap.controller is None
    assert snap.brokers.keys() == {1}, "the rest of the snapshot is kept"
    [issue] = [i for i in snap.issues if i.path == quorum.REQUEST]
    assert names_the_broker(issue.problem, broker) and problem in issue.problem, issue.problem
    assert took < AT_ONCE_S


def test_an_answer_kafka_python_overflows_on_is_an_issue_at_once_not_a_timeout() -> None:
    """kafka-python's parser turns only ValueError and struct.error into a failed request: the OverflowError
    of this answer used to escape its read loop, and the request waited out its timeout."""
    with FakeBroker(spoil=at_quorum(overflowing)) as broker:
        snap, took = live_read(broker, PATIENT)
        found, poll_took = poll(broker, PATIENT)
    assert isinstance(snap, ClusterSnapshot), repr(snap)
    [issue] = [i for i in snap.issues if i.path == quorum.REQUEST]
    assert f"broker 1 at {broker.address} with bytes that are not Kafka's protocol" in issue.problem
    assert "OverflowError" in issue.problem
    parts, issues = found
    assert parts[change_digest.CONTROLLER] == change_digest.UNKNOWN
    assert [i.path for i in issues] == ["DescribeQuorum"] and broker.address in issues[0].problem
    assert took < AT_ONCE_S and poll_took < AT_ONCE_S


MUTATION = st.tuples(st.sampled_from(["cut", "flip", "insert"]), st.integers(0, 1 << 16), st.integers(0, 255))


def mutated(answer: bytes, how: str, at: int, byte: int) -> Spoiled:
    """The answer's body (after its correlation id and tagged fields) changed at one place, framed anew:
    all there is of it arrives, so a request that waits for more is a failure of the reader."""
    head, body = answer[4:9], answer[9:]
    at %= len(body) + 1
    if how == "cut":
        body = body[:at]
    elif how == "flip":
        body = body[:at] + bytes([byte]) + body[at + 1 :]
    else:
        body = body[:at] + bytes([byte]) + body[at:]
    return Spoiled(framed(head + body))


@FUZZ
@given(mutation=MUTATION)
@example(mutation=("cut", 3, 0))  # cut inside its topics array
def test_a_mutated_answer_is_a_quorum_or_a_typed_error_at_once(mutation: tuple[str, int, int]) -> None:
    """A quorum, `KafkaProtocolError` naming the broker, or kafka-python's error for an error code the
    mutation wrote: never a timeout (the answer is all there), never a bare decoding error."""
    with FakeBroker(spoil=at_quorum(lambda answer: mutated(answer, *mutation))) as broker:
        outcome, took = asked(broker, PATIENT)
    if isinstance(outcome, KafkaProtocolError):
        assert f"broker 1 at {broker.address}" in str(outcome), str(outcome)
    elif not isinstance(outcome, Quorum):
        assert type(outcome).__module__ == "kafka.errors" and "DescribeQuorum" in str(outcome), repr(outcome)
    assert took < AT_ONCE_S, f"{took:.2f} s: {outcome!r}"


@pytest.mark.parametrize(
    "frame",
    [b"", b"\x00\x00", b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\x01"],
    ids=["zero-length", "cut-correlation-id", "no-header-tags", "huge-header-tags"],
)
def test_a_broken_header_is_the_parsers_protocol_error(frame: bytes) -> None:
    """kafka-python's parser reads a header outside the guard it puts around a body: its own protocol error
    (on which the connection fails the request at once) is all that may come out of it."""
    parser = KafkaProtocol(client_id="kafka-ops")
    asked = quorum.request()
    asked.API_VERSION = 2
    parser.send_request(asked, correlation_id=0)
    with pytest.raises(ParserError, match="not a DescribeQuorum v2 answer"):
        parser.receive_bytes(framed(frame))


# -- deadlines ------------------------------------------------------------------------------------------


def trickled_answer(call: Call, answer: bytes) -> Spoiled | None:
    return Spoiled(answer, then="hold", every_s=0.2) if call.api_key == DESCRIBE_QUORUM else None


def silent(call: Call, answer: bytes) -> Spoiled | None:
    return Spoiled(b"", then="hold") if call.api_key == DESCRIBE_QUORUM else None


def trickled_connection(call: Call, answer: bytes) -> Spoiled | None:
    """The bootstrap's connection (the first) answers at once; ApiVersions on any later one, which
    kafka-python sends before the request it opened the connection for, is trickled."""
    return Spoiled(answer, then="hold", every_s=0.2) if call.api_key == API_VERSIONS and call.connection > 1 else None


@pytest.mark.parametrize(
    "spoil", [trickled_answer, silent, trickled_connection], ids=["trickled", "silent", "trickled-connection-setup"]
)
def test_a_stalling_broker_cannot_hold_describe_quorum_past_the_request_timeout(
    spoil: Callable[[Call, bytes], Spoiled | None],
) -> None:
    with FakeBroker(spoil=spoil) as broker:
        outcome, took = asked(broker)
    assert isinstance(outcome, KafkaUnreachable), repr(outcome)
    assert f"DescribeQuorum: broker 1 at {broker.address} did not answer within" in str(outcome)
    assert took <= TIMEOUT_S + MARGIN_S, f"a {TIMEOUT_S} s DescribeQuorum ran {took:.1f} s"


def test_a_describe_quorum_that_times_out_is_an_issue_and_the_snapshot_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broker forwards DescribeQuorum to the active controller and answers once it has: with that
    controller killed, brokers serving everything else let it time out (two minutes in an hour-long
    soak). The fake broker serves one connection at a time, so it cannot answer the rest while it holds
    DescribeQuorum back: `quorum.ask`'s own timeout (asserted above) stands in for it here."""

    def timed_out(admin: object) -> Quorum:
        raise KafkaUnreachable("DescribeQuorum: broker 1 at 127.0.0.1:1 did not answer within request_timeout_ms")

    monkeypatch.setattr(quorum, "ask", timed_out)
    with FakeBroker() as broker:
        snap, _ = live_read(broker)
    assert isinstance(snap, ClusterSnapshot), repr(snap)
    assert snap.quorum is None and snap.controller is None
    assert snap.brokers.keys() == {1}, "the rest of the snapshot is kept"
    [issue] = [i for i in snap.issues if i.path == quorum.REQUEST]
    assert "did not answer within request_timeout_ms" in issue.problem


def test_a_stalling_broker_cannot_hold_the_change_poll_past_the_request_timeout() -> None:
    with FakeBroker(spoil=trickled_answer) as broker:
        outcome, took = poll(broker)
    assert isinstance(outcome, KafkaUnreachable), repr(outcome)
    assert broker.address in str(outcome)
    assert took <= TIMEOUT_S + MARGIN_S, f"a {TIMEOUT_S} s change poll ran {took:.1f} s"
