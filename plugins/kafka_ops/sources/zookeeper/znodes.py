"""Strict parsers for the znodes Kafka 3.9 writes in ZooKeeper mode.

Each parser takes the znode path, its raw bytes and its stat, and returns a model object or
raises `ZnodeFormatError` naming the path, the field and the problem: an unknown version, a
missing or mistyped field, a number out of the range of Kafka's own type for it, text that is
not UTF-8, bytes that are not JSON. Formats are those of Kafka's `ZkData.scala`.

The parsers are the only gate between ZooKeeper and the lake: whatever they return builds the
snapshot tables (`snapshot_tables.snapshot_batch`), so every value is checked here against the
type Kafka gives it (int32 broker ids, epochs, partition ids and ports; int64 times; int16
feature versions; strings that UTF-8 can encode) and nothing downstream has to check again.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from kafka_ops.errors import ZnodeFormatError
from kafka_ops.model.cluster import (
    AclResource,
    Broker,
    ConfigChange,
    ConfigOverride,
    Controller,
    FeatureZnode,
    IsrChangeNotification,
    LogDirEvent,
    MigrationZnode,
    PartitionState,
    QuotaConfig,
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
CONFIG = "/config"
CONFIG_CLIENTS = "/config/clients"
CONFIG_USERS = "/config/users"
CONFIG_IPS = "/config/ips"
CONFIG_CHANGES = "/config/changes"
FEATURE = "/feature"
MIGRATION = "/migration"
ACLS = "/kafka-acl"
PREFIXED_ACLS = "/kafka-acl-extended/prefixed"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def state_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}/state"


@dataclass(frozen=True, slots=True)
class Bounds:
    """The values of one of Kafka's integer types (or a narrower range Kafka requires)."""

    name: str
    low: int
    high: int

    def problem(self, value: Any) -> str | None:
        """Why `value` (decoded JSON) is not such an integer, or None when it is."""
        if isinstance(value, bool) or not isinstance(value, int):  # JSON true is not 1
            return f"expected an integer, got {show(value)}"
        if not self.low <= value <= self.high:
            return f"{show(value)} is out of {self.name} range ({self.low} to {self.high})"
        return None


INT16 = Bounds("int16", -(1 << 15), (1 << 15) - 1)
INT32 = Bounds("int32", -(1 << 31), (1 << 31) - 1)
PARTITION_ID = Bounds("partition id", 0, INT32.high)
LEADER_RECOVERY_STATE = Bounds("leader recovery state", 0, 1)  # RECOVERED, RECOVERING
# Kafka's times are int64 ms; the lake keeps them as timestamps, which end with the year 9999.
TIME_MS = Bounds("time in ms", -(1 << 63), 253_402_300_799_999)

_DECIMAL = re.compile(r"-?[0-9]{1,19}")  # ASCII digits only: str.isdigit() also takes '²'
_ASCII_DIGITS = re.compile(r"[0-9]+")

_SHOW = reprlib.Repr()
_SHOW.maxstring = 60
_SHOW.maxother = 60
_SHOW.maxlong = 60


def unsigned_int32(text: str) -> int | None:
    """`text` as a non-negative int32 when it is one in ASCII decimal digits, else None."""
    if not _ASCII_DIGITS.fullmatch(text) or len(text) > 10 or int(text) > INT32.high:
        return None
    return int(text)


def show(value: Any) -> str:
    """A short, printable, UTF-8-safe rendering of a decoded JSON value for an error message
    (bounded in length and depth: a 5,000-deep or megabyte value is shown by its start)."""
    return _SHOW.repr(value)


