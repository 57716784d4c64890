"""The controller (`controller_health`, `controller_changes`): none active, partitions written by a
zombie controller, churn.

Gate: `controller_elections_within_threshold` (churn). Report: all three.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from kafka_ops.problems.problem import FindingsRows, Problem, Row, since
from kafka_ops.problems.words import plural

CHURN = "controller_elections_within_threshold"
NO_CONTROLLER = "no_controller"
ZOMBIE = "zombie_controller"
CHURN_ACTION = (
    "check the ZooKeeper ensemble (latency, session expirations) and the controller broker's GC and "
    "network; hold off remediation until the controller is stable"
)


def churn(rows: list[Row], findings: FindingsRows, params: Mapping[str, float] | None = None) -> Problem:
    """Too many controller elections in the last hour (`rows`: the one `controller_health` row);
    `params["controller_elections_per_hour"]`, when given, is the threshold the gate applied."""
    row = rows[0]
    elections = int(row["elections_last_hour"] or 0)
    threshold = (params or {}).get("controller_elections_per_hour")
    cause = f"{elections} controller elections in the last hour" + (
        f" (threshold {threshold:g})" if threshold is not None else ""
    )
    cause += f"; the controller is now broker {row['controller_id']} at epoch {row['controller_epoch']}"
    return Problem(
        "warning",
        f"controller churn: {plural(elections, 'election')} in the last hour",
        cause,
        CHURN_ACTION,
        since([_first_election_of_the_hour(findings) or row.get("last_change_at")], findings),
        "controller_health",
        CHURN,
        tuple(rows),
    )


def _first_election_of_the_hour(findings: FindingsRows) -> datetime | None:
    """The earliest `controller_changes` row with elections within the hour before the capture."""
    hour_ago = findings.captured_at - timedelta(hours=1)
    times = [
        c["observed_at"]
        for c in findings.rows("controller_changes") or []
        if c["elections"] and c["observed_at"] is not None and c["observed_at"] > hour_ago
    ]
    return min(times) if times else None


def problems(findings: FindingsRows) -> list[Problem]:
    out = []
    for r in findings.rows("controller_health") or []:
        started = since([r.get("last_change_at")], findings)
        if r["no_controller"]:
            out.append(
                Problem(
                    severity="critical",
                    title="No active controller",
                    cause="no broker holds /controller, so no partition can get a new leader",
                    action="check the ZooKeeper ensemble and the brokers' controller logs (session expirations)",
                    since=started,
                    source="controller_health",
                    key=NO_CONTROLLER,
                )
            )
        if r["zombie_partitions"]:
            out.append(
                Problem(
                    severity="critical",
                    title=f"{plural(r['zombie_partitions'], 'partition')} written by a zombie controller",
                    cause=f"their state carries a controller epoch above the current {r['controller_epoch']}",
                    action="find the broker that still acts as controller (controller logs) and restart it",
                    since=started,
                    source="controller_health",
                    key=ZOMBIE,
                )
            )
        if r["churn"]:
            out.append(churn([r], findings))
    return out
