"""`EmailNotifier`: an e-mail through Airflow's SMTP provider (`SmtpHook` and its connection).

The SMTP server, credentials, TLS and sender come from the SMTP connection (`smtp_conn_id`,
the provider's own fields and extras: `from_email`, `disable_tls`, `disable_ssl`, `timeout`,
`retry_limit`, ...); this notifier adds only the recipients and the message. The message is
`multipart/alternative` with a plain-text part first and an HTML part second, so every mail
client shows one of them. The hook is built per message: an alert run sends a handful, and a
fresh connection cannot have gone stale.
"""

from __future__ import annotations

import html
import smtplib
import socket
from collections.abc import Sequence
from email.mime.text import MIMEText
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from kafka_ops.alerting import render
from kafka_ops.alerting.alert import Severity
from kafka_ops.alerting.connection_options import COMMON_EXTRAS, min_severity
from kafka_ops.alerting.incidents import Notification
from kafka_ops.alerting.notifier import Notifier
from kafka_ops.connection_fields import allowlisted_extras, text
from kafka_ops.errors import AlertDeliveryFailed, ConfigError

if TYPE_CHECKING:
    from airflow.providers.smtp.hooks.smtp import SmtpHook
    from airflow.sdk import Connection

SUBJECT_PREFIX = "[kafka-ops]"
DEFAULT_SMTP_CONN_ID = "smtp_default"
_UNREACHABLE = (
    ConnectionError,
    TimeoutError,
    socket.gaierror,
    smtplib.SMTPServerDisconnected,
    smtplib.SMTPConnectError,
)
OWN_EXTRAS = COMMON_EXTRAS | {"to", "subject_prefix"}
EMAIL_EXTRAS = OWN_EXTRAS | {"smtp_conn_id", "from_email"}
SMTP_PROVIDER_EXTRAS = frozenset(
    {
        "from_email", "timeout", "retry_limit", "disable_tls", "disable_ssl", "ssl_context", "subject_template",
        "html_content_template", "auth_type", "access_token", "client_id", "client_secret", "tenant_id", "scope",
    }
)  # fmt: skip
"""The SMTP provider's documented extras, accepted on an `smtp` connection that is its own SMTP server."""


class EmailNotifier(Notifier):
    kind = "email"

    def __init__(
        self,
        name: str,
        to: Sequence[str],
        *,
        smtp_conn_id: str = DEFAULT_SMTP_CONN_ID,
        from_email: str | None = None,
        min_severity: Severity = "warning",
        subject_prefix: str = SUBJECT_PREFIX,
    ) -> None:
        super().__init__(name, min_severity)
        recipients = tuple(to)
        if not recipients or any(not isinstance(r, str) or "@" not in r or r != r.strip() for r in recipients):
            raise ConfigError(f"email notifier {name!r}: 'to' must be a non-empty list of addresses, got {to!r}")
        self.to = recipients
        self.smtp_conn_id = smtp_conn_id
        self.from_email = from_email
        self.subject_prefix = subject_prefix

    def __repr__(self) -> str:
        return f"EmailNotifier(name={self.name!r}, to={list(self.to)!r}, smtp_conn_id={self.smtp_conn_id!r})"

    __str__ = __repr__

    def send(self, notification: Notification) -> None:
        from airflow.sdk.exceptions import AirflowException  # noqa: PLC0415 - Airflow only when mailing

        hook = _alternative_hook(self.smtp_conn_id, render.plain_text(notification))
        try:
            with hook:
                hook.send_email_smtp(
                    to=list(self.to),
                    subject=subject(notification, self.subject_prefix),
                    html_content=html_body(notification),
                    from_email=self.from_email,
                    mime_subtype="alternative",
                    custom_headers={"X-Kafka-Ops-Dedup-Key": notification.dedup_key},
                )
        except (AirflowException, OSError) as e:  # smtplib's errors are OSErrors
            raise AlertDeliveryFailed(
                f"email notifier {self.name!r} (SMTP connection {self.smtp_conn_id!r}): {type(e).__name__}: {e}",
                unavailable=isinstance(e, _UNREACHABLE),
            ) from e


