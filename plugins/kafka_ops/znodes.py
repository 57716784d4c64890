"""Strict parsers for the znodes Kafka 3.9 writes in ZooKeeper mode.

Each parser takes the znode path, its raw bytes and its stat, and returns a model object or
raises `ZnodeFormatError` naming the path and the problem: an unknown version, a missing or
mistyped field, bytes that are not JSON. Formats are those of Kafka's `ZkData.scala`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kafka_ops.errors import ZnodeFormatError
from kafka_ops.model import (
    Broker,
    ConfigOverride,
    Controller,
    IsrChangeNotification,
    LogDirEvent,
    PartitionState,
    ReassignmentRequest,
    TopicAssignment,
    TopicPartition,
    ZnodeStat,
)

# Paths relative to the cluster's chroot.
BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
ISR_CHANGE_NOTIFICATION = "/isr_change_notification"
LOG_DIR_EVENT_NOTIFICATION = "/log_dir_event_notification"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION = "/admin/preferred_replica_election"
DELETE_TOPICS = "/admin/delete_topics"
CONFIG_TOPICS = "/config/topics"
CONFIG_BROKERS = "/config/brokers"
CLUSTER_ID = "/cluster/id"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def state_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}/state"


class _Fields:
    """Typed access to one decoded JSON object; every failure names the path and field."""

    __slots__ = ("obj", "path", "version")

    def __init__(self, path: str, data: bytes | None, versions: tuple[int, ...]) -> None:
        self.path = path
        if not data:
            raise ZnodeFormatError(path, "empty znode, expected JSON")
        try:
            obj = json.loads(data)
        except (UnicodeDecodeError, ValueError) as e:
            raise ZnodeFormatError(path, f"not valid JSON ({e})") from e
        if not isinstance(obj, dict):
            raise ZnodeFormatError(path, f"expected a JSON object, got {type(obj).__name__}")
        self.obj: dict[str, Any] = obj
        version = obj.get("version")
        if isinstance(version, str) and version.isdigit():
            version = int(version)
        if version not in versions:
            known = ", ".join(str(v) for v in versions)
            raise ZnodeFormatError(path, f"unknown version {version!r} (this parser knows {known})")
        self.version: int = version

    def fail(self, field: str, problem: str) -> ZnodeFormatError:
        return ZnodeFormatError(self.path, f"field '{field}': {problem}")

    def get_int(self, field: str, default: int | None = None) -> int:
        value = self.obj.get(field, default)
        if value is None:
            raise self.fail(field, "missing")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"expected an integer, got {value!r}")
        return value

    def get_timestamp(self, field: str) -> int:
        """Kafka writes timestamps as decimal strings."""
        value = self.obj.get(field)
        if isinstance(value, str) and value.lstrip("-").isdigit():
            return int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise self.fail(field, f"expected a timestamp in ms, got {value!r}")

    def get_opt_str(self, field: str) -> str | None:
        value = self.obj.get(field)
        if value is not None and not isinstance(value, str):
            raise self.fail(field, f"expected a string, got {value!r}")
        return value

    def get_str(self, field: str) -> str:
        value = self.get_opt_str(field)
        if value is None:
            raise self.fail(field, "missing")
        return value

    def get_int_list(self, field: str, value: Any = None) -> tuple[int, ...]:
        value = self.obj.get(field) if value is None else value
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise self.fail(field, f"expected a list of integers, got {value!r}")
        return tuple(value)

    def get_object(self, field: str, default: Mapping[str, Any] | None = None) -> dict[str, Any]:
        value = self.obj.get(field, default)
        if not isinstance(value, dict):
            raise self.fail(field, f"expected an object, got {value!r}")
        return value

    def get_list(self, field: str) -> list[Any]:
        value = self.obj.get(field)
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list, got {value!r}")
        return value

    def partition_map(self, field: str) -> dict[int, tuple[int, ...]]:
        out: dict[int, tuple[int, ...]] = {}
        for key, replicas in self.get_object(field, {}).items():
            if not key.isdigit():
                raise self.fail(field, f"partition key {key!r} is not a number")
            out[int(key)] = self.get_int_list(f"{field}.{key}", replicas)
        return out

    def topic_partitions(self, field: str = "partitions") -> list[dict[str, Any]]:
        entries = self.get_list(field)
        for i, entry in enumerate(entries):
            where = f"{field}[{i}]"
            if not isinstance(entry, dict):
                raise self.fail(where, f"expected an object, got {entry!r}")
            if not isinstance(entry.get("topic"), str):
                raise self.fail(f"{where}.topic", f"expected a string, got {entry.get('topic')!r}")
            partition = entry.get("partition")
            if isinstance(partition, bool) or not isinstance(partition, int):
                raise self.fail(f"{where}.partition", f"expected an integer, got {partition!r}")
        return entries


def stat_of(stat: Any) -> ZnodeStat:
    """Keep the stat fields we use from a kazoo `ZnodeStat`."""
    return ZnodeStat(
        version=stat.version,
        czxid=stat.czxid,
        mzxid=stat.mzxid,
        ctime_ms=stat.ctime,
        mtime_ms=stat.mtime,
    )


def parse_broker(path: str, data: bytes | None, stat: ZnodeStat) -> Broker:
    f = _Fields(path, data, (1, 2, 3, 4, 5))
    name = path.rsplit("/", 1)[-1]
    if not name.isdigit():
        raise ZnodeFormatError(path, f"broker id {name!r} is not a number")
    protocol_map = f.get_object("listener_security_protocol_map", {}) if f.version >= 3 else {}
    features = f.get_object("features", {}) if f.version >= 5 else {}
    endpoints = f.obj.get("endpoints", []) if f.version >= 2 else []
    if not isinstance(endpoints, list) or not all(isinstance(e, str) for e in endpoints):
        raise f.fail("endpoints", f"expected a list of strings, got {endpoints!r}")
    return Broker(
        broker_id=int(name),
        host=f.get_opt_str("host"),
        port=f.get_int("port", -1),
        endpoints=tuple(endpoints),
        listener_security_protocol_map={str(k): str(v) for k, v in protocol_map.items()},
        jmx_port=f.get_int("jmx_port", -1),
        registered_at_ms=f.get_timestamp("timestamp") if f.version >= 2 else 0,
        rack=f.get_opt_str("rack"),
        features=features,
        version=f.version,
        epoch=stat.czxid,
    )


def parse_topic(path: str, data: bytes | None) -> TopicAssignment:
    f = _Fields(path, data, (1, 2, 3))
    partitions = f.partition_map("partitions")
    adding = f.partition_map("adding_replicas") if f.version >= 2 else {}
    removing = f.partition_map("removing_replicas") if f.version >= 2 else {}
    for kind, moving in (("adding_replicas", adding), ("removing_replicas", removing)):
        for p in moving:
            if p not in partitions:
                raise f.fail(kind, f"partition {p} is not in 'partitions'")
    return TopicAssignment(
        topic=path.rsplit("/", 1)[-1],
        topic_id=f.get_opt_str("topic_id") if f.version >= 3 else None,
        partitions=partitions,
        adding_replicas=adding,
        removing_replicas=removing,
        version=f.version,
    )


def parse_partition_state(path: str, data: bytes | None, stat: ZnodeStat, topic: str, partition: int) -> PartitionState:
    f = _Fields(path, data, (1,))
    recovery = f.obj.get("leader_recovery_state")
    if recovery is not None and (isinstance(recovery, bool) or not isinstance(recovery, int)):
        raise f.fail("leader_recovery_state", f"expected an integer, got {recovery!r}")
    return PartitionState(
        topic=topic,
        partition=partition,
        leader=f.get_int("leader"),
        leader_epoch=f.get_int("leader_epoch"),
        controller_epoch=f.get_int("controller_epoch"),
        isr=f.get_int_list("isr"),
        leader_recovery_state=recovery,
        stat=stat,
    )


def parse_controller(path: str, data: bytes | None, stat: ZnodeStat) -> Controller:
    f = _Fields(path, data, (1, 2))
    return Controller(
        broker_id=f.get_int("brokerid"),
        elected_at_ms=f.get_timestamp("timestamp"),
        kraft_controller_epoch=f.get_int("kraftControllerEpoch", -1),
        version=f.version,
        stat=stat,
    )


def parse_controller_epoch(path: str, data: bytes | None) -> int:
    """`/controller_epoch` is a plain decimal integer, not JSON."""
    text = (data or b"").decode("ascii", errors="replace").strip()
    if not text.isdigit():
        raise ZnodeFormatError(path, f"expected a plain integer, got {text[:40]!r}")
    return int(text)


def parse_isr_change(path: str, data: bytes | None, stat: ZnodeStat) -> IsrChangeNotification:
    f = _Fields(path, data, (1,))
    entries = f.topic_partitions()
    return IsrChangeNotification(
        name=path.rsplit("/", 1)[-1],
        partitions=tuple((e["topic"], e["partition"]) for e in entries),
        stat=stat,
    )


def parse_log_dir_event(path: str, data: bytes | None, stat: ZnodeStat) -> LogDirEvent:
    f = _Fields(path, data, (1,))
    return LogDirEvent(name=path.rsplit("/", 1)[-1], broker_id=f.get_int("broker"), event=f.get_int("event"), stat=stat)


def parse_reassign_partitions(path: str, data: bytes | None) -> list[ReassignmentRequest]:
    f = _Fields(path, data, (1,))
    entries = f.topic_partitions()
    return [
        ReassignmentRequest(
            topic=e["topic"],
            partition=e["partition"],
            replicas=f.get_int_list(f"partitions[{i}].replicas", e.get("replicas")),
        )
        for i, e in enumerate(entries)
    ]


def parse_preferred_election(path: str, data: bytes | None) -> list[TopicPartition]:
    f = _Fields(path, data, (1,))
    return [(e["topic"], e["partition"]) for e in f.topic_partitions()]


def parse_config(path: str, data: bytes | None, entity_type: str) -> ConfigOverride:
    f = _Fields(path, data, (1,))
    config = f.get_object("config")
    bad = [k for k, v in config.items() if not isinstance(v, str)]
    if bad:
        raise f.fail(f"config.{bad[0]}", f"expected a string value, got {config[bad[0]]!r}")
    return ConfigOverride(entity_type=entity_type, entity_name=path.rsplit("/", 1)[-1], config=dict(config))


def parse_cluster_id(path: str, data: bytes | None) -> str:
    return _Fields(path, data, (1,)).get_str("id")
