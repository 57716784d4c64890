"""The incident state machine: which alerts are sent, to which notifier, and when (pure functions).

Burrow's send-once / send-close behaviour, per (cluster, key) and per notifier (sink):

* OPEN: a key fires and the sink was never told about it (a new incident, or a sink whose
  earlier delivery failed, or a sink that does not take warnings and the alert just became
  critical) → trigger.
* OPEN, escalated: the key fires at a higher severity than the sink last heard (warning →
  critical) → trigger again at once, marked with `escalated_from`.
* REMIND: the key still fires and `reminder` has elapsed since the sink's last successful
  notification → re-send, marked as a reminder.
* RESOLVE: an open key no longer fires → a resolve to every sink that was told it opened.
* Otherwise nothing: a key firing within the interval is silent, and a de-escalation (critical →
  warning) is silent too (the next reminder carries the new severity).

A key that an active silence covers (`kafka_ops.silences`, kept in the cluster's state) is neither
opened, reminded nor escalated: it is recorded as an incident marked with the silence (`silenced`), and
pages on the first run after the silence ends if it still fires then (its sinks never heard it); a
resolve still goes to the sinks that heard it open before the silence began.

While a `blind` alert fires (the run could not look at the cluster, `alert.cannot_see_cluster`),
incidents that are not firing are held: neither reminded nor resolved, since "not seen" is not
"cleared".

Two paths judge some keys: the snapshot DAG pages from each snapshot as it lands
(`validation.snapshot_checks`), and the analysis DAG judges the same keys later, from the findings of
a snapshot that may be older by then. A run says what it judged (`Judgement`): the keys in its scope
(incidents outside it are held, as while blind) and, per key, the capture time of the batch it judged
the key on. The newest evidence wins: a run whose evidence for a key is older than evidence another
run already judged it on neither opens, reminds nor resolves it (the state keeps each key's newest
evidence time for a day, `EVIDENCE_KEPT`, resolved or not), so an analysis finishing late never
re-pages a broker the newer snapshot saw back, nor resolves one the newer snapshot saw die.

A sink counts as notified only once its delivery succeeded (`record`); a failed delivery is
recorded with its error and decided again on the next run, so a failing notifier delays a
message but never loses it. An incident is forgotten once every sink that heard it opened has
heard it resolved; one whose open never reached any sink is forgotten silently when it clears.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Literal

from kafka_ops.alerting.alert import Alert, Links, Severity, check_aware, rank
from kafka_ops.errors import AlertError
from kafka_ops.silences import Silence, kept, silencing

Action = Literal["open", "remind", "resolve"]
DEDUP_PREFIX = "kafka-ops"
MAX_DEDUP_CHARS = 255  # PagerDuty's limit on dedup_key
MAX_ERROR_CHARS = 500
EVIDENCE_KEPT = timedelta(days=1)
"""How long a key's newest evidence time is kept after its last judgement (far longer than an analysis lags)."""


def dedup_key(cluster: str, key: str) -> str:
    """`kafka-ops/<cluster>/<key>`: the same for a trigger, its reminders and its resolve.

    A key too long for PagerDuty's 255 characters keeps its head and gets a hash of the whole, so
    it stays stable and distinct.
    """
    full = f"{DEDUP_PREFIX}/{cluster}/{key}"
    if len(full) <= MAX_DEDUP_CHARS:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:16]
    return f"{full[: MAX_DEDUP_CHARS - len(digest) - 1]}#{digest}"


@dataclass(frozen=True)
class SinkState:
    """What one sink (notifier) last heard of an incident."""

    notified_at: datetime | None = None
    """Last successful open or reminder; None while the sink has not heard the incident opened."""
    severity: Severity | None = None
    """The severity of that delivery (an escalation above it is sent at once)."""
    failures: int = 0
    """Failed deliveries in a row (open, reminder or resolve); reset by a success."""
    last_error: str | None = None


@dataclass(frozen=True)
class Incident:
    """One open (cluster, key). `cleared_at` is set once the key stopped firing while resolves
    to some sinks are still pending."""

    key: str
    severity: Severity
    title: str
    since: datetime
    opened_at: datetime
    cleared_at: datetime | None = None
    sinks: Mapping[str, SinkState] = field(default_factory=dict)
    silenced: str | None = None
    """While an active silence covers it when last judged: the silence's one-line description."""


