"""The ZooKeeper session and collector against a hostile server (a real TCP server on 127.0.0.1,
`hostile_peers.ZooKeeperTree`): whatever it sends in place of one reply (an empty, cut, negative-length
or oversized frame, a reply to no request, an unknown error code, random bytes), the collector returns a
snapshot or raises a `KafkaOpsError` naming the server; and a server that trickles its bytes, goes
silent or stops mid-reply cannot hold a call past its deadline (a 1 s call ends within about 2 s:
the connect deadline, then the probe for a Kafka listener in its place).

Costs about 8 s: the fuzzed replies end at once; the deadline cases wait their 1 s (2 s for a handshake:
the session's, then the probe's)."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_ops.errors import KafkaOpsError, ZooKeeperProtocolError, ZooKeeperUnreachable
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from kafka_ops.sources.zookeeper.session import ZkReadSession
from tests.unit.sources.hostile_peers import Peer, Request, Spoiled, ZooKeeperTree, framed, timed

TIMEOUT_S = 1.0
LATEST_END_S = 2 * TIMEOUT_S + 0.5
"""A collection given 1 s: the session's deadline, then (its connect failed) the probe whether a Kafka
listener answers in ZooKeeper's place, given as long; plus slack for a loaded machine."""
FUZZ = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def collect(server: Peer) -> ClusterSnapshot:
    return ZooKeeperCollector("hostile", ZooKeeperTarget(server.address, timeout_s=TIMEOUT_S)).collect()


def spoiling(index: int, spoiled: Callable[[Request, bytes], Spoiled]) -> ZooKeeperTree:
    """The Kafka chroot, served as is except reply `index` (0: the session handshake)."""
    return ZooKeeperTree(spoil=lambda request, reply: spoiled(request, reply) if request.index == index else None)


def test_the_fake_server_serves_a_whole_snapshot() -> None:
    """Without spoiling, the fake is a ZooKeeper the collector reads a cluster from: the tests below
    spoil a server that works."""
    tree = ZooKeeperTree()
    with Peer(tree) as server:
        snap = collect(server)
    assert sorted(snap.brokers) == [1, 2]
    assert sorted(snap.partition_states) == [("orders", 0), ("orders", 1)]
    assert snap.controller is not None and snap.controller.broker_id == 1
    assert not snap.issues
    assert len(tree.requests) >= 20, "the walk reads the chroot's znodes, so each can be spoiled"


WALK_REQUESTS = 24  # about the clean walk's requests, handshake counted: every one of them gets spoiled