def is_text(value: str) -> bool:
    """UTF-8 can encode it: JSON escapes such as `\\ud800` decode to lone surrogates, which cannot."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Fields:
    """Typed access to one decoded JSON object; every failure names the path and field."""

    __slots__ = ("obj", "path", "version")

    def __init__(self, path: str, data: bytes | None, versions: tuple[int, ...]) -> None:
        self.path = path
        if not data:
            raise ZnodeFormatError(path, "empty znode, expected JSON")
        try:
            obj = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise ZnodeFormatError(path, f"not UTF-8 ({e.reason} at byte {e.start})") from e
        except RecursionError as e:  # Kafka's znodes nest 3 deep; this one is thousands
            raise ZnodeFormatError(path, "not valid JSON (nested too deep)") from e
        except ValueError as e:
            raise ZnodeFormatError(path, f"not valid JSON ({e})") from e
        if not isinstance(obj, dict):
            raise ZnodeFormatError(path, f"expected a JSON object, got {type(obj).__name__}")
        self.obj: dict[str, Any] = obj
        version = obj.get("version")
        if isinstance(version, str):  # /cluster/id writes "1"
            version = next((v for v in versions if str(v) == version), version)
        if isinstance(version, bool) or not isinstance(version, int) or version not in versions:
            known = ", ".join(str(v) for v in versions)
            raise ZnodeFormatError(path, f"unknown version {show(version)} (this parser knows {known})")
        self.version: int = version

    def fail(self, field: str, problem: str) -> ZnodeFormatError:
        return ZnodeFormatError(self.path, f"field '{field}': {problem}")

    def check_int(self, field: str, value: Any, bounds: Bounds) -> int:
        if type(value) is int and bounds.low <= value <= bounds.high:  # what Kafka writes (not bool)
            return value
        raise self.fail(field, bounds.problem(value) or f"expected an integer, got {show(value)}")

    def get_int(self, field: str, bounds: Bounds = INT32, default: int | None = None) -> int:
        value = self.obj.get(field, default)
        if value is None:
            raise self.fail(field, "missing")
        return self.check_int(field, value, bounds)

    def get_opt_int(self, field: str, bounds: Bounds) -> int | None:
        value = self.obj.get(field)
        return None if value is None else self.check_int(field, value, bounds)

    def get_timestamp(self, field: str) -> int:
        """Kafka writes timestamps as decimal strings (ms since the epoch)."""
        value = self.obj.get(field)
        if isinstance(value, str):
            if not _DECIMAL.fullmatch(value):
                raise self.fail(field, f"expected a timestamp in ms (decimal digits), got {show(value)}")
            value = int(value)
        elif isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"expected a timestamp in ms, got {show(value)}")
        return self.check_int(field, value, TIME_MS)

    def check_text(self, field: str, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail(field, f"expected a string, got {show(value)}")
        if not is_text(value):
            raise self.fail(field, f"not valid UTF-8 text: {show(value)}")
        return value

    def get_opt_str(self, field: str) -> str | None:
        value = self.obj.get(field)
        return None if value is None else self.check_text(field, value)

    def get_str(self, field: str) -> str:
        value = self.get_opt_str(field)
        if value is None:
            raise self.fail(field, "missing")
        return value

    def get_str_list(self, field: str, default: list[Any] | None = None) -> tuple[str, ...]:
        value = self.obj.get(field, default)
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list of strings, got {show(value)}")
        return tuple(self.check_text(f"{field}[{i}]", v) for i, v in enumerate(value))

    def check_int_list(self, field: str, value: Any) -> tuple[int, ...]:
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list of integers, got {show(value)}")
        if not all(type(v) is int and INT32.low <= v <= INT32.high for v in value):
            for i, v in enumerate(value):  # name the first bad element
                self.check_int(f"{field}[{i}]", v, INT32)
        return tuple(value)

    def get_int_list(self, field: str) -> tuple[int, ...]:
        return self.check_int_list(field, self.obj.get(field))

    def get_object(self, field: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
        value = self.obj.get(field, default)
        if not isinstance(value, dict):
            raise self.fail(field, f"expected an object, got {show(value)}")
        for key in value:
            if not is_text(key):
                raise self.fail(field, f"key {show(key)} is not valid UTF-8 text")
        return value

    def get_str_map(self, field: str, default: dict[str, Any] | None = None) -> dict[str, str]:
        return {k: self.check_text(f"{field}.{k}", v) for k, v in self.get_object(field, default).items()}

    def get_list(self, field: str) -> list[Any]:
        value = self.obj.get(field)
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list, got {show(value)}")
        return value

    def partition_map(self, field: str) -> dict[int, tuple[int, ...]]:
        out: dict[int, tuple[int, ...]] = {}
        for key, replicas in self.get_object(field, {}).items():
            partition = unsigned_int32(key)
            if partition is None:
                raise self.fail(field, f"partition key {show(key)} is not a number from 0 to {PARTITION_ID.high}")
            out[partition] = self.check_int_list(f"{field}.{key}", replicas)
        return out

    def topic_partitions(self, field: str = "partitions") -> list[tuple[str, int, dict[str, Any]]]:
        """`[{"topic": t, "partition": p, ...}]` as (topic, partition, entry)."""
        out = []
        for i, entry in enumerate(self.get_list(field)):
            where = f"{field}[{i}]"
            if not isinstance(entry, dict):
                raise self.fail(where, f"expected an object, got {show(entry)}")
            topic = self.check_text(f"{where}.topic", entry.get("topic"))
            partition = self.check_int(f"{where}.partition", entry.get("partition"), PARTITION_ID)
            out.append((topic, partition, entry))
        return out


def stat_of(stat: Any) -> ZnodeStat:
    """Keep the stat fields we use from a kazoo `ZnodeStat`."""
    return ZnodeStat(
        version=stat.version,
        czxid=stat.czxid,
        mzxid=stat.mzxid,
        ctime_ms=stat.ctime,
        mtime_ms=stat.mtime,
    )


def _name_id(path: str, what: str) -> int:
    """The id a znode is named by (`/brokers/ids/<id>`), as an int32 Kafka would accept."""
    name = path.rsplit("/", 1)[-1]
    number = unsigned_int32(name)
    if number is None:
        raise ZnodeFormatError(path, f"{what} {show(name)} is not a number from 0 to {INT32.high}")
    return number


def _features(f: _Fields) -> dict[str, dict[str, int]]:
    """v5 `features`: {name: {"min_version": int16, "max_version": int16}}."""
    out: dict[str, dict[str, int]] = {}
    for name, versions in f.get_object("features", {}).items():
        where = f"features.{name}"
        if not isinstance(versions, dict):
            raise f.fail(where, f"expected an object, got {show(versions)}")
        out[name] = {}
        for key, value in versions.items():
            if not is_text(key):
                raise f.fail(where, f"key {show(key)} is not valid UTF-8 text")
            out[name][key] = f.check_int(f"{where}.{key}", value, INT16)
    return out


def parse_broker(path: str, data: bytes | None, stat: ZnodeStat) -> Broker:
    f = _Fields(path, data, (1, 2, 3, 4, 5))
    broker_id = _name_id(path, "broker id")
    return Broker(
        broker_id=broker_id,
        host=f.get_opt_str("host"),
        port=f.get_int("port", INT32, -1),
        endpoints=f.get_str_list("endpoints", []) if f.version >= 2 else (),
        listener_security_protocol_map=f.get_str_map("listener_security_protocol_map", {}) if f.version >= 3 else {},
        jmx_port=f.get_int("jmx_port", INT32, -1),
        registered_at_ms=f.get_timestamp("timestamp") if f.version >= 2 else 0,
        rack=f.get_opt_str("rack"),
        features=_features(f) if f.version >= 5 else {},
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
    return PartitionState(
        topic=topic,
        partition=partition,
        leader=f.get_int("leader"),
        leader_epoch=f.get_int("leader_epoch"),
        controller_epoch=f.get_int("controller_epoch"),
        isr=f.get_int_list("isr"),
        leader_recovery_state=f.get_opt_int("leader_recovery_state", LEADER_RECOVERY_STATE),
        stat=stat,
    )


def parse_controller(path: str, data: bytes | None, stat: ZnodeStat) -> Controller:
    f = _Fields(path, data, (1, 2))
    return Controller(
        broker_id=f.get_int("brokerid"),
        elected_at_ms=f.get_timestamp("timestamp"),
        kraft_controller_epoch=f.get_int("kraftControllerEpoch", INT32, -1),
        version=f.version,
        stat=stat,
    )


def parse_controller_epoch(path: str, data: bytes | None) -> int:
    """`/controller_epoch` is a plain decimal int32 (Kafka writes `epoch.toString`), not JSON."""
    text = (data or b"").decode("ascii", errors="replace").strip()
    if not _ASCII_DIGITS.fullmatch(text):
        raise ZnodeFormatError(path, f"expected a plain integer, got {show(text)}")
    epoch = unsigned_int32(text)
    if epoch is None:
        raise ZnodeFormatError(path, f"{show(text)} is out of int32 range (0 to {INT32.high})")
    return epoch


def parse_isr_change(path: str, data: bytes | None, stat: ZnodeStat) -> IsrChangeNotification:
    f = _Fields(path, data, (1,))
    return IsrChangeNotification(
        name=path.rsplit("/", 1)[-1],
        partitions=tuple((topic, partition) for topic, partition, _ in f.topic_partitions()),
        stat=stat,
    )


def parse_log_dir_event(path: str, data: bytes | None, stat: ZnodeStat) -> LogDirEvent:
    f = _Fields(path, data, (1,))
    return LogDirEvent(name=path.rsplit("/", 1)[-1], broker_id=f.get_int("broker"), event=f.get_int("event"), stat=stat)


def parse_reassign_partitions(path: str, data: bytes | None) -> list[ReassignmentRequest]:
    f = _Fields(path, data, (1,))
    return [
        ReassignmentRequest(
            topic=topic,
            partition=partition,
            replicas=f.check_int_list(f"partitions[{i}].replicas", entry.get("replicas")),
        )
        for i, (topic, partition, entry) in enumerate(f.topic_partitions())
    ]


def parse_preferred_election(path: str, data: bytes | None) -> list[TopicPartition]:
    f = _Fields(path, data, (1,))
    return [(topic, partition) for topic, partition, _ in f.topic_partitions()]


def parse_config(path: str, data: bytes | None, entity_type: str) -> ConfigOverride:
    f = _Fields(path, data, (1,))
    config = f.get_str_map("config")
    return ConfigOverride(entity_type=entity_type, entity_name=path.rsplit("/", 1)[-1], config=config)


def parse_cluster_id(path: str, data: bytes | None) -> str:
    return _Fields(path, data, (1,)).get_str("id")


# -- client quotas, ACLs, features, config changes --------------------------------------------------

QUOTA_KEYS = frozenset(
    {"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate",
     "connection_creation_rate"}
)  # fmt: skip
"""Kafka 3.9's client-quota configs (`QuotaConfigs`); any other key of a quota entity is not kept."""
SCRAM_PREFIX = "SCRAM-"
DEFAULT_ENTITY = "<default>"
_PERMISSIONS = ("Allow", "Deny")