@dataclass(frozen=True)
class ClusterState:
    """Every incident of one cluster, by key: what `IncidentStore` keeps as one JSON document."""

    cluster: str
    incidents: Mapping[str, Incident] = field(default_factory=dict)
    evidence: Mapping[str, datetime] = field(default_factory=dict)
    """Per key, the capture time of the newest batch a run judged it on (firing or clear)."""
    silences: tuple[Silence, ...] = ()
    """The cluster's silences (active, future, and those ended within `silences.KEPT_AFTER_END`)."""

    def silence_of(self, alert: Alert, at: datetime) -> Silence | None:
        """The active silence covering `alert` at `at`, if any."""
        return silencing(self.silences, at, alert.key, **alert.about)


@dataclass(frozen=True)
class Judgement:
    """What one run looked at: the keys it judges (`scope`, None: every key), and per key the capture
    time of the batch it judged the key on (`evidence`, None: now, never older than another run's);
    `named` are keys it judged by name, firing or clear, whose evidence time the state keeps even
    when no incident is open (a later run on older evidence then cannot open them)."""

    scope: Callable[[str], bool] | None = None
    evidence: Callable[[str], datetime | None] = field(default=lambda _key: None)
    named: frozenset[str] = frozenset()

    def judges(self, key: str, state: ClusterState) -> bool:
        """In scope, and not on older evidence than the state already holds for `key`."""
        if self.scope is not None and not self.scope(key):
            return False
        seen, newest = self.evidence(key), state.evidence.get(key)
        return seen is None or newest is None or seen >= newest


EVERYTHING = Judgement()


@dataclass(frozen=True)
class Notification:
    """One message for one sink. For a resolve, `alert` is rebuilt from the incident (title,
    severity, since) with the run's links; `at` is the run's time."""

    action: Action
    sink: str
    alert: Alert
    at: datetime
    opened_at: datetime
    escalated_from: Severity | None = None

    @property
    def cluster(self) -> str:
        return self.alert.cluster

    @property
    def key(self) -> str:
        return self.alert.key

    @property
    def reminder(self) -> bool:
        return self.action == "remind"

    @property
    def dedup_key(self) -> str:
        return dedup_key(self.alert.cluster, self.alert.key)


@dataclass(frozen=True)
class Outcome:
    """A delivery attempt: `error` is None when the sink accepted the notification."""

    notification: Notification
    error: str | None = None

    @property
    def delivered(self) -> bool:
        return self.error is None


def decide(
    firing: Sequence[Alert],
    state: ClusterState,
    now: datetime,
    *,
    reminder: timedelta,
    sinks: Mapping[str, Severity],
    run_links: Links | None = None,
    judgement: Judgement = EVERYTHING,
    routes: Mapping[str, frozenset[str]] | None = None,
) -> list[Notification]:
    """The notifications due at `now` (see the module docstring for the rules).

    `sinks` maps each configured notifier's name to the lowest severity it takes; `routes`, per alert
    key, the sinks its opens and reminders go to (a key it does not name: every sink). Resolves go to
    every sink that heard the incident. Order: opens (critical first), reminders, then resolves, each by
    key. Only keys the `judgement` judges are opened, reminded or resolved.
    """
    _check_inputs(firing, state, now, reminder)
    firing = [a for a in firing if judgement.judges(a.key, state)]
    firing_keys = {a.key for a in firing}
    blind = any(a.blind for a in firing)
    due: list[Notification] = []
    paging = [a for a in firing if state.silence_of(a, now) is None]  # a silenced key is neither sent nor resolved
    for alert in sorted(paging, key=lambda a: (-rank(a.severity), a.key)):
        incident = state.incidents.get(alert.key)
        opened_at = incident.opened_at if incident else now
        routed = (routes or {}).get(alert.key)
        for sink, floor in sinks.items():
            if rank(alert.severity) < rank(floor) or (routed is not None and sink not in routed):
                continue
            heard = incident.sinks.get(sink, SinkState()) if incident else SinkState()
            if heard.notified_at is None or heard.severity is None:
                due.append(Notification("open", sink, alert, now, opened_at))
            elif rank(alert.severity) > rank(heard.severity):
                due.append(Notification("open", sink, alert, now, opened_at, escalated_from=heard.severity))
            elif now - heard.notified_at >= reminder:
                due.append(Notification("remind", sink, alert, now, opened_at))
    if blind:
        return _ordered(due)
    for key, incident in sorted(state.incidents.items()):
        if key in firing_keys or not judgement.judges(key, state):
            continue
        cleared = _as_alert(state.cluster, incident, run_links or Links())
        for sink, heard in sorted(incident.sinks.items()):
            if heard.notified_at is not None and sink in sinks:
                due.append(Notification("resolve", sink, cleared, now, incident.opened_at))
    return _ordered(due)


