"""The incident state machine, run after run: open → silent → remind → resolve, and its edges."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import timedelta

import pytest

from kafka_ops.alerting.alert import Alert, Severity, cannot_see_cluster
from kafka_ops.alerting.incidents import (
    ClusterState,
    Judgement,
    Notification,
    Outcome,
    SinkState,
    decide,
    dedup_key,
    record,
)
from kafka_ops.errors import AlertError
from tests.unit.alerting.alerts import HOUR, LINKS, T0, broker_down, lagging_group

ONE_SINK: Mapping[str, Severity] = {"log": "warning"}
TWO_SINKS: Mapping[str, Severity] = {"slack": "warning", "pagerduty": "warning"}


def run(
    firing: Sequence[Alert],
    state: ClusterState,
    minutes: float,
    sinks: Mapping[str, Severity] = ONE_SINK,
    failing: Collection[str] = (),
) -> tuple[list[tuple[str, str, str]], ClusterState]:
    """One alerting run at T0 + `minutes`: (action, key, sink) sent, and the state after it."""
    now = T0 + timedelta(minutes=minutes)
    due = decide(firing, state, now, reminder=HOUR, sinks=sinks, run_links=LINKS)
    outcomes = [Outcome(n, "HTTP 500" if n.sink in failing else None) for n in due]
    return [(n.action, n.key, n.sink) for n in due], record(firing, state, now, outcomes=outcomes, sinks=sinks)


def empty(cluster: str = "payments") -> ClusterState:
    return ClusterState(cluster)


def test_open_silent_remind_resolve() -> None:
    alert = broker_down()
    sent, state = run([alert], empty(), 0)
    assert sent == [("open", "under_replicated", "log")]
    assert state.incidents["under_replicated"].opened_at == T0
    sent, state = run([alert], state, 5)
    assert sent == []  # still firing within the interval: silent
    sent, state = run([alert], state, 59)
    assert sent == []
    sent, state = run([alert], state, 60)
    assert sent == [("remind", "under_replicated", "log")]
    sent, state = run([alert], state, 100)
    assert sent == []  # the reminder restarted the interval
    sent, state = run([], state, 110)
    assert sent == [("resolve", "under_replicated", "log")]
    assert state.incidents == {}
    sent, state = run([], state, 115)
    assert sent == []  # resolved once, never again


def test_reopen_after_resolve_is_a_new_incident() -> None:
    _, state = run([broker_down()], empty(), 0)
    _, state = run([], state, 10)
    sent, state = run([broker_down(since=T0 + timedelta(minutes=20))], state, 20)
    assert sent == [("open", "under_replicated", "log")]
    assert state.incidents["under_replicated"].opened_at == T0 + timedelta(minutes=20)


def test_escalation_is_sent_at_once_and_deescalation_is_silent() -> None:
    warning = broker_down(severity="warning")
    critical = broker_down(severity="critical")
    _, state = run([warning], empty(), 0)
    now = T0 + timedelta(minutes=5)
    due = decide([critical], state, now, reminder=HOUR, sinks=ONE_SINK)
    assert [(n.action, n.escalated_from, n.alert.severity) for n in due] == [("open", "warning", "critical")]
    state = record([critical], state, now, outcomes=[Outcome(due[0])], sinks=ONE_SINK)
    sent, state = run([critical], state, 10)
    assert sent == []
    sent, state = run([warning], state, 15)
    assert sent == []  # calmer is not news; the next reminder says warning
    assert state.incidents["under_replicated"].severity == "warning"
    due = decide([warning], state, T0 + timedelta(minutes=65), reminder=HOUR, sinks=ONE_SINK)
    assert [(n.action, n.alert.severity) for n in due] == [("remind", "warning")]


def test_failed_open_is_retried_next_run_and_nothing_is_lost() -> None:
    alert = broker_down()
    sent, state = run([alert], empty(), 0, TWO_SINKS, failing={"pagerduty"})
    assert sorted(sent) == [("open", "under_replicated", "pagerduty"), ("open", "under_replicated", "slack")]
    sinks = state.incidents["under_replicated"].sinks
    assert sinks["slack"].notified_at == T0
    assert sinks["pagerduty"] == SinkState(failures=1, last_error="HTTP 500")
    sent, state = run([alert], state, 5, TWO_SINKS, failing={"pagerduty"})
    assert sent == [("open", "under_replicated", "pagerduty")]  # only the sink that missed it
    assert state.incidents["under_replicated"].sinks["pagerduty"].failures == 2
    sent, state = run([alert], state, 10, TWO_SINKS)
    assert sent == [("open", "under_replicated", "pagerduty")]
    assert state.incidents["under_replicated"].sinks["pagerduty"] == SinkState(
        notified_at=T0 + timedelta(minutes=10), severity="critical"
    )
    sent, state = run([alert], state, 15, TWO_SINKS)
    assert sent == []


def test_failed_resolve_is_retried_until_delivered() -> None:
    _, state = run([broker_down()], empty(), 0, TWO_SINKS)
    sent, state = run([], state, 10, TWO_SINKS, failing={"slack"})
    assert sorted(sent) == [("resolve", "under_replicated", "pagerduty"), ("resolve", "under_replicated", "slack")]
    incident = state.incidents["under_replicated"]
    assert set(incident.sinks) == {"slack"} and incident.cleared_at == T0 + timedelta(minutes=10)
    sent, state = run([], state, 15, TWO_SINKS)
    assert sent == [("resolve", "under_replicated", "slack")]
    assert state.incidents == {}


def test_firing_again_before_the_resolve_got_through_keeps_the_incident() -> None:
    _, state = run([broker_down()], empty(), 0, TWO_SINKS)
    _, state = run([], state, 10, TWO_SINKS, failing={"slack"})  # pagerduty resolved, slack not
    sent, state = run([broker_down()], state, 12, TWO_SINKS)
    assert sent == [("open", "under_replicated", "pagerduty")]  # slack never heard it close
    incident = state.incidents["under_replicated"]
    assert incident.cleared_at is None and incident.opened_at == T0


def test_open_that_never_reached_anyone_is_forgotten_when_it_clears() -> None:
    _, state = run([broker_down()], empty(), 0, failing={"log"})
    sent, state = run([], state, 5)
    assert sent == []  # nobody heard it open: there is nothing to resolve
    assert state.incidents == {}


def test_min_severity_keeps_warnings_off_the_pager_until_they_escalate() -> None:
    sinks: Mapping[str, Severity] = {"slack": "warning", "pagerduty": "critical"}
    sent, state = run([broker_down(severity="warning")], empty(), 0, sinks)
    assert sent == [("open", "under_replicated", "slack")]
    sent, state = run([broker_down(severity="critical")], state, 5, sinks)
    assert sorted(sent) == [("open", "under_replicated", "pagerduty"), ("open", "under_replicated", "slack")]
    sent, state = run([], state, 10, sinks)
    assert sorted(sent) == [("resolve", "under_replicated", "pagerduty"), ("resolve", "under_replicated", "slack")]


def test_blind_run_holds_other_incidents_open() -> None:
    _, state = run([broker_down(), lagging_group()], empty(), 0)
    blind = cannot_see_cluster("payments", "ZooKeeper", "ZooKeeperUnreachable: no server answered", T0)
    sent, state = run([blind], state, 70)
    assert sent == [("open", "cannot_see:zookeeper", "log")]  # no resolve, no reminder for the rest
    assert set(state.incidents) == {"under_replicated", "group_lag:billing", "cannot_see:zookeeper"}
    sent, state = run([broker_down()], state, 75)  # the snapshot works again; the group lag cleared
    assert sorted(sent) == [
        ("remind", "under_replicated", "log"),
        ("resolve", "cannot_see:zookeeper", "log"),
        ("resolve", "group_lag:billing", "log"),
    ]


def test_two_clusters_are_independent() -> None:
    _, payments = run([broker_down("payments")], empty("payments"), 0)
    _, logs = run([], empty("logs"), 0)
    assert logs.incidents == {}
    sent, logs = run([broker_down("logs")], logs, 5)
    assert sent == [("open", "under_replicated", "log")]  # same key, other cluster: its own incident
    sent, payments = run([broker_down("payments")], payments, 5)
    assert sent == []
    with pytest.raises(AlertError, match="for cluster 'logs', not 'payments'"):
        decide([broker_down("logs")], payments, T0, reminder=HOUR, sinks=ONE_SINK)


def test_resolve_carries_what_the_incident_was_and_the_runs_links() -> None:
    _, state = run([broker_down()], empty(), 0)
    (resolve,) = decide([], state, T0 + HOUR, reminder=HOUR, sinks=ONE_SINK, run_links=LINKS)
    assert isinstance(resolve, Notification)
    assert (resolve.action, resolve.alert.title, resolve.alert.severity) == (
        "resolve",
        "40 partitions under-replicated",
        "critical",
    )
    assert resolve.alert.since == T0 and resolve.alert.links == LINKS
    assert resolve.dedup_key == "kafka-ops/payments/under_replicated"


def test_removed_sink_is_dropped_and_new_sink_hears_open_incidents() -> None:
    _, state = run([broker_down()], empty(), 0, {"old": "warning"})
    sent, state = run([broker_down()], state, 5, {"new": "warning"})
    assert sent == [("open", "under_replicated", "new")]
    assert set(state.incidents["under_replicated"].sinks) == {"new"}


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(AlertError, match="share the key 'under_replicated'"):
        decide([broker_down(), broker_down()], empty(), T0, reminder=HOUR, sinks=ONE_SINK)
    with pytest.raises(AlertError, match="reminder interval must be positive"):
        decide([], empty(), T0, reminder=timedelta(0), sinks=ONE_SINK)
    with pytest.raises(AlertError, match="now must be a timezone-aware datetime"):
        decide([], empty(), T0.replace(tzinfo=None), reminder=HOUR, sinks=ONE_SINK)


def test_dedup_key_is_stable_and_bounded() -> None:
    assert dedup_key("payments", "group_err:billing") == "kafka-ops/payments/group_err:billing"
    cluster = "c" * 128  # the longest cluster name and key overflow PagerDuty's 255 characters
    long_a, long_b = dedup_key(cluster, "g:" + "a" * 198), dedup_key(cluster, "g:" + "a" * 197 + "b")
    assert len(long_a) == len(long_b) == 255
    assert long_a != long_b and long_a == dedup_key(cluster, "g:" + "a" * 198)


def judged_run(
    firing: Sequence[Alert], state: ClusterState, minutes: float, judgement: Judgement
) -> tuple[list[tuple[str, str, str]], ClusterState]:
    now = T0 + timedelta(minutes=minutes)
    due = decide(firing, state, now, reminder=HOUR, sinks=ONE_SINK, run_links=LINKS, judgement=judgement)
    return [(n.action, n.key, n.sink) for n in due], record(
        firing, state, now, outcomes=[Outcome(n) for n in due], sinks=ONE_SINK, judgement=judgement
    )


def on(captured_minutes: float, keys: Collection[str] = ("under_replicated",), only: bool = True) -> Judgement:
    """A run that judged `keys` on a batch captured at T0 + `captured_minutes` (only them, when `only`)."""
    at = T0 + timedelta(minutes=captured_minutes)
    return Judgement(
        scope=(lambda key: key in keys) if only else None,
        evidence=lambda key: at if key in keys else None,
        named=frozenset(keys),
    )


def test_a_late_run_on_older_evidence_neither_repages_nor_resolves() -> None:
    """The snapshot path sees the broker die (capture 10) and come back (capture 12); the analysis of the
    capture-10 snapshot, finishing after both, must not page again; and the other way round, an
    analysis of a capture from before the death must not resolve what a newer snapshot paged."""
    alert = broker_down()
    sent, state = judged_run([alert], empty(), 10, on(10))
    assert sent == [("open", "under_replicated", "log")]
    sent, state = judged_run([], state, 12, on(12))
    assert sent == [("resolve", "under_replicated", "log")]
    sent, state = judged_run([alert], state, 15, on(10, only=False))  # the late analysis
    assert (sent, state.incidents) == ([], {})
    assert state.evidence["under_replicated"] == T0 + timedelta(minutes=12)

    sent, state = judged_run([alert], empty(), 20, on(20))
    sent, state = judged_run([], state, 22, on(18, only=False))  # an analysis of an older, healthy capture
    assert sent == [] and "under_replicated" in state.incidents
    sent, state = judged_run([], state, 25, on(21, only=False))  # newer evidence: resolved
    assert sent == [("resolve", "under_replicated", "log")]


def test_keys_outside_a_runs_scope_are_held() -> None:
    """A run that judges only its own keys leaves every other incident open, unreminded."""
    sent, state = run([broker_down(), lagging_group()], empty(), 0)
    assert len(sent) == 2
    sent, state = judged_run([], state, 120, on(119))  # judges under_replicated only
    assert sent == [("resolve", "under_replicated", "log")]
    assert list(state.incidents) == [lagging_group().key]


def test_a_named_key_keeps_its_evidence_without_an_incident_for_a_day() -> None:
    """A key judged clear is remembered (so a late run cannot open it on older evidence), then forgotten."""
    _, state = judged_run([], empty(), 10, on(10))
    assert state.evidence == {"under_replicated": T0 + timedelta(minutes=10)}
    sent, state = judged_run([broker_down()], state, 11, on(9, only=False))
    assert sent == [] and state.incidents == {}
    _, state = judged_run([], state, 10 + 60 * 24 + 1, on(1000, keys=("other",)))
    assert "under_replicated" not in state.evidence
