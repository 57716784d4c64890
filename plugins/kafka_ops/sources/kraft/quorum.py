"""DescribeQuorum: the request for the metadata log's partition, and its answer read into a `Quorum`.

Both ways of asking (a broker through the admin client, `kraft.collector`; a controller over its own
listener, `kraft.controllers`) read the answer here. An answer that is not one (no topics, no
partitions, a null array, a field of the wrong type) raises `KafkaProtocolError` naming the peer; an
error code Kafka sent raises kafka-python's error for it.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from typing import Any

from kafka.errors import KafkaError, for_code
from kafka.protocol.admin import DescribeQuorumRequest

from kafka_ops.errors import KafkaProtocolError
from kafka_ops.model.cluster import Quorum, QuorumReplica

METADATA_TOPIC = "__cluster_metadata"
REQUEST = "DescribeQuorum"


def request() -> Any:
    """A DescribeQuorum for partition 0 of the metadata log (the version is the sender's to set)."""
    topic = DescribeQuorumRequest.TopicData
    return DescribeQuorumRequest(
        topics=[topic(topic_name=METADATA_TOPIC, partitions=[topic.PartitionData(partition_index=0)])]
    )


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
