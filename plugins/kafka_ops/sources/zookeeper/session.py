"""A read-only ZooKeeper session that pipelines requests, built on kazoo's wire protocol.

kazoo's `KazooClient` sends one request per turn of its connection thread's select loop, so
even its `*_async` calls cost a thread hand-off and several syscalls per znode (measured: ~5k
reads/s). A snapshot of 100k partitions needs real pipelining: this session writes requests
in large batches and parses the replies from one buffer, on the caller's thread, keeping at
most `window` requests outstanding. It uses kazoo's own serializers (`Connect`, `Auth`,
`GetData`, `GetChildren`, `ReplyHeader`) and exception types; it only reads and never sets
watches.

Every wait has an absolute deadline: opening the session `timeout_s` in all (every host tried
included), and each request's reply `timeout_s` from when the request was queued, however the
server spaces its bytes (a peer trickling one byte at a time cannot keep a read alive past it).
Bytes that are not ZooKeeper's protocol raise `ZooKeeperProtocolError`; a missed deadline, a lost
connection or a reply carrying one of ZooKeeper's error codes raises `ZooKeeperUnreachable`; each names
the server and the request. Two error codes are answers, not failures: NoNode (the result is None) and
NoAuth (`NoAuthError(path)`, or `DENIED`: see `pipelined`).
"""

from __future__ import annotations

import contextlib
import random
import select
import socket
import ssl
import struct
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from kazoo.exceptions import EXCEPTIONS, AuthFailedError, NoAuthError, NoNodeError
from kazoo.protocol.serialization import (
    Auth,
    Close,
    Connect,
    GetChildren,
    GetData,
    ReplyHeader,
    int_struct,
)

from kafka_ops.errors import ZooKeeperAuthFailed, ZooKeeperProtocolError, ZooKeeperUnreachable

T = TypeVar("T")
_REQUEST = struct.Struct("!iii")  # length, xid, type
_AUTH_XID = -4
_CLOSE_XID = 0x7FFFFFFF
_SEND_CHUNK = 1 << 18
_REPLY_HEADER = 16  # xid, zxid, err
_MAX_FRAME = 1 << 28
"""Larger than any answer a ZooKeeper server sends (its `jute.maxbuffer` bounds a znode at 1 MiB by
default; a listing of 100k topics is a few MiB): a longer claimed length is not ZooKeeper."""
_MALFORMED = (struct.error, IndexError, ValueError, TypeError)
"""What kazoo's deserializers raise on bytes that are not the reply they read (ValueError includes
UnicodeDecodeError)."""


class _Closed(ZooKeeperUnreachable):
    """The server closed the connection (before a failed authentication's answer, ZooKeeper does)."""


class Denied:
    """The result of reading a znode whose ACL denies this session read access (ZooKeeper's NoAuth)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DENIED"


DENIED = Denied()


@dataclass(frozen=True, slots=True)
class TlsOptions:
    """Client TLS for ZooKeeper's secure port (`secureClientPort`)."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify_hostname: bool = True


