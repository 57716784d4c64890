"""`EmailNotifier` through Airflow's real `SmtpHook` and a real local SMTP server, with the
connections given the way Airflow reads them from the environment (`AIRFLOW_CONN_<ID>`)."""

from __future__ import annotations

import email
import json
from email.message import Message

import pytest
from airflow.sdk import Connection
from airflow.sdk.bases.hook import BaseHook

from kafka_ops.alerting import mail
from kafka_ops.alerting.mail import EmailNotifier
from kafka_ops.alerting.registry import notifier_for
from kafka_ops.errors import AlertDeliveryFailed, ConfigError
from sandbox.cluster import free_port
from tests.unit.alerting.alerts import lagging_group
from tests.unit.alerting.notifications import notification
from tests.unit.alerting.servers import RecordingSmtpServer

SMTP_PASSWORD = "smtp-Pa55-never-shown"


def smtp_connection(monkeypatch: pytest.MonkeyPatch, conn_id: str, port: int, **extra: object) -> None:
    extra = {"from_email": "kafka-ops@example.com", "disable_tls": True, "disable_ssl": True, "timeout": 5,
             "retry_limit": 0, **extra}  # fmt: skip
    monkeypatch.setenv(
        f"AIRFLOW_CONN_{conn_id.upper()}",
        json.dumps({"conn_type": "smtp", "host": "127.0.0.1", "port": port, "extra": extra}),
    )


def parts(message: Message) -> dict[str, str]:
    return {p.get_content_type(): p.get_payload(decode=True).decode() for p in message.walk() if not p.is_multipart()}


def test_mail_has_plain_text_and_html(smtp_server: RecordingSmtpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    smtp_connection(monkeypatch, "smtp_test", smtp_server.port)
    sender = EmailNotifier("mail_oncall", ["oncall@example.com", "kafka-team@example.com"], smtp_conn_id="smtp_test")
    sender.send(notification("open"))
    (sent,) = smtp_server.mails
    assert sent.mail_from == "kafka-ops@example.com"
    assert sent.rcpt_to == ["oncall@example.com", "kafka-team@example.com"]
    message = email.message_from_bytes(sent.data)
    assert message["Subject"] == "[kafka-ops] CRITICAL payments: 40 partitions under-replicated"
    assert message["X-Kafka-Ops-Dedup-Key"] == "kafka-ops/payments/under_replicated"
    assert message.get_content_type() == "multipart/alternative"
    bodies = parts(message)
    assert list(bodies) == ["text/plain", "text/html"]  # plain first: the least preferred alternative
    for expected in (
        "Since:    2025-03-01 12:00:00 UTC (35 min ago)",
        "Affected (top 3 of 41):",
        "  - partition orders-0: isr [1, 3] of [1, 2, 3]",
        "Likely cause: broker 2 is down: 40 partitions under-replicated",
        "Suggested action: restart broker 2",
        "Data Docs: http://airflow.example/data_docs/payments/index.html",
    ):
        assert expected in bodies["text/plain"], expected
    assert "<a href='http://airflow.example/data_docs/payments/index.html'>Data Docs</a>" in bodies["text/html"]


def test_html_is_escaped_and_resolve_subject(smtp_server: RecordingSmtpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    smtp_connection(monkeypatch, "smtp_test", smtp_server.port)
    sender = EmailNotifier("mail_oncall", ["oncall@example.com"], smtp_conn_id="smtp_test")
    sender.send(notification("open", lagging_group(title="group <b>billing</b>\nis behind")))
    sender.send(notification("resolve"))
    opened, resolved = (email.message_from_bytes(m.data) for m in smtp_server.mails)
    assert "&lt;b&gt;billing&lt;/b&gt;" in parts(opened)["text/html"]
    assert opened["Subject"] == "[kafka-ops] WARNING payments: group <b>billing</b> is behind"  # one header line
    assert (
        resolved["Subject"] == "[kafka-ops] RESOLVED payments: 40 partitions under-replicated (was critical for 35 min)"
    )


def test_smtp_connection_with_recipients_in_its_extras(
    smtp_server: RecordingSmtpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    smtp_connection(monkeypatch, "smtp_alerts", smtp_server.port, to="a@example.com; b@example.com")
    sender = notifier_for(BaseHook.get_connection("smtp_alerts"))
    assert isinstance(sender, EmailNotifier) and sender.smtp_conn_id == "smtp_alerts"
    sender.send(notification())
    assert smtp_server.mails[0].rcpt_to == ["a@example.com", "b@example.com"]


def test_unreachable_smtp_is_a_delivery_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "AIRFLOW_CONN_SMTP_DOWN",
        json.dumps(
            {
                "conn_type": "smtp",
                "host": "127.0.0.1",
                "port": free_port(),
                "login": "ops",
                "password": SMTP_PASSWORD,
                "extra": {"from_email": "k@example.com", "disable_tls": True, "disable_ssl": True, "retry_limit": 0},
            }
        ),
    )
    with pytest.raises(AlertDeliveryFailed, match=r"email notifier 'mail' \(SMTP connection 'smtp_down'\)") as failed:
        EmailNotifier("mail", ["oncall@example.com"], smtp_conn_id="smtp_down").send(notification())
    assert failed.value.unavailable and SMTP_PASSWORD not in str(failed.value)


def test_email_connection_fields() -> None:
    extra = json.dumps({"to": ["oncall@example.com"], "smtp_conn_id": "smtp_corp", "from_email": "k@example.com"})
    built = mail.from_connection(Connection(conn_id="mail_oncall", conn_type="email", extra=extra))
    assert (built.to, built.smtp_conn_id, built.from_email) == (("oncall@example.com",), "smtp_corp", "k@example.com")
    with pytest.raises(ConfigError, match="extra 'to' is required"):
        mail.from_connection(Connection(conn_id="m", conn_type="email", extra="{}"))
    with pytest.raises(ConfigError, match=r"'to' must be a non-empty list of addresses"):
        mail.from_connection(Connection(conn_id="m", conn_type="email", extra='{"to": ["not-an-address"]}'))
    with pytest.raises(ConfigError, match=r"unknown extra key\(s\) \['disable_tls'\]"):  # that belongs on the SMTP one
        mail.from_connection(Connection(conn_id="m", conn_type="email", extra='{"to": "a@b.c", "disable_tls": true}'))
