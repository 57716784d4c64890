"""Real servers for the notifier tests, and the alerts the tests use."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.unit.alerting.servers import Answer, RecordingHttpServer, RecordingSmtpServer


@pytest.fixture
def slack_server() -> Iterator[RecordingHttpServer]:
    """Answers like Slack: 200 `ok`."""
    server = RecordingHttpServer(Answer(200, "ok", {"Content-Type": "text/html"})).start()
    yield server
    server.stop()


@pytest.fixture
def pagerduty_server() -> Iterator[RecordingHttpServer]:
    """Answers like PagerDuty's Events API: 202 and a JSON status."""
    body = json.dumps({"status": "success", "message": "Event processed", "dedup_key": "x"})
    server = RecordingHttpServer(Answer(202, body, {"Content-Type": "application/json"})).start()
    yield server
    server.stop()


@pytest.fixture
def smtp_server() -> Iterator[RecordingSmtpServer]:
    server = RecordingSmtpServer().start()
    yield server
    server.stop()
