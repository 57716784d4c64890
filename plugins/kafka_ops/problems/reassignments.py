"""Reassignments in flight or stuck (`reassignments_in_flight`). Report only (no gate pages for them)."""

from __future__ import annotations

from kafka_ops.problems.problem import FindingsRows, Problem, since
from kafka_ops.problems.words import examples, plural

STUCK = "reassignments_stuck"
IN_FLIGHT = "reassignments_in_flight"


def problems(findings: FindingsRows) -> list[Problem]:
    rows = findings.rows("reassignments_in_flight") or []
    stuck = [r for r in rows if r["stuck"]]
    if stuck:
        first = max(stuck, key=lambda r: r["age_seconds"] or 0.0)
        return [
            Problem(
                severity="warning",
                title=f"{plural(len(stuck), 'reassignment')} stuck",
                cause=f"{first['topic']}-{first['partition']}: {first['stuck_reason']}",
                action="check the replication throttles and the new replicas' brokers; cancel the plan if it "
                "cannot finish",
                since=since([first["first_seen"]], findings),
                source="reassignments_in_flight",
                key=STUCK,
                rows=tuple(stuck),
            )
        ]
    if rows:
        return [
            Problem(
                "info",
                f"{plural(len(rows), 'reassignment')} in flight",
                f"e.g. {examples(rows)}",
                None,
                since((r["first_seen"] for r in rows), findings),
                "reassignments_in_flight",
                IN_FLIGHT,
                tuple(rows),
            )
        ]
    return []