def from_connection(conn: Connection) -> EmailNotifier:
    """An `email` connection (recipients; the SMTP server is another connection) or an `smtp`
    connection (the SMTP server itself, with the recipients in its extras).

    * extra `to` (required): a list of addresses, or one string with `,` or `;` between them;
    * extra `min_severity`, `subject_prefix` (default `[kafka-ops]`);
    * `email` only: extra `smtp_conn_id` (default `smtp_default`), `from_email` (default: the
      SMTP connection's);
    * `smtp` only: the SMTP provider's own extras (`from_email`, `disable_tls`, ...).
    Anything else is refused by name.
    """
    where = f"connection {conn.conn_id!r}"
    own_server = (conn.conn_type or "").lower() == "smtp"
    extra = allowlisted_extras(conn, where, (OWN_EXTRAS | SMTP_PROVIDER_EXTRAS) if own_server else EMAIL_EXTRAS)
    if "to" not in extra:
        raise ConfigError(f"{where}: extra 'to' is required: the list of addresses to mail")
    to = extra["to"]
    if isinstance(to, str):
        to = [a.strip() for a in to.replace(";", ",").split(",") if a.strip()]
    if not isinstance(to, list) or not all(isinstance(a, str) for a in to):
        raise ConfigError(f"{where}: extra 'to' must be a list of addresses, got {extra['to']!r}")
    smtp_conn_id = conn.conn_id if own_server else DEFAULT_SMTP_CONN_ID
    if not own_server and "smtp_conn_id" in extra:
        smtp_conn_id = text(extra, "smtp_conn_id", where)
    return EmailNotifier(
        conn.conn_id,
        to,
        smtp_conn_id=smtp_conn_id,
        from_email=None if own_server or "from_email" not in extra else text(extra, "from_email", where),
        min_severity=min_severity(extra, where),
        subject_prefix=text(extra, "subject_prefix", where) if "subject_prefix" in extra else SUBJECT_PREFIX,
    )


def subject(n: Notification, prefix: str = SUBJECT_PREFIX) -> str:
    """One header line, whatever the title holds."""
    return " ".join(f"{prefix} {render.headline(n)}".split())


def html_body(n: Notification) -> str:
    """The HTML part: the plain text's content, escaped, with the links clickable."""
    a = n.alert
    e = html.escape
    rows = [("Cluster", a.cluster), ("Problem", a.key)]
    if n.action == "resolve":
        rows.append(("Cleared", f"{render.when(n.at)}, after {render.duration(n.at - a.since)}"))
    else:
        severity = a.severity + (f" (escalated from {n.escalated_from})" if n.escalated_from else "")
        rows += [("Severity", severity), ("Since", render.since_text(n))]
        if n.reminder:
            rows.append(("Reminder", f"still firing, incident open since {render.when(n.opened_at)}"))
    parts = [f"<h2>{e(render.headline(n))}</h2>", "<table>"]
    parts += [f"<tr><th align='left'>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows]
    parts.append("</table>")
    if n.action != "resolve":
        if a.affected:
            parts.append(f"<p><b>{e(render.affected_heading(n))}</b></p><ul>")
            parts += [f"<li>{e(line)}</li>" for line in render.affected_lines(n)]
            parts.append("</ul>")
        if a.cause:
            parts.append(f"<p><b>Likely cause:</b> {e(a.cause)}</p>")
        if a.action:
            parts.append(f"<p><b>Suggested action:</b> {e(a.action)}</p>")
    links = [f"<a href='{e(url, quote=True)}'>{e(label)}</a>" for label, url in a.links.labelled()]
    if links:
        parts.append(f"<p>{' · '.join(links)}</p>")
    return "<html><body>" + "\n".join(parts) + "</body></html>"


def _alternative_hook(smtp_conn_id: str, plain_text: str) -> SmtpHook:
    hook = _hook_class()(smtp_conn_id=smtp_conn_id)
    hook.plain_text = plain_text
    return hook


@cache
def _hook_class() -> Any:
    """`SmtpHook` that adds the plain-text alternative before its HTML part.

    The provider builds `multipart/<mime_subtype>` with only an HTML part; overriding its message
    builder keeps everything else of the hook (connection, TLS, login, retries) as it is.
    """
    from airflow.providers.smtp.hooks.smtp import SmtpHook  # noqa: PLC0415 - Airflow only when mailing

    class _AlternativeSmtpHook(SmtpHook):
        plain_text = ""

        def _build_mime_message(self, *args: Any, **kwargs: Any) -> Any:
            msg, recipients = super()._build_mime_message(*args, **kwargs)
            parts = cast("list[Any]", msg.get_payload())  # multipart: its parts, HTML only so far
            parts.insert(0, MIMEText(self.plain_text, "plain", "utf-8"))
            return msg, recipients

    return _AlternativeSmtpHook
