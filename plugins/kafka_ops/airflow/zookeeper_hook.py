"""`ZooKeeperHook`: one Airflow connection to the ZooKeeper ensemble that holds a Kafka cluster's metadata.

Connection fields:

* host: `zk1:2181` or `zk1:2181,zk2:2181,zk3:2181`, optionally followed by the chroot in
  `zookeeper.connect` style (`zk1:2181,zk2:2181/kafka`). A host without a port gets the
  connection's port, else 2181.
* schema: the chroot too (the URI form `zookeeper://zk1:2181/kafka` puts it there).
* login / password: optional ZooKeeper digest credentials.
* extra (allowlisted, anything else is refused): `chroot` (default `/`), `timeout_s` (float,
  seconds, default 10), `use_tls` (bool), `ca_file`, `cert_file`, `key_file`,
  `verify_hostname` (bool, default true).

The chroot may be given in one place or in several that agree; disagreement is a `ConfigError`.
TLS is used only when `use_tls` is true; TLS files without it are a `ConfigError`, so a
half-configured connection never silently talks plaintext.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from airflow.sdk.bases.hook import BaseHook
from airflow.sdk.exceptions import AirflowException
from kazoo.exceptions import KazooException

from kafka_ops.connection_fields import allowlisted_extras, flag, host_list, text
from kafka_ops.errors import (
    ConfigError,
    KafkaOpsError,
    NotAKafkaChroot,
    ZooKeeperAuthFailed,
)
from kafka_ops.sources.zookeeper import znodes
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from kafka_ops.sources.zookeeper.session import TlsOptions

if TYPE_CHECKING:
    from airflow.sdk import Connection

    from kafka_ops.capacities import Capacities
    from kafka_ops.lake.store import Lake
    from kafka_ops.model.cluster import ClusterSnapshot
    from kafka_ops.sources.admin import AdminFactory
    from kafka_ops.sources.migration import MigrationWatch
    from kafka_ops.sources.probe import ProbeRequest

DEFAULT_PORT = 2181
DEFAULT_TIMEOUT_S = 10.0
ALLOWED_EXTRAS = frozenset({"chroot", "timeout_s", "use_tls", "ca_file", "cert_file", "key_file", "verify_hostname"})
_TLS_FILES = ("ca_file", "cert_file", "key_file")

NOT_RETRYABLE: tuple[type[KafkaOpsError], ...] = (ConfigError, NotAKafkaChroot, ZooKeeperAuthFailed)
"""(`NotAKRaftCluster`, the KRaft source pointed at ZooKeeper-mode brokers, is a `ConfigError`.)"""
"""Failures a retry cannot fix (a wrong setting, chroot or credential): fail the task at once."""


def target_from_connection(conn: Connection) -> ZooKeeperTarget:
    """Map an Airflow connection to a `ZooKeeperTarget` (see the module docstring for the fields).

    Raises `ConfigError` naming the connection id and the offending field or extra key. The
    password never appears in an error message.
    """
    where = f"connection {conn.conn_id!r}"
    extra = allowlisted_extras(conn, where, ALLOWED_EXTRAS)
    host_part, slash, host_chroot = (conn.host or "").strip().partition("/")
    hosts = host_list(
        host_part,
        conn.port,
        where,
        default_port=DEFAULT_PORT,
        what="ZooKeeper address",
        example="'zk1:2181' or 'zk1:2181,zk2:2181[/chroot]'",
    )
    chroot = _chroot(
        where,
        host=_normalize_chroot(host_chroot) if slash else None,
        schema=_normalize_chroot(conn.schema) if conn.schema else None,
        extra=_normalize_chroot(text(extra, "chroot", where)) if "chroot" in extra else None,
    )
    return ZooKeeperTarget(
        hosts=hosts,
        chroot=chroot,
        digest_auth=_digest_auth(conn, where),
        timeout_s=_timeout(extra, where),
        tls=_tls(extra, where),
    )


class ZooKeeperHook(BaseHook):
    """Reads a Kafka cluster's metadata from the ZooKeeper ensemble named by one connection.

    The connection is fetched and validated on first use (`target()`), never at construction,
    so building the hook in a DAG file or an operator's `__init__` does no I/O.
    """

    conn_name_attr = "zookeeper_conn_id"
    default_conn_name = "zookeeper_default"
    conn_type = "zookeeper"
    hook_name = "ZooKeeper (Kafka metadata)"

    def __init__(self, zookeeper_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.zookeeper_conn_id = zookeeper_conn_id
        self._target: ZooKeeperTarget | None = None

    def __repr__(self) -> str:  # the target's repr shows hosts and chroot, never credentials
        shown = repr(self._target) if self._target is not None else "not resolved yet"
        return f"ZooKeeperHook(zookeeper_conn_id={self.zookeeper_conn_id!r}, target={shown})"

    __str__ = __repr__

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        return {
            "hidden_fields": [],
            "relabeling": {"login": "Digest user", "password": "Digest password", "schema": "Chroot"},
            "placeholders": {
                "host": "zk1:2181,zk2:2181,zk3:2181",
                "schema": "kafka",
                "extra": '{"timeout_s": 10, "use_tls": false}',
            },
        }

    def target(self) -> ZooKeeperTarget:
        """The validated ZooKeeper endpoint; fetched from the connection once, then cached.

        Raises `ConfigError` if the connection is invalid, and Airflow's not-found error if it
        does not exist.
        """
        if self._target is None:
            conn = self.get_connection(self.zookeeper_conn_id)
            self._target = target_from_connection(conn)
            self.log.info("ZooKeeper connection %s resolves to %r", self.zookeeper_conn_id, self._target)
        return self._target

    def snapshot_to_lake(
        self,
        cluster: str,
        lake: Lake,
        migration: MigrationWatch | None = None,
        brokers: AdminFactory | None = None,
        *,
        capacities: Capacities | None = None,
        probe: ProbeRequest | None = None,
    ) -> tuple[ClusterSnapshot, dict[str, Any]]:
        """Collect `cluster`'s snapshot and publish it to `lake` atomically; a cluster migrating to
        KRaft is also watched from `migration`'s side (its controllers, its brokers' KRaft metadata),
        and the brokers' log dirs and replica sizes are read through `brokers` (the cluster's Kafka
        connection; an outage there is a collection issue, see `sources.log_dirs.collect_beside`), and each
        broker is probed through it where `probe` asks (`sources.probe`).

        Returns the snapshot and its small summary (disk use against `capacities`). Raises
        `CollectionFailed` (nothing is published then) when the cluster cannot be seen at all, and
        `ConfigError` when the connection is invalid.
        """
        from kafka_ops.snapshot.publish import snapshot_to_lake  # noqa: PLC0415  (pyarrow, only when used)

        return snapshot_to_lake(cluster, self.target(), lake, migration, brokers, capacities=capacities, probe=probe)

    def test_connection(self) -> tuple[bool, str]:
        """Open a session, check that the chroot holds Kafka's `/brokers`, close.

        Returns `(ok, message)`; never raises for a connection, network or ZooKeeper problem.
        """
        try:
            target = self.target()
            session = target.session().open()
            try:
                brokers = session.children("/brokers")
                broker_ids = session.children(znodes.BROKER_IDS) if brokers is not None else None
            finally:
                session.close()
        except (KafkaOpsError, AirflowException, OSError, EOFError, KazooException) as e:
            return False, f"{type(e).__name__}: {e}"
        if brokers is None:
            return False, f"no /brokers under {target.connect_string}: is the chroot right?"
        return True, (
            f"ZooKeeper at {target.connect_string} holds Kafka metadata ({len(broker_ids or [])} broker(s) registered)"
        )


# -- field parsing --------------------------------------------------------------------------------


def _normalize_chroot(value: str) -> str:
    return "/" + value.strip().strip("/")


def _chroot(where: str, **sources: str | None) -> str:
    given = {name: value for name, value in sources.items() if value is not None}
    if len(set(given.values())) > 1:
        shown = ", ".join(f"{name}={value!r}" for name, value in given.items())
        raise ConfigError(f"{where}: the chroot is given differently in several places ({shown}); keep one")
    return next(iter(given.values()), "/")


def _digest_auth(conn: Connection, where: str) -> tuple[str, str] | None:
    if conn.login:
        return conn.login, conn.password or ""
    if conn.password:
        raise ConfigError(f"{where}: a password is set without a login; digest auth needs both")
    return None


def _timeout(extra: dict[str, Any], where: str) -> float:
    value = extra.get("timeout_s", DEFAULT_TIMEOUT_S)
    try:
        if isinstance(value, bool):
            raise ValueError(value)
        timeout = float(value)
    except (TypeError, ValueError):
        timeout = math.nan
    if not math.isfinite(timeout) or timeout <= 0:
        raise ConfigError(f"{where}: extra 'timeout_s' must be a positive number of seconds, got {value!r}")
    return timeout


def _tls(extra: dict[str, Any], where: str) -> TlsOptions | None:
    files = {key: text(extra, key, where) for key in _TLS_FILES if key in extra}
    if not flag(extra, "use_tls", where, default=False):
        stray = sorted(files) + (["verify_hostname"] if "verify_hostname" in extra else [])
        if stray:
            raise ConfigError(f"{where}: extra {stray} set but 'use_tls' is not true; set it or remove them")
        return None
    if "key_file" in files and "cert_file" not in files:
        raise ConfigError(f"{where}: extra 'key_file' needs 'cert_file' (the client certificate)")
    return TlsOptions(
        ca_file=files.get("ca_file"),
        cert_file=files.get("cert_file"),
        key_file=files.get("key_file"),
        verify_hostname=flag(extra, "verify_hostname", where, default=True),
    )


__all__ = ["ALLOWED_EXTRAS", "NOT_RETRYABLE", "ZooKeeperHook", "target_from_connection"]
