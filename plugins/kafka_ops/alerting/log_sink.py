"""`LogNotifier`: the default sink. Every notification goes to the Python log (so the Airflow task
log shows it) and, when a `path` is set, is appended to that file as one JSON line.

The file is local: JSON lines are appended, which object stores cannot do. Each line is written
with one `write` call on a file opened for appending, so concurrent writers interleave whole
lines on a local filesystem. Useful as an audit trail and in tests: one line per message sent.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_ops.alerting import render
from kafka_ops.alerting.alert import Severity
from kafka_ops.alerting.connection_options import COMMON_EXTRAS, min_severity
from kafka_ops.alerting.incidents import Notification
from kafka_ops.alerting.notifier import Notifier
from kafka_ops.connection_fields import allowlisted_extras, text
from kafka_ops.errors import AlertDeliveryFailed, ConfigError

if TYPE_CHECKING:
    from airflow.sdk import Connection

log = logging.getLogger(__name__)


class LogNotifier(Notifier):
    kind = "log"

    def __init__(
        self, name: str = "log", path: str | os.PathLike[str] | None = None, *, min_severity: Severity = "warning"
    ) -> None:
        super().__init__(name, min_severity)
        self.path = Path(path) if path is not None else None

    def __repr__(self) -> str:
        return f"LogNotifier(name={self.name!r}, path={str(self.path) if self.path else None!r})"

    __str__ = __repr__

    def send(self, notification: Notification) -> None:
        level = logging.INFO if notification.action == "resolve" else logging.WARNING
        log.log(level, "alert %s: %s", notification.action, render.plain_text(notification))
        if self.path is None:
            return
        line = json.dumps(record(notification), sort_keys=True) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line)
        except OSError as e:
            raise AlertDeliveryFailed(f"log notifier {self.name!r}: cannot append to {self.path}: {e.strerror}") from e


def from_connection(conn: Connection) -> LogNotifier:
    """A `kafka_ops_log` connection (extra `path` optional: without it, the Python log only) or
    Airflow's `fs` (File (path)) connection (extra `path` required); extra `min_severity` too."""
    where = f"connection {conn.conn_id!r}"
    extra = allowlisted_extras(conn, where, COMMON_EXTRAS | {"path"})
    if "path" not in extra and (conn.conn_type or "").lower() == "fs":
        raise ConfigError(f"{where}: extra 'path' is required: the file to append alerts to")
    path = text(extra, "path", where) if "path" in extra else None
    return LogNotifier(conn.conn_id, path, min_severity=min_severity(extra, where))


def record(n: Notification) -> dict[str, Any]:
    """One JSON line: `event` is open/remind/resolve; `action` is what the engineer should do."""
    a = n.alert
    return {
        "at": n.at.isoformat(),
        "event": n.action,
        "escalated_from": n.escalated_from,
        "cluster": a.cluster,
        "key": a.key,
        "dedup_key": n.dedup_key,
        "severity": a.severity,
        "title": a.title,
        "since": a.since.isoformat(),
        "opened_at": n.opened_at.isoformat(),
        "affected": [{"kind": i.kind, "text": i.text} for i in a.affected],
        "affected_total": a.affected_total,
        "cause": a.cause,
        "action": a.action,
        "links": {label: url for label, url in a.links.labelled()},
        "details": dict(a.details),
        "owner": a.owner,
        "topics": list(a.topics),
        "headline": render.headline(n),
    }
