"""DescribeQuorum: the request for the metadata log's partition, and its answer read into a `Quorum`.

Both ways of asking (a broker through the admin client, `ask`, for `kraft.collector` and
`kraft.change_poll`; a controller over its own listener, `kraft.controllers`) read the answer here. An
answer that is not one (undecodable bytes, no topics, no partitions, a null array, a field of the wrong
type) raises `KafkaProtocolError` naming the peer; an error code Kafka sent raises kafka-python's error
for it.
"""

from __future__ import annotations

import base64
import struct
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kafka.errors import KafkaError, KafkaTimeoutError, RequestTimedOutError, for_code
from kafka.errors import KafkaProtocolError as UndecodableAnswer
from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse
from kafka.protocol.api_header import RequestHeader

from kafka_ops.errors import KafkaProtocolError, KafkaUnreachable
from kafka_ops.model.cluster import Quorum, QuorumReplica

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

METADATA_TOPIC = "__cluster_metadata"
REQUEST = "DescribeQuorum"
_DECODE_ERRORS = (ValueError, struct.error, IndexError, KeyError, TypeError, AttributeError, EOFError, OverflowError)
"""What kafka-python's generated decoders raise on bytes that are not the answer they read."""


def request() -> Any:
    """A DescribeQuorum for partition 0 of the metadata log (the version is the sender's to set), whose
    answer, when its bytes cannot be decoded, fails the request at once as a protocol error
    (`_StrictDecoder`)."""
    topic = DescribeQuorumRequest.TopicData
    partition = topic.PartitionData(partition_index=0)
    return _QuorumRequest(topics=[topic(topic_name=METADATA_TOPIC, partitions=[partition])])


def ask(admin: KafkaAdminClient) -> Quorum:
    """The quorum, asked of the broker kafka-python picks (`least_loaded_node`: any broker forwards
    DescribeQuorum to the active controller) and waited for at most the client's `request_timeout_ms`
    from now, connecting included. kafka-python's own clock for a request starts only once a connection
    is up, and setting one up (connect, then ApiVersions, which a peer may trickle) may take
    `socket_connection_setup_timeout_ms` (10 s, growing after failures) on top.

    Raises `KafkaUnreachable` naming the broker (id, host:port) when it does not answer in time (its
    connection is closed: a later request would wait behind the hung one), `KafkaProtocolError` when
    its answer is not Kafka's protocol or not a quorum (`read_answer`); kafka-python's connection
    errors and `UnsupportedVersionError` pass as they come, for the caller to retry or refuse."""
    manager = admin._manager
    timeout_ms = admin.config["request_timeout_ms"]

    async def describe() -> tuple[Any, str]:
        node = manager.least_loaded_node()
        peer = _broker(manager, node)
        sent = manager.send(request(), node_id=node, request_timeout_ms=timeout_ms)
        try:
            return await manager.wait_for(sent, timeout_ms), peer
        except (KafkaTimeoutError, RequestTimedOutError) as e:
            if node is not None:  # None would close the whole client
                manager.close(node)
            late = f"{REQUEST}: {peer} did not answer within request_timeout_ms ({timeout_ms} ms)"
            raise KafkaUnreachable(late) from e
        except UndecodableAnswer as e:  # kafka-python names the class in its message
            why = f" ({e.__context__})" if e.__cause__ is None and e.__context__ is not None else ""
            garbled = f"{REQUEST} answered by {peer} with bytes that are not Kafka's protocol: {e}{why}"
            raise KafkaProtocolError(garbled) from e

    response, peer = manager.run(describe)
    return read_answer(response, peer)


def read_answer(response: Any, peer: str) -> Quorum:
    """The quorum of a DescribeQuorum response object (kafka-python's, decoded off the wire)."""
    if response.error_code:
        error = for_code(response.error_code)
        raise error(f"{REQUEST} answered by {peer}: {response.error_message or error.__name__}")
    answer = response.to_dict()
    for topic in _array(answer, "topics", peer):
        for partition in _array(topic, "partitions", peer):
            code = partition.pop("error_code", 0)
            message = partition.pop("error_message", "") or ""
            partition["error"] = f"error code {code}: {message}" if code else None
    return parse_quorum(answer, peer)


