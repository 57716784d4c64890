"""Peers that answer like a hostile network: real TCP servers on 127.0.0.1 that speak just enough
ZooKeeper or Kafka to get a client talking, then send what a test tells them (a malformed frame, a
reply trickled one byte at a time, a reply cut off mid-way, nothing at all).

`Peer` runs one server on a free loopback port; each connection is served by `serve(conn)` on its
own thread. The ZooKeeper fake (`ZooKeeperTree`) holds a small Kafka chroot and answers every
request from it unless `spoil` says otherwise; the Kafka fake (`kafka_answers`) answers ApiVersions
and DescribeQuorum with whatever bytes the test gives.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from kazoo.protocol.serialization import Close, GetChildren, GetData, stat_struct

Serve = Callable[[socket.socket], None]


class Peer:
    """A TCP server on 127.0.0.1 serving every connection with `serve`; `address` is `127.0.0.1:port`."""

    def __init__(self, serve: Serve) -> None:
        self.serve = serve
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.connections = 0
        self._conns: list[socket.socket] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self._stopped.is_set():  # the connection `close` makes to wake this accept
                conn.close()
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # replies go out as written
            self.connections += 1
            self._conns.append(conn)
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            self.serve(conn)

    def close(self) -> None:
        self._stopped.set()
        with contextlib.suppress(OSError):  # closing a listening socket does not wake its accept: a connection does
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        self._thread.join(5)
        self.listener.close()
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def peer(serve: Serve) -> Iterator[Peer]:
    with Peer(serve) as p:
        yield p


def timed(call: Callable[[], object]) -> tuple[object, float]:
    """What `call` returned or raised, and how long it took."""
    started = time.monotonic()
    try:
        outcome: object = call()
    except Exception as e:  # the outcome is asserted on by the caller
        outcome = e
    return outcome, time.monotonic() - started


def read_frame(conn: socket.socket) -> bytes | None:
    """One 4-byte-length-prefixed frame (ZooKeeper's and Kafka's framing), None when the client left."""
    head = _read_exactly(conn, 4)
    if head is None:
        return None
    (length,) = struct.unpack(">i", head)
    return _read_exactly(conn, length)


def _read_exactly(conn: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def send(conn: socket.socket, data: bytes, every_s: float = 0.0) -> None:
    """`data` at once, or one byte every `every_s` seconds (a trickling peer)."""
    if not every_s:
        conn.sendall(data)
        return
    for i in range(len(data)):
        conn.sendall(data[i : i + 1])
        time.sleep(every_s)


def framed(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


# -- ZooKeeper ------------------------------------------------------------------------------------

NO_NODE = -101
STAT = (40, 41, 1_795_000_000_000, 1_795_000_000_000, 3, 0, 0, 0, 10, 0, 41)
"""czxid, mzxid, ctime, mtime, version, cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid."""
BROKER = {
    "version": 5, "host": "127.0.0.1", "port": 9092, "endpoints": ["PLAINTEXT://127.0.0.1:9092"],
    "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}, "jmx_port": -1, "timestamp": "1795239774751",
}  # fmt: skip
KAFKA_CHROOT: dict[str, tuple[bytes, list[str]]] = {
    "/brokers": (b"", ["ids", "topics"]),
    "/brokers/ids": (b"", ["1", "2"]),
    "/brokers/ids/1": (json.dumps(BROKER).encode(), []),
    "/brokers/ids/2": (json.dumps(BROKER | {"port": 9093}).encode(), []),
    "/brokers/topics": (b"", ["orders"]),
    "/brokers/topics/orders": (json.dumps({"version": 2, "partitions": {"0": [1, 2], "1": [2, 1]}}).encode(), []),
    **{
        f"/brokers/topics/orders/partitions/{p}/state": (
            json.dumps({"version": 1, "leader": 1, "leader_epoch": 0, "controller_epoch": 1, "isr": [1, 2]}).encode(),
            [],
        )
        for p in (0, 1)
    },
    "/controller": (json.dumps({"version": 2, "brokerid": 1, "timestamp": "1795239774432"}).encode(), []),
    "/controller_epoch": (b"1", []),
}
"""A two-broker cluster with one topic of two partitions, as Kafka 3.9 writes its znodes."""


@dataclass
class Request:
    """One ZooKeeper request as the fake read it: its number in the session (0: the handshake)."""

    index: int
    xid: int
    op_type: int
    path: str


@dataclass(frozen=True)
class Spoiled:
    """What a hostile server sends in place of a reply: `data` (trickled one byte every `every_s`
    seconds when set), then `then`: go on serving, hold the connection open and silent, or close it."""

    data: bytes
    then: Literal["continue", "hold", "close"] = "continue"
    every_s: float = 0.0


@dataclass
class ZooKeeperTree:
    """A ZooKeeper server holding `tree` (path -> (data, children)). `spoil(request, reply)` returns what
    to send in place of the frame `reply`, or None to send it as is."""

    tree: dict[str, tuple[bytes, list[str]]] = field(default_factory=lambda: dict(KAFKA_CHROOT))
    spoil: Callable[[Request, bytes], Spoiled | None] = lambda request, reply: None
    requests: list[Request] = field(default_factory=list)

    def __call__(self, conn: socket.socket) -> None:
        if read_frame(conn) is None:  # the session request
            return
        handshake = struct.pack(">iiq", 0, 10_000, 0x1234) + struct.pack(">i", 16) + b"\x00" * 16 + b"\x00"
        if not self._send(conn, Request(0, 0, 0, ""), framed(handshake)):
            return
        index = 0
        while (frame := read_frame(conn)) is not None:
            index += 1
            xid, op_type = struct.unpack_from(">ii", frame)
            if op_type == Close.type:
                return
            (length,) = struct.unpack_from(">i", frame, 8)
            request = Request(index, xid, op_type, frame[12 : 12 + length].decode())
            self.requests.append(request)
            if not self._send(conn, request, framed(self._answer(request))):
                return

    def _answer(self, request: Request) -> bytes:
        node = self.tree.get(request.path)
        if node is None:
            return struct.pack(">iqi", request.xid, 50, NO_NODE)
        data, children = node
        header = struct.pack(">iqi", request.xid, 50, 0)
        if request.op_type == GetData.type:
            return header + struct.pack(">i", len(data)) + data + stat_struct.pack(*STAT)
        if request.op_type == GetChildren.type:
            names = b"".join(struct.pack(">i", len(n.encode())) + n.encode() for n in children)
            return header + struct.pack(">i", len(children)) + names
        return header

    def _send(self, conn: socket.socket, request: Request, reply: bytes) -> bool:
        """Send the reply, or what `spoil` puts in its place; False when the fake stops serving."""
        spoiled = self.spoil(request, reply)
        if spoiled is None:
            send(conn, reply)
            return True
        send(conn, spoiled.data, spoiled.every_s)
        if spoiled.then == "hold":
            _hold(conn)
        return spoiled.then == "continue"


def _hold(conn: socket.socket, at_most_s: float = 30.0) -> None:
    conn.settimeout(at_most_s)
    with contextlib.suppress(OSError):
        while conn.recv(65536):
            pass


# -- Kafka ------------------------------------------------------------------------------------------


def kafka_answers(answer: Callable[[int, int, int], bytes | None], every_s: float = 0.0) -> Serve:
    """A Kafka listener: each request frame (api key, version, correlation id) is answered with the
    frame `answer(api_key, api_version, correlation_id)` returns (None: hold the connection, silent),
    trickled one byte every `every_s` seconds when set."""

    def serve(conn: socket.socket) -> None:
        while (frame := read_frame(conn)) is not None:
            api_key, api_version, correlation_id = struct.unpack_from(">hhi", frame)
            reply = answer(api_key, api_version, correlation_id)
            if reply is None:
                _hold(conn)
                return
            send(conn, reply, every_s)

    return serve
