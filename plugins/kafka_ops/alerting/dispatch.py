"""`dispatch`: one run's alerting for one cluster, from firing alerts to delivered messages.

Load the cluster's incident state, decide what is due (`incidents.decide`), deliver each
notification through its notifier, record what was delivered (`incidents.record`) and save the
state, whatever happened in between: the state is saved in a `finally`, so a crash halfway keeps
every delivery that did happen and repeats only the others.

The call must carry *every* alert of the cluster for this run, findings and pipeline failures
alike: a key that is absent is taken as cleared and resolved (unless a `blind` alert fires).
Runs for one cluster take turns (`IncidentStore.exclusive`, from loading the state to saving it), and
each says which keys it judges, on how recent evidence (`incidents.Judgement`): the snapshot DAG pages
a few keys from each snapshot as it lands, the analysis DAG judges the rest (and those again) later.

A notifier that is unavailable (network error, or still 429/5xx after its retries) is skipped
for the rest of the run, so a dead Slack costs one timeout, not one per incident; its pending
notifications are recorded as failed and retried next run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from kafka_ops.alerting.alert import Alert, Links, check_aware
from kafka_ops.alerting.incidents import (
    EVERYTHING,
    Action,
    ClusterState,
    Judgement,
    Notification,
    Outcome,
    decide,
    record,
)
from kafka_ops.alerting.notifier import Notifier
from kafka_ops.alerting.state_store import IncidentStore
from kafka_ops.errors import AlertDeliveryFailed, AlertError
from kafka_ops.owners import Owner, owner_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Failure:
    """One notification a notifier did not deliver (retried next run)."""

    key: str
    action: Action
    notifier: str
    error: str


@dataclass(frozen=True)
class DispatchReport:
    """What one dispatch did, as data (`to_dict()` for XCom). Keys, not alerts: the alerts' content
    is in the notifications and the findings are in the lake.

    * `opened` / `escalated` / `reminded` / `resolved`: keys whose notification reached at least
      one notifier;
    * `failed`: every failed delivery; `undelivered`: `action:key` that reached no notifier at all;
    * `silent`: firing keys with nothing due (within the reminder interval);
    * `held`: open incidents neither reminded nor resolved because a blind alert fired;
    * `silenced`: firing keys an active silence covers (recorded, not sent);
    * `open_incidents`: the keys still open after this run (including pending resolves);
    * `state_reset`: why the stored state was unreadable and set aside, if it was.
    """

    cluster: str
    at: datetime
    opened: tuple[str, ...] = ()
    escalated: tuple[str, ...] = ()
    reminded: tuple[str, ...] = ()
    resolved: tuple[str, ...] = ()
    failed: tuple[Failure, ...] = ()
    undelivered: tuple[str, ...] = ()
    silent: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    silenced: tuple[str, ...] = ()
    open_incidents: tuple[str, ...] = ()
    state_reset: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON's own types only (lists, times as ISO-8601 strings): Airflow's API and UI render a
        tuple in an XCom as `(a,b)`, its items unquoted, which no reader can parse back."""
        out = asdict(self)
        out["at"] = self.at.isoformat()
        return {k: _listed(v) for k, v in out.items()}


def _listed(value: Any) -> Any:
    return [_listed(v) for v in value] if isinstance(value, tuple) else value


