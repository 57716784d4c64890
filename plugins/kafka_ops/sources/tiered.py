"""Tiered storage (KIP-405) in the snapshot: for every partition of a topic with `remote.storage.enable=true`,
the local and the remote part of its log, and the settings that decide what stays local.

Which topics: their dynamic overrides, already in the snapshot (`remote.storage.enable` is a topic setting
with no broker default). For those only, whatever the cluster's size:
- one DescribeConfigs for their effective `local.retention.ms`, `local.retention.bytes` and
  `remote.log.copy.disable` (the topic's value or the broker default it inherits);
- four ListOffsets per leader, sent at once and answered in this order on one connection: earliest (-2),
  earliest-local (-4, ListOffsets v8+), latest-tiered (-5, v9+) and latest (-1). A broker answers one
  connection's requests in turn, so the end offset is read after the tiered one and the copy backlog is
  never negative by the reads' timing.

kafka-python 3.0.12 builds ListOffsets v1-v11 from Kafka's own schema and picks the highest version both
sides speak, at least the spec's (`ListOffsetsRequest.min_version_for_timestamp`); a broker that serves
less refuses the spec before anything is sent. That is an issue of kind `unsupported` per broker and spec
("unsupported"), and the partitions' fields it would fill stay None; the other specs still count. A
partition error (not the leader any more, a storage error) is an issue of kind `request` naming the topic
and partition. An answer that is not one (a partition missing or not asked for, an offset no broker
gives) raises `KafkaProtocolError` naming the request, broker, topic and partition, which the reader turns
into an issue: the snapshot stands without that partition's offsets.

DescribeLogDirs' replica sizes (`sources.log_dirs`) are the local part's bytes: a broker reports its
local segments only (`UnifiedLog.size`), never what is in remote storage. The Admin API tells no remote
size; the remote part is known in offsets only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kafka.admin import ConfigResourceType
from kafka.errors import IncompatibleBrokerVersion, KafkaError, UnsupportedVersionError, for_code
from kafka.protocol.admin import DescribeConfigsRequest
from kafka.protocol.consumer import ListOffsetsRequest

from kafka_ops.errors import KafkaOpsError, KafkaProtocolError
from kafka_ops.model.cluster import ClusterSnapshot, CollectionIssue, TieredLog, TieredTopic, TopicPartition
from kafka_ops.sources.admin import UNREACHABLE, AdminFactory, settled, with_admin

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

log = logging.getLogger(__name__)

REQUEST = "ListOffsets (tiered storage)"
REMOTE_STORAGE_ENABLE = "remote.storage.enable"
LOCAL_RETENTION_MS = "local.retention.ms"
LOCAL_RETENTION_BYTES = "local.retention.bytes"
COPY_DISABLE = "remote.log.copy.disable"
CONFIG_KEYS = (LOCAL_RETENTION_MS, LOCAL_RETENTION_BYTES, COPY_DISABLE)

EARLIEST, EARLIEST_LOCAL, LATEST_TIERED, LATEST = -2, -4, -5, -1
SPECS: dict[int, tuple[str, str, int]] = {
    EARLIEST: ("earliest", "log_start_offset", 1),
    EARLIEST_LOCAL: ("earliest-local", "local_log_start_offset", 8),
    LATEST_TIERED: ("latest-tiered", "tiered_end_offset", 9),
    LATEST: ("latest", "end_offset", 1),
}
"""Each spec's name (as `kafka-get-offsets --time` takes it), the `TieredLog` field it fills and the
first ListOffsets version that serves it (KIP-405 for -4, KIP-1005 for -5), in the order they are sent."""
UNSUPPORTED = (IncompatibleBrokerVersion, UnsupportedVersionError)
BESIDE_ZOOKEEPER_TIMEOUT_S = 5.0


def remote_storage(snap: ClusterSnapshot) -> dict[str, bool | None]:
    """Topics with `remote.storage.enable=true` among the snapshot's topic overrides -> True, and topics
    whose configs could not be read (an issue names them) -> None; every other topic has no remote
    storage (the setting has no broker default)."""
    found: dict[str, bool | None] = {}
    for override in snap.configs:
        enabled = str(override.config.get(REMOTE_STORAGE_ENABLE) or "").strip().lower() == "true"
        if enabled and override.entity_type == "topic" and override.entity_name in snap.topics:
            found[override.entity_name] = True
    for issue in snap.issues:
        topic = _topic_of_config_issue(issue.path)
        if topic is not None and topic in snap.topics and topic not in found:
            found[topic] = None
    return found


def _topic_of_config_issue(path: str) -> str | None:
    """The topic a collection issue about one topic's configs names: KRaft `topic <t> configs`, ZooKeeper
    `.../config/topics/<t>`."""
    if path.startswith("topic ") and path.endswith(" configs"):
        return path[len("topic ") : -len(" configs")]
    _, sep, topic = path.rpartition("/config/topics/")
    return topic if sep and topic and "/" not in topic else None


def read(admin: KafkaAdminClient, snap: ClusterSnapshot, timeout_ms: int | None = None) -> None:
    """Fill `snap.remote_storage`, `.tiered_topics` and `.tiered_logs` (see the module docstring): nothing
    is sent when no topic has remote storage. Failures are issues; never raises for a broker's answer."""
    snap.remote_storage = remote_storage(snap)
    topics = sorted(t for t, on in snap.remote_storage.items() if on)
    if not topics:
        return
    by_leader: dict[int, list[TopicPartition]] = {}
    for topic in topics:
        for partition in sorted(snap.topics[topic].partitions):
            state = snap.partition_states.get((topic, partition))
            if state is None or state.leader < 0:
                where = f"{REQUEST} topic {topic} partition {partition}"
                problem = f"{topic}-{partition} has no leader: its local and remote offsets are unknown"
                snap.issues.append(CollectionIssue(where, problem, "request"))
                snap.tiered_logs[(topic, partition)] = TieredLog(topic, partition, None)
                continue
            by_leader.setdefault(state.leader, []).append((topic, partition))
    configs, offsets = admin._manager.run(_ask, admin, topics, by_leader, timeout_ms)
    _add_configs(snap, topics, configs)
    for leader, tps in sorted(by_leader.items()):
        _add_offsets(snap, leader, tps, offsets[leader])


