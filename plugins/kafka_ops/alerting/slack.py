"""`SlackNotifier`: a message to a channel through a Slack incoming webhook.

The body is Slack's documented incoming-webhook format: `text` (the plain fallback shown in
notifications and to clients without Block Kit) plus `blocks`: a `header` (plain text, at most
150 characters), `section`s in `mrkdwn` (at most 3000 characters each, `fields` at most 10 of
2000) and a `context` block with the links. Text from the cluster (topic and group names, error
messages) is escaped for mrkdwn (`&`, `<`, `>`), so a group named `<!channel>` cannot ping anyone.
Slack answers 200 `ok`; 429 and 5xx are retried, anything else (`invalid_payload`,
`no_service`, `channel_is_archived`) fails at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_ops.alerting import render
from kafka_ops.alerting.alert import Severity
from kafka_ops.alerting.connection_options import HTTP_EXTRAS, http_policy, min_severity, register_secret
from kafka_ops.alerting.incidents import Notification
from kafka_ops.alerting.notifier import Notifier
from kafka_ops.alerting.webhook import HttpPolicy, check_url, masked_url, post_json, url_secrets
from kafka_ops.connection_fields import allowlisted_extras
from kafka_ops.errors import ConfigError

if TYPE_CHECKING:
    from airflow.sdk import Connection

DEFAULT_ENDPOINT = "hooks.slack.com/services"

MAX_HEADER = 150
MAX_SECTION = 3000
MAX_FIELD = 2000
_ICON = {"critical": ":red_circle:", "warning": ":large_orange_circle:", "resolve": ":large_green_circle:"}


class SlackNotifier(Notifier):
    kind = "slack"

    def __init__(
        self, name: str, webhook_url: str, *, min_severity: Severity = "warning", policy: HttpPolicy | None = None
    ) -> None:
        super().__init__(name, min_severity)
        self._url = check_url(webhook_url, f"slack notifier {name!r}", url_secrets(webhook_url))
        self.policy = policy or HttpPolicy()

    def __repr__(self) -> str:
        return f"SlackNotifier(name={self.name!r}, url={masked_url(self._url)!r}, min_severity={self.min_severity!r})"

    __str__ = __repr__

    def send(self, notification: Notification) -> None:
        post_json(
            self._url,
            payload(notification),
            who=f"slack notifier {self.name!r}",
            secrets=url_secrets(self._url),
            policy=self.policy,
            ok=(200,),
        )


def from_connection(conn: Connection) -> SlackNotifier:
    """A `slack_webhook` (or `http`) connection, read as Airflow's Slack provider documents it.

    * password: the whole webhook URL (`https://hooks.slack.com/services/T…/B…/…`), or only its
      path (`T…/B…/…`), which is then appended to host (default `hooks.slack.com/services`)
      with the connection's schema (default `https`);
    * or, with no password, host holding the whole URL;
    * extra: `min_severity`, `timeout`, `attempts`, `backoff_s` (anything else is refused).
    """
    where = f"connection {conn.conn_id!r}"
    extra = allowlisted_extras(conn, where, HTTP_EXTRAS)
    url = _webhook_url(conn, where)
    register_secret(url)
    return SlackNotifier(conn.conn_id, url, min_severity=min_severity(extra, where), policy=http_policy(extra, where))


def _webhook_url(conn: Connection, where: str) -> str:
    password = (conn.password or "").strip()
    host = (conn.host or "").strip()
    if password.startswith(("http://", "https://")):
        return password
    if password:
        base = host or DEFAULT_ENDPOINT
        if "://" in base and not base.startswith(("http://", "https://")):
            raise ConfigError(f"{where}: 'host' {base!r} is not an http(s) endpoint")
        if not base.startswith(("http://", "https://")):
            port = f":{conn.port}" if conn.port and host else ""
            base = f"{(conn.schema or 'https').strip()}://{base.rstrip('/')}{port}"
        return f"{base.rstrip('/')}/{password.lstrip('/')}"
    if host.startswith(("http://", "https://")):
        return host
    raise ConfigError(
        f"{where}: no Slack webhook: set 'password' to the webhook URL (or its T…/B…/… path), "
        "or 'host' to the whole URL"
    )


def payload(n: Notification) -> dict[str, Any]:
    """The incoming-webhook JSON body for `n` (see the module docstring)."""
    return {"text": escape(render.headline(n)), "blocks": blocks(n)}


def blocks(n: Notification) -> list[dict[str, Any]]:
    a = n.alert
    icon = _ICON["resolve" if n.action == "resolve" else a.severity]
    out: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(render.headline(n), MAX_HEADER), "emoji": True}}
    ]
    if n.action == "resolve":
        out.append(_section(f"{icon} *Cleared* at {render.when(n.at)} after {render.duration(n.at - a.since)}"))
        # the incident's identity, as its open carried it: its title may have changed since
        out.append({"type": "section", "fields": [_field("Cluster", a.cluster), _field("Problem", a.key)]})
    else:
        out.append(
            {
                "type": "section",
                "fields": [
                    _field("Cluster", a.cluster),
                    _field(
                        "Severity", f"{icon} {a.severity}" + (f" (was {n.escalated_from})" if n.escalated_from else "")
                    ),
                    _field("Since", render.since_text(n)),
                    _field("Problem", a.key),
                    _field("Owner", render.owner_text(n)),
                ],
            }
        )
        if n.reminder:
            out.append(_section(f":bell: *Reminder*: still firing, incident open since {render.when(n.opened_at)}"))
        if a.affected:
            items = "\n".join(f"• {escape(line)}" for line in render.affected_lines(n))
            out.append(_section(f"*{render.affected_heading(n)}*\n{items}"))
        if a.cause or a.action:
            lines = ([f"*Likely cause:* {escape(a.cause)}"] if a.cause else []) + (
                [f"*Suggested action:* {escape(a.action)}"] if a.action else []
            )
            out.append(_section("\n".join(lines)))
    links = [f"<{url}|{escape(label)}>" for label, url in a.links.labelled()]
    if links:
        out.append({"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(links)}]})
    return out


def escape(text: str) -> str:
    """Slack's mrkdwn control characters, as its docs require."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _cut(mrkdwn, MAX_SECTION)}}


def _field(label: str, value: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": _cut(f"*{label}*\n{escape(value)}", MAX_FIELD)}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
