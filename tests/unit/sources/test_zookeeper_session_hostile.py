"""`ZkReadSession` itself (no collector around it) against a hostile server on 127.0.0.1
(`hostile_peers.ZooKeeperTree`): whatever one reply is replaced with (an empty, cut, negative- or
absurd-length frame, an error code known or not, garbage, a connection closed or reset mid-frame),
`get`, `children` and `pipelined` return or raise a `KafkaOpsError` naming the server and the request,
never a `struct.error`, an `OSError` or a bare kazoo exception; and a server that trickles one byte
every 0.2 s, stays silent or announces a 256 MiB frame cannot hold a call past its deadline.

Costs about 7 s: the fuzzed replies end at once; the deadline cases wait their 1 s."""

from __future__ import annotations

import re
import socket
import struct
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kazoo.exceptions import EXCEPTIONS, NoAuthError, NoNodeError

from kafka_ops.errors import KafkaOpsError, ZooKeeperAuthFailed, ZooKeeperProtocolError, ZooKeeperUnreachable
from kafka_ops.sources.zookeeper.session import DENIED, ZkReadSession
from tests.unit.sources.hostile_peers import Peer, Request, Serve, Spoiled, ZooKeeperTree, framed

TIMEOUT_S = 1.0
MARGIN_S = 1.5
"""How late past its deadline a call may end on a loaded machine."""
MAX_FRAME = 1 << 28  # the longest frame the session accepts (ZooKeeper's own answers are far shorter)
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])  # fmt: skip

Read = Callable[[ZkReadSession], object]
READS: dict[str, Read] = {
    "get": lambda session: session.get("/brokers/ids/1"),
    "children": lambda session: session.children("/brokers/ids"),
    "pipelined": lambda session: list(
        session.pipelined(["/brokers/ids/1", "/controller", "/brokers/ids/2"], "get", str, denied="yield")
    ),
}
"""Reads of the fake's Kafka chroot: one GetData, one GetChildren, three GetData in flight at once."""
NAMES_A_REQUEST = re.compile(r"the session handshake|(GetData|GetChildren) /\S+")


def spoiling(index: int, spoiled: Callable[[Request, bytes], Spoiled]) -> ZooKeeperTree:
    """The Kafka chroot, served as is except reply `index` (0: the session handshake, then request i has xid i)."""
    return ZooKeeperTree(spoil=lambda request, reply: spoiled(request, reply) if request.index == index else None)


def read_through(server: Peer, read: Read) -> tuple[object, float]:
    """What a fresh session on `server` returned or raised for `read` (its opening included), and how long
    it took."""
    started = time.monotonic()
    try:
        with ZkReadSession(server.address, timeout_s=TIMEOUT_S) as session:
            outcome = read(session)
    except Exception as e:  # the outcome is asserted on by the caller
        outcome = e
    return outcome, time.monotonic() - started


def resetting(tree: ZooKeeperTree) -> Serve:
    """`tree` on connections that end with a reset (RST) instead of an orderly close."""

    def serve(conn: socket.socket) -> None:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        tree(conn)

    return serve


# -- fuzzed replies ---------------------------------------------------------------------------------


@st.composite
def exchanges(draw: st.DrawFn) -> tuple[int, str, Spoiled]:
    """A read, and what replaces one of its replies (xid `index`: the session numbers requests from 1)."""
    read = draw(st.sampled_from(sorted(READS)))
    index = draw(st.integers(0, 3 if read == "pipelined" else 1))

    def header(err: int) -> bytes:
        return struct.pack(">iqi", index, 50, err)

    error_code = st.sampled_from(sorted(EXCEPTIONS)) | st.integers(-(2**31), 2**31 - 1)
    spoiled = draw(
        st.one_of(
            st.binary(max_size=64).map(lambda body: Spoiled(framed(body))),  # a frame of garbage
            st.builds(
                lambda err, body: Spoiled(framed(header(err) + body)),
                # NoAuth is ZooKeeper's answer for a znode its ACL hides: `NoAuthError(path)` by contract
                error_code.filter(lambda err: err != NoAuthError.code),
                st.binary(max_size=32),
            ),
            st.binary(min_size=1, max_size=64).map(lambda data: Spoiled(data, "close")),  # unframed, then gone
            (st.integers(-(2**31), -1) | st.integers(MAX_FRAME + 1, 2**31 - 1)).map(
                lambda length: Spoiled(struct.pack(">i", length) + b"\x00" * 16)  # a negative or absurd length
            ),
        )
    )
    return index, read, spoiled


