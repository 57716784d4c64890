"""Ask the KRaft controllers themselves for the metadata quorum (DescribeQuorum on their own listener).

While a 3.9 cluster migrates, its brokers still run on ZooKeeper and do not serve DescribeQuorum, and
kafka-python's admin client cannot bootstrap from a controller listener (controllers do not answer
Metadata, KIP-919). So this module speaks to a controller over one plain socket: ApiVersions to agree a
version, then DescribeQuorum, which any controller answers (a follower from its own view; the answer
names the leader). Each address of `controller_bootstrap` is tried in turn; when none answers, the
quorum cannot be seen (`KafkaUnreachable`).
"""

from __future__ import annotations

import socket
import time
from typing import Any

from kafka.errors import KafkaError
from kafka.protocol.admin import DescribeQuorumRequest
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.parser import KafkaProtocol

from kafka_ops.errors import KafkaUnreachable
from kafka_ops.snapshot.model import Quorum
from kafka_ops.sources.kraft.collector import parse_quorum

METADATA_TOPIC = "__cluster_metadata"


def describe_quorum(controller_bootstrap: str, timeout_s: float = 5.0) -> Quorum:
    """The quorum as the first answering controller of `controller_bootstrap` ("host:port,...") sees it."""
    failures = []
    for address in [a.strip() for a in controller_bootstrap.split(",") if a.strip()]:
        host, _, port = address.rpartition(":")
        try:
            return parse_quorum(_ask(host, int(port), timeout_s))
        except (OSError, KafkaError, ValueError) as e:
            failures.append(f"{address} ({type(e).__name__}: {e})")
    raise KafkaUnreachable(
        "no KRaft controller answered DescribeQuorum: " + ("; ".join(failures) or "no address given")
    )


def speaks_kafka(host: str, port: int, timeout_s: float = 3.0) -> bool:
    """True when `host:port` answers Kafka's ApiVersions: a broker's or a controller's listener."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            answer = _exchange(sock, KafkaProtocol(client_id="kafka-ops"), _request(ApiVersionsRequest, 0),
                               time.monotonic() + timeout_s)  # fmt: skip
    except (OSError, KafkaError, ValueError):
        return False
    return bool(getattr(answer, "api_keys", None))


def _ask(host: str, port: int, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        protocol = KafkaProtocol(client_id="kafka-ops")
        versions = _exchange(sock, protocol, _request(ApiVersionsRequest, 0), deadline)
        supported = {v.api_key: v.max_version for v in versions.api_keys}
        key = DescribeQuorumRequest.API_KEY
        if key not in supported:
            raise KafkaError(f"{host}:{port} does not serve DescribeQuorum: is it a KRaft controller listener?")
        topic = DescribeQuorumRequest.TopicData
        request = DescribeQuorumRequest(
            topics=[topic(topic_name=METADATA_TOPIC, partitions=[topic.PartitionData(partition_index=0)])]
        )
        request.API_VERSION = min(supported[key], DescribeQuorumRequest.max_version)
        response = _exchange(sock, protocol, request, deadline)
    if response.error_code:
        raise KafkaError(f"DescribeQuorum error code {response.error_code}: {response.error_message or ''}")
    answer = response.to_dict()
    for t in answer["topics"]:
        for p in t["partitions"]:
            code = p.pop("error_code", 0)
            p["error"] = f"error code {code}: {p.pop('error_message', '') or ''}" if code else None
    return dict(answer)


def _request(kind: Any, version: int) -> Any:
    request = kind()
    request.API_VERSION = version
    return request


def _exchange(sock: socket.socket, protocol: KafkaProtocol, request: Any, deadline: float) -> Any:
    protocol.send_request(request)
    sock.sendall(protocol.send_bytes())
    while True:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        data = sock.recv(65536)
        if not data:
            raise OSError("the controller closed the connection")
        responses = protocol.receive_bytes(data)
        if responses:
            return responses[0][1]
