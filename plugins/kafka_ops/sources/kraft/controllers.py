"""Ask the KRaft controllers themselves for the metadata quorum (DescribeQuorum on their own listener).

While a 3.9 cluster migrates, its brokers still run on ZooKeeper and do not serve DescribeQuorum, and
kafka-python's admin client cannot bootstrap from a controller listener (controllers do not answer
Metadata, KIP-919). So this module speaks to a controller over one plain socket: ApiVersions to agree a
version, then DescribeQuorum, which any controller answers (a follower from its own view; the answer
names the leader). Each address of `controller_bootstrap` is tried in turn; when none answers, the
quorum cannot be seen (`KafkaUnreachable`).

Every call holds an absolute deadline, taken once from `time.monotonic()`: connecting (each address a
host name resolves to), sending and each read get what remains of it, so a peer that accepts and then
trickles its answer, or never finishes it, costs the timeout and no more. Bytes that are not Kafka's
protocol (a zero-length, cut, oversized or undecodable frame) are a `KafkaProtocolError` naming the peer
and the request.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from kafka.errors import KafkaError
from kafka.protocol.admin import DescribeQuorumRequest
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.parser import KafkaProtocol

from kafka_ops.errors import KafkaProtocolError, KafkaUnreachable
from kafka_ops.model.cluster import Quorum
from kafka_ops.sources.kraft import quorum

_MALFORMED = (KafkaError, struct.error, ValueError, IndexError, KeyError, TypeError, AttributeError, EOFError,
              OverflowError)  # fmt: skip
"""What kafka-python's parser raises on bytes that are not the answer it reads (ValueError includes
UnicodeDecodeError; OverflowError: a varint length past what a Python index can hold)."""
MAX_ANSWER_BYTES = 1 << 20
"""The largest frame read: an ApiVersions answer is some 500 bytes and a DescribeQuorum answer some 40 a
replica, while kafka-python would allocate what a frame's length claims (up to 100 MB)."""


def describe_quorum(controller_bootstrap: str, timeout_s: float = 5.0) -> Quorum:
    """The quorum as the first answering controller of `controller_bootstrap` ("host:port,...") sees it,
    each address given `timeout_s` in all (connecting, sending and every byte of both answers)."""
    failures = []
    for address in [a.strip() for a in controller_bootstrap.split(",") if a.strip()]:
        host, _, port = address.rpartition(":")
        try:
            return _ask(host, int(port), timeout_s)
        except (OSError, KafkaError, KafkaUnreachable, ValueError) as e:
            failures.append(f"{address} ({type(e).__name__}: {e})")
    raise KafkaUnreachable(
        "no KRaft controller answered DescribeQuorum: " + ("; ".join(failures) or "no address given")
    )


def speaks_kafka(host: str, port: int, timeout_s: float = 3.0) -> bool:
    """True when `host:port` answers Kafka's ApiVersions within `timeout_s` in all: a broker's or a
    controller's listener."""
    deadline = time.monotonic() + timeout_s
    try:
        with _connect(host, port, deadline) as sock:
            answer = _exchange(sock, _protocol(), _request(ApiVersionsRequest, 0), deadline)
    except (OSError, KafkaUnreachable):
        return False
    return bool(getattr(answer, "api_keys", None))


def _ask(host: str, port: int, timeout_s: float) -> Quorum:
    deadline = time.monotonic() + timeout_s
    peer = f"the controller at {host}:{port}"
    with _connect(host, port, deadline) as sock:
        protocol = _protocol()
        versions = _exchange(sock, protocol, _request(ApiVersionsRequest, 0), deadline)
        if versions.error_code or not isinstance(versions.api_keys, list):
            raise KafkaProtocolError(f"ApiVersions answered by {peer}: error code {versions.error_code}, no API list")
        supported = {v.api_key: v.max_version for v in versions.api_keys}
        key = DescribeQuorumRequest.API_KEY
        if key not in supported:
            raise KafkaError(f"{host}:{port} does not serve DescribeQuorum: is it a KRaft controller listener?")
        if supported[key] < 0:
            raise KafkaProtocolError(f"ApiVersions answered by {peer}: DescribeQuorum up to version {supported[key]}")
        request = quorum.request()
        request.API_VERSION = min(supported[key], DescribeQuorumRequest.max_version)
        response = _exchange(sock, protocol, request, deadline)
    return quorum.read_answer(response, peer)


def _connect(host: str, port: int, deadline: float) -> socket.socket:
    """A connection to `host:port` by `deadline`, each address the name resolves to given what remains of
    it (`socket.create_connection` would give each one the whole timeout)."""
    failure: OSError = TimeoutError(f"could not connect to {host}:{port} in time")
    for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(remaining)
            sock.connect(address)
        except OSError as e:
            sock.close()
            failure = e
        else:
            return sock
    raise failure


def _protocol() -> KafkaProtocol:
    return KafkaProtocol(client_id="kafka-ops", receive_message_max_bytes=MAX_ANSWER_BYTES)


def _request(kind: Any, version: int) -> Any:
    request = kind()
    request.API_VERSION = version
    return request


def _exchange(sock: socket.socket, protocol: KafkaProtocol, request: Any, deadline: float) -> Any:
    """Send `request` and read its answer by `deadline`: every wait (the send, each recv) is given what
    remains of it, so a peer that trickles its bytes cannot hold the call past it."""
    what = f"{request.name.removesuffix('Request')} v{request.API_VERSION}"
    peer = "{}:{}".format(*sock.getpeername()[:2])
    protocol.send_request(request)
    _wait_at_most(sock, deadline, peer, what)
    try:
        sock.sendall(protocol.send_bytes())
        while True:
            _wait_at_most(sock, deadline, peer, what)
            data = sock.recv(65536)
            if not data:
                raise KafkaUnreachable(f"{peer} closed the connection before answering {what}")
            try:
                responses = protocol.receive_bytes(data)
            except _MALFORMED as e:
                raise _garbled(peer, what, e) from e
            if responses:
                return responses[0][1]
    except TimeoutError as e:
        raise KafkaUnreachable(f"{peer} did not answer {what} in time") from e


def _garbled(peer: str, what: str, error: Exception) -> KafkaProtocolError:
    """The error for bytes that are not an answer (kafka-python's errors name their class themselves)."""
    why = str(error) if isinstance(error, KafkaError) else f"{type(error).__name__}: {error}"
    return KafkaProtocolError(f"{peer} answered {what} with bytes that are not Kafka's protocol: {why}")


def _wait_at_most(sock: socket.socket, deadline: float, peer: str, what: str) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise KafkaUnreachable(f"{peer} did not answer {what} in time")
    sock.settimeout(remaining)