def collect_beside(snap: ClusterSnapshot, factory: AdminFactory, timeout_s: float = BESIDE_ZOOKEEPER_TIMEOUT_S) -> None:
    """A ZooKeeper snapshot's tiered storage, through the cluster's Kafka connection (`factory`, bounded as
    `log_dirs.bounded` bounds it). Never raises: an unreachable cluster is an issue."""
    snap.remote_storage = remote_storage(snap)
    if not any(snap.remote_storage.values()):
        return
    timeout_ms = max(1, int(timeout_s * 1000))
    try:
        with_admin(factory, "reading tiered storage offsets", lambda admin, where: read(admin, snap, timeout_ms))
    except (KafkaOpsError, KafkaError, *UNREACHABLE) as e:
        problem = f"the tiered topics' offsets could not be read through {factory.bootstrap_servers}: {e}"
        snap.issues.append(CollectionIssue(REQUEST, problem, "request"))


async def _ask(
    admin: KafkaAdminClient, topics: list[str], by_leader: Mapping[int, list[TopicPartition]], timeout_ms: int | None
) -> tuple[Any, dict[int, dict[int, Any]]]:
    """Every request sent at once; each answer (or the error in its place) once all are in."""
    manager = admin._manager
    sent_configs = _send(manager, configs_request(topics), None, timeout_ms)
    sent = {
        leader: {spec: _send(manager, offsets_request(tps, spec), leader, timeout_ms) for spec in SPECS}
        for leader, tps in by_leader.items()
    }
    (configs,) = await settled([sent_configs])
    offsets = {leader: dict(zip(specs, await settled(specs.values()), strict=True)) for leader, specs in sent.items()}
    return configs, offsets