def record(
    firing: Sequence[Alert],
    state: ClusterState,
    now: datetime,
    *,
    outcomes: Iterable[Outcome],
    sinks: Iterable[str],
    judgement: Judgement = EVERYTHING,
) -> ClusterState:
    """The state after this run's deliveries: `state` plus the firing alerts plus `outcomes`.

    Only delivered notifications mark a sink as notified (or resolved); a failed one is recorded
    with its error so `decide` repeats it next run. A notification that was decided but never
    attempted (the run crashed first) is simply absent from `outcomes` and is decided again.
    Sinks that are no longer configured are dropped: nothing can be sent to them. Keys the `judgement`
    does not judge stay as they were; those it judges keep its evidence time when newer.
    """
    candidates = set(state.incidents) | {a.key for a in firing} | judgement.named
    judged = {key for key in candidates if judgement.judges(key, state)}
    firing = [a for a in firing if a.key in judged]
    configured = set(sinks)
    by_key: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_key.setdefault(outcome.notification.key, []).append(outcome)
    firing_by_key = {a.key: a for a in firing}
    blind = any(a.blind for a in firing)
    incidents: dict[str, Incident] = {}
    for key in sorted(set(state.incidents) | set(firing_by_key)):
        old = state.incidents.get(key)
        heard = {s: h for s, h in (old.sinks.items() if old else ()) if s in configured}
        for outcome in by_key.get(key, ()):
            sink = outcome.notification.sink
            heard[sink] = _after(heard.get(sink, SinkState()), outcome)
            if outcome.notification.action == "resolve" and outcome.delivered:
                del heard[sink]
        alert = firing_by_key.get(key)
        if alert is not None:
            silence = state.silence_of(alert, now)
            incidents[key] = replace(_firing(alert, old, heard, now), silenced=silence.describe() if silence else None)
        elif old is not None and (blind or key not in judged):
            incidents[key] = replace(old, sinks=heard)
        elif old is not None:
            pending = {s: h for s, h in heard.items() if h.notified_at is not None}
            if pending:  # some resolves have not been delivered yet: keep them due
                incidents[key] = replace(old, cleared_at=old.cleared_at or now, sinks=pending)
    return ClusterState(state.cluster, incidents, _evidence(state, judged, judgement, now), kept(state.silences, now))


# -- helpers ---------------------------------------------------------------------------------------


def _evidence(state: ClusterState, judged: set[str], judgement: Judgement, now: datetime) -> dict[str, datetime]:
    """Each key's newest evidence time: this run's for the keys it judged on dated evidence, kept a day."""
    evidence = {k: at for k, at in state.evidence.items() if now - at <= EVIDENCE_KEPT or k in state.incidents}
    for key in judged:
        seen = judgement.evidence(key)
        if seen is not None and (key not in evidence or seen > evidence[key]):
            evidence[key] = seen
    return evidence


def _check_inputs(firing: Sequence[Alert], state: ClusterState, now: datetime, reminder: timedelta) -> None:
    check_aware(now, "now")
    if reminder <= timedelta(0):
        raise AlertError(f"the reminder interval must be positive, got {reminder}")
    seen: set[str] = set()
    for alert in firing:
        if alert.cluster != state.cluster:
            raise AlertError(f"alert {alert.key!r} is for cluster {alert.cluster!r}, not {state.cluster!r}")
        if alert.key in seen:
            raise AlertError(f"cluster {state.cluster!r}: two firing alerts share the key {alert.key!r}")
        seen.add(alert.key)


def _ordered(due: list[Notification]) -> list[Notification]:
    order = {"open": 0, "remind": 1, "resolve": 2}
    return sorted(due, key=lambda n: (order[n.action], -rank(n.alert.severity), n.key, n.sink))


def _after(heard: SinkState, outcome: Outcome) -> SinkState:
    if not outcome.delivered:
        error = (outcome.error or "failed")[:MAX_ERROR_CHARS]
        return replace(heard, failures=heard.failures + 1, last_error=error)
    n = outcome.notification
    if n.action == "resolve":
        return SinkState()
    return SinkState(notified_at=n.at, severity=n.alert.severity)


def _firing(alert: Alert, old: Incident | None, heard: dict[str, SinkState], now: datetime) -> Incident:
    if old is None:
        return Incident(alert.key, alert.severity, alert.title, alert.since, opened_at=now, sinks=heard)
    # firing again before every resolve was delivered: the incident simply stays open
    return Incident(
        alert.key,
        alert.severity,
        alert.title,
        since=min(old.since, alert.since),
        opened_at=old.opened_at,
        cleared_at=None,
        sinks=heard,
    )


def _as_alert(cluster: str, incident: Incident, links: Links) -> Alert:
    return Alert(
        cluster=cluster,
        key=incident.key,
        severity=incident.severity,
        title=incident.title,
        since=incident.since,
        links=links,
    )
