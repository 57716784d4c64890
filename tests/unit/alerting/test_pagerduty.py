"""`PagerDutyNotifier` against a real local HTTP server: Events API v2 trigger/resolve bodies,
a dedup key stable across them, retries, and the routing key never shown."""

from __future__ import annotations

import json
import logging

import pytest
from airflow.sdk import Connection

from kafka_ops.alerting import pagerduty
from kafka_ops.alerting.pagerduty import EVENTS_URL, PagerDutyNotifier
from kafka_ops.alerting.webhook import HttpPolicy
from kafka_ops.errors import AlertDeliveryFailed, ConfigError
from tests.unit.alerting.alerts import broker_down
from tests.unit.alerting.notifications import AT, notification
from tests.unit.alerting.schemas import check_pagerduty_event
from tests.unit.alerting.servers import Answer, RecordingHttpServer

ROUTING_KEY = "R0UTINGKEYsecret0123456789abcdef"
FAST = HttpPolicy(timeout_s=5, attempts=3, backoff_s=0.01)


def notifier(server: RecordingHttpServer) -> PagerDutyNotifier:
    return PagerDutyNotifier("pd_oncall", ROUTING_KEY, events_url=f"{server.base_url}/v2/enqueue", policy=FAST)


def test_trigger_then_resolve_share_the_dedup_key(pagerduty_server: RecordingHttpServer) -> None:
    sender = notifier(pagerduty_server)
    sender.send(notification("open"))
    sender.send(notification("remind"))
    sender.send(notification("resolve"))
    trigger, reminder, resolve = (r.json for r in pagerduty_server.requests)
    assert {r.path for r in pagerduty_server.requests} == {"/v2/enqueue"}
    for body in (trigger, reminder, resolve):
        check_pagerduty_event(body)
    assert (
        trigger["dedup_key"] == reminder["dedup_key"] == resolve["dedup_key"] == "kafka-ops/payments/under_replicated"
    )
    assert resolve == {"routing_key": ROUTING_KEY, "event_action": "resolve", "dedup_key": trigger["dedup_key"]}
    assert trigger["event_action"] == reminder["event_action"] == "trigger"
    assert reminder["payload"]["summary"].startswith("Reminder: ") and reminder["payload"]["custom_details"]["reminder"]


def test_trigger_payload_says_what_where_since_when_and_what_to_do(pagerduty_server: RecordingHttpServer) -> None:
    notifier(pagerduty_server).send(notification("open", escalated_from="warning"))
    body = pagerduty_server.requests[0].json
    payload = body["payload"]
    assert (
        payload["summary"]
        == "[payments] 40 partitions under-replicated: broker 2 is down: 40 partitions under-replicated"
    )
    assert (payload["source"], payload["severity"], payload["group"], payload["class"], payload["component"]) == (
        "payments", "critical", "payments", "under_replicated", "broker",
    )  # fmt: skip
    assert payload["timestamp"] == AT.isoformat()
    details = payload["custom_details"]
    assert details["since"] == "2025-03-01T12:00:00+00:00" and details["since_text"].endswith("(35 min ago)")
    assert details["affected"][0] == "broker 2 (rack b): down, 40 partitions lost it from their ISR"
    assert details["affected"][-1] == "... and 38 more" and details["affected_total"] == 41
    assert details["suggested_action"].endswith("run kafka_preferred_leader_election")
    assert details["escalated_from"] == "warning" and details["details"]["under_replicated"] == 40
    assert body["links"][0] == {"href": "http://airflow.example/data_docs/payments/index.html", "text": "Data Docs"}
    assert body["client"] == "kafka-ops" and body["client_url"].startswith("http://airflow.example/dags/")


def test_summary_is_cut_to_1024_characters(pagerduty_server: RecordingHttpServer) -> None:
    notifier(pagerduty_server).send(notification("open", broker_down(cause="x" * 5000)))
    body = pagerduty_server.requests[0].json
    check_pagerduty_event(body)
    assert len(body["payload"]["summary"]) == 1024 and body["payload"]["summary"].endswith("…")


def test_throttling_is_retried(pagerduty_server: RecordingHttpServer) -> None:
    pagerduty_server.answer_first(Answer(429, "{}", {"Retry-After": "0"}), Answer(502, "bad gateway"))
    notifier(pagerduty_server).send(notification())
    assert len(pagerduty_server.requests) == 3


def test_invalid_event_fails_at_once_without_the_routing_key(
    pagerduty_server: RecordingHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = json.dumps({"status": "invalid event", "errors": [f"routing_key {ROUTING_KEY} is invalid"]})
    pagerduty_server.answer_first(Answer(400, echo))
    with pytest.raises(AlertDeliveryFailed) as failed:
        notifier(pagerduty_server).send(notification())
    assert len(pagerduty_server.requests) == 1
    assert "pagerduty notifier 'pd_oncall': HTTP 400" in str(failed.value) and "invalid event" in str(failed.value)
    for shown in (str(failed.value), caplog.text, repr(notifier(pagerduty_server))):
        assert ROUTING_KEY not in shown


def test_connection_forms() -> None:
    default = pagerduty.from_connection(Connection(conn_id="pd", conn_type="pagerduty", password=ROUTING_KEY))
    assert default.events_url == EVENTS_URL and default._routing_key == ROUTING_KEY
    eu = pagerduty.from_connection(
        Connection(conn_id="pd", conn_type="pagerduty", password=ROUTING_KEY, host="events.eu.pagerduty.com")
    )
    assert eu.events_url == "https://events.eu.pagerduty.com/v2/enqueue"
    local = pagerduty.from_connection(
        Connection(
            conn_id="pd",
            conn_type="pagerduty",
            password=ROUTING_KEY,
            host="127.0.0.1",
            port=8080,
            schema="http",
            extra='{"min_severity": "critical"}',
        )
    )
    assert local.events_url == "http://127.0.0.1:8080/v2/enqueue" and local.min_severity == "critical"
    with pytest.raises(ConfigError, match="connection 'pd': set 'password' to the PagerDuty integration's routing key"):
        pagerduty.from_connection(Connection(conn_id="pd", conn_type="pagerduty"))
    with pytest.raises(ConfigError, match=r"extra 'min_severity' must be one of \['critical', 'warning'\]"):
        pagerduty.from_connection(
            Connection(conn_id="pd", conn_type="pagerduty", password=ROUTING_KEY, extra='{"min_severity": "info"}')
        )
