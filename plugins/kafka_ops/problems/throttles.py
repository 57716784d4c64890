"""Replication throttles set with nothing moving through them (`idle_throttles`). Report only."""

from __future__ import annotations

from kafka_ops.problems.problem import FindingsRows, Problem, since
from kafka_ops.problems.words import plural

IDLE = "idle_throttles"


def problems(findings: FindingsRows) -> list[Problem]:
    """One problem, every entity named."""
    rows = sorted(findings.rows("idle_throttles") or [], key=lambda r: (r["entity_type"], r["entity_name"]))
    if not rows:
        return []
    names = ", ".join(f"{r['entity_type']} {r['entity_name']}" for r in rows[:5])
    extra = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    return [
        Problem(
            "warning",
            f"replication throttle set with nothing moving on {plural(len(rows), 'entity', 'entities')}",
            f"{names}{extra}: they cap the next move, or a replica catching up, at the throttled rate",
            f"remove them: {rows[0]['command']} (one command per entity in idle_throttles); a kafka-ops plan's "
            "leftovers: kafka-ops remediation clear-throttles --cluster C --plan-id P",
            since([], findings),
            "idle_throttles",
            IDLE,
            tuple(rows),
        )
    ]
