"""No secret reaches a log at any level: kafka-python logs an admin client's whole
configuration at DEBUG, SASL password included, and kazoo logs its digest `Auth` request (user:password)
at its BLATHER level. Both clients are built here the way the product builds them, against the real
sandbox, with every logger at its lowest level.

Passwords of every shape: kafka-python logs its configuration as a dict's repr, which escapes a
backslash, a quote, a newline, a tab or an unprintable character, so a password holding one of them no
longer reads as registered; it must be masked by its key (`'sasl_plain_password': '***'`), through the
group collection and the KRaft snapshot alike. (The sandboxes speak PLAINTEXT only: each collection
fails at its SASL handshake, after the client has logged its configuration.)"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from airflow.sdk import Connection
from airflow.sdk._shared.secrets_masker import redact
from kafka.errors import KafkaError

from kafka_ops.airflow.kafka_hook import target_from_connection
from kafka_ops.errors import KafkaOpsError
from kafka_ops.redaction import MASK
from kafka_ops.remediation.backends import _kazoo_client
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from kafka_ops.sources.kraft.collector import KRaftCollector
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from sandbox import KRaftSandbox, SandboxCluster

pytestmark = pytest.mark.integration

SASL_PASSWORD = "sasl-Pa55-never-logged"
DIGEST_PASSWORD = "digest-Pa55-never-logged"


@pytest.fixture
def every_record() -> Iterator[list[logging.LogRecord]]:
    """Every record any logger emits, down to level 1 (kazoo's BLATHER is 5)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    root, handler = logging.getLogger(), Keep(level=1)
    levels = {name: logging.getLogger(name).level for name in ("", "kafka", "kazoo")}
    root.addHandler(handler)
    for name in levels:
        logging.getLogger(name).setLevel(1)
    try:
        yield records
    finally:
        root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def text_of(records: list[logging.LogRecord]) -> str:
    return "\n".join(f"{r.name} {r.levelname} {r.getMessage()}" for r in records)


def test_sasl_password_never_logged_by_kafka_python(
    healthy_sandbox: SandboxCluster, every_record: list[logging.LogRecord]
) -> None:
    extra = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "request_timeout_ms": 3000}
    connection = Connection(
        conn_id="kafka_sasl",
        conn_type="kafka_admin",
        host=healthy_sandbox.bootstrap_servers,
        login="ops",
        password=SASL_PASSWORD,
        extra=json.dumps(extra),
    )
    target = target_from_connection(connection)
    with pytest.raises((KafkaError, KafkaOpsError, OSError)):  # the sandbox speaks PLAINTEXT only
        target().close()
    logged = text_of(every_record)
    assert "Starting KafkaAdminClient with configuration" in logged, "kafka-python's DEBUG line was not seen"
    assert f"'sasl_plain_password': '{MASK}'" in logged
    assert SASL_PASSWORD not in logged
    assert SASL_PASSWORD not in str(redact(f"x {SASL_PASSWORD} y")), "not handed to Airflow's masker"


def test_digest_password_never_logged_by_kazoo(
    healthy_sandbox: SandboxCluster, every_record: list[logging.LogRecord]
) -> None:
    target = ZooKeeperTarget(healthy_sandbox.zookeeper_hosts, healthy_sandbox.chroot, ("ops", DIGEST_PASSWORD), 10)
    client = _kazoo_client(target)  # the remediation back end's writer session
    try:
        assert client.exists("/brokers")
    finally:
        client.stop()
        client.close()
    logged = text_of(every_record)
    assert "Auth(" in logged, "kazoo's request log was not seen"
    assert DIGEST_PASSWORD not in logged


# Each password holds characters a repr or JSON string escapes, or is too short to be masked by value.
PASSWORDS_OF_EVERY_SHAPE = [
    "Sasl\\Pa55word-back\\slash",
    "Sasl'Pa55\"word-quotes",
    "Sasl\nPa55\tword-newline-tab\r",
    "Sasl\u200bPa55word-zero-width\u00e9\U0001f600",
    "Sasl%sPa55{0}word-%(format)s",
    "a\\'",  # three characters: below what is masked by value, masked by its key
]


def spellings(password: str) -> set[str]:
    """The password as given, and as a repr or a JSON string spells it."""
    return {password, repr(password)[1:-1], json.dumps(password)[1:-1], json.dumps(password, ensure_ascii=False)[1:-1]}


def sasl_target(bootstrap_servers: str, password: str) -> KafkaTarget:
    options = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_plain_username": "ops",
               "sasl_plain_password": password, "request_timeout_ms": 3000, "bootstrap_timeout_ms": 3000}  # fmt: skip
    return KafkaTarget(bootstrap_servers, options)


def assert_masked(records: list[logging.LogRecord], password: str, where: str) -> None:
    configs = [r.getMessage() for r in records if r.getMessage().startswith("Starting KafkaAdminClient with")]
    assert configs, f"{where}: kafka-python's DEBUG configuration line was not seen"
    for line in configs:
        assert f"'sasl_plain_password': '{MASK}'" in line, line
    if len(password) >= 4:  # a shorter one may well occur in any text: its key masks it
        logged = text_of(records)
        leaked = [s for s in spellings(password) if s in logged]
        assert not leaked, f"{where}: {password!r} logged as {leaked}"


@pytest.mark.parametrize("password", PASSWORDS_OF_EVERY_SHAPE, ids=lambda p: repr(p)[1:12])
def test_a_password_of_any_shape_is_masked_in_groups_and_kraft_collection(
    healthy_kraft_sandbox: KRaftSandbox, every_record: list[logging.LogRecord], password: str
) -> None:
    target = sasl_target(healthy_kraft_sandbox.bootstrap_servers, password)
    with pytest.raises(KafkaOpsError):
        GroupCollector("kraft", target).collect()
    assert_masked(every_record, password, "group collection")
    every_record.clear()
    with pytest.raises(KafkaOpsError):
        KRaftCollector("kraft", target).collect()
    assert_masked(every_record, password, "KRaft snapshot")
