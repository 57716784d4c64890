"""Notifications as the state machine would hand them to a notifier."""

from __future__ import annotations

from datetime import timedelta

from kafka_ops.alerting.alert import Alert, Severity
from kafka_ops.alerting.incidents import Action, Notification
from tests.unit.alerting.alerts import T0, broker_down

AT = T0 + timedelta(minutes=35)


def notification(
    action: Action = "open",
    alert: Alert | None = None,
    escalated_from: Severity | None = None,
    sink: str = "sink",
) -> Notification:
    return Notification(action, sink, alert or broker_down(), AT, opened_at=T0, escalated_from=escalated_from)
