"""`Notifier`: the one interface every alert sink implements (Slack, PagerDuty, e-mail, log).

A notifier turns a `Notification` into its service's message and delivers it, or raises
`AlertDeliveryFailed` naming itself and what went wrong. It never decides *whether* to send:
that is the incident state machine's job. Its `name` (the Airflow connection id, or `log`) is
how the incident state remembers what each sink has heard, so it must stay stable.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from kafka_ops.alerting.alert import SEVERITIES, Severity
from kafka_ops.alerting.incidents import Notification
from kafka_ops.errors import ConfigError


class Notifier(ABC):
    """Deliver notifications to one destination. `min_severity` = the lowest severity it takes
    (a pager usually takes only `critical`); resolves go to it whenever it heard the open."""

    kind: ClassVar[str]

    def __init__(self, name: str, min_severity: Severity = "warning") -> None:
        if not name or not name.strip():
            raise ConfigError(f"{self.kind} notifier: empty name")
        if min_severity not in SEVERITIES:
            raise ConfigError(f"{self.kind} notifier {name!r}: min_severity must be one of {list(SEVERITIES)}")
        self.name = name
        self.min_severity: Severity = min_severity
        self.owner: str | None = None
        """The owner (`[[owners]]`) whose pages it takes; None: one of the cluster's own sinks."""

    def __repr__(self) -> str:  # subclasses add only what is not secret
        return f"{type(self).__name__}(name={self.name!r}, min_severity={self.min_severity!r})"

    __str__ = __repr__

    @abstractmethod
    def send(self, notification: Notification) -> None:
        """Deliver it, or raise `AlertDeliveryFailed` (never a secret in the message)."""
