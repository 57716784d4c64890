"""The soak report's reading of the webhook receiver's records: kafka-ops' own Slack payloads (built by
`kafka_ops.alerting.slack.payload`, so a change of the headline format fails here) and Alertmanager's,
counted into pages, resolves, duplicate pages and unresolved incidents. No stack needed (under a second)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kafka_ops.alerting.alert import Alert
from kafka_ops.alerting.incidents import Notification
from kafka_ops.alerting.slack import payload
from stack.soak import Outcome, fault_line, outage_page
from stack.soak_report import read_pages

pytestmark = pytest.mark.stack

T0 = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
BROKER_DOWN = Alert("sandbox-zk", "no_offline_partitions", "critical", "2 partitions offline", T0)


def received(minute: int, action: str, alert: Alert = BROKER_DOWN, **kwargs: Any) -> dict[str, Any]:
    at = T0 + timedelta(minutes=minute)
    note = Notification(action, "alerts_webhook", alert, at, T0, **kwargs)  # type: ignore[arg-type]
    return {"received_at": at.isoformat(), "path": "/chat", "body": payload(note)}


def test_an_incident_paged_once_and_resolved_is_one_page_and_nothing_unresolved() -> None:
    pages = read_pages([received(1, "open"), received(5, "remind"), received(9, "resolve")], T0)
    assert (pages.pages, pages.reminders, pages.resolves) == (1, 1, 1)
    assert pages.opened == ["sandbox-zk: no_offline_partitions"]
    assert pages.duplicates == [] and pages.unresolved == []


def test_a_second_open_of_an_open_incident_is_a_duplicate_and_one_never_resolved_is_unresolved() -> None:
    escalated = Alert("sandbox-zk", "no_offline_partitions", "critical", "2 partitions offline", T0)
    records = [received(1, "open"), received(2, "open", escalated, escalated_from="warning"), received(3, "open")]
    pages = read_pages(records, T0)
    assert len(pages.duplicates) == 1, "an escalation is not a duplicate, the third open is"
    assert pages.unresolved == ["sandbox-zk: no_offline_partitions"]


def test_incidents_open_before_the_soak_are_standing_not_unresolved_and_alertmanager_resolves_count() -> None:
    firing = {"status": "firing", "alerts": [{"status": "firing", "fingerprint": "ab", "labels": {"alertname": "X"}}]}
    resolved = {"status": "resolved", "alerts": [{"status": "resolved", "fingerprint": "ab", "labels": {}}]}
    records = [
        received(0, "open"),
        {"received_at": (T0 + timedelta(minutes=2)).isoformat(), "path": "/alertmanager/default", "body": firing},
        {"received_at": (T0 + timedelta(minutes=4)).isoformat(), "path": "/alertmanager/default", "body": resolved},
    ]
    pages = read_pages(records, T0 + timedelta(minutes=1))
    assert pages.standing == ["sandbox-zk: no_offline_partitions"]
    assert pages.unresolved == [] and pages.resolves == 1


def test_an_incident_is_named_by_its_key_whatever_its_title_became() -> None:
    """The count in a title moves while the incident stays open: its resolve still closes it."""
    grown = Alert("sandbox-zk", "no_offline_partitions", "critical", "5 partitions offline", T0)
    pages = read_pages([received(1, "open"), received(9, "resolve", grown)], T0)
    assert (pages.pages, pages.resolves, pages.unresolved, pages.duplicates) == (1, 1, [], [])


def outage(kind: str, start: int, end: int) -> Outcome:
    began, cleared = T0 + timedelta(minutes=start), T0 + timedelta(minutes=end)
    return Outcome(kind, True, "SIGKILLed a broker", began.isoformat(), cleared.isoformat())


def test_a_broker_outage_names_the_page_that_came_while_it_lasted_and_says_when_none_did() -> None:
    records = [received(1, "open"), received(9, "resolve")]
    assert outage_page(outage("zk-broker", 0, 2), records) == {"page": "2 partitions offline", "page_s": 60.0}
    assert outage_page(outage("zk-broker", 2, 4), records) == {"page": None, "page_s": None}, "another's page"
    assert outage_page(outage("kraft-broker", 0, 2), records)["page"] is None, "a page about another cluster"
    assert outage_page(outage("scheduler", 0, 2), records) == {}, "only a broker's outage should page"

    paged = asdict(outage("zk-broker", 0, 2)) | outage_page(outage("zk-broker", 0, 2), records)
    assert fault_line(paged).endswith("; paged '2 partitions offline' after 60s")
    unpaged = asdict(outage("zk-broker", 2, 4)) | outage_page(outage("zk-broker", 2, 4), records)
    assert fault_line(unpaged).endswith("; no page while it lasted")
