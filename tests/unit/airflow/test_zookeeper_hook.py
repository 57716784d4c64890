"""How a ZooKeeper connection maps to a `ZooKeeperTarget`: fields, allowlisted extras, secrets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from airflow.sdk import Connection

from kafka_ops.airflow.zookeeper_hook import ALLOWED_EXTRAS, ZooKeeperHook, target_from_connection
from kafka_ops.errors import ConfigError
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from kafka_ops.sources.zookeeper.session import TlsOptions
from sandbox.cluster import free_port

SECRET = "s3cr3t-Pa55"


def conn(conn_id: str = "zk_test", extra: dict[str, Any] | None = None, **fields: Any) -> Connection:
    return Connection(
        conn_id=conn_id,
        conn_type="zookeeper",
        extra=json.dumps(extra) if extra is not None else None,
        **fields,
    )


def test_single_host_defaults() -> None:
    assert target_from_connection(conn(host="zk1")) == ZooKeeperTarget(hosts="zk1:2181")


def test_port_field_applies_to_hosts_without_one() -> None:
    target = target_from_connection(conn(host="zk1,zk2:2182, zk3", port=2190))
    assert target.hosts == "zk1:2190,zk2:2182,zk3:2190"


def test_chroot_after_hosts_zookeeper_connect_style() -> None:
    target = target_from_connection(conn(host="zk1:2181,zk2:2181/kafka/prod/"))
    assert (target.hosts, target.chroot) == ("zk1:2181,zk2:2181", "/kafka/prod")
    assert target.connect_string == "zk1:2181,zk2:2181/kafka/prod"


def test_chroot_from_extra_and_from_uri_schema() -> None:
    assert target_from_connection(conn(host="zk1", extra={"chroot": "kafka"})).chroot == "/kafka"
    uri = Connection.from_uri("zookeeper://zk1:2181/kafka", conn_id="zk_uri")
    assert target_from_connection(uri).connect_string == "zk1:2181/kafka"


def test_chroot_given_twice_must_agree() -> None:
    same = conn(host="zk1:2181/kafka", extra={"chroot": "/kafka/"})
    assert target_from_connection(same).chroot == "/kafka"
    with pytest.raises(ConfigError, match=r"zk_test.*chroot.*'/kafka'.*'/other'"):
        target_from_connection(conn(host="zk1:2181/kafka", extra={"chroot": "/other"}))


def test_allowlisted_extras() -> None:
    target = target_from_connection(
        conn(
            host="zk1:2281",
            extra={
                "chroot": "/kafka",
                "timeout_s": "2.5",
                "use_tls": "true",
                "ca_file": "/etc/zk/ca.pem",
                "cert_file": "/etc/zk/client.pem",
                "key_file": "/etc/zk/client.key",
                "verify_hostname": False,
            },
        )
    )
    assert target == ZooKeeperTarget(
        hosts="zk1:2281",
        chroot="/kafka",
        timeout_s=2.5,
        tls=TlsOptions("/etc/zk/ca.pem", "/etc/zk/client.pem", "/etc/zk/client.key", False),
    )


def test_unknown_extra_names_connection_and_key() -> None:
    with pytest.raises(ConfigError) as e:
        target_from_connection(conn("zk_payments", host="zk1", extra={"chroot": "/k", "sasl_mech": "x"}))
    assert "zk_payments" in str(e.value) and "sasl_mech" in str(e.value)


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": "soon"}, "timeout_s"),
        ({"timeout_s": True}, "timeout_s"),
        ({"use_tls": "maybe"}, "use_tls"),
        ({"ca_file": "/etc/zk/ca.pem"}, "use_tls"),  # TLS files without TLS: never plaintext by accident
        ({"use_tls": True, "key_file": "/k.pem"}, "cert_file"),
        ({"chroot": 7}, "chroot"),
    ],
)
def test_invalid_extras_are_refused(extra: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=rf"zk_test.*{problem}"):
        target_from_connection(conn(host="zk1", extra=extra))


def test_extra_that_is_not_json_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"zk_test.*not valid JSON"):
        target_from_connection(Connection(conn_id="zk_test", host="zk1", extra="{chroot: /kafka"))


@pytest.mark.parametrize("host", [None, "", " , ", "zk1:port", "zk1:70000"])
def test_bad_hosts_are_refused(host: str | None) -> None:
    with pytest.raises(ConfigError, match=r"zk_test.*host"):
        target_from_connection(conn(host=host))


def test_digest_auth_from_login_and_password() -> None:
    target = target_from_connection(conn(host="zk1", login="kafka", password=SECRET))
    assert target.digest_auth == ("kafka", SECRET)
    assert target_from_connection(conn(host="zk1")).digest_auth is None


def test_password_without_login_is_refused_without_showing_it() -> None:
    with pytest.raises(ConfigError, match=r"zk_test.*login") as e:
        target_from_connection(conn(host="zk1", password=SECRET))
    assert SECRET not in str(e.value)


def test_hook_reads_the_connection_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_ZK_ENV",
        json.dumps(
            {
                "conn_type": "zookeeper",
                "host": "zk1:2181,zk2:2181",
                "login": "kafka",
                "password": SECRET,
                "extra": {"chroot": "/kafka", "timeout_s": 3},
            }
        ),
    )
    hook = ZooKeeperHook("zk_env")
    assert "not resolved" in repr(hook)
    target = hook.target()
    assert target == ZooKeeperTarget("zk1:2181,zk2:2181", "/kafka", ("kafka", SECRET), 3.0)
    assert hook.target() is target  # cached: the connection is fetched once
    for shown in (repr(hook), str(hook), repr(target), str(target)):
        assert SECRET not in shown
        assert "zk1:2181,zk2:2181/kafka" in shown


def test_hook_refuses_unknown_extra_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_ZOOKEEPER_DEFAULT",
        json.dumps({"conn_type": "zookeeper", "host": "zk1", "extra": {"chroot": "/k", "acl": "open"}}),
    )
    with pytest.raises(ConfigError, match=r"zookeeper_default.*'acl'"):
        ZooKeeperHook().target()


def test_test_connection_reports_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_ZK_BAD", json.dumps({"conn_type": "zookeeper", "host": "zk1:port"}))
    ok, message = ZooKeeperHook("zk_bad").test_connection()
    assert not ok and "ConfigError" in message and "zk1:port" in message


def test_test_connection_reports_a_missing_connection() -> None:
    ok, message = ZooKeeperHook("zk_not_defined").test_connection()
    assert not ok and "zk_not_defined" in message


def test_test_connection_reports_an_unreachable_ensemble(monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()  # nothing listens there: the connection is refused at once
    monkeypatch.setenv(
        "AIRFLOW_CONN_ZK_DOWN",
        json.dumps({"conn_type": "zookeeper", "host": f"127.0.0.1:{port}", "extra": {"timeout_s": 1}}),
    )
    ok, message = ZooKeeperHook("zk_down").test_connection()
    assert not ok and "ZooKeeperUnreachable" in message


def test_allowlist_is_exactly_the_documented_keys() -> None:
    documented = {"chroot", "timeout_s", "use_tls", "ca_file", "cert_file", "key_file", "verify_hostname"}
    assert documented == ALLOWED_EXTRAS
