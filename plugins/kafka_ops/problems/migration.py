"""A ZooKeeper-to-KRaft migration (`migration_health`): its phase when stalled or finalized, and the
partition fields its two views disagree on. The detector writes each row's `problem` and `action`.

Gates: `migration_dual_write_runs`, `migration_not_stalled`, `migration_views_agree`,
`snapshots_read_live_metadata`. Report: one problem per stalled or finalized phase, one for every
diverging field together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_ops.problems.problem import FindingsRows, Problem, Row, since
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
_PHASE_TITLES = {
    "pre_migration": "the migration to KRaft is stalled: the controllers still wait for brokers",
    "dual_write": "the migration to KRaft stopped writing to ZooKeeper",
    "post_migration": "the migration to KRaft is finalized, but this cluster is still read from ZooKeeper",
}


def gate(name: str) -> Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]:
    """The composer of migration gate `name` over its failing rows (the gate frame names each row's
    `subject` and its start `since`)."""

    def compose(rows: list[Row], findings: FindingsRows, params: Mapping[str, float]) -> Problem:
        rows = sorted(rows, key=lambda r: r["subject"])
        cause = "; ".join(str(r["problem"]) for r in rows[:3]) + more(len(rows), 3, "partition fields")
        action = next((str(r["action"]) for r in rows if r.get("action")), "check the migration's controllers")
        severity = "critical" if name == DUAL_WRITE else "warning"
        starts = (r.get("since") for r in rows)
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
    rows = [r for r in findings.rows("migration_health") or [] if r["severity"] != "ok"]
    phase = [r for r in rows if r["kind"] == "phase"]
    fields = sorted((r for r in rows if r["kind"] == "divergence"), key=lambda r: (r["topic"], r["partition"] or -1))
    found = [
        Problem(
            r["severity"],
            _PHASE_TITLES[r["phase"]],
            r["problem"],
            r["action"],
            since([r.get("phase_since")], findings),
            "migration_health",
            f"migration_{r['phase']}",
            (r,),
        )
        for r in phase
    ]
    if fields:
        shown = "; ".join(str(r["problem"]) for r in fields[:5])
        extra = f" and {len(fields) - 5} more" if len(fields) > 5 else ""
        found.append(
            Problem(
                "warning",
                f"ZooKeeper and the KRaft metadata disagree on {plural(len(fields), 'partition field')} during the "
                "migration",
                shown + extra,
                fields[0]["action"],
                since((r["diverging_since"] for r in fields), findings),
                "migration_health",
                VIEWS_AGREE,
                tuple(fields),
            )
        )
    return found
