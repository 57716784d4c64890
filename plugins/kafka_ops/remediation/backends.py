"""The two ways the executor writes to a Kafka cluster, behind one small interface.

`AdminApiBackend` (the default, `remediation_backend = "admin_api"`) speaks Kafka's Admin API
through kafka-python: `AlterPartitionReassignments` (replicas `None` cancels),
`ListPartitionReassignments`, `ElectLeaders` (PREFERRED) and `IncrementalAlterConfigs` for the
throttles, exactly what `kafka-reassign-partitions --bootstrap-server` and
`kafka-leader-election` send. It is the supported interface and the only one that can cancel.

`ZooKeeperBackend` (`remediation_backend = "zookeeper"`) writes the znodes Kafka's ZooKeeper-mode
tools wrote, which the 3.9 controller still honours:

* `/admin/reassign_partitions` `{"version":1,"partitions":[{topic, partition, replicas}]}`: only
  its *creation* triggers the controller, so an existing node is never overwritten (the write is
  refused instead);
* `/admin/preferred_replica_election` `{"version":1,"partitions":[{topic, partition}]}`;
* throttles as `AdminZkClient.changeConfigs` does: the entity's `/config/topics/<t>` or
  `/config/brokers/<id>` znode holds `{"version":1,"config":{key: "value"}}` (merged with what is
  there, written with the znode version so a concurrent change is never lost), then a
  `/config/changes/config_change_<seq>` sequential znode `{"version":2,"entity_path":"topics/<t>"}`
  tells every broker to reload that entity (`KafkaZkClient.createConfigChangeNotification`).

ZooKeeper-mode Kafka has no way to cancel a reassignment through ZooKeeper: deleting
`/admin/reassign_partitions` does not stop the controller. `ZooKeeperBackend.cancel` therefore
refuses and says what to do instead.

Both back ends convert client errors at the boundary into `RemediationFailed` /
`RemediationRefused` naming the partitions, config entities or znode paths.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kafka import TopicPartition as KafkaTP
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType
from kafka.errors import KafkaError, NoReassignmentInProgressError
from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError, ZookeeperError
from kazoo.handlers.threading import KazooTimeoutError

from kafka_ops.errors import ConfigError, RemediationFailed, RemediationRefused, ZnodeFormatError
from kafka_ops.model.cluster import TopicPartition, tp_text
from kafka_ops.settings import ClusterConfig, RemediationBackend
from kafka_ops.sources.zookeeper import znodes
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

log = logging.getLogger(__name__)

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
BROKER_THROTTLES = (LEADER_RATE, FOLLOWER_RATE)
ALTER_LOG_DIRS_THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"
"""The throttle of copies between a broker's log dirs (a `log_dir_balance` plan's)."""

CONFIG_CHANGES = "/config/changes/config_change_"
_CONFIG_RETRIES = 5
_ELECTION_NOT_NEEDED = 84


def broker_throttles(kind: str) -> tuple[str, ...]:
    """The broker config keys a plan of `kind` throttles with (and its cleanup removes)."""
    return (ALTER_LOG_DIRS_THROTTLE,) if kind == "log_dir_balance" else BROKER_THROTTLES


class Backend(Protocol):
    """What the executor needs from a cluster's write path. Reads of the live state go through
    ZooKeeper (`live.LiveReader`) whichever back end writes."""

    name: RemediationBackend

    def reassign(self, targets: Mapping[TopicPartition, tuple[int, ...]]) -> None:
        """Start moving each partition to its target replicas (in this order)."""

    def reassignments_in_flight(self) -> dict[TopicPartition, tuple[int, ...]]:
        """What the back end itself reports in flight (partition → target replicas), beyond what the
        ZooKeeper read shows; may be empty."""

    def elect_preferred(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, str]:
        """Ask for a preferred-leader election; returns the partitions the cluster refused, with why."""

    def set_configs(self, topics: Mapping[str, Mapping[str, str]], brokers: Mapping[int, Mapping[str, str]]) -> None:
        """Set (add or replace) dynamic config keys of topics and brokers; other keys are kept."""

    def delete_configs(self, topics: Mapping[str, Collection[str]], brokers: Mapping[int, Collection[str]]) -> None:
        """Remove dynamic config keys (absent keys are fine)."""

    def cancel(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, str]:
        """Cancel in-flight reassignments; returns the partitions that could not be cancelled, with why."""

    def close(self) -> None: ...


# -- Admin API ----------------------------------------------------------------------------------------


class AdminApiBackend:
    """Writes through Kafka's Admin API. `admin_factory` builds a `KafkaAdminClient` on first use
    (e.g. `kafka_ops.sources.groups.collector.KafkaTarget`, or `KafkaAdminHook.target()`)."""

    name: RemediationBackend = "admin_api"

    def __init__(self, admin_factory: Callable[[], KafkaAdminClient], timeout_ms: int = 30_000) -> None:
        self.admin_factory = admin_factory
        self.timeout_ms = timeout_ms
        self._admin: KafkaAdminClient | None = None

    def __repr__(self) -> str:  # the factory's repr shows servers only, never credentials
        return f"AdminApiBackend({self.admin_factory!r})"

    @property
    def admin(self) -> KafkaAdminClient:
        if self._admin is None:
            try:
                self._admin = self.admin_factory()
            except KafkaError as e:
                raise RemediationFailed(f"cannot reach Kafka's Admin API at {self.admin_factory!r}: {e!r}") from e
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def reassign(self, targets: Mapping[TopicPartition, tuple[int, ...]]) -> None:
        request = {KafkaTP(t, p): list(replicas) for (t, p), replicas in targets.items()}
        try:
            result = self.admin.alter_partition_reassignments(request, timeout_ms=self.timeout_ms)
        except KafkaError as e:
            raise RemediationFailed(f"AlterPartitionReassignments failed for {tp_text(targets)}: {e!r}") from e
        errors = {(tp.topic, tp.partition): err.__name__ for tp, err in result.items() if err is not None}
        missing = set(targets) - {(tp.topic, tp.partition) for tp in result}
        errors.update({tp: "no answer from the controller" for tp in missing})
        if errors:
            shown = "; ".join(f"{t}-{p}: {why}" for (t, p), why in sorted(errors.items()))
            raise RemediationFailed(f"the controller refused reassigning {shown}")

    def reassignments_in_flight(self) -> dict[TopicPartition, tuple[int, ...]]:
        try:
            listed = self.admin.list_partition_reassignments(timeout_ms=self.timeout_ms)
        except KafkaError as e:
            raise RemediationFailed(f"ListPartitionReassignments failed: {e!r}") from e
        out = {}
        for tp, r in listed.items():
            removing = set(r["removing_replicas"])
            out[(tp.topic, tp.partition)] = tuple(b for b in r["replicas"] if b not in removing)
        return out

    def elect_preferred(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, str]:
        by_topic: dict[str, list[int]] = {}
        for t, p in partitions:
            by_topic.setdefault(t, []).append(p)
        try:
            response = self.admin.elect_leaders(0, by_topic, timeout_ms=self.timeout_ms, raise_errors=False)
        except KafkaError as e:
            raise RemediationFailed(f"ElectLeaders failed for {tp_text(partitions)}: {e!r}") from e
        if getattr(response, "error_code", 0):
            raise RemediationFailed(f"ElectLeaders failed for {tp_text(partitions)}: error code {response.error_code}")
        refused: dict[TopicPartition, str] = {}
        answered = set()
        for result in response.replica_election_results:
            for p in result.partition_result:
                answered.add((result.topic, p.partition_id))
                if p.error_code not in (0, _ELECTION_NOT_NEEDED):
                    refused[(result.topic, p.partition_id)] = p.error_message or f"error code {p.error_code}"
        refused.update({tp: "no answer from the controller" for tp in set(partitions) - answered})
        return refused

    def set_configs(self, topics: Mapping[str, Mapping[str, str]], brokers: Mapping[int, Mapping[str, str]]) -> None:
        """Set the keys, then wait until every broker reports them: brokers apply a dynamic config when
        they see its change notification, and a move submitted before its throttle is in force runs at full
        speed (seen on a loaded machine: a 1 B/s move done in 0.4 s)."""
        self._alter({t: dict(c) for t, c in topics.items()}, {b: dict(c) for b, c in brokers.items()})
        self._wait_in_force(topics, brokers)

    def _wait_in_force(
        self, topics: Mapping[str, Mapping[str, str | None]], brokers: Mapping[int, Mapping[str, str | None]]
    ) -> None:
        """Until the brokers report each key with its value (None: not set any more), or `timeout_ms`."""
        wanted = {(ConfigResourceType.TOPIC, t): dict(c) for t, c in topics.items() if c}
        wanted |= {(ConfigResourceType.BROKER, str(b)): dict(c) for b, c in brokers.items() if c}
        deadline = time.monotonic() + self.timeout_ms / 1000
        while wanted:
            try:
                described = self.admin.describe_configs([ConfigResource(kind, name) for kind, name in wanted])
            except KafkaError as e:
                raise RemediationFailed(f"DescribeConfigs failed for {_entities(topics, brokers)}: {e!r}") from e
            seen = {
                (ConfigResourceType[kind.upper()], name): {k: v.get("value") for k, v in configs.items()}
                for kind, entities in described.items()  # {"topic"|"broker": {name: {key: {"value": ...}}}}
                for name, configs in entities.items()
            }
            wanted = {key: c for key, c in wanted.items() if any(seen.get(key, {}).get(k) != v for k, v in c.items())}
            if not wanted:
                return
            if time.monotonic() > deadline:
                late = ", ".join(f"{kind.name.lower()} {name}" for kind, name in sorted(wanted, key=str))
                raise RemediationFailed(f"configs set but not in force after {self.timeout_ms / 1000:g}s on {late}")
            time.sleep(0.1)

    def delete_configs(self, topics: Mapping[str, Collection[str]], brokers: Mapping[int, Collection[str]]) -> None:
        """Delete the keys, then wait until no broker reports them any more (see `set_configs`)."""
        delete = (AlterConfigOp.DELETE, None)
        self._alter({t: dict.fromkeys(keys, delete) for t, keys in topics.items()},
                    {b: dict.fromkeys(keys, delete) for b, keys in brokers.items()})  # fmt: skip
        self._wait_in_force({t: dict.fromkeys(keys) for t, keys in topics.items()},
                            {b: dict.fromkeys(keys) for b, keys in brokers.items()})  # fmt: skip

    def _alter(self, topics: Mapping[str, dict[str, Any]], brokers: Mapping[int, dict[str, Any]]) -> None:
        resources = [ConfigResource(ConfigResourceType.TOPIC, t, c) for t, c in sorted(topics.items()) if c]
        resources += [ConfigResource(ConfigResourceType.BROKER, str(b), c) for b, c in sorted(brokers.items()) if c]
        if not resources:
            return
        try:
            result = self.admin.alter_configs(resources, raise_on_unknown=False, incremental=True)
        except KafkaError as e:
            raise RemediationFailed(f"IncrementalAlterConfigs failed for {_entities(topics, brokers)}: {e!r}") from e
        failed = [f"{kind} {name}: {outcome}" for kind, names in result.items() for name, outcome in names.items()
                  if outcome != "OK"]  # fmt: skip
        if failed:
            raise RemediationFailed("IncrementalAlterConfigs refused: " + "; ".join(sorted(failed)))

    def cancel(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, str]:
        try:
            result = self.admin.alter_partition_reassignments(
                {KafkaTP(t, p): None for t, p in sorted(partitions)}, timeout_ms=self.timeout_ms
            )
        except KafkaError as e:
            raise RemediationFailed(f"cancelling the reassignment of {tp_text(partitions)} failed: {e!r}") from e
        return {
            (tp.topic, tp.partition): err.__name__
            for tp, err in result.items()
            if err is not None and err is not NoReassignmentInProgressError
        }


# -- ZooKeeper ----------------------------------------------------------------------------------------


class ZooKeeperBackend:
    """Writes the znodes Kafka's ZooKeeper-mode tools write (module docstring). The kazoo client
    is connected on first use."""

    name: RemediationBackend = "zookeeper"

    def __init__(self, target: ZooKeeperTarget) -> None:
        self.target = target
        self._client: KazooClient | None = None

    def __repr__(self) -> str:  # the target's repr never shows credentials
        return f"ZooKeeperBackend({self.target!r})"

    @property
    def client(self) -> KazooClient:
        if self._client is None:
            self._client = _kazoo_client(self.target)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.stop()
            self._client.close()
            self._client = None

    def reassign(self, targets: Mapping[TopicPartition, tuple[int, ...]]) -> None:
        body = {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": list(r)}
                                             for (t, p), r in sorted(targets.items())]}  # fmt: skip
        try:
            self.client.create(znodes.REASSIGN_PARTITIONS, _json(body))
        except NodeExistsError as e:
            raise RemediationRefused(
                None,
                "no reassignment in flight",
                f"{self._where(znodes.REASSIGN_PARTITIONS)} already exists: another reassignment is in flight "
                "(the controller ignores a rewritten node); wait for it to finish",
            ) from e
        except (KazooException, ZookeeperError) as e:
            raise RemediationFailed(f"cannot create {self._where(znodes.REASSIGN_PARTITIONS)}: {e!r}") from e

    def reassignments_in_flight(self) -> dict[TopicPartition, tuple[int, ...]]:
        return {}  # everything ZooKeeper knows is in the live ZooKeeper read already

    def elect_preferred(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, str]:
        body = {"version": 1, "partitions": [{"topic": t, "partition": p} for t, p in partitions]}
        try:
            self.client.create(znodes.PREFERRED_REPLICA_ELECTION, _json(body))
        except NodeExistsError as e:
            raise RemediationRefused(
                None,
                "no election in flight",
                f"{self._where(znodes.PREFERRED_REPLICA_ELECTION)} already exists: an election is pending; retry later",
            ) from e
        except (KazooException, ZookeeperError) as e:
            raise RemediationFailed(f"cannot create {self._where(znodes.PREFERRED_REPLICA_ELECTION)}: {e!r}") from e
        return {}  # the controller answers nothing through ZooKeeper: the executor verifies the leaders

    def set_configs(self, topics: Mapping[str, Mapping[str, str]], brokers: Mapping[int, Mapping[str, str]]) -> None:
        for topic, config in sorted(topics.items()):
            self._change_config("topics", topic, dict(config), ())
        for broker, config in sorted(brokers.items()):
            self._change_config("brokers", str(broker), dict(config), ())

    def delete_configs(self, topics: Mapping[str, Collection[str]], brokers: Mapping[int, Collection[str]]) -> None:
        for topic, keys in sorted(topics.items()):
            self._change_config("topics", topic, {}, keys)
        for broker, keys in sorted(brokers.items()):
            self._change_config("brokers", str(broker), {}, keys)

    def cancel(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, str]:
        raise RemediationRefused(
            None,
            "cancel",
            f"ZooKeeper-mode Kafka cannot cancel a reassignment through ZooKeeper ({tp_text(partitions)} in flight): "
            f"deleting {znodes.REASSIGN_PARTITIONS} does not stop the controller. Cancel through the Admin API "
            "instead: run the cancel again with remediation_backend = 'admin_api', or "
            "`kafka-reassign-partitions --bootstrap-server <brokers> --cancel --reassignment-json-file "
            "<the plan's reassignment.json>`; or let it finish and apply the plan's rollback.json",
        )

    def _change_config(self, entity_type: str, name: str, set_: dict[str, str], delete: Collection[str]) -> None:
        """`AdminZkClient.changeEntityConfig`: merge into the entity znode, then notify the brokers."""
        path = f"{znodes.CONFIG_TOPICS if entity_type == 'topics' else znodes.CONFIG_BROKERS}/{name}"
        for _ in range(_CONFIG_RETRIES):
            try:
                if self._write_config(path, entity_type, set_, delete):
                    notice = {"version": 2, "entity_path": f"{entity_type}/{name}"}
                    self.client.create(CONFIG_CHANGES, _json(notice), sequence=True, makepath=True)
                return
            except (BadVersionError, NodeExistsError):
                continue  # someone else changed the entity meanwhile: merge again
            except (KazooException, ZookeeperError) as e:
                raise RemediationFailed(f"cannot change config {self._where(path)}: {e!r}") from e
        raise RemediationFailed(f"config {self._where(path)} kept changing under us ({_CONFIG_RETRIES} attempts)")

    def _write_config(self, path: str, entity_type: str, set_: dict[str, str], delete: Collection[str]) -> bool:
        """Returns False when nothing changes (no write, no notification)."""
        try:
            data, stat = self.client.get(path)
        except NoNodeError:
            data, stat = None, None
        config: dict[str, str] = {}
        if data:
            try:
                config = znodes.parse_config(path, data, entity_type.rstrip("s")).config
            except ZnodeFormatError as e:
                raise RemediationFailed(f"refusing to rewrite a config znode Kafka would not write: {e}") from e
        updated = {k: v for k, v in {**config, **set_}.items() if k not in delete}
        if updated == config:
            return False  # unchanged (and no config znode is ever created just to delete from it)
        body = _json({"version": 1, "config": updated})
        if stat is None:
            self.client.create(path, body, makepath=True)
        else:
            self.client.set(path, body, version=stat.version)
        return True

    def _where(self, path: str) -> str:
        return f"{path} (chroot {self.target.chroot} on {self.target.hosts})"


def _kazoo_client(target: ZooKeeperTarget) -> KazooClient:
    client = KazooClient(**target.kazoo_options())
    try:
        client.start(timeout=target.timeout_s)
    except (KazooTimeoutError, KazooException) as e:
        client.close()
        raise RemediationFailed(f"cannot open a ZooKeeper session to write at {target.connect_string}: {e!r}") from e
    return client


def backend_for(
    config: ClusterConfig,
    *,
    zookeeper: ZooKeeperTarget | None,
    admin_factory: Callable[[], KafkaAdminClient] | None = None,
) -> Backend:
    """The back end `config.remediation_backend` names (the Admin API one needs `admin_factory`, the
    ZooKeeper one a ZooKeeper: a KRaft cluster has none)."""
    if config.remediation_backend == "zookeeper":
        if zookeeper is None:
            raise ConfigError(
                f"cluster {config.name!r}: remediation_backend = 'zookeeper', but the cluster is read from KRaft "
                "(no ZooKeeper): set remediation_backend = 'admin_api'"
            )
        return ZooKeeperBackend(zookeeper)
    if admin_factory is None:
        raise ConfigError(f"cluster {config.name!r} writes through the Admin API but no Kafka connection was given")
    return AdminApiBackend(admin_factory)


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _entities(topics: Mapping[str, object], brokers: Mapping[int, object]) -> str:
    return ", ".join([*(f"topic {t}" for t in sorted(topics)), *(f"broker {b}" for b in sorted(brokers))])