def _send(manager: Any, request: Any, node: int | None, timeout_ms: int | None) -> Any:
    from kafka.future import Future  # noqa: PLC0415 - only for a broker the client does not know

    try:
        return manager.send(request, node_id=node, request_timeout_ms=timeout_ms)
    except KafkaError as e:  # a broker the client's metadata does not know yet: its own failure
        return Future().failure(e)


def offsets_request(partitions: Iterable[TopicPartition], spec: int) -> Any:
    """One ListOffsets for `spec` (one of `SPECS`) of every partition in `partitions`, at the spec's first
    version or later (kafka-python picks the highest both sides speak)."""
    topic = ListOffsetsRequest.ListOffsetsTopic
    by_topic: dict[str, list[int]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(p)
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=[topic(name=t, partitions=[topic.ListOffsetsPartition(partition_index=p, timestamp=spec) for p in ps])
                for t, ps in sorted(by_topic.items())],
        min_version=SPECS[spec][2],
    )  # fmt: skip


def configs_request(topics: list[str]) -> Any:
    """One DescribeConfigs of `CONFIG_KEYS` for `topics`."""
    resource = DescribeConfigsRequest.DescribeConfigsResource
    return DescribeConfigsRequest(
        resources=[resource(resource_type=ConfigResourceType.TOPIC.value, resource_name=t,
                            configuration_keys=list(CONFIG_KEYS)) for t in topics],
        include_synonyms=False,
    )  # fmt: skip


def parse_offsets(answer: Any, spec: int, leader: int, asked: list[TopicPartition]) -> dict[TopicPartition, Any]:
    """One leader's ListOffsets answer for `spec`: per partition asked, its offset (an int) or Kafka's error
    for it (an exception). Raises `KafkaProtocolError` naming the request, the broker, the topic and the
    partition when the answer is not one: a partition asked for is missing or answered twice, one not
    asked for is there, or an offset is one no broker gives (below -1; -1 except for latest-tiered)."""
    name = SPECS[spec][0]
    where = f"ListOffsets ({name}, {spec}) answer from broker {leader}"
    wanted = set(asked)
    found: dict[TopicPartition, Any] = {}
    for topic in answer.topics or ():
        for p in topic.partitions or ():
            tp = (topic.name, p.partition_index)
            if tp not in wanted:
                raise KafkaProtocolError(f"{where}: topic {tp[0]} partition {tp[1]} was not asked for")
            if tp in found:
                raise KafkaProtocolError(f"{where}: topic {tp[0]} partition {tp[1]} is answered twice")
            if p.error_code:
                error = for_code(p.error_code)
                found[tp] = error(f"{error.__name__} for topic {tp[0]} partition {tp[1]}")
                continue
            offset = p.offset
            lowest = -1 if spec == LATEST_TIERED else 0
            if not isinstance(offset, int) or offset < lowest:
                raise KafkaProtocolError(
                    f"{where}: topic {tp[0]} partition {tp[1]}: offset {offset!r} is not a {name} offset "
                    f"(none is below {lowest})"
                )
            found[tp] = offset
    missing = sorted(wanted - found.keys())
    if missing:
        t, p = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise KafkaProtocolError(f"{where}: topic {t} partition {p}{more} asked for is not in the answer")
    return found


def check_order(found: TieredLog) -> None:
    """Raises `KafkaProtocolError` naming the topic and partition when one leader's offsets, read in
    `SPECS` order on one connection, contradict each other: the log start above the local log start
    (both only rise, the local one read later), or the last tiered offset at or past the end offset
    (read after it)."""
    where = f"ListOffsets answers from broker {found.leader}: topic {found.topic} partition {found.partition}"
    start, local = found.log_start_offset, found.local_log_start_offset
    tiered, end = found.tiered_end_offset, found.end_offset
    if start is not None and local is not None and start > local:
        raise KafkaProtocolError(f"{where}: log start offset {start} is above the local log start offset {local}")
    if tiered is not None and end is not None and tiered >= end:
        raise KafkaProtocolError(f"{where}: latest tiered offset {tiered} is not below the end offset {end}")
    if local is not None and end is not None and local > end:
        raise KafkaProtocolError(f"{where}: local log start offset {local} is above the end offset {end}")


