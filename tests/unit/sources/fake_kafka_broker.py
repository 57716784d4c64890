"""A one-broker Kafka cluster on 127.0.0.1 that speaks just enough of the protocol for kafka-python's admin
client (bootstrap, then a KRaft snapshot's live read or a change poll) and for `kraft.controllers` (a
controller listener): ApiVersions, Metadata, DescribeCluster, DescribeTopicPartitions and DescribeQuorum,
each answered truly at the version asked, encoded by kafka-python as a broker would send it. Any other
request closes the connection (the collector's optional parts become issues at once).

A test spoils one answer: `spoil(call, answer)` returns what to send in its place (`hostile_peers.Spoiled`:
bytes, trickled or not, then go on, hold the connection silent, or close it), or None to send it as is.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import DescribeClusterResponse, DescribeQuorumResponse, DescribeTopicPartitionsResponse
from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.metadata import ApiVersionsResponse, MetadataResponse

from tests.unit.sources.hostile_peers import Peer, Spoiled, framed, read_frame, send

API_VERSIONS, METADATA, DESCRIBE_QUORUM, DESCRIBE_CLUSTER, DESCRIBE_TOPIC_PARTITIONS = 18, 3, 55, 60, 75
BROKER_ID = 1
LEADER = 3000
"""The active controller the quorum names (a KRaft controller is not a broker of the metadata)."""
TOPIC = DescribeQuorumResponse.TopicData
PARTITION = TOPIC.PartitionData
REPLICA = PARTITION.ReplicaState


@dataclass(frozen=True)
class Call:
    """One request as the fake read it: the connection's number (1: the first one made to the fake; the
    admin client's bootstrap), its API key and version."""

    connection: int
    api_key: int
    version: int


Spoil = Callable[[Call, bytes], Spoiled | None]


def replica(replica_id: int, offset: int) -> Any:
    return REPLICA(replica_id=replica_id, replica_directory_id=None, log_end_offset=offset,
                   last_fetch_timestamp=-1, last_caught_up_timestamp=-1)  # fmt: skip


def quorum_partition(voters: list[Any] | None, observers: list[Any] | None) -> Any:
    return PARTITION(partition_index=0, error_code=0, error_message=None, leader_id=LEADER, leader_epoch=5,
                     high_watermark=99, current_voters=voters, observers=observers)  # fmt: skip


HEALTHY_QUORUM = [
    TOPIC(topic_name="__cluster_metadata", partitions=[quorum_partition([replica(LEADER, 99)], [replica(1, 98)])])
]
"""One voter (the leader) and the broker as an observer."""


def encoded(response: Any, version: int, correlation_id: int) -> bytes:
    """`response` framed with its header, at `version`, as a broker sends it."""
    response.API_VERSION = version
    response.with_header(correlation_id)
    return bytes(response.encode(header=True, framed=True))


def overflowing(answer: bytes) -> Spoiled:
    """`HEALTHY_QUORUM`'s answer (v2) with its partitions count made 0xED, a varint that runs on into the
    partition's fields, and its last 32 bytes cut off: kafka-python's decoder then reads a length of some
    2^84 and raises OverflowError (found by fuzzing)."""
    head, body = answer[4:9], answer[9:]
    at = body.index(b"__cluster_metadata") + len(b"__cluster_metadata")
    return Spoiled(framed(head + body[:at] + b"\xed" + body[at + 1 : len(body) - 32]))


def quorum_answer(version: int, correlation_id: int, topics: list[Any] | None = HEALTHY_QUORUM) -> bytes:
    return encoded(DescribeQuorumResponse(error_code=0, error_message=None, topics=topics, nodes=[]), version,
                   correlation_id)  # fmt: skip


class FakeBroker:
    """Broker `BROKER_ID` of a one-broker cluster, listening on `address`; each connection numbered in the
    order it was made. Use as a context manager (the listener closes on exit)."""

    def __init__(self, spoil: Spoil = lambda call, answer: None, quorum: list[Any] | None = HEALTHY_QUORUM) -> None:
        self.spoil = spoil
        self.quorum = quorum
        self.calls: list[Call] = []
        self._connections = itertools.count(1)
        self.peer = Peer(self._serve)
        self.address = self.peer.address
        self.port = self.peer.port

    def __enter__(self) -> FakeBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.peer.close()

    def _serve(self, conn: socket.socket) -> None:
        connection = next(self._connections)
        while (frame := read_frame(conn)) is not None:
            api_key, version, correlation_id = struct.unpack_from(">hhi", frame)
            call = Call(connection, api_key, version)
            self.calls.append(call)
            answer = self._answer(call, correlation_id)
            if answer is None:
                return
            spoiled = self.spoil(call, answer)
            if spoiled is None:
                send(conn, answer)
                continue
            send(conn, spoiled.data, spoiled.every_s)
            if spoiled.then == "hold":
                _hold(conn)
            if spoiled.then != "continue":
                return

    def _answer(self, call: Call, correlation_id: int) -> bytes | None:
        """The true answer to `call`; None for a request this fake does not serve."""
        if call.api_key == API_VERSIONS:
            version = ApiVersionsResponse.ApiVersion
            served = [version(api_key=key, min_version=0, max_version=response.max_version)
                      for key, response in sorted(ResponseClassRegistry._response_class_registry.items())]  # fmt: skip
            response: Any = ApiVersionsResponse(error_code=0, api_keys=served, throttle_time_ms=0)
        elif call.api_key == METADATA:
            broker = MetadataResponse.MetadataResponseBroker(node_id=BROKER_ID, host="127.0.0.1", port=self.port,
                                                             rack=None)  # fmt: skip
            response = MetadataResponse(throttle_time_ms=0, brokers=[broker], cluster_id="fake", controller_id=LEADER,
                                        topics=[])  # fmt: skip
        elif call.api_key == DESCRIBE_CLUSTER:
            listed = DescribeClusterResponse.DescribeClusterBroker
            broker = listed(broker_id=BROKER_ID, host="127.0.0.1", port=self.port, rack=None, is_fenced=False)
            response = DescribeClusterResponse(throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=1,
                                               cluster_id="fake", controller_id=LEADER, brokers=[broker],
                                               authorized_operations=None)  # fmt: skip
        elif call.api_key == DESCRIBE_TOPIC_PARTITIONS:
            response = DescribeTopicPartitionsResponse(throttle_time_ms=0, topics=[], next_cursor=None)
        elif call.api_key == DESCRIBE_QUORUM:
            return quorum_answer(call.version, correlation_id, self.quorum)
        else:
            return None
        return encoded(response, call.version, correlation_id)


def _hold(conn: socket.socket, at_most_s: float = 30.0) -> None:
    """Keep the connection open and silent until the client leaves (or `at_most_s`)."""
    conn.settimeout(at_most_s)
    with contextlib.suppress(OSError):
        while conn.recv(65536):
            pass
