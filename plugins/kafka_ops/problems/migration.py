"""A ZooKeeper-to-KRaft migration (`migration_health`): its phase when stalled or finalized, and the
partition fields its two views disagree on. The detector writes each row's `problem` and `action`.

Gates and report: `migration_dual_write_runs`, `migration_not_stalled`, `migration_views_agree`,
`snapshots_read_live_metadata`, one problem each over the rows `FAILS` picks (the gate frame's check
columns use the same predicates).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from kafka_ops.problems.problem import FindingsRows, Problem, Row, gate_problems, since
from kafka_ops.problems.words import more, plural

DUAL_WRITE = "migration_dual_write_runs"
NOT_STALLED = "migration_not_stalled"
VIEWS_AGREE = "migration_views_agree"
READ_LIVE = "snapshots_read_live_metadata"
_GATE_TITLES: dict[str, Callable[[int], str]] = {
    DUAL_WRITE: lambda n: "the ZooKeeper-to-KRaft migration stopped writing to ZooKeeper",
    NOT_STALLED: lambda n: "the ZooKeeper-to-KRaft migration is stalled: controllers still wait for brokers",
    VIEWS_AGREE: lambda n: (
        f"ZooKeeper and the KRaft metadata disagree on {plural(n, 'partition field')} during the migration"
    ),
    READ_LIVE: lambda n: "the migration is finalized but kafka-ops still reads the cluster from ZooKeeper",
}
FAILS: dict[str, Callable[[Row], bool]] = {
    DUAL_WRITE: lambda r: r["kind"] == "phase" and r["status"] == "stalled" and r["phase"] == "dual_write",
    NOT_STALLED: lambda r: r["kind"] == "phase" and r["status"] == "stalled" and r["phase"] == "pre_migration",
    VIEWS_AGREE: lambda r: r["status"] == "diverged",
    READ_LIVE: lambda r: r["status"] == "finalized",
}
"""Which `migration_health` rows fail each gate."""


def gate(name: str) -> Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]:
    """The composer of migration gate `name` over its failing `migration_health` rows."""

    def compose(rows: list[Row], findings: FindingsRows, params: Mapping[str, float]) -> Problem:
        rows = sorted(rows, key=lambda r: r.get("subject") or subject(r))
        cause = "; ".join(str(r["problem"]) for r in rows[:3]) + more(len(rows), 3, "partition fields")
        action = next((str(r["action"]) for r in rows if r.get("action")), "check the migration's controllers")
        severity = "critical" if name == DUAL_WRITE else "warning"
        starts = (r.get("since") or started(r) for r in rows)
        return Problem(
            severity,
            _GATE_TITLES[name](len(rows)),
            cause,
            action,
            since(starts, findings),
            "migration_health",
            name,
            tuple(rows),
        )

    return compose


def problems(findings: FindingsRows) -> list[Problem]:
    """The migration gates' problems, as the page says them, over the rows each gate fails."""
    return gate_problems(findings.rows("migration_health") or [], findings, FAILS, gate)


def subject(r: Row) -> str:
    """What a `migration_health` row is about: `phase`, or the diverging field (`orders-1 isr`)."""
    if r["kind"] == "phase":
        return "phase"
    where = r["topic"] + ("" if r["partition"] is None else f"-{r['partition']}")
    return f"{where} {r['field']}" if r.get("field") else where


def started(r: Row) -> datetime | None:
    """When a `migration_health` row's state began: its divergence, else its phase."""
    return r.get("diverging_since") or r.get("phase_since")