@FUZZ
@given(exchange=exchanges())
@example(exchange=(1, "get", Spoiled(framed(b""))))  # an empty frame
@example(exchange=(1, "get", Spoiled(framed(struct.pack(">iqi", 1, 50, 0))[:-3], "close")))  # a cut frame
@example(exchange=(1, "children", Spoiled(struct.pack(">i", -1))))  # a negative length
@example(exchange=(1, "children", Spoiled(struct.pack(">i", 2**31 - 1) + b"\x00" * 16)))  # an absurd length
@example(exchange=(2, "pipelined", Spoiled(framed(struct.pack(">iqi", 2, 50, -9999)))))  # an unknown error code
@example(exchange=(0, "get", Spoiled(b"\xde\xad\xbe\xef" * 8, "close")))  # garbage for a handshake
def test_a_hostile_reply_is_a_result_or_a_typed_error_naming_server_and_request(
    exchange: tuple[int, str, Spoiled],
) -> None:
    index, read, spoiled = exchange
    with Peer(spoiling(index, lambda request, reply: spoiled)) as server:
        outcome, took = read_through(server, READS[read])
    if isinstance(outcome, BaseException):
        assert isinstance(outcome, KafkaOpsError), f"{read}, reply {index} = {spoiled}: {outcome!r}"
        assert server.address in str(outcome), f"the error does not name the server: {outcome}"
        assert NAMES_A_REQUEST.search(str(outcome)), f"the error does not name the request: {outcome}"
    assert took <= TIMEOUT_S + MARGIN_S, f"{read}, reply {index} = {spoiled} held the call {took:.1f}s"


# -- ZooKeeper's error codes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [pytest.param(code, id=error.__name__) for code, error in sorted(EXCEPTIONS.items()) if code != 0]
    + [pytest.param(-9999, id="unknown-negative"), pytest.param(7, id="unknown-positive")],
)
def test_an_error_code_is_none_denied_or_a_typed_error_naming_it(code: int) -> None:
    """NoNode is a result (None) and NoAuth the `NoAuthError(path)` callers turn into an auth failure or a
    denied znode; any other code ZooKeeper has fails the read naming it, and one it does not have is not
    ZooKeeper's protocol."""
    tree = spoiling(1, lambda request, reply: Spoiled(framed(struct.pack(">iqi", request.xid, 50, code))))
    with Peer(tree) as server:
        outcome, _ = read_through(server, READS["get"])
    error = EXCEPTIONS.get(code)
    if error is NoNodeError:
        assert outcome is None
    elif error is NoAuthError:
        assert isinstance(outcome, NoAuthError) and outcome.args == ("/brokers/ids/1",), repr(outcome)
    elif error is None:
        assert isinstance(outcome, ZooKeeperProtocolError), repr(outcome)
        assert f"answered GetData /brokers/ids/1 with error code {code}, which ZooKeeper does not have" in str(outcome)
    else:
        assert type(outcome) is ZooKeeperUnreachable, repr(outcome)
        assert str(outcome) == (
            f"ZooKeeper at {server.address} answered GetData /brokers/ids/1 with {error.__name__} (code {code})"
        )


