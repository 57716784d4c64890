"""`SlackNotifier` against a real local HTTP server: documented incoming-webhook format, retries,
and the webhook URL (a credential) never in a log line, an error or a repr."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from airflow.sdk import Connection

from kafka_ops.alerting import slack
from kafka_ops.alerting.slack import SlackNotifier
from kafka_ops.alerting.webhook import HttpPolicy
from kafka_ops.errors import AlertDeliveryFailed, ConfigError
from sandbox.cluster import free_port
from tests.unit.alerting.alerts import lagging_group
from tests.unit.alerting.notifications import notification
from tests.unit.alerting.schemas import check_slack_message
from tests.unit.alerting.servers import Answer, RecordingHttpServer

TOKEN = "T0SECRET1/B0SECRET2/xoxSecretWebhookToken42"
FAST = HttpPolicy(timeout_s=5, attempts=3, backoff_s=0.01)


def notifier(server: RecordingHttpServer, policy: HttpPolicy = FAST) -> SlackNotifier:
    return SlackNotifier("slack_oncall", f"{server.base_url}/services/{TOKEN}", policy=policy)


def all_text(body: dict[str, object]) -> str:
    return json.dumps(body, ensure_ascii=False)


def mrkdwn_texts(body: dict[str, Any]) -> list[str]:
    """The fallback `text` and every `mrkdwn` text object: where Slack would expand `<!channel>`."""
    found = [body["text"]]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "mrkdwn":
                found.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(body["blocks"])
    return found


def test_open_message_is_a_valid_webhook_payload_with_everything_on_call_needs(
    slack_server: RecordingHttpServer,
) -> None:
    notifier(slack_server).send(notification("open"))
    (request,) = slack_server.requests
    assert request.method == "POST" and request.path == f"/services/{TOKEN}"
    assert request.headers["Content-Type"] == "application/json"
    body = request.json
    check_slack_message(body)
    assert body["text"] == "CRITICAL payments: 40 partitions under-replicated"
    text = all_text(body)
    for expected in (
        "*Cluster*\\npayments",
        "2025-03-01 12:00:00 UTC (35 min ago)",  # since when
        "broker 2 (rack b): down",  # top affected
        "partition orders-0: isr [1, 3] of [1, 2, 3]",
        "... and 38 more",
        "Affected (top 3 of 41)",
        "*Likely cause:* broker 2 is down: 40 partitions under-replicated",
        "*Suggested action:* restart broker 2; once it is back in every ISR, run kafka_preferred_leader_election",
        "<http://airflow.example/data_docs/payments/index.html|Data Docs>",
        "|Airflow run>",
    ):
        assert expected in text, expected


def test_reminder_escalation_and_resolve_are_told_apart(slack_server: RecordingHttpServer) -> None:
    sender = notifier(slack_server)
    sender.send(notification("remind"))
    sender.send(notification("open", escalated_from="warning"))
    sender.send(notification("resolve"))
    remind, escalate, resolve = (r.json for r in slack_server.requests)
    for body in (remind, escalate, resolve):
        check_slack_message(body)
    assert remind["text"].startswith("REMINDER CRITICAL payments") and "*Reminder*" in all_text(remind)
    assert escalate["text"].startswith("CRITICAL (was warning) payments")
    assert resolve["text"] == "RESOLVED payments: 40 partitions under-replicated (was critical for 35 min)"
    assert "Likely cause" not in all_text(resolve)


def test_cluster_text_is_escaped_and_limits_are_kept(slack_server: RecordingHttpServer) -> None:
    alert = lagging_group(title="group <!channel> & friends is behind " + "x" * 300, cause="a" * 5000)
    notifier(slack_server).send(notification("open", alert))
    body = slack_server.requests[0].json
    check_slack_message(body)  # header <= 150, sections <= 3000
    assert "&lt;!channel&gt; &amp; friends" in body["text"]
    assert all("<!channel>" not in text for text in mrkdwn_texts(body))  # plain_text never pings: left as is


def test_5xx_and_429_are_retried_then_delivered(
    slack_server: RecordingHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    slack_server.answer_first(Answer(500, "internal_error"), Answer(429, "rate_limited", {"Retry-After": "0"}))
    notifier(slack_server).send(notification())
    assert len(slack_server.requests) == 3
    assert slack_server.requests[0].raw == slack_server.requests[2].raw  # the same message, resent
    assert "HTTP 500" in caplog.text and "HTTP 429" in caplog.text
    assert TOKEN not in caplog.text and "xoxSecret" not in caplog.text


def test_a_refused_request_is_not_retried_and_the_secret_stays_masked(
    slack_server: RecordingHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    slack_server.answer_first(Answer(404, f"no_service: /services/{TOKEN}"))
    with pytest.raises(AlertDeliveryFailed) as failed:
        notifier(slack_server).send(notification())
    assert len(slack_server.requests) == 1
    message = str(failed.value)
    assert "slack notifier 'slack_oncall'" in message and "HTTP 404" in message and "no_service" in message
    assert not failed.value.unavailable
    for shown in (message, caplog.text, repr(failed.value)):
        assert TOKEN not in shown and "xoxSecret" not in shown


def test_a_service_that_stays_down_fails_as_unavailable(slack_server: RecordingHttpServer) -> None:
    slack_server.answer_first(*[Answer(503, "busy")] * 3)
    with pytest.raises(AlertDeliveryFailed, match=r"HTTP 503.*after 3 attempt") as failed:
        notifier(slack_server).send(notification())
    assert failed.value.unavailable and len(slack_server.requests) == 3


def test_unreachable_webhook_names_the_notifier_not_the_url(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"http://127.0.0.1:{free_port()}/services/{TOKEN}"  # nothing listens there
    with pytest.raises(AlertDeliveryFailed, match=r"slack notifier 'down': network error") as failed:
        SlackNotifier("down", url, policy=HttpPolicy(timeout_s=2, attempts=2, backoff_s=0)).send(notification())
    assert failed.value.unavailable
    assert failed.value.__cause__ is None  # urllib's exception may quote the URL: not chained
    for shown in (str(failed.value), caplog.text):
        assert TOKEN not in shown and url not in shown


def test_redirect_is_a_failure(slack_server: RecordingHttpServer) -> None:
    slack_server.answer_first(Answer(302, "", {"Location": f"{slack_server.base_url}/elsewhere"}))
    with pytest.raises(AlertDeliveryFailed, match="HTTP 302"):
        notifier(slack_server).send(notification())
    assert [r.path for r in slack_server.requests] == [f"/services/{TOKEN}"]


def test_repr_masks_the_webhook(slack_server: RecordingHttpServer) -> None:
    shown = repr(notifier(slack_server))
    assert TOKEN not in shown and slack_server.base_url in shown and "/***" in shown


@pytest.mark.parametrize(
    ("fields", "url"),
    [
        ({"password": f"https://hooks.slack.com/services/{TOKEN}"}, f"https://hooks.slack.com/services/{TOKEN}"),
        ({"password": TOKEN}, f"https://hooks.slack.com/services/{TOKEN}"),
        (
            {"password": TOKEN, "host": "127.0.0.1", "port": 8080, "schema": "http"},
            f"http://127.0.0.1:8080/{TOKEN}",
        ),
        ({"host": f"https://hooks.slack.com/services/{TOKEN}"}, f"https://hooks.slack.com/services/{TOKEN}"),
    ],
)
def test_connection_forms(fields: dict[str, object], url: str) -> None:
    conn = Connection(conn_id="slack_oncall", conn_type="slack_webhook", **fields)  # type: ignore[arg-type]
    built = slack.from_connection(conn)
    assert built._url == url and built.name == "slack_oncall" and built.min_severity == "warning"


def test_connection_extras_are_allowlisted() -> None:
    extra = json.dumps({"min_severity": "critical", "timeout": 3, "attempts": "5", "backoff_s": 0})
    built = slack.from_connection(Connection(conn_id="s", conn_type="slack_webhook", password=TOKEN, extra=extra))
    assert built.min_severity == "critical" and built.policy == HttpPolicy(timeout_s=3, attempts=5, backoff_s=0)
    with pytest.raises(ConfigError, match=r"connection 's': unknown extra key\(s\) \['channel'\]"):
        slack.from_connection(
            Connection(conn_id="s", conn_type="slack_webhook", password=TOKEN, extra='{"channel": "x"}')
        )
    with pytest.raises(ConfigError, match="extra 'attempts' must be a whole number >= 1"):
        slack.from_connection(
            Connection(conn_id="s", conn_type="slack_webhook", password=TOKEN, extra='{"attempts": 0}')
        )
    with pytest.raises(ConfigError, match="no Slack webhook"):
        slack.from_connection(Connection(conn_id="s", conn_type="slack_webhook", host="hooks.slack.com"))
    with pytest.raises(ConfigError, match="is not an http") as bad:
        slack.from_connection(Connection(conn_id="s", conn_type="slack_webhook", password=TOKEN, host="ftp://x"))
    assert TOKEN not in str(bad.value)
