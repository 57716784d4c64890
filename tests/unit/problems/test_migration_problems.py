"""The health report's problems for a migration to KRaft: its phase when stalled or finalized, and the
partition fields its two views disagree on, as one problem."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kafka_ops.problems.registry import metadata_problems
from tests.unit.problems.tables import Tables

AT = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def divergence(topic: str, partition: int | None, minutes: int) -> dict[str, Any]:
    return {"kind": "divergence", "phase": "dual_write", "status": "diverged", "topic": topic, "partition": partition,
            "severity": "warning", "problem": f"{topic} diverges", "action": "do not finalize",
            "diverging_since": AT - timedelta(minutes=minutes)}  # fmt: skip


def test_a_stalled_phase_and_diverging_fields() -> None:
    phase = {"kind": "phase", "phase": "dual_write", "status": "stalled", "severity": "critical",
             "problem": "the KRaft controllers stopped writing", "action": "read the log",
             "phase_since": AT}  # fmt: skip
    problems = metadata_problems(
        Tables({"migration_health": [phase, divergence("b", 1, 15), divergence("a", None, 40)]})
    )
    assert [(p.severity, p.title, p.since) for p in problems] == [
        ("critical", "the ZooKeeper-to-KRaft migration stopped writing to ZooKeeper", AT),
        ("warning", "ZooKeeper and the KRaft metadata disagree on 2 partition fields during the migration",
         AT - timedelta(minutes=40)),
    ]  # fmt: skip
    assert problems[1].cause == "a diverges; b diverges" and problems[1].source == "migration_health"


def test_a_migration_in_progress_is_no_problem() -> None:
    ok = {"kind": "phase", "phase": "dual_write", "status": "ok", "severity": "ok", "problem": None, "action": None}
    assert metadata_problems(Tables({"migration_health": [ok]})) == []