def test_a_denied_znode_in_a_pipeline_is_yielded_and_the_reads_go_on() -> None:
    tree = spoiling(2, lambda request, reply: Spoiled(framed(struct.pack(">iqi", request.xid, 50, NoAuthError.code))))
    with Peer(tree) as server:
        outcome, _ = read_through(server, READS["pipelined"])
    assert isinstance(outcome, list)
    assert [(path, result is DENIED) for path, result in outcome] == [
        ("/brokers/ids/1", False),
        ("/controller", True),
        ("/brokers/ids/2", False),
    ]


@pytest.mark.parametrize(
    "code, raised, message",
    [
        (-115, ZooKeeperAuthFailed, "rejected the digest credentials"),
        (-4, ZooKeeperUnreachable, "answered the digest authentication with ConnectionLoss (code -4)"),
        (-9999, ZooKeeperUnreachable, "answered the digest authentication with error code -9999, which ZooKeeper"),
    ],
    ids=["auth-failed", "another-code", "unknown-code"],
)
def test_a_digest_authentication_answered_with_an_error_does_not_open_the_session(
    code: int, raised: type[KafkaOpsError], message: str
) -> None:
    tree = spoiling(1, lambda request, reply: Spoiled(framed(struct.pack(">iqi", -4, 0, code))))
    with Peer(tree) as server, pytest.raises(raised) as failed:
        ZkReadSession(server.address, timeout_s=TIMEOUT_S, digest_auth=("kafka", "secret")).open()
    assert server.address in str(failed.value) and message in str(failed.value)
    assert "secret" not in str(failed.value)


# -- a connection that ends mid-frame ---------------------------------------------------------------


@pytest.mark.parametrize(
    "serve, message",
    [
        (lambda tree: tree, "closed the connection before answering GetData /brokers/ids/1"),
        (resetting, "lost the connection to ZooKeeper at {address} during GetData /brokers/ids/1"),
    ],
    ids=["closed", "reset"],
)
def test_a_server_that_ends_the_connection_mid_frame_fails_the_read_naming_it(
    serve: Callable[[ZooKeeperTree], Serve], message: str
) -> None:
    tree = spoiling(1, lambda request, reply: Spoiled(reply[: len(reply) // 2], "close"))
    with Peer(serve(tree)) as server:
        outcome, took = read_through(server, READS["get"])
    assert isinstance(outcome, ZooKeeperUnreachable), repr(outcome)
    assert server.address in str(outcome) and message.format(address=server.address) in str(outcome)
    assert took < TIMEOUT_S, "a connection that is gone fails the read at once, not at its deadline"


# -- deadlines ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index, read, spoil, what",
    [
        (0, "get", lambda reply: Spoiled(reply, every_s=0.2), "the session handshake"),
        (1, "get", lambda reply: Spoiled(reply, every_s=0.2), "GetData /brokers/ids/1"),
        (2, "pipelined", lambda reply: Spoiled(reply, every_s=0.2), "GetData /controller"),
        (1, "children", lambda reply: Spoiled(b"", "hold"), "GetChildren /brokers/ids"),
        (1, "get", lambda reply: Spoiled(struct.pack(">i", MAX_FRAME) + reply[4:], "hold"), "GetData /brokers/ids/1"),
    ],
    ids=["handshake-trickled", "reply-trickled", "pipelined-reply-trickled", "silent", "256MiB-frame-announced"],
)
def test_a_server_that_trickles_or_stalls_fails_the_call_at_its_deadline(
    index: int, read: str, spoil: Callable[[bytes], Spoiled], what: str
) -> None:
    """One byte every 0.2 s would finish each reply in some 8 s, each byte well within 1 s of the last:
    the deadline is taken once per call, so the bytes that do arrive do not extend it."""
    with Peer(spoiling(index, lambda request, reply: spoil(reply))) as server:
        outcome, took = read_through(server, READS[read])
    assert isinstance(outcome, ZooKeeperUnreachable), repr(outcome)
    assert f"ZooKeeper at {server.address} did not answer {what} within 1s" in str(outcome)
    assert TIMEOUT_S - 0.05 <= took <= TIMEOUT_S + MARGIN_S, f"a 1 s call ended after {took:.2f}s"
