"""`KafkaAdminHook`: one Airflow connection to a Kafka cluster's brokers (the Admin API).

Connection fields:

* host: the bootstrap servers, `kafka1:9092` or `kafka1:9092,kafka2:9092`. A server without a
  port gets the connection's port, else 9092.
* login / password: SASL username and password (PLAIN or SCRAM); only with a SASL protocol.
* extra (allowlisted, anything else is refused): `security_protocol` (PLAINTEXT, SSL,
  SASL_PLAINTEXT, SASL_SSL; default PLAINTEXT), `sasl_mechanism` (PLAIN, SCRAM-SHA-256,
  SCRAM-SHA-512; required with SASL), `ssl_cafile`, `ssl_certfile`, `ssl_keyfile`,
  `ssl_check_hostname` (bool, default true), `request_timeout_ms` (positive int, default
  30000; also bounds the bootstrap), `client_id`.

Settings that do not fit the protocol are a `ConfigError` (TLS files without TLS, credentials
without SASL), so a half-configured connection never silently talks plaintext.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk.bases.hook import BaseHook
from airflow.sdk.exceptions import AirflowException
from kafka.errors import KafkaError

from kafka_ops.connection_fields import allowlisted_extras, flag, host_list, text
from kafka_ops.errors import ConfigError, KafkaOpsError
from kafka_ops.sources.groups.collector import KafkaTarget

if TYPE_CHECKING:
    from airflow.sdk import Connection

    from kafka_ops.capacities import Capacities
    from kafka_ops.lake.store import Lake
    from kafka_ops.model.cluster import ClusterSnapshot
    from kafka_ops.model.groups import GroupSnapshot
    from kafka_ops.sources.probe import ProbeRequest

DEFAULT_PORT = 9092
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_SSL_FILES = ("ssl_cafile", "ssl_certfile", "ssl_keyfile")
ALLOWED_EXTRAS = frozenset(
    {"security_protocol", "sasl_mechanism", *_SSL_FILES, "ssl_check_hostname", "request_timeout_ms", "client_id"}
)


def target_from_connection(conn: Connection) -> KafkaTarget:
    """Map an Airflow connection to a `KafkaTarget` (see the module docstring for the fields).

    Raises `ConfigError` naming the connection id and the offending field or extra key. The
    password never appears in an error message.
    """
    where = f"connection {conn.conn_id!r}"
    extra = allowlisted_extras(conn, where, ALLOWED_EXTRAS)
    protocol = _choice(extra, "security_protocol", PROTOCOLS, where, default="PLAINTEXT")
    timeout_ms = _timeout_ms(extra, where)
    options: dict[str, Any] = {
        "security_protocol": protocol,
        "request_timeout_ms": timeout_ms,
        "bootstrap_timeout_ms": timeout_ms,
    }
    if "client_id" in extra:
        options["client_id"] = text(extra, "client_id", where)
    options |= _sasl(conn, extra, protocol, where)
    options |= _ssl(extra, protocol, where)
    return KafkaTarget(
        host_list(
            conn.host,
            conn.port,
            where,
            default_port=DEFAULT_PORT,
            what="bootstrap server",
            example="the bootstrap servers, 'kafka1:9092,kafka2:9092'",
        ),
        options,
    )


class KafkaAdminHook(BaseHook):
    """The Admin API of the Kafka cluster named by one connection.

    The connection is fetched and validated on first use (`target()`), never at construction,
    so building the hook in a DAG file or an operator's `__init__` does no I/O.
    """

    conn_name_attr = "kafka_conn_id"
    default_conn_name = "kafka_default"
    conn_type = "kafka_admin"
    hook_name = "Kafka (Admin API)"

    def __init__(self, kafka_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.kafka_conn_id = kafka_conn_id
        self._target: KafkaTarget | None = None

    def __repr__(self) -> str:  # the target's repr shows the servers, never credentials
        shown = repr(self._target) if self._target is not None else "not resolved yet"
        return f"KafkaAdminHook(kafka_conn_id={self.kafka_conn_id!r}, target={shown})"

    __str__ = __repr__

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        return {
            "hidden_fields": ["schema"],
            "relabeling": {"host": "Bootstrap servers", "login": "SASL username", "password": "SASL password"},
            "placeholders": {
                "host": "kafka1:9092,kafka2:9092",
                "extra": '{"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512"}',
            },
        }

    def target(self) -> KafkaTarget:
        """The validated endpoint and client options; fetched once, then cached.

        Raises `ConfigError` if the connection is invalid, and Airflow's not-found error if it
        does not exist.
        """
        if self._target is None:
            self._target = target_from_connection(self.get_connection(self.kafka_conn_id))
            self.log.info("Kafka connection %s resolves to %r", self.kafka_conn_id, self._target)
        return self._target

    def collect_groups(
        self, cluster: str, lake: Lake, include: str | None = None, exclude: str | None = None
    ) -> tuple[GroupSnapshot, dict[str, Any]]:
        """Collect `cluster`'s consumer groups (optionally filtered by group-id regexes) and
        publish them to `lake` as their own batch. The collection uses its own client and
        closes it. Raises `KafkaUnreachable` / `CollectionFailed` when nothing can be collected."""
        from kafka_ops.snapshot.publish import groups_to_lake  # noqa: PLC0415  (pyarrow, only when used)

        return groups_to_lake(cluster, self.target(), lake, include, exclude)

    def snapshot_to_lake(
        self, cluster: str, lake: Lake, *, capacities: Capacities | None = None, probe: ProbeRequest | None = None
    ) -> tuple[ClusterSnapshot, dict[str, Any]]:
        """Snapshot a KRaft cluster's metadata (Admin API and controller quorum, log dirs included) into
        `lake`, each broker probed where `probe` asks; its summary weighs disk use against `capacities`.
        Raises `KafkaUnreachable` when nothing can be read, `NotAKRaftCluster` when the brokers run on
        ZooKeeper."""
        from kafka_ops.snapshot.publish import snapshot_to_lake  # noqa: PLC0415  (pyarrow, only when used)

        return snapshot_to_lake(cluster, self.target(), lake, capacities=capacities, probe=probe)

    def test_connection(self) -> tuple[bool, str]:
        """Bootstrap, describe the cluster, close. Returns `(ok, message)`; never raises for a
        connection, network or broker problem."""
        try:
            target = self.target()
            admin = target()
            try:
                cluster = admin.describe_cluster()
            finally:
                admin.close()
        except (KafkaOpsError, AirflowException, KafkaError, OSError) as e:
            return False, f"{type(e).__name__}: {e}"
        brokers = cluster.get("brokers") or []
        return True, (
            f"Kafka at {target.bootstrap_servers}: cluster {cluster.get('cluster_id')}, {len(brokers)} broker(s), "
            f"controller {cluster.get('controller_id')}"
        )


# -- field parsing --------------------------------------------------------------------------------


def _choice(extra: dict[str, Any], key: str, allowed: tuple[str, ...], where: str, default: str) -> str:
    value = extra.get(key, default)
    if not isinstance(value, str) or value.strip().upper() not in allowed:
        raise ConfigError(f"{where}: extra {key!r} must be one of {list(allowed)}, got {value!r}")
    return value.strip().upper()


def _timeout_ms(extra: dict[str, Any], where: str) -> int:
    value = extra.get("request_timeout_ms", DEFAULT_REQUEST_TIMEOUT_MS)
    ok = isinstance(value, int | str) and not isinstance(value, bool) and str(value).strip().isdigit()
    if not ok or int(value) <= 0:
        raise ConfigError(f"{where}: extra 'request_timeout_ms' must be a positive whole number, got {value!r}")
    return int(value)


def _sasl(conn: Connection, extra: dict[str, Any], protocol: str, where: str) -> dict[str, Any]:
    if not protocol.startswith("SASL_"):
        stray = (["sasl_mechanism"] if "sasl_mechanism" in extra else []) + [
            name for name, value in (("login", conn.login), ("password", conn.password)) if value
        ]
        if stray:
            raise ConfigError(f"{where}: {stray} set but 'security_protocol' is {protocol}; use a SASL_ protocol")
        return {}
    if "sasl_mechanism" not in extra:
        raise ConfigError(f"{where}: extra 'sasl_mechanism' is required with {protocol}; one of {list(MECHANISMS)}")
    mechanism = _choice(extra, "sasl_mechanism", MECHANISMS, where, default="")
    if not conn.login or not conn.password:
        raise ConfigError(f"{where}: {protocol} with {mechanism} needs both 'login' and 'password'")
    return {"sasl_mechanism": mechanism, "sasl_plain_username": conn.login, "sasl_plain_password": conn.password}


def _ssl(extra: dict[str, Any], protocol: str, where: str) -> dict[str, Any]:
    files = {key: text(extra, key, where) for key in _SSL_FILES if key in extra}
    if not protocol.endswith("SSL"):
        stray = sorted(files) + (["ssl_check_hostname"] if "ssl_check_hostname" in extra else [])
        if stray:
            raise ConfigError(f"{where}: extra {stray} set but 'security_protocol' is {protocol}; use SSL or SASL_SSL")
        return {}
    if "ssl_keyfile" in files and "ssl_certfile" not in files:
        raise ConfigError(f"{where}: extra 'ssl_keyfile' needs 'ssl_certfile' (the client certificate)")
    return {**files, "ssl_check_hostname": flag(extra, "ssl_check_hostname", where, default=True)}


__all__ = ["ALLOWED_EXTRAS", "KafkaAdminHook", "target_from_connection"]
