"""Wording shared by every notifier, so Slack, PagerDuty, e-mail and the log say the same thing.

A message answers, in this order: which cluster, what is wrong and how bad, since when, where
(the top affected items), the likely cause, what to do, and where to look next.
"""

from __future__ import annotations

from kafka_ops.alerting.incidents import Notification
from kafka_ops.problems.words import duration, when

MAX_AFFECTED_SHOWN = 10


def headline(n: Notification) -> str:
    """One line: `CRITICAL payments: 40 partitions under-replicated`, with the notification's kind."""
    a = n.alert
    if n.action == "resolve":
        return f"RESOLVED {a.cluster}: {a.title} (was {a.severity} for {duration(n.at - a.since)})"
    level = a.severity.upper()
    if n.escalated_from:
        level += f" (was {n.escalated_from})"
    prefix = "REMINDER " if n.reminder else ""
    return f"{prefix}{level} {a.cluster}: {a.title}"


def since_text(n: Notification) -> str:
    """`2024-05-01 10:00:00 UTC (35 min ago)`."""
    return f"{when(n.alert.since)} ({duration(n.at - n.alert.since)} ago)"


def owner_text(n: Notification) -> str:
    """Whose page it is: `payments (owns orders)`, or the cluster's on-call."""
    a = n.alert
    if a.owner is None:
        return f"{a.cluster}'s on-call (no owner of its topics or group)"
    subject = f"group {a.details['group_id']}" if "group_id" in a.details else ", ".join(a.topics)
    return f"{a.owner} (owns {subject})" if subject else a.owner


def affected_lines(n: Notification) -> list[str]:
    """`partition orders-3: isr [1]` per shown item, then `... and 37 more`."""
    a = n.alert
    shown = a.affected[:MAX_AFFECTED_SHOWN]
    lines = [f"{item.kind} {item.text}" for item in shown]
    hidden = (a.affected_total or 0) - len(shown)
    if hidden > 0:
        lines.append(f"... and {hidden} more")
    return lines


def affected_heading(n: Notification) -> str:
    a = n.alert
    shown = min(len(a.affected), MAX_AFFECTED_SHOWN)
    total = a.affected_total or 0
    return f"Affected (top {shown} of {total})" if total > shown else "Affected"


def plain_text(n: Notification) -> str:
    """The whole message as plain text (e-mail body, log line, Slack fallback)."""
    a = n.alert
    lines = [headline(n), ""]
    if n.action == "resolve":
        lines += [
            f"Cluster:  {a.cluster}",
            f"Problem:  {a.key}",
            f"Cleared:  {when(n.at)}, after {duration(n.at - a.since)} (since {when(a.since)})",
        ]
    else:
        lines += [
            f"Cluster:  {a.cluster}",
            f"Severity: {a.severity}" + (f" (escalated from {n.escalated_from})" if n.escalated_from else ""),
            f"Since:    {since_text(n)}",
            f"Problem:  {a.key}",
            f"Owner:    {owner_text(n)}",
        ]
        if n.reminder:
            lines.append(f"Reminder: still firing, incident open since {when(n.opened_at)}")
        if a.affected:
            lines += ["", affected_heading(n) + ":"] + [f"  - {line}" for line in affected_lines(n)]
        if a.cause:
            lines += ["", f"Likely cause: {a.cause}"]
        if a.action:
            lines += [f"Suggested action: {a.action}"]
    links = list(a.links.labelled())
    if links:
        lines += ["", "Links:"] + [f"  {label}: {url}" for label, url in links]
    return "\n".join(lines)
