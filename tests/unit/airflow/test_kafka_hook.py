"""How a Kafka connection maps to a `KafkaTarget`: servers, allowlisted extras, SASL/SSL, secrets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from airflow.sdk import Connection

from kafka_ops.airflow.kafka_hook import ALLOWED_EXTRAS, KafkaAdminHook, target_from_connection
from kafka_ops.errors import ConfigError
from sandbox.cluster import free_port

SECRET = "s3cr3t-Pa55"
SASL_PLAIN = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN"}
BASE = {"security_protocol": "PLAINTEXT", "request_timeout_ms": 30000, "bootstrap_timeout_ms": 30000}


def conn(conn_id: str = "kafka_test", extra: dict[str, Any] | None = None, **fields: Any) -> Connection:
    return Connection(
        conn_id=conn_id, conn_type="kafka_admin", extra=json.dumps(extra) if extra is not None else None, **fields
    )


def test_plaintext_defaults() -> None:
    target = target_from_connection(conn(host="k1:9092,k2:9093"))
    assert target.bootstrap_servers == "k1:9092,k2:9093"
    assert dict(target.options) == BASE


def test_port_field_applies_to_servers_without_one() -> None:
    assert target_from_connection(conn(host="k1, k2:9093", port=9094)).bootstrap_servers == "k1:9094,k2:9093"
    assert target_from_connection(conn(host="k1")).bootstrap_servers == "k1:9092"


def test_sasl_ssl_with_scram() -> None:
    extra = {
        "security_protocol": "sasl_ssl",
        "sasl_mechanism": "SCRAM-SHA-512",
        "ssl_cafile": "/etc/kafka/ca.pem",
        "ssl_check_hostname": "false",
        "request_timeout_ms": "5000",
        "client_id": "kafka-ops",
    }
    target = target_from_connection(conn(host="k1:9093", login="ops", password=SECRET, extra=extra))
    assert dict(target.options) == {
        "security_protocol": "SASL_SSL",
        "request_timeout_ms": 5000,
        "bootstrap_timeout_ms": 5000,
        "client_id": "kafka-ops",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "ops",
        "sasl_plain_password": SECRET,
        "ssl_cafile": "/etc/kafka/ca.pem",
        "ssl_check_hostname": False,
    }
    assert SECRET not in repr(target)


def test_ssl_with_client_certificate() -> None:
    extra = {"security_protocol": "SSL", "ssl_certfile": "/c.pem", "ssl_keyfile": "/k.pem"}
    options = target_from_connection(conn(host="k1", extra=extra)).options
    assert (options["ssl_certfile"], options["ssl_keyfile"], options["ssl_check_hostname"]) == (
        "/c.pem",
        "/k.pem",
        True,
    )
    assert "sasl_mechanism" not in options


def test_unknown_extra_names_connection_and_key() -> None:
    with pytest.raises(ConfigError) as e:
        target_from_connection(conn("kafka_payments", host="k1", extra={"sasl_jaas_config": "x"}))
    assert "kafka_payments" in str(e.value) and "sasl_jaas_config" in str(e.value)


@pytest.mark.parametrize(
    ("extra", "fields", "problem"),
    [
        ({"security_protocol": "TLS"}, {}, "security_protocol"),
        ({"security_protocol": "SASL_SSL"}, {"login": "u", "password": "p"}, "sasl_mechanism"),
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI"}, {"login": "u", "password": "p"}, "sasl_mech"),
        ({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN"}, {"login": "u"}, "password"),
        ({"sasl_mechanism": "PLAIN"}, {}, "SASL_"),  # SASL settings without SASL
        ({}, {"login": "u", "password": "p"}, "login"),  # credentials would be ignored: refused
        ({"ssl_cafile": "/ca.pem"}, {}, "SSL or SASL_SSL"),  # TLS files without TLS: never plaintext by accident
        ({**SASL_PLAIN, "ssl_cafile": "/ca"}, {"login": "u", "password": "p"}, "ssl_cafile"),
        ({"security_protocol": "SSL", "ssl_keyfile": "/k.pem"}, {}, "ssl_certfile"),
        ({"security_protocol": "SSL", "ssl_check_hostname": "maybe"}, {}, "ssl_check_hostname"),
        ({"request_timeout_ms": 0}, {}, "request_timeout_ms"),
        ({"request_timeout_ms": "soon"}, {}, "request_timeout_ms"),
        ({"request_timeout_ms": True}, {}, "request_timeout_ms"),
        ({"client_id": ""}, {}, "client_id"),
    ],
)  # fmt: skip
def test_invalid_settings_are_refused(extra: dict[str, Any], fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=rf"kafka_test.*{problem}") as e:
        target_from_connection(conn(host="k1", extra=extra, **fields))
    assert "'p'" not in str(e.value)  # the password is never shown


def test_password_never_shown_in_errors() -> None:
    with pytest.raises(ConfigError) as e:
        target_from_connection(conn(host="k1", login="u", password=SECRET))
    assert SECRET not in str(e.value)


def test_extra_that_is_not_json_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"kafka_test.*not valid JSON"):
        target_from_connection(Connection(conn_id="kafka_test", host="k1", extra="{security_protocol: SSL"))


@pytest.mark.parametrize("host", [None, "", " , ", "k1:port", "k1:70000", "k1:9092/path"])
def test_bad_servers_are_refused(host: str | None) -> None:
    with pytest.raises(ConfigError, match=r"kafka_test.*host"):
        target_from_connection(conn(host=host))


def test_hook_reads_the_connection_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_DEFAULT",
        json.dumps(
            {
                "conn_type": "kafka_admin",
                "host": "k1:9092,k2:9092",
                "login": "ops",
                "password": SECRET,
                "extra": {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN"},
            }
        ),
    )
    hook = KafkaAdminHook()
    assert "not resolved" in repr(hook)
    target = hook.target()
    assert target.bootstrap_servers == "k1:9092,k2:9092"
    assert target.options["sasl_plain_password"] == SECRET
    assert hook.target() is target  # cached: the connection is fetched once
    for shown in (repr(hook), str(hook), repr(target)):
        assert SECRET not in shown and "k1:9092,k2:9092" in shown


def test_test_connection_reports_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_BAD", json.dumps({"conn_type": "kafka_admin", "host": "k1:port"}))
    ok, message = KafkaAdminHook("kafka_bad").test_connection()
    assert not ok and "ConfigError" in message and "k1:port" in message


def test_test_connection_reports_a_missing_connection() -> None:
    ok, message = KafkaAdminHook("kafka_not_defined").test_connection()
    assert not ok and "kafka_not_defined" in message


def test_test_connection_reports_unreachable_brokers(monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()  # nothing listens there
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_DOWN",
        json.dumps({"conn_type": "kafka_admin", "host": f"127.0.0.1:{port}", "extra": {"request_timeout_ms": 1000}}),
    )
    ok, message = KafkaAdminHook("kafka_down").test_connection()
    assert not ok and "KafkaTimeoutError" in message and f"127.0.0.1:{port}" in message


def test_allowlist_is_exactly_the_documented_keys() -> None:
    documented = {
        "security_protocol", "sasl_mechanism", "ssl_cafile", "ssl_certfile", "ssl_keyfile",
        "ssl_check_hostname", "request_timeout_ms", "client_id",
    }  # fmt: skip
    assert documented == ALLOWED_EXTRAS
