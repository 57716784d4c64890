from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kafka_ops.problems.topics import problems as topic_problems
from tests.unit.problems.tables import Tables

SINCE = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


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
    stuck, running = topic_problems(Tables({"topic_deletions": rows}))
    assert (stuck.severity, stuck.title, stuck.since) == ("warning", "deletion of topic b is stuck", SINCE)
    assert stuck.action == "bring broker 2 back: Kafka then finishes the deletion by itself"
    assert (running.severity, running.title, running.cause) == ("info", "2 topics being deleted", "a, c")
    assert topic_problems(Tables({})) == []
