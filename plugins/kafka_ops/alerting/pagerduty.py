"""`PagerDutyNotifier`: PagerDuty Events API v2 (`POST https://events.pagerduty.com/v2/enqueue`).

Open and reminder → `event_action: trigger`; resolve → `event_action: resolve`. Both carry the
same `dedup_key` (`kafka-ops/<cluster>/<key>`), so PagerDuty folds a reminder into the open
alert and the resolve closes exactly that alert. A trigger carries `payload` with the required
`summary` (at most 1024 characters), `source` (the cluster), `severity` (`critical` or `warning`
here; the API also knows `error` and `info`) and, optionally, `timestamp` (ISO-8601),
`component`, `group`, `class` and `custom_details`, plus top-level `links` [{href, text}],
`client` and `client_url`. A resolve carries only `routing_key`, `event_action` and
`dedup_key`, as the API documents.

PagerDuty answers 202 with `{"status": "success", ...}`; 429 and 5xx are retried, a 400 (invalid
event) fails at once. The routing key is a credential: never in a repr, log line or error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_ops.alerting import render
from kafka_ops.alerting.alert import Severity
from kafka_ops.alerting.connection_options import HTTP_EXTRAS, http_policy, min_severity, register_secret
from kafka_ops.alerting.incidents import Notification
from kafka_ops.alerting.notifier import Notifier
from kafka_ops.alerting.webhook import HttpPolicy, check_url, post_json
from kafka_ops.connection_fields import allowlisted_extras
from kafka_ops.errors import ConfigError

if TYPE_CHECKING:
    from airflow.sdk import Connection

EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
MAX_SUMMARY = 1024
CLIENT = "kafka-ops"


class PagerDutyNotifier(Notifier):
    kind = "pagerduty"

    def __init__(
        self,
        name: str,
        routing_key: str,
        *,
        events_url: str = EVENTS_URL,
        min_severity: Severity = "warning",
        policy: HttpPolicy | None = None,
    ) -> None:
        super().__init__(name, min_severity)
        if not routing_key or routing_key != routing_key.strip() or any(c.isspace() for c in routing_key):
            raise ConfigError(f"pagerduty notifier {name!r}: the routing key is empty or contains blanks")
        self._routing_key = routing_key
        self.events_url = check_url(events_url, f"pagerduty notifier {name!r}", [routing_key])
        self.policy = policy or HttpPolicy()

    def __repr__(self) -> str:
        return (
            f"PagerDutyNotifier(name={self.name!r}, events_url={self.events_url!r}, routing_key='***', "
            f"min_severity={self.min_severity!r})"
        )

    __str__ = __repr__

    def send(self, notification: Notification) -> None:
        post_json(
            self.events_url,
            event(notification, self._routing_key),
            who=f"pagerduty notifier {self.name!r}",
            secrets=[self._routing_key],
            policy=self.policy,
            ok=(200, 202),
        )


def from_connection(conn: Connection) -> PagerDutyNotifier:
    """A `pagerduty` (or `pagerduty_events`) connection.

    * password: the integration's routing key (required);
    * host (optional): the Events API URL, or just its host (`events.eu.pagerduty.com` for the
      EU service region), completed with schema (default `https`), port and `/v2/enqueue`;
    * extra: `min_severity`, `timeout`, `attempts`, `backoff_s` (anything else is refused).
    """
    where = f"connection {conn.conn_id!r}"
    extra = allowlisted_extras(conn, where, HTTP_EXTRAS)
    routing_key = (conn.password or "").strip()
    if not routing_key:
        raise ConfigError(f"{where}: set 'password' to the PagerDuty integration's routing key")
    register_secret(routing_key)
    host = (conn.host or "").strip()
    if not host:
        url = EVENTS_URL
    elif host.startswith(("http://", "https://")):
        url = host
    else:
        port = f":{conn.port}" if conn.port else ""
        url = f"{(conn.schema or 'https').strip()}://{host.rstrip('/')}{port}/v2/enqueue"
    return PagerDutyNotifier(
        conn.conn_id,
        routing_key,
        events_url=url,
        min_severity=min_severity(extra, where),
        policy=http_policy(extra, where),
    )


def event(n: Notification, routing_key: str) -> dict[str, Any]:
    """The Events API v2 body for `n` (see the module docstring)."""
    if n.action == "resolve":
        return {"routing_key": routing_key, "event_action": "resolve", "dedup_key": n.dedup_key}
    a = n.alert
    body: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": "trigger",
        "dedup_key": n.dedup_key,
        "client": CLIENT,
        "payload": {
            "summary": _summary(n),
            "source": a.cluster,
            "severity": a.severity,
            "timestamp": n.at.isoformat(),
            "component": a.affected[0].kind if a.affected else "cluster",
            "group": a.cluster,
            "class": a.key.split(":", 1)[0],
            "custom_details": _details(n),
        },
    }
    links = [{"href": url, "text": label} for label, url in a.links.labelled()]
    if links:
        body["links"] = links
    if a.links.airflow_run:
        body["client_url"] = a.links.airflow_run
    return body


def _summary(n: Notification) -> str:
    a = n.alert
    text = f"[{a.cluster}] {a.title}" + (f": {a.cause}" if a.cause else "")
    if n.reminder:
        text = f"Reminder: {text}"
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 1] + "…"


def _details(n: Notification) -> dict[str, Any]:
    a = n.alert
    details: dict[str, Any] = {
        "cluster": a.cluster,
        "problem": a.key,
        "owner": render.owner_text(n),
        "severity": a.severity,
        "since": a.since.isoformat(),
        "since_text": render.since_text(n),
        "affected": render.affected_lines(n),
        "affected_total": a.affected_total,
        "likely_cause": a.cause or None,
        "suggested_action": a.action or None,
        "reminder": n.reminder,
        "escalated_from": n.escalated_from,
        "incident_opened_at": n.opened_at.isoformat(),
    }
    details.update({f"links.{label}": url for label, url in a.links.labelled()})
    if a.details:
        details["details"] = dict(a.details)
    return details
