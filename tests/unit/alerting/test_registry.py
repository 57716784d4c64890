"""Which notifier a connection means, and a cluster's notifiers from its settings."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from airflow.sdk import Connection

from kafka_ops.alerting.log_sink import LogNotifier
from kafka_ops.alerting.mail import EmailNotifier
from kafka_ops.alerting.pagerduty import PagerDutyNotifier
from kafka_ops.alerting.registry import BUILDERS, default_notifier, notifier_for, notifiers_for_cluster
from kafka_ops.alerting.slack import SlackNotifier
from kafka_ops.errors import ConfigError
from kafka_ops.settings import ClusterConfig
from tests.unit.alerting.notifications import notification

WEBHOOK = "https://hooks.slack.com/services/T0/B0/secretWebhookToken"


@pytest.mark.parametrize(
    ("conn_type", "fields", "kind"),
    [
        ("slack_webhook", {"password": WEBHOOK}, SlackNotifier),
        ("http", {"host": WEBHOOK}, SlackNotifier),
        ("pagerduty", {"password": "routingkey"}, PagerDutyNotifier),
        ("pagerduty_events", {"password": "routingkey"}, PagerDutyNotifier),
        ("email", {"extra": '{"to": ["oncall@example.com"]}'}, EmailNotifier),
        ("smtp", {"host": "mail", "extra": '{"to": ["oncall@example.com"], "disable_tls": true}'}, EmailNotifier),
        ("kafka_ops_log", {}, LogNotifier),
        ("fs", {"extra": '{"path": "/tmp/alerts.jsonl"}'}, LogNotifier),
    ],
)
def test_conn_type_chooses_the_notifier(conn_type: str, fields: dict[str, object], kind: type) -> None:
    built = notifier_for(Connection(conn_id="sink", conn_type=conn_type, **fields))  # type: ignore[arg-type]
    assert isinstance(built, kind) and built.name == "sink"


def test_unknown_conn_type_lists_the_known_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"connection 'x': conn_type 'kafka_admin' is not an alert sink; use one of \["
    ):
        notifier_for(Connection(conn_id="x", conn_type="kafka_admin"))
    assert {"slack_webhook", "pagerduty", "smtp", "email", "kafka_ops_log", "fs"} <= set(BUILDERS)


def test_fs_connection_needs_a_path() -> None:
    with pytest.raises(ConfigError, match="extra 'path' is required"):
        notifier_for(Connection(conn_id="file", conn_type="fs"))


def test_default_is_the_log_sink_next_to_the_lake(tmp_path: Path) -> None:
    local = default_notifier("payments", str(tmp_path / "lake"))
    assert local.name == "log" and local.path == tmp_path / "lake" / "_alerting" / "payments.alerts.jsonl"
    assert default_notifier("payments", f"file://{tmp_path}/lake").path == local.path
    assert default_notifier("payments", "s3a://bucket/lake").path is None  # object stores cannot append
    assert notifiers_for_cluster(ClusterConfig("payments"), str(tmp_path / "lake"))[0].path == local.path  # type: ignore[attr-defined]


def test_log_sink_writes_json_lines_and_the_python_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    sink = LogNotifier("log", tmp_path / "a" / "alerts.jsonl")
    sink.send(notification("open"))
    sink.send(notification("resolve"))
    lines = [json.loads(line) for line in (tmp_path / "a" / "alerts.jsonl").read_text().splitlines()]
    assert [(entry["event"], entry["dedup_key"]) for entry in lines] == [
        ("open", "kafka-ops/payments/under_replicated"),
        ("resolve", "kafka-ops/payments/under_replicated"),
    ]
    assert lines[0]["affected"][0] == {
        "kind": "broker",
        "text": "2 (rack b): down, 40 partitions lost it from their ISR",
    }
    assert "alert open: CRITICAL payments: 40 partitions under-replicated" in caplog.text


def test_cluster_notifiers_come_from_airflow_connections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SLACK_PAYMENTS", json.dumps({"conn_type": "slack_webhook", "password": WEBHOOK}))
    monkeypatch.setenv(
        "AIRFLOW_CONN_PD_PAYMENTS",
        json.dumps({"conn_type": "pagerduty", "password": "routingkey", "extra": {"min_severity": "critical"}}),
    )
    config = ClusterConfig("payments", alert_conn_ids=("slack_payments", "pd_payments"))
    slack, pagerduty = notifiers_for_cluster(config, str(tmp_path))
    assert isinstance(slack, SlackNotifier) and isinstance(pagerduty, PagerDutyNotifier)
    assert pagerduty.min_severity == "critical"


def test_every_unusable_connection_is_named_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PD_BAD", json.dumps({"conn_type": "pagerduty"}))
    config = ClusterConfig("payments", alert_conn_ids=("pd_bad", "slack_not_defined"))
    with pytest.raises(ConfigError) as failed:
        notifiers_for_cluster(config, str(tmp_path))
    message = str(failed.value)
    assert message.startswith("cluster 'payments': alert connection(s) unusable")
    assert "connection 'pd_bad': set 'password'" in message and "slack_not_defined" in message
