"""`dispatch` end to end: real Slack- and PagerDuty-like servers, the log file, the state in a lake.

The scenario the sandbox tests will replay with a real broker: a healthy cluster sends nothing; a
killed broker opens exactly one critical incident; the next run is silent; the broker's return
resolves it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from kafka_ops.alerting.alert import Alert, cannot_see_cluster
from kafka_ops.alerting.dispatch import DispatchReport, Failure, dispatch
from kafka_ops.alerting.incidents import Notification
from kafka_ops.alerting.log_sink import LogNotifier
from kafka_ops.alerting.notifier import Notifier
from kafka_ops.alerting.pagerduty import PagerDutyNotifier
from kafka_ops.alerting.slack import SlackNotifier
from kafka_ops.alerting.state_store import IncidentStore
from kafka_ops.alerting.webhook import HttpPolicy
from kafka_ops.errors import AlertDeliveryFailed, AlertError
from tests.unit.alerting.alerts import HOUR, LINKS, T0, broker_down, lagging_group
from tests.unit.alerting.schemas import check_pagerduty_event, check_slack_message
from tests.unit.alerting.servers import Answer, RecordingHttpServer

FAST = HttpPolicy(timeout_s=5, attempts=3, backoff_s=0.01)
ROUTING_KEY = "R0UTINGKEYsecret0123456789abcdef"


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


@pytest.fixture
def sinks(tmp_path: Path, slack_server: RecordingHttpServer, pagerduty_server: RecordingHttpServer) -> list[Notifier]:
    return [
        SlackNotifier("slack_payments", f"{slack_server.base_url}/services/T0/B0/secret", policy=FAST),
        PagerDutyNotifier(
            "pd_payments", ROUTING_KEY, events_url=f"{pagerduty_server.base_url}/v2/enqueue", policy=FAST
        ),
        LogNotifier("log", tmp_path / "alerts.jsonl"),
    ]


def log_lines(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "alerts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_healthy_then_broker_down_then_silent_then_resolved(
    tmp_path: Path,
    sinks: list[Notifier],
    slack_server: RecordingHttpServer,
    pagerduty_server: RecordingHttpServer,
) -> None:
    lake = str(tmp_path / "lake")

    def run(alerts: Sequence[Alert], at: timedelta) -> DispatchReport:
        return dispatch("payments", alerts, T0 + at, lake_root=lake, notifiers=sinks, reminder=HOUR, run_links=LINKS)

    healthy = run([], minutes(0))
    assert healthy == DispatchReport("payments", T0)
    assert not slack_server.requests and not pagerduty_server.requests and not log_lines(tmp_path)

    down = run([broker_down(since=T0 + minutes(4))], minutes(5))
    assert (down.opened, down.failed, down.open_incidents) == (("under_replicated",), (), ("under_replicated",))
    (trigger,) = (r.json for r in pagerduty_server.requests)
    check_pagerduty_event(trigger)
    assert trigger["event_action"] == "trigger" and trigger["payload"]["severity"] == "critical"
    (message,) = (r.json for r in slack_server.requests)
    check_slack_message(message)
    assert message["text"] == "CRITICAL payments: 40 partitions under-replicated"
    (line,) = log_lines(tmp_path)
    assert (line["event"], line["severity"], line["cause"]) == (
        "open",
        "critical",
        "broker 2 is down: 40 partitions under-replicated",
    )

    again = run([broker_down(since=T0 + minutes(4))], minutes(10))
    assert again.silent == ("under_replicated",) and not again.opened and not again.reminded
    assert len(pagerduty_server.requests) == 1 and len(slack_server.requests) == 1 and len(log_lines(tmp_path)) == 1

    back = run([], minutes(15))
    assert back.resolved == ("under_replicated",) and back.open_incidents == ()
    resolve = pagerduty_server.requests[-1].json
    check_pagerduty_event(resolve)
    assert resolve == {"routing_key": ROUTING_KEY, "event_action": "resolve", "dedup_key": trigger["dedup_key"]}
    assert (
        slack_server.requests[-1].json["text"]
        == "RESOLVED payments: 40 partitions under-replicated (was critical for 11 min)"
    )
    assert [entry["event"] for entry in log_lines(tmp_path)] == ["open", "resolve"]
    assert run([], minutes(20)) == DispatchReport("payments", T0 + minutes(20))


def test_reminder_after_the_interval(tmp_path: Path, sinks: list[Notifier]) -> None:
    lake = str(tmp_path / "lake")
    for at in (0, 30, 61):
        report = dispatch(
            "payments", [broker_down()], T0 + minutes(at), lake_root=lake, notifiers=sinks[2:], reminder=HOUR
        )
    assert report.reminded == ("under_replicated",)
    assert [entry["event"] for entry in log_lines(tmp_path)] == ["open", "remind"]


def test_one_failing_notifier_is_retried_next_run_without_resending_to_the_others(
    tmp_path: Path,
    sinks: list[Notifier],
    slack_server: RecordingHttpServer,
    pagerduty_server: RecordingHttpServer,
) -> None:
    lake = str(tmp_path / "lake")
    pagerduty_server.answer_first(*[Answer(500, "oops")] * 3)
    first = dispatch("payments", [broker_down()], T0, lake_root=lake, notifiers=sinks, reminder=HOUR)
    assert first.opened == ("under_replicated",)  # Slack and the log have it: no exception
    (failure,) = first.failed
    assert (failure.key, failure.action, failure.notifier) == ("under_replicated", "open", "pd_payments")
    assert "HTTP 500" in failure.error and ROUTING_KEY not in failure.error
    stored = IncidentStore(lake).load("payments")[0].incidents["under_replicated"].sinks
    assert stored["pd_payments"].notified_at is None and stored["pd_payments"].failures == 1
    second = dispatch("payments", [broker_down()], T0 + minutes(5), lake_root=lake, notifiers=sinks, reminder=HOUR)
    assert second.opened == ("under_replicated",) and second.failed == ()
    assert len(pagerduty_server.requests) == 4 and len(slack_server.requests) == 1 and len(log_lines(tmp_path)) == 1


def test_nothing_delivered_raises_after_saving_and_is_retried(
    tmp_path: Path, slack_server: RecordingHttpServer
) -> None:
    lake = str(tmp_path / "lake")
    only = [SlackNotifier("slack_payments", f"{slack_server.base_url}/services/T0/B0/secret", policy=FAST)]
    slack_server.answer_first(Answer(400, "invalid_payload"))
    with pytest.raises(AlertDeliveryFailed, match=r"no notifier delivered \['open:under_replicated'\]") as failed:
        dispatch("payments", [broker_down()], T0, lake_root=lake, notifiers=only, reminder=HOUR)
    report = failed.value.report
    assert isinstance(report, DispatchReport) and report.undelivered == ("open:under_replicated",)
    assert report.open_incidents == ("under_replicated",)  # the state was saved before raising
    retried = dispatch("payments", [broker_down()], T0 + minutes(5), lake_root=lake, notifiers=only, reminder=HOUR)
    assert retried.opened == ("under_replicated",) and len(slack_server.requests) == 2


def test_an_unavailable_notifier_is_skipped_for_the_rest_of_the_run(
    tmp_path: Path, sinks: list[Notifier], pagerduty_server: RecordingHttpServer
) -> None:
    pagerduty_server.answer_first(*[Answer(503, "unavailable")] * 3)
    report = dispatch(
        "payments",
        [broker_down(), lagging_group()],
        T0,
        lake_root=str(tmp_path / "lake"),
        notifiers=sinks,
        reminder=HOUR,
    )
    assert len(pagerduty_server.requests) == 3  # one notification's attempts, not two
    assert [(f.key, f.notifier) for f in report.failed] == [
        ("under_replicated", "pd_payments"),
        ("group_lag:billing", "pd_payments"),
    ]
    assert report.failed[1].error.startswith("skipped: ")
    assert report.opened == ("group_lag:billing", "under_replicated")


def test_cannot_see_cluster_pages_and_holds_the_rest(tmp_path: Path, sinks: list[Notifier]) -> None:
    lake = str(tmp_path / "lake")
    dispatch("payments", [broker_down()], T0, lake_root=lake, notifiers=sinks[2:], reminder=HOUR)
    blind = cannot_see_cluster("payments", "Kafka", "KafkaUnreachable: no broker answered", T0 + minutes(5))
    report = dispatch("payments", [blind], T0 + minutes(5), lake_root=lake, notifiers=sinks[2:], reminder=HOUR)
    assert report.opened == ("cannot_see:kafka",) and report.held == ("under_replicated",) and not report.resolved
    (_, line) = log_lines(tmp_path)
    assert line["title"] == "cannot see cluster payments: the Kafka snapshot failed" and line["severity"] == "critical"


def test_two_clusters_keep_separate_state(tmp_path: Path, sinks: list[Notifier]) -> None:
    lake = str(tmp_path / "lake")
    log = sinks[2:]
    dispatch("payments", [broker_down("payments")], T0, lake_root=lake, notifiers=log, reminder=HOUR)
    other = dispatch("logs", [broker_down("logs")], T0, lake_root=lake, notifiers=log, reminder=HOUR)
    assert other.opened == ("under_replicated",)
    assert dispatch("logs", [], T0 + minutes(1), lake_root=lake, notifiers=log, reminder=HOUR).resolved == (
        "under_replicated",
    )
    still = dispatch(
        "payments", [broker_down("payments")], T0 + minutes(2), lake_root=lake, notifiers=log, reminder=HOUR
    )
    assert still.silent == ("under_replicated",) and still.open_incidents == ("under_replicated",)
    documents = sorted(p.name for p in (tmp_path / "lake" / "_alerting").iterdir() if p.suffix == ".json")
    assert documents == ["logs.json", "payments.json"]


class _Crashing(Notifier):
    """A notifier whose process dies on its second message: a fault no real service produces on cue."""

    kind = "crash"

    def __init__(self) -> None:
        super().__init__("crashing")
        self.sent: list[Notification] = []

    def send(self, notification: Notification) -> None:
        if self.sent:
            raise KeyboardInterrupt
        self.sent.append(notification)


def test_a_crash_mid_delivery_keeps_what_was_sent(tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    crashing = _Crashing()
    with pytest.raises(KeyboardInterrupt):
        dispatch("payments", [broker_down(), lagging_group()], T0, lake_root=lake, notifiers=[crashing], reminder=HOUR)
    incidents = IncidentStore(lake).load("payments")[0].incidents
    assert incidents["under_replicated"].sinks["crashing"].notified_at == T0  # sent first (critical first)
    assert "crashing" not in incidents["group_lag:billing"].sinks  # never attempted: decided again next run
    log = LogNotifier("crashing")
    after = dispatch(
        "payments", [broker_down(), lagging_group()], T0 + minutes(1), lake_root=lake, notifiers=[log], reminder=HOUR
    )
    assert after.opened == ("group_lag:billing",) and after.silent == ("under_replicated",)


def test_report_is_json_for_xcom(tmp_path: Path, sinks: list[Notifier], pagerduty_server: RecordingHttpServer) -> None:
    pagerduty_server.answer_first(Answer(400, "bad"))
    report = dispatch("payments", [broker_down()], T0, lake_root=str(tmp_path / "lake"), notifiers=sinks, reminder=HOUR)
    native = report.to_dict()
    assert native["opened"] == ["under_replicated"] and isinstance(native["failed"][0], dict)  # no tuple
    data = json.loads(json.dumps(native))
    assert data["at"] == T0.isoformat() and data["opened"] == ["under_replicated"]
    assert data["failed"][0]["notifier"] == "pd_payments" and data["failed"][0]["action"] == "open"
    assert Failure(**data["failed"][0]) == report.failed[0]


def test_bad_calls_are_refused(tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    with pytest.raises(AlertError, match="no notifier configured"):
        dispatch("payments", [], T0, lake_root=lake, notifiers=[], reminder=HOUR)
    with pytest.raises(AlertError, match="notifier names must be unique"):
        dispatch("payments", [], T0, lake_root=lake, notifiers=[LogNotifier(), LogNotifier()], reminder=HOUR)
    with pytest.raises(AlertError, match="is for cluster 'logs', not 'payments'"):
        dispatch("payments", [broker_down("logs")], T0, lake_root=lake, notifiers=[LogNotifier()], reminder=HOUR)