def desanitize(path: str, name: str) -> str:
    """A quota entity's znode name as Kafka reads it back (`Sanitizer.desanitize`: URL decoding)."""
    if name == DEFAULT_ENTITY:
        return name
    try:
        decoded = unquote_plus(name, errors="strict") if is_text(name) else None
    except UnicodeDecodeError:  # %-escapes that are not UTF-8
        decoded = None
    if decoded is None or not is_text(decoded):
        raise ZnodeFormatError(path, f"entity name {show(name)} is not URL-encoded UTF-8 text")
    return decoded


def parse_quota_config(path: str, data: bytes | None) -> QuotaConfig:
    """`/config/{clients,users,ips}/...`: the quota keys (numbers, as Kafka writes them: decimal
    strings); of a user's SCRAM credentials only the mechanism names are kept."""
    f = _Fields(path, data, (1,))
    entity_path = path.removeprefix(CONFIG + "/")
    parts = entity_path.split("/")
    names = {kind: desanitize(path, name) for kind, name in zip(parts[::2], parts[1::2], strict=False)}
    quotas: dict[str, float] = {}
    scram: list[str] = []
    for key, value in f.get_object("config").items():
        if key.startswith(SCRAM_PREFIX):
            scram.append(key)  # the value is a credential: never read further
        elif key in QUOTA_KEYS:
            quotas[key] = _quota_value(f, f"config.{key}", value)
    return QuotaConfig(
        entity_path=entity_path,
        user=names.get("users"),
        client_id=names.get("clients"),
        ip=names.get("ips"),
        quotas=quotas,
        scram_mechanisms=tuple(sorted(scram)),
    )


