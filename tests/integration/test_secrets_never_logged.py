"""No secret reaches a log at any level: kafka-python logs an admin client's whole
configuration at DEBUG, SASL password included, and kazoo logs its digest `Auth` request (user:password)
at its BLATHER level. Both clients are built here the way the product builds them, against the real
sandbox, with every logger at its lowest level."""

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
from kafka_ops.sandbox import SandboxCluster
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget

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
