"""`kraft.controllers`' own socket code (`speaks_kafka`, `describe_quorum`) against a hostile controller
listener on 127.0.0.1 (`fake_kafka_broker.FakeBroker`): whatever one answer is replaced with (a zero-length,
cut, oversized or garbage frame, a mutated body, a connection closed mid-frame, a DescribeQuorum version
that cannot be), `speaks_kafka` returns a bool and `describe_quorum` a quorum or `KafkaUnreachable`
naming the controller and the request, never a bare decoding error; and a listener that trickles one byte
every 0.2 s cannot hold a 1 s call past its deadline.

Costs about 4 s: the fuzzed answers end at once; the three deadline cases wait their 1 s."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_ops.errors import KafkaUnreachable
from kafka_ops.model.cluster import Quorum
from kafka_ops.sources.kraft.controllers import MAX_ANSWER_BYTES, describe_quorum, speaks_kafka
from tests.unit.sources.fake_kafka_broker import API_VERSIONS, DESCRIBE_QUORUM, LEADER, Call, FakeBroker, overflowing
from tests.unit.sources.hostile_peers import Spoiled, framed, timed

TIMEOUT_S = 1.0
MARGIN_S = 1.5
"""How late past its deadline a call may end on a loaded machine."""
PATIENT_S = 10.0
"""The timeout of a test that an answer fails at once."""
AT_ONCE_S = 5.0
"""An answer that is all there is known bad when it arrives: no call waits for more (half the patient
timeout, for a machine as loaded as CI's)."""
FUZZ = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


@pytest.fixture(scope="module")
def controller() -> Iterator[FakeBroker]:
    """One listener for the module: each test sets its `spoil`."""
    with FakeBroker() as fake:
        yield fake


def spoiling(api_key: int, spoiled: Callable[[bytes], Spoiled]) -> Callable[[Call, bytes], Spoiled | None]:
    """Every answer to `api_key` replaced by `spoiled(true answer)`; the others sent as they are."""
    return lambda call, answer: spoiled(answer) if call.api_key == api_key else None


def both(controller: FakeBroker, timeout_s: float = TIMEOUT_S) -> tuple[tuple[object, float], tuple[object, float]]:
    """What `describe_quorum` and `speaks_kafka` made of the listener, and how long each took."""
    return (
        timed(lambda: describe_quorum(controller.address, timeout_s)),
        timed(lambda: speaks_kafka("127.0.0.1", controller.port, timeout_s)),
    )


def test_the_fake_listener_is_a_controller(controller: FakeBroker) -> None:
    """Unspoiled, both calls read it: the tests below spoil a listener that works."""
    controller.spoil = lambda call, answer: None
    (quorum, _), (spoken, _) = both(controller)
    assert isinstance(quorum, Quorum) and quorum.leader_id == LEADER
    assert spoken is True


def assert_refused_naming_the_peer(outcome: object, controller: FakeBroker, *said: str) -> None:
    assert isinstance(outcome, KafkaUnreachable), repr(outcome)
    assert controller.address in str(outcome)
    for words in said:
        assert words in str(outcome)


# -- one answer replaced -------------------------------------------------------------------------------


def body_of(answer: bytes, api_key: int) -> tuple[bytes, bytes]:
    """An answer's header (correlation id, and the tagged fields of DescribeQuorum's, a flexible answer)
    and its body, without the frame's length."""
    end = 8 if api_key == API_VERSIONS else 9
    return answer[4:end], answer[end:]


def cut_body(answer: bytes, api_key: int) -> Spoiled:
    """Two bytes of the body, in a frame that says so."""
    head, body = body_of(answer, api_key)
    return Spoiled(framed(head + body[:2]))


@pytest.mark.parametrize("api_key", [API_VERSIONS, DESCRIBE_QUORUM], ids=["ApiVersions", "DescribeQuorum"])
@pytest.mark.parametrize(
    "replace, problem",
    [
        (lambda answer, api_key: Spoiled(framed(b"")), "with bytes that are not Kafka's protocol"),
        (cut_body, "with bytes that are not Kafka's protocol"),
        (lambda answer, api_key: Spoiled(framed(b"\x7f" + b"\xff" * 20)), "with bytes that are not Kafka's protocol"),
        (lambda answer, api_key: Spoiled(answer[:9], then="close"), "closed the connection before answering"),
        (lambda answer, api_key: Spoiled(struct.pack(">i", MAX_ANSWER_BYTES + 1)), "Invalid frame length"),
        (lambda answer, api_key: Spoiled(struct.pack(">i", -1)), "Invalid frame length"),
    ],
    ids=["zero-length-frame", "cut-body", "garbage", "closed-mid-frame", "oversized-frame", "negative-length"],
)
def test_a_broken_answer_is_a_typed_refusal_at_once(
    controller: FakeBroker, api_key: int, replace: Callable[[bytes, int], Spoiled], problem: str
) -> None:
    """A frame of no bytes, a body cut short (in a frame that says so), garbage that answers no request,
    a connection closed mid-frame, a frame announcing more than an answer can be (kafka-python would
    allocate it) or less than nothing: refused as it arrives, naming the listener and what it was asked."""
    controller.spoil = lambda call, answer: replace(answer, api_key) if call.api_key == api_key else None
    (quorum, took), (spoken, spoken_took) = both(controller, PATIENT_S)
    asked = "ApiVersions v0" if api_key == API_VERSIONS else "DescribeQuorum v2"
    assert_refused_naming_the_peer(quorum, controller, problem, asked)
    assert spoken is (api_key != API_VERSIONS)
    assert took < AT_ONCE_S and spoken_took < AT_ONCE_S


def test_a_describe_quorum_version_below_zero_is_refused(controller: FakeBroker) -> None:
    def negative_quorum_version(call: Call, answer: bytes) -> Spoiled | None:
        if call.api_key != API_VERSIONS:
            return None
        at = answer.index(struct.pack(">hhh", DESCRIBE_QUORUM, 0, 2))  # api key, min and max version
        return Spoiled(answer[:at] + struct.pack(">hhh", DESCRIBE_QUORUM, 0, -1) + answer[at + 6 :])

    controller.spoil = negative_quorum_version
    quorum, _ = timed(lambda: describe_quorum(controller.address, TIMEOUT_S))
    assert_refused_naming_the_peer(quorum, controller, "DescribeQuorum up to version -1")


# -- mutated answers -----------------------------------------------------------------------------------

HUGE_VARINT = b"\xff" * 9 + b"\x01"
"""A varint of 2^63 and more (Kafka's are five bytes at most), where a length or count is read or not."""
MUTATION = st.tuples(
    st.sampled_from(["cut", "flip", "insert", "huge-varint"]), st.integers(0, 1 << 16), st.integers(0, 255)
)


def mutated(answer: bytes, api_key: int, how: str, at: int, byte: int) -> bytes:
    """The answer's body changed at one place, framed anew: each fuzzed answer is all there is, so a call
    that waits for more is a failure of the reader, not of the fake."""
    head, body = body_of(answer, api_key)
    at %= len(body) + 1
    if how == "cut":
        body = body[:at]
    elif how == "flip":
        body = body[:at] + bytes([byte]) + body[at + 1 :]
    elif how == "insert":
        body = body[:at] + bytes([byte]) + body[at:]
    else:
        body = body[:at] + HUGE_VARINT + body[at:]
    return framed(head + body)


@FUZZ
@given(api_key=st.sampled_from([API_VERSIONS, DESCRIBE_QUORUM]), mutation=MUTATION)
def test_a_mutated_answer_is_a_result_or_a_typed_refusal(
    controller: FakeBroker, api_key: int, mutation: tuple[str, int, int]
) -> None:
    controller.spoil = spoiling(api_key, lambda answer: Spoiled(mutated(answer, api_key, *mutation)))
    (quorum, took), (spoken, spoken_took) = both(controller, PATIENT_S)
    if not isinstance(quorum, Quorum):
        assert_refused_naming_the_peer(quorum, controller)
    assert isinstance(spoken, bool), repr(spoken)
    assert took < AT_ONCE_S and spoken_took < AT_ONCE_S, (took, spoken_took)


def test_an_answer_kafka_python_overflows_on_is_refused(controller: FakeBroker) -> None:
    """Its OverflowError used to escape `describe_quorum`, and with it the snapshot of a migrating cluster."""
    controller.spoil = spoiling(DESCRIBE_QUORUM, overflowing)
    quorum, took = timed(lambda: describe_quorum(controller.address, PATIENT_S))
    assert_refused_naming_the_peer(quorum, controller, "DescribeQuorum v2 with bytes that are not", "OverflowError")
    assert took < AT_ONCE_S


# -- deadlines ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("api_key", [API_VERSIONS, DESCRIBE_QUORUM], ids=["ApiVersions", "DescribeQuorum"])
def test_a_trickling_listener_cannot_hold_describe_quorum_past_its_deadline(
    controller: FakeBroker, api_key: int
) -> None:
    """One byte every 0.2 s: each comes well within any per-read timeout; only the deadline ends the call."""
    controller.spoil = spoiling(api_key, lambda answer: Spoiled(answer, then="hold", every_s=0.2))
    quorum, took = timed(lambda: describe_quorum(controller.address, TIMEOUT_S))
    assert_refused_naming_the_peer(quorum, controller, "did not answer")
    assert took <= TIMEOUT_S + MARGIN_S, f"a {TIMEOUT_S} s DescribeQuorum ran {took:.1f} s"


def test_a_trickling_listener_cannot_hold_speaks_kafka_past_its_deadline(controller: FakeBroker) -> None:
    controller.spoil = spoiling(API_VERSIONS, lambda answer: Spoiled(answer, then="hold", every_s=0.2))
    spoken, took = timed(lambda: speaks_kafka("127.0.0.1", controller.port, TIMEOUT_S))
    assert spoken is False
    assert took <= TIMEOUT_S + MARGIN_S, f"a {TIMEOUT_S} s speaks_kafka ran {took:.1f} s"
