from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kafka_ops.report.findings import Findings, _deletions

SINCE = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


class Rows(Findings):
    """Findings whose tables are given, not read from a lake."""

    def __init__(self, tables: dict[str, list[dict[str, Any]]]) -> None:
        self.tables = tables

    def rows(self, table: str) -> list[dict[str, Any]] | None:
        return self.tables.get(table)


def deletion(topic: str, *, stuck: bool) -> dict[str, Any]:
    return {
        "topic": topic,
        "stuck": stuck,
        "cause": f"deletion of topic {topic} cannot complete: its replicas on broker 2 are offline (not registered)",
        "action": "bring broker 2 back: Kafka then finishes the deletion by itself" if stuck else None,
        "pending_since": SINCE,
    }


def test_a_stuck_deletion_is_a_warning_with_its_cause_and_action_and_running_ones_one_info() -> None:
    rows = [deletion("b", stuck=True), deletion("a", stuck=False), deletion("c", stuck=False)]
    stuck, running = _deletions(Rows({"topic_deletions": rows}))
    assert (stuck.severity, stuck.title, stuck.since) == ("warning", "deletion of topic b is stuck", SINCE)
    assert stuck.action == "bring broker 2 back: Kafka then finishes the deletion by itself"
    assert (running.severity, running.title, running.cause) == ("info", "2 topics being deleted", "a, c")
    assert _deletions(Rows({})) == []