def _quota_value(f: _Fields, field: str, value: Any) -> float:
    text = f.check_text(field, value)
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0 or not text.isascii():
        raise f.fail(field, f"expected a non-negative number, got {show(text)}")
    return number


def parse_acls(path: str, data: bytes | None, pattern_type: str) -> AclResource:
    """`/kafka-acl/<ResourceType>/<name>` (LITERAL) or `/kafka-acl-extended/prefixed/<ResourceType>/<name>`
    (PREFIXED): the resource's ACL entries, counted (allow, deny, distinct principals)."""
    f = _Fields(path, data, (1,))
    parts = path.rsplit("/", 2)
    resource_type, name = parts[-2], parts[-1]
    principals: set[str] = set()
    allow = deny = 0
    for i, entry in enumerate(f.get_list("acls")):
        where = f"acls[{i}]"
        if not isinstance(entry, dict):
            raise f.fail(where, f"expected an object, got {show(entry)}")
        principals.add(f.check_text(f"{where}.principal", entry.get("principal")))
        permission = f.check_text(f"{where}.permissionType", entry.get("permissionType"))
        if permission not in _PERMISSIONS:
            raise f.fail(f"{where}.permissionType", f"expected Allow or Deny, got {show(permission)}")
        f.check_text(f"{where}.operation", entry.get("operation"))
        f.check_text(f"{where}.host", entry.get("host"))
        allow += permission == "Allow"
        deny += permission == "Deny"
    if not is_text(resource_type) or not is_text(name):
        raise ZnodeFormatError(path, "resource type or name is not valid UTF-8 text")
    return AclResource(resource_type, pattern_type, name, allow, deny, len(principals))