def dispatch(
    cluster: str,
    alerts: Sequence[Alert],
    now: datetime,
    *,
    lake_root: str,
    notifiers: Sequence[Notifier],
    reminder: timedelta,
    run_links: Links | None = None,
    judgement: Judgement = EVERYTHING,
    owners: Sequence[Owner] = (),
) -> DispatchReport:
    """Send what is due for `cluster` at `now` (the run's time, not the wall clock) and return
    what was done. `run_links` go on resolve messages (the run that saw the problem clear);
    `judgement` says which keys this run judges, on how recent evidence (`incidents.Judgement`).
    An alert about one group, or about topics of one owner (`owners`, `kafka_ops.owners.owner_of`), goes
    to that owner's notifiers (those marked with its name) and says so; any other, and one whose owner
    has no notifier here, to the cluster's own (`owner` None).

    Raises `AlertDeliveryFailed` (carrying the report as `.report`) after saving the state when a
    notification that was due reached no notifier at all: the task fails, so Airflow's own
    failure alerting and retries take over. Partial failures only show in the report.
    """
    check_aware(now, "now")
    if not notifiers:
        raise AlertError(f"cluster {cluster!r}: no notifier configured, alerts would go nowhere")
    names = [n.name for n in notifiers]
    if len(set(names)) != len(names):
        raise AlertError(f"cluster {cluster!r}: notifier names must be unique, got {names}")
    store = IncidentStore(lake_root)
    sinks = {n.name: n.min_severity for n in notifiers}
    alerts, routes = _routed(alerts, notifiers, owners)
    outcomes: list[Outcome] = []
    with store.exclusive(cluster):
        state, reset = store.load(cluster)
        due = decide(
            alerts, state, now, reminder=reminder, sinks=sinks, run_links=run_links, judgement=judgement, routes=routes
        )
        # a resolve is rebuilt from the incident: it says whose it is by the sink it goes to
        owner_of_sink = {n.name: n.owner for n in notifiers}
        due = [replace(n, alert=replace(n.alert, owner=owner_of_sink[n.sink])) if n.action == "resolve" else n
               for n in due]  # fmt: skip
        try:
            _deliver(due, {n.name: n for n in notifiers}, outcomes)
        finally:
            after = store.save(
                record(alerts, state, now, outcomes=outcomes, sinks=sinks, judgement=judgement),
                # another run saved meanwhile (a lock object's lease ran out): this run's deliveries, on the latest
                merge=lambda latest: record(alerts, latest, now, outcomes=outcomes, sinks=sinks, judgement=judgement),
            )
    report = _report(cluster=cluster, now=now, alerts=alerts, before=state, after=after, outcomes=outcomes, reset=reset)
    log.info(
        "alerts for %s: opened %s, escalated %s, reminded %s, resolved %s, failed %d, silent %s, silenced %s, "
        "held %s",
        cluster, report.opened, report.escalated, report.reminded, report.resolved, len(report.failed),
        report.silent, report.silenced, report.held,
    )  # fmt: skip
    if report.undelivered:
        raise AlertDeliveryFailed(
            f"cluster {cluster!r}: no notifier delivered {list(report.undelivered)}: "
            + "; ".join(f.error for f in report.failed),
            report=report,
        )
    return report


def _routed(
    alerts: Sequence[Alert], notifiers: Sequence[Notifier], owners: Sequence[Owner]
) -> tuple[list[Alert], dict[str, frozenset[str]]]:
    """Each alert with the owner it goes to, and per key the sinks it goes to."""
    by_owner: dict[str | None, frozenset[str]] = {}
    for n in notifiers:
        by_owner[n.owner] = by_owner.get(n.owner, frozenset()) | {n.name}
    routed, routes = [], {}
    for alert in alerts:
        group = alert.details.get("group_id")
        owner = owner_of(owners, group=str(group) if group is not None else None, topics=alert.topics)
        name = owner.name if owner is not None and owner.name in by_owner else None
        routed.append(replace(alert, owner=name))
        routes[alert.key] = by_owner.get(name, frozenset())
    return routed, routes


def _deliver(due: Sequence[Notification], notifiers: dict[str, Notifier], outcomes: list[Outcome]) -> None:
    down: dict[str, str] = {}
    for notification in due:
        name = notification.sink
        if name in down:
            outcomes.append(Outcome(notification, f"skipped: {down[name]}"))
            continue
        try:
            notifiers[name].send(notification)
        except AlertDeliveryFailed as e:
            log.error("alert %s %s via %s failed: %s", notification.action, notification.key, name, e)
            outcomes.append(Outcome(notification, str(e)))
            if e.unavailable:
                down[name] = str(e)
            continue
        log.info(
            "alert %s %s (%s) sent via %s", notification.action, notification.key, notification.alert.severity, name
        )
        outcomes.append(Outcome(notification))


def _report(
    *,
    cluster: str,
    now: datetime,
    alerts: Sequence[Alert],
    before: ClusterState,
    after: ClusterState,
    outcomes: Sequence[Outcome],
    reset: str | None,
) -> DispatchReport:
    delivered: dict[str, set[str]] = {"open": set(), "escalate": set(), "remind": set(), "resolve": set()}
    attempted: set[tuple[str, str]] = set()
    for o in outcomes:
        n = o.notification
        label = "escalate" if n.escalated_from else n.action
        attempted.add((label, n.key))
        if o.delivered:
            delivered[label].add(n.key)
    silenced = {a.key for a in alerts if before.silence_of(a, now) is not None}
    firing = {a.key for a in alerts}
    blind = any(a.blind for a in alerts)
    return DispatchReport(
        cluster=cluster,
        at=now,
        opened=tuple(sorted(delivered["open"])),
        escalated=tuple(sorted(delivered["escalate"])),
        reminded=tuple(sorted(delivered["remind"])),
        resolved=tuple(sorted(delivered["resolve"])),
        failed=tuple(
            Failure(o.notification.key, o.notification.action, o.notification.sink, o.error or "")
            for o in outcomes
            if not o.delivered
        ),
        undelivered=tuple(sorted(f"{label}:{key}" for label, key in attempted if key not in delivered[label])),
        silent=tuple(sorted(firing - silenced - {key for _, key in attempted})),
        silenced=tuple(sorted(silenced)),
        held=tuple(sorted(set(before.incidents) - firing)) if blind else (),
        open_incidents=tuple(sorted(after.incidents)),
        state_reset=reset,
    )
