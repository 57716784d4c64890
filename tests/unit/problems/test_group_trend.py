"""Where a group's lag is heading (`lag_time_groups`: lag_trend, lag_velocity, time_to_close_seconds), said
beside Burrow's status in the group's problem (page, report, digest), never instead of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from kafka_ops.problems.groups import group, problems, trend_text


@dataclass
class Findings:
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    captured_at: datetime = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def rows(self, table: str) -> list[dict[str, Any]] | None:
        return self.tables.get(table)


def behind(group_id: str, trend: str | None, velocity: float | None, closes: float | None, **row: Any) -> dict:
    return {"group_id": group_id, "max_lag_seconds": 900.0, "max_lag_topic": "orders", "max_lag_partition": 2,
            "max_lag_method": "exact", "severity": "warning", "lag_trend": trend, "lag_velocity": velocity,
            "time_to_close_seconds": closes, **row}  # fmt: skip


@pytest.mark.parametrize(
    ("trend", "velocity", "closes", "text"),
    [
        ("closing", -12.0, 300.0, "catching up: zero in ~5 min at 12 records/s"),
        ("growing", 3.0, None, "lag growing by 3 records/s: not catching up at this rate"),
        ("steady", 0.0, None, "lag steady: not catching up at this rate"),
        ("caught_up", 0.0, 0.0, ""),
        ("unknown", None, None, ""),
        (None, None, None, ""),  # a row written before the trend was
    ],
)
def test_the_trend_in_words(trend: str | None, velocity: float | None, closes: float | None, text: str) -> None:
    assert trend_text(behind("g", trend, velocity, closes)) == text


def test_the_trend_follows_burrows_status_in_the_groups_problem() -> None:
    findings = Findings({"lag_time_groups": [behind("billing", "growing", 3.0, None)]})
    status = {"group_id": "billing", "status": "WARN", "cause": "lag grew over the window", "max_lag": 500}
    problem = group(status, findings)
    assert problem.title == "consumer group billing is falling behind (WARN)"
    assert problem.cause == (
        "lag grew over the window; 15 min (exact) behind on orders-2; "
        "lag growing by 3 records/s: not catching up at this rate"
    )


def test_a_group_behind_in_time_alone_says_when_it_catches_up() -> None:
    findings = Findings({"lag_status_groups": [], "lag_time_groups": [behind("late", "closing", -2.0, 4_000.0)]})
    (problem,) = problems(findings)
    assert problem.cause == "15 min (exact) behind on orders-2; catching up: zero in ~1 h 06 min at 2 records/s"