def parse_quorum(answer: Mapping[str, Any], peer: str = "the controller") -> Quorum:
    """The metadata log's partition of a DescribeQuorum answer in the shape of
    `KafkaAdminClient.describe_metadata_quorum`."""
    topics = _array(answer, "topics", peer)
    if not topics:
        raise _malformed(peer, "no topic (the metadata log's was asked for)")
    partitions = _array(topics[0], "partitions", peer)
    if not partitions:
        raise _malformed(peer, f"no partition of {topics[0].get('topic_name')!r} (partition 0 was asked for)")
    partition = partitions[0]
    if partition.get("error"):
        raise KafkaError(f"{REQUEST} answered by {peer}: {partition['error']}")
    replicas = tuple(
        QuorumReplica(
            replica_id=_int(r, "replica_id", peer),
            role=role,
            directory_id=_directory(r.get("replica_directory_id"), peer),
            log_end_offset=_int(r, "log_end_offset", peer),
            last_fetch_ms=_known_ms(r.get("last_fetch_timestamp")),
            last_caught_up_ms=_known_ms(r.get("last_caught_up_timestamp")),
        )
        for role, key in (("voter", "current_voters"), ("observer", "observers"))
        for r in _array(partition, key, peer)
    )
    leader = _int(partition, "leader_id", peer)
    return Quorum(
        leader_id=leader if leader >= 0 else None,
        leader_epoch=_int(partition, "leader_epoch", peer),
        high_watermark=_int(partition, "high_watermark", peer),
        replicas=replicas,
    )


def kafka_uuid(value: object) -> str | None:
    """A topic or directory id as Kafka writes it (`Uuid.toString`: URL-safe base64 of its 16 bytes,
    as the topic znode and Kafka's tools show it); None for none or Kafka's zero id."""
    if value is None:
        return None
    as_uuid = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    if as_uuid.int == 0:
        return None
    return base64.urlsafe_b64encode(as_uuid.bytes).decode().rstrip("=")


def _broker(manager: Any, node: object) -> str:
    """A broker as messages name it: its id and address, as kafka-python's metadata holds them."""
    if node is None:
        return "no broker (none is ready)"
    metadata = manager.cluster.broker_metadata(node)
    return f"broker {node}" if metadata is None else f"broker {node} at {metadata.host}:{metadata.port}"


def _array(parent: object, key: str, peer: str) -> list[dict[str, Any]]:
    value = parent.get(key) if isinstance(parent, Mapping) else None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise _malformed(peer, f"{key} is {_shown(value)}, not a list of entries")
    return value


def _int(parent: Mapping[str, Any], key: str, peer: str) -> int:
    value = parent.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _malformed(peer, f"{key} is {_shown(value)}, not an integer")
    return value


def _directory(value: object, peer: str) -> str | None:
    try:
        return kafka_uuid(value)
    except ValueError as e:
        raise _malformed(peer, f"replica_directory_id {_shown(value)} is not a UUID") from e


def _known_ms(value: object) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _malformed(peer: str, problem: str) -> KafkaProtocolError:
    return KafkaProtocolError(f"{REQUEST} answered by {peer} is not a quorum: {problem}")


class _StrictDecoder:
    """DescribeQuorumResponse's decoding as kafka-python's parser asks for it (a header, then a body), any
    failure raised as kafka-python's `KafkaProtocolError`, which its connection fails the request with.
    Its parser turns only ValueError and struct.error of a body into that: anything else (an IndexError
    from a cut array, an OverflowError from a huge varint, any error in a header) escapes its read loop,
    and the request waits out its timeout as if the broker had not answered."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.response = DescribeQuorumResponse[version]

    def parse_header(self, data: Any) -> Any:
        return self._strictly(self.response.parse_header, data)

    def decode(self, data: Any) -> Any:
        return self._strictly(self.response.decode, data)

    def _strictly(self, read: Any, data: Any) -> Any:
        try:
            return read(data)
        except _DECODE_ERRORS as e:
            raise UndecodableAnswer(f"not a {REQUEST} v{self.version} answer: {type(e).__name__}: {e}") from e


class _QuorumHeader(RequestHeader, init=False):  # type: ignore[call-arg]
    __slots__ = ()

    def get_response_class(self) -> _StrictDecoder:
        return _StrictDecoder(self.request_api_version)


class _QuorumRequest(DescribeQuorumRequest, init=False):  # type: ignore[call-arg]
    """A DescribeQuorum whose answer is decoded by `_StrictDecoder` (kafka-python picks a response's
    decoder from the header of the request it answers)."""

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        self._header = _QuorumHeader(request_api_key=self.API_KEY, request_api_version=self.API_VERSION,
                                     correlation_id=correlation_id, client_id=client_id)  # fmt: skip