class ZkReadSession:
    """One read-only session on one of `hosts`, with request pipelining.

    Paths given to `get`/`children` are relative to `chroot`.
    """

    def __init__(
        self,
        hosts: str,
        chroot: str = "/",
        timeout_s: float = 10.0,
        digest_auth: tuple[str, str] | None = None,
        tls: TlsOptions | None = None,
    ) -> None:
        self.hosts = [_split_host(h) for h in hosts.split(",") if h.strip()]
        if not self.hosts:
            raise ZooKeeperUnreachable("no ZooKeeper host given")
        self.chroot = "" if chroot in ("", "/") else "/" + chroot.strip("/")
        self.timeout_s = timeout_s
        self.digest_auth = digest_auth
        self.tls = tls
        self.last_zxid = 0
        self.peer = ""
        """`host:port` of the server the session is open on (or being opened on)."""
        self._sock: socket.socket | None = None
        self._xid = 0
        self._out = bytearray()
        self._in = bytearray()
        self._pos = 0
        self._outstanding: dict[int, float] = {}
        """Requests sent and not answered yet: xid -> the deadline of its reply."""
        self._stash: dict[int, bytes] = {}

    # -- session lifecycle ------------------------------------------------------------------------

    def open(self) -> ZkReadSession:
        deadline = time.monotonic() + self.timeout_s
        hosts = self.hosts[:]
        random.shuffle(hosts)
        failures = []
        for host, port in hosts:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                self._connect(host, port, deadline)
                return self
            except (OSError, ZooKeeperUnreachable) as e:
                self._close_socket()
                failures.append(f"{host}:{port} ({e})")
        tried = "; ".join(failures) or "no time left to try"
        raise ZooKeeperUnreachable(f"no ZooKeeper server answered within {self.timeout_s:g}s: {tried}")

    def close(self) -> None:
        """Say goodbye (best effort: one non-blocking send, never a wait) and close the socket."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.send(_REQUEST.pack(8, _CLOSE_XID, Close.type))
            self._close_socket()

    def __enter__(self) -> ZkReadSession:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self, host: str, port: int, deadline: float) -> None:
        self.peer = f"{host}:{port}"
        self._in.clear()
        self._out.clear()
        self._pos = 0
        sock = socket.create_connection((host, port), timeout=max(deadline - time.monotonic(), 0.001))
        if self.tls is not None:  # the TLS handshake's own timeout is absolute (one deadline for all of it)
            context = ssl.create_default_context(cafile=self.tls.ca_file)
            context.check_hostname = self.tls.verify_hostname
            if self.tls.cert_file:
                context.load_cert_chain(self.tls.cert_file, self.tls.key_file)
            sock = context.wrap_socket(sock, server_hostname=host)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        self._sock = sock
        timeout_ms = int(self.timeout_s * 1000)
        body = Connect(0, 0, timeout_ms, 0, b"\x00" * 16, True).serialize()
        self._out += int_struct.pack(len(body)) + body
        frame = self._next_frame(deadline, "the session handshake")
        try:
            reply, _ = Connect.deserialize(frame, 0)
        except _MALFORMED as e:
            raise self._malformed("the session handshake", e) from e
        if reply.time_out <= 0:
            raise ZooKeeperUnreachable(
                f"ZooKeeper at {self.peer} answered the session handshake with a timeout of {reply.time_out} ms: "
                "it refused to open a session"
            )
        if self.digest_auth is not None:
            user, password = self.digest_auth
            body = Auth(0, "digest", f"{user}:{password}").serialize()
            self._out += _REQUEST.pack(len(body) + 8, _AUTH_XID, Auth.type) + body
            try:
                frame = self._next_frame(deadline, "the digest authentication")
            except _Closed as e:  # ZooKeeper drops the connection after a failed auth
                raise ZooKeeperAuthFailed(f"ZooKeeper at {self.peer} rejected the digest credentials") from e
            if len(frame) < _REPLY_HEADER:
                raise self._malformed("the digest authentication", f"a reply of {len(frame)} bytes")
            header, _ = ReplyHeader.deserialize(frame, 0)
            if header.err == AuthFailedError.code:
                raise ZooKeeperAuthFailed(f"ZooKeeper at {self.peer} rejected the digest credentials")
            if header.err != 0:
                raise self._error_reply("the digest authentication", header.err)

    def _close_socket(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    # -- requests ---------------------------------------------------------------------------------

    def pipelined(
        self,
        items: Iterable[T],
        kind: str,
        path_of: Callable[[T], str],
        window: int = 4096,
        denied: Literal["raise", "yield"] = "raise",
    ) -> Iterator[tuple[T, Any | None]]:
        """Read `path_of(item)` for every item with up to `window` requests in flight.

        `kind` is "get" (yields `(item, (data, stat))`) or "children" (yields `(item, names)`).
        Yields in request order; the result is None when the znode does not exist. A znode whose
        ACL denies reading raises `NoAuthError(path)`, or with `denied="yield"` yields `DENIED`
        and the reads go on.
        """
        op: Any = GetData if kind == "get" else GetChildren
        pending: deque[tuple[T, str, int]] = deque()
        for item in items:
            path = path_of(item)
            pending.append((item, path, self._queue(op.type, op(self.chroot + path, False))))
            if len(pending) >= window:
                yield self._answer(*pending.popleft(), op, denied)
        while pending:
            yield self._answer(*pending.popleft(), op, denied)

    def _answer(self, item: T, path: str, xid: int, op: Any, denied: str) -> tuple[T, Any | None]:
        try:
            return self._reply(item, xid, op, path)
        except NoAuthError as e:
            if denied == "yield":
                return item, DENIED
            raise NoAuthError(path) from e

    def get(self, path: str) -> tuple[bytes, Any] | None:
        return next(self.pipelined([path], "get", str))[1]

    def children(self, path: str) -> list[str] | None:
        return next(self.pipelined([path], "children", str))[1]

    def _queue(self, op_type: int, request: Any) -> int:
        self._xid = self._xid + 1 if self._xid < 0x7FFFFFF0 else 1
        body = request.serialize()
        self._out += _REQUEST.pack(len(body) + 8, self._xid, op_type)
        self._out += body
        deadline = time.monotonic() + self.timeout_s
        self._outstanding[self._xid] = deadline
        if len(self._out) >= _SEND_CHUNK:
            self._pump(False, deadline, "the requests queued")
        return self._xid

    def _reply(self, item: T, xid: int, op: Any, path: str) -> tuple[T, Any | None]:
        """The reply to request `xid` (reading `path`), by its deadline; replies to other requests (an
        enclosing or nested pipeline's) are kept until their reader asks for them."""
        frame = self._stash.pop(xid, None)
        what = f"{'GetData' if op is GetData else 'GetChildren'} {path}"
        while frame is None:
            candidate = self._next_frame(self._outstanding[xid], what)
            if len(candidate) < _REPLY_HEADER:
                raise self._malformed(what, f"a reply of {len(candidate)} bytes")
            (reply_xid,) = int_struct.unpack_from(candidate, 0)
            if reply_xid == xid:
                frame = candidate
            elif reply_xid in self._outstanding:
                self._stash[reply_xid] = candidate
            else:
                raise self._malformed(what, f"a reply to request {reply_xid}, which was never sent")
        del self._outstanding[xid]
        header, offset = ReplyHeader.deserialize(frame, 0)
        if header.zxid > 0:
            self.last_zxid = max(self.last_zxid, header.zxid)
        if header.err == 0:
            return item, self._result(frame, offset, op, what)
        if header.err == NoNodeError.code:
            return item, None
        if header.err == NoAuthError.code:
            raise NoAuthError()  # `_answer` names the path, or yields DENIED
        raise self._error_reply(what, header.err)

    def _result(self, frame: bytes, offset: int, op: Any, what: str) -> Any:
        """A GetData reply's `(data, stat)` or a GetChildren reply's sorted names."""
        try:
            result = op.deserialize(frame, offset)
        except _MALFORMED as e:
            raise self._malformed(what, e) from e
        if op is GetData:
            return result
        if not all(isinstance(name, str) and name and "/" not in name for name in result):
            raise self._malformed(what, "a null or empty child name, or one with a slash")
        return sorted(result)

    def _error_reply(self, what: str, code: int) -> ZooKeeperUnreachable:
        """The error for a reply carrying ZooKeeper's error `code` (SessionExpired, Throttled, ...)."""
        error = EXCEPTIONS.get(code)  # a defaultdict: `get` does not invent a class for an unknown code
        if error is None:
            return self._malformed(what, f"error code {code}, which ZooKeeper does not have")
        return ZooKeeperUnreachable(f"ZooKeeper at {self.peer} answered {what} with {error.__name__} (code {code})")

    def _malformed(self, what: str, problem: object) -> ZooKeeperProtocolError:
        if isinstance(problem, BaseException):
            problem = f"a reply it cannot read ({problem})"
        return ZooKeeperProtocolError(
            f"ZooKeeper at {self.peer} answered {what} with {problem}: not ZooKeeper's protocol"
        )

    # -- framing ----------------------------------------------------------------------------------

    def _next_frame(self, deadline: float, what: str) -> bytes:
        """The next frame (what is queued sent first), by `deadline`."""
        while (frame := self._take_frame(what)) is None:
            self._pump(True, deadline, what)
        return frame

    def _take_frame(self, what: str) -> bytes | None:
        available = len(self._in) - self._pos
        if available < 4:
            return None
        (length,) = int_struct.unpack_from(self._in, self._pos)
        if not 0 <= length <= _MAX_FRAME:
            raise self._malformed(what, f"a frame of {length} bytes")
        if available < 4 + length:
            return None
        start = self._pos + 4
        self._pos = start + length
        frame = bytes(self._in[start : self._pos])
        if self._pos > 1 << 20:
            del self._in[: self._pos]
            self._pos = 0
        return frame

    def _pump(self, want_frame: bool, deadline: float, what: str) -> None:
        """Send what is queued while reading what arrives, so neither side's buffers fill up, until
        nothing is left to send and (`want_frame`) a whole frame is in; by `deadline` (absolute: each
        wait is for what remains of it, whatever arrived meanwhile)."""
        sock = self._sock
        if sock is None:
            raise ZooKeeperUnreachable(f"the session with ZooKeeper at {self.peer} is closed: cannot ask {what}")
        while True:
            have_frame = len(self._in) - self._pos >= 4 and self._frame_ready(what)
            if not self._out and (have_frame or not want_frame):
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ZooKeeperUnreachable(f"ZooKeeper at {self.peer} did not answer {what} within {self.timeout_s:g}s")
            try:
                readable, writable, _ = select.select([sock], [sock] if self._out else [], [], remaining)
                if writable:
                    self._send(sock)
                if readable:
                    self._recv(sock, what)
            except OSError as e:  # a reset, a broken pipe, a TLS alert
                raise ZooKeeperUnreachable(f"lost the connection to ZooKeeper at {self.peer} during {what}: {e}") from e

    def _send(self, sock: socket.socket) -> None:
        try:
            sent = sock.send(self._out[:_SEND_CHUNK])
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return  # TLS needs the socket readable or writable again first; the same bytes go next time
        del self._out[:sent]

    def _frame_ready(self, what: str) -> bool:
        (length,) = int_struct.unpack_from(self._in, self._pos)
        if not 0 <= length <= _MAX_FRAME:
            raise self._malformed(what, f"a frame of {length} bytes")
        return len(self._in) - self._pos >= 4 + length

    def _recv(self, sock: socket.socket, what: str) -> None:
        try:
            chunk = sock.recv(1 << 20)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        if not chunk:
            raise _Closed(f"ZooKeeper at {self.peer} closed the connection before answering {what}")
        self._in += chunk


def _split_host(host: str) -> tuple[str, int]:
    host = host.strip()
    name, _, port = host.rpartition(":")
    if not name:
        return host, 2181
    if not port.isdigit():
        raise ZooKeeperUnreachable(f"bad ZooKeeper address {host!r}: expected host:port")
    return name.strip("[]"), int(port)