def parse_feature(path: str, data: bytes | None) -> FeatureZnode:
    """`/feature` (Kafka's `FeatureZNode`, v1 or v2): status (0 disabled, 1 enabled) and the
    finalized features with their int16 version levels."""
    f = _Fields(path, data, (1, 2))
    return FeatureZnode(status=f.get_int("status"), features=_features(f))


INT64 = Bounds("int64", -(1 << 63), (1 << 63) - 1)


def parse_migration(path: str, data: bytes | None, stat: ZnodeStat) -> MigrationZnode:
    """`/migration` (Kafka's `MigrationZNode`, v0): the KRaft controller and metadata offset ZooKeeper
    last received; -1 everywhere until the metadata has been copied."""
    f = _Fields(path, data, (0,))
    return MigrationZnode(
        kraft_controller_id=f.get_int("kraft_controller_id"),
        kraft_controller_epoch=f.get_int("kraft_controller_epoch"),
        kraft_metadata_offset=f.get_int("kraft_metadata_offset", INT64),
        kraft_metadata_epoch=f.get_int("kraft_metadata_epoch"),
        modified_ms=stat.mtime_ms,
    )


def parse_config_change(path: str, data: bytes | None, stat: ZnodeStat) -> ConfigChange:
    """`/config/changes/config_change_<seq>`: v2 names the entity path, v1 its type and name."""
    f = _Fields(path, data, (1, 2))
    if f.version == 2:
        entity_path = f.get_str("entity_path")
    else:
        entity_path = f"{f.get_str('entity_type')}/{f.get_str('entity_name')}"
    return ConfigChange(name=path.rsplit("/", 1)[-1], entity_path=entity_path, stat=stat)