HOSTILE_REPLIES: dict[str, Callable[[Request, bytes, bytes], Spoiled]] = {
    "empty frame": lambda r, reply, noise: Spoiled(framed(b"")),
    "header cut": lambda r, reply, noise: Spoiled(framed(reply[4 : 4 + len(noise) % 16])),
    "body cut": lambda r, reply, noise: Spoiled(framed(reply[4:-1] if len(reply) > 20 else b"")),
    "negative length": lambda r, reply, noise: Spoiled(struct.pack(">i", -1 - len(noise)) + reply[4:]),
    "2^31-1 length, then close": lambda r, reply, noise: Spoiled(struct.pack(">i", 2**31 - 1) + reply[4:], "close"),
    "cut mid-frame, then close": lambda r, reply, noise: Spoiled(reply[: max(1, len(reply) // 2)], "close"),
    "random body": lambda r, reply, noise: Spoiled(framed(noise)),
    "right header, random body": lambda r, reply, noise: Spoiled(framed(reply[4:20] + noise)),
    "unknown error code": lambda r, reply, noise: Spoiled(framed(struct.pack(">iqi", r.xid, 50, -9999))),
    "reply to no request": lambda r, reply, noise: Spoiled(framed(struct.pack(">iqi", r.xid + 7777, 50, 0))),
    "child count past the end": lambda r, reply, noise: Spoiled(
        framed(struct.pack(">iqii", r.xid, 50, 0, 2**31 - 1) + noise)
    ),
    "null child name": lambda r, reply, noise: Spoiled(framed(struct.pack(">iqiii", r.xid, 50, 0, 1, -1))),
    "data longer than the frame": lambda r, reply, noise: Spoiled(
        framed(struct.pack(">iqii", r.xid, 50, 0, 1 << 30) + noise)
    ),
    "random bytes, then close": lambda r, reply, noise: Spoiled(noise, "close"),
}


@FUZZ
@given(
    index=st.integers(0, WALK_REQUESTS),
    kind=st.sampled_from(sorted(HOSTILE_REPLIES)),
    noise=st.binary(max_size=80),
)
def test_a_hostile_reply_is_a_typed_error_or_an_issue(index: int, kind: str, noise: bytes) -> None:
    spoil = HOSTILE_REPLIES[kind]
    with Peer(spoiling(index, lambda request, reply: spoil(request, reply, noise))) as server:
        outcome, took = timed(lambda: collect(server))
    assert isinstance(outcome, ClusterSnapshot | KafkaOpsError), f"{kind} at reply {index}: {outcome!r}"
    if isinstance(outcome, KafkaOpsError):
        assert server.address in str(outcome), f"the error does not name the server: {outcome}"
    assert took <= LATEST_END_S, f"{kind} at reply {index} held the collection {took:.1f}s"


@pytest.mark.parametrize(
    "index, spoiled",
    [
        (0, Spoiled(b"", "hold")),  # a handshake never answered
        (0, Spoiled(framed(b"\x00" * 40), every_s=0.1)),  # the handshake trickled
        (5, Spoiled(framed(b"\x00" * 40), every_s=0.1)),  # a reply trickled mid-walk
    ],
    ids=["silent-handshake", "trickled-handshake", "trickled-reply"],
)
def test_a_server_that_trickles_or_stops_cannot_hold_a_call_past_its_deadline(index: int, spoiled: Spoiled) -> None:
    with Peer(spoiling(index, lambda request, reply: spoiled)) as server:
        outcome, took = timed(lambda: collect(server))
    assert isinstance(outcome, ZooKeeperUnreachable), repr(outcome)
    assert server.address in str(outcome)
    assert took <= LATEST_END_S, f"held {took:.1f}s by a 1 s deadline"


def test_a_trickled_reply_fails_the_read_at_its_own_deadline() -> None:
    """The session itself: one read, its reply trickled a byte every 100 ms (the whole reply would take
    some 7 s), ends at its 1 s deadline, naming the server and the request."""
    tree = spoiling(1, lambda request, reply: Spoiled(reply, every_s=0.1))
    with Peer(tree) as server, ZkReadSession(server.address, timeout_s=TIMEOUT_S) as session:
        outcome, took = timed(lambda: session.get("/brokers/ids/1"))
    assert isinstance(outcome, ZooKeeperUnreachable), repr(outcome)
    assert f"ZooKeeper at {server.address} did not answer GetData /brokers/ids/1 within 1s" in str(outcome)
    assert TIMEOUT_S - 0.05 <= took <= TIMEOUT_S + 0.5


@pytest.mark.parametrize(
    "reply, problem",
    [
        (lambda xid: framed(b""), "a reply of 0 bytes"),
        (lambda xid: struct.pack(">i", -5), "a frame of -5 bytes"),
        (lambda xid: framed(struct.pack(">iqi", xid, 1, -4242)), "error code -4242, which ZooKeeper does not have"),
        (lambda xid: framed(struct.pack(">iqi", xid, 1, 0) + b"\x00\x00"), "a reply it cannot read"),
    ],
    ids=["empty", "negative-length", "unknown-error-code", "cut-body"],
)
def test_a_malformed_reply_is_a_protocol_error_naming_server_and_request(
    reply: Callable[[int], bytes], problem: str
) -> None:
    tree = spoiling(1, lambda request, _: Spoiled(reply(request.xid)))
    with Peer(tree) as server, ZkReadSession(server.address, timeout_s=TIMEOUT_S) as session:
        with pytest.raises(ZooKeeperProtocolError) as raised:
            session.get("/brokers/ids/1")
    assert f"ZooKeeper at {server.address} answered GetData /brokers/ids/1 with" in str(raised.value)
    assert problem in str(raised.value)
