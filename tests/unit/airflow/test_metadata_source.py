"""Which source a cluster's snapshot reads, and what a ZooKeeper snapshot also asks while the cluster migrates."""

from __future__ import annotations

import json

import pytest

from kafka_ops.airflow.metadata_source import brokers_beside_zookeeper, migration_watch, resolve
from kafka_ops.sources.groups.collector import KafkaTarget


def test_auto_reads_zookeeper_when_its_connection_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve("auto", "zk_missing", "kafka_x") == ("KRaft", "kafka_x")
    monkeypatch.setenv("AIRFLOW_CONN_ZK_X", json.dumps({"conn_type": "zookeeper", "host": "zk1"}))
    assert resolve("auto", "zk_x", "kafka_x") == ("ZooKeeper", "zk_x")
    assert resolve("kraft", "zk_x", "kafka_x") == ("KRaft", "kafka_x")


def test_a_migration_is_watched_through_the_controllers_and_the_kafka_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    blind = migration_watch(None, "kafka_missing")
    assert (blind.controller_bootstrap, blind.admin_factory) == (None, None)
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_X", json.dumps({"conn_type": "kafka_admin", "host": "k1:9092"}))
    watched = migration_watch("kc1:9093", "kafka_x")
    assert watched.controller_bootstrap == "kc1:9093"
    assert watched.admin_factory is not None and watched.admin_factory.bootstrap_servers == "k1:9092"


def test_a_zookeeper_snapshot_reads_the_load_through_the_kafka_connection_with_short_timeouts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert brokers_beside_zookeeper("kafka_missing") is None
    extra = {"request_timeout_ms": 60_000, "client_id": "ops"}
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_X", json.dumps({"conn_type": "kafka_admin", "host": "k1:9092", "extra": extra})
    )
    brokers = brokers_beside_zookeeper("kafka_x")
    assert isinstance(brokers, KafkaTarget) and brokers.bootstrap_servers == "k1:9092"
    assert {k: brokers.options[k] for k in ("request_timeout_ms", "bootstrap_timeout_ms", "client_id")} == {
        "request_timeout_ms": 5_000, "bootstrap_timeout_ms": 5_000, "client_id": "ops",
    }  # fmt: skip