def _add_offsets(snap: ClusterSnapshot, leader: int, asked: list[TopicPartition], answers: Mapping[int, Any]) -> None:
    values: dict[TopicPartition, dict[str, int]] = {tp: {} for tp in asked}
    for spec, answer in answers.items():
        name, field_name, version = SPECS[spec]
        path = f"{REQUEST} {name} broker {leader}"
        if isinstance(answer, UNSUPPORTED):
            problem = (f"unsupported: broker {leader} does not serve ListOffsets v{version}+ ({name} offsets, "
                       f"spec {spec}): {answer}")  # fmt: skip
            snap.issues.append(CollectionIssue(path, problem, "unsupported"))
            continue
        if isinstance(answer, BaseException):
            problem = f"broker {leader} gave no {name} offsets: {type(answer).__name__}: {answer}"
            snap.issues.append(CollectionIssue(path, problem, "request"))
            continue
        try:
            parsed = parse_offsets(answer, spec, leader, asked)
        except KafkaProtocolError as e:
            snap.issues.append(CollectionIssue(path, str(e), "parse"))
            continue
        for tp, value in parsed.items():
            if isinstance(value, BaseException):
                where = f"{REQUEST} {name} topic {tp[0]} partition {tp[1]}"
                snap.issues.append(CollectionIssue(where, f"broker {leader} refused: {value}", "request"))
            else:
                values[tp][field_name] = value
    for (topic, partition), fields in values.items():
        found = TieredLog(topic, partition, leader, **fields)
        try:
            check_order(found)
        except KafkaProtocolError as e:
            snap.issues.append(CollectionIssue(f"{REQUEST} topic {topic} partition {partition}", str(e), "parse"))
            found = TieredLog(topic, partition, leader)
        snap.tiered_logs[(topic, partition)] = found


def _add_configs(snap: ClusterSnapshot, topics: list[str], answer: Any) -> None:
    """Each remote-storage topic's settings; a topic the broker could not describe keeps None."""
    for topic in topics:
        snap.tiered_topics[topic] = TieredTopic(topic)
    if isinstance(answer, BaseException):
        problem = f"the remote-storage topics' local retention is unknown: {type(answer).__name__}: {answer}"
        snap.issues.append(CollectionIssue("DescribeConfigs (tiered topics)", problem, "request"))
        return
    for result in answer.results or ():
        topic = result.resource_name
        if topic not in snap.tiered_topics:
            continue
        if result.error_code:
            problem = f"DescribeConfigs error {result.error_code}: {result.error_message or ''}".rstrip(": ")
            snap.issues.append(CollectionIssue(f"topic {topic} tiered storage configs", problem, "request"))
            continue
        values = {c.name: c.value for c in result.configs or () if c.name in CONFIG_KEYS}
        try:
            snap.tiered_topics[topic] = replace(
                snap.tiered_topics[topic],
                local_retention_ms=_int(values.get(LOCAL_RETENTION_MS)),
                local_retention_bytes=_int(values.get(LOCAL_RETENTION_BYTES)),
                copy_disabled=_bool(values.get(COPY_DISABLE)),
            )
        except ValueError as e:
            problem = f"DescribeConfigs answered a value that is not Kafka's: {e}"
            snap.issues.append(CollectionIssue(f"topic {topic} tiered storage configs", problem, "parse"))


def _int(value: str | None) -> int | None:
    return None if value is None else int(value)


def _bool(value: str | None) -> bool | None:
    if value is None:
        return None
    if value.strip().lower() not in ("true", "false"):
        raise ValueError(f"{value!r} is not a boolean")
    return value.strip().lower() == "true"


__all__ = [
    "BESIDE_ZOOKEEPER_TIMEOUT_S",
    "REQUEST",
    "SPECS",
    "check_order",
    "collect_beside",
    "configs_request",
    "offsets_request",
    "parse_offsets",
    "read",
    "remote_storage",
]
