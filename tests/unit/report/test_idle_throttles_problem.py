from __future__ import annotations

from typing import Any

from kafka_ops.report.findings import Findings, _idle_throttles


class Rows(Findings):
    """Findings whose tables are given, not read from a lake."""

    def __init__(self, tables: dict[str, list[dict[str, Any]]]) -> None:
        self.tables = tables

    def rows(self, table: str) -> list[dict[str, Any]] | None:
        return self.tables.get(table)


def row(entity_type: str, name: str) -> dict[str, Any]:
    return {"entity_type": entity_type, "entity_name": name, "command": f"kafka-configs ... {name}"}


def test_idle_throttles_are_one_warning_naming_each_entity_and_the_command() -> None:
    (problem,) = _idle_throttles(Rows({"idle_throttles": [row("topic", "t"), row("broker", "2")]}))
    assert problem.severity == "warning"
    assert problem.title == "replication throttle set with nothing moving on 2 entities"
    assert problem.cause.startswith("broker 2, topic t: they cap the next move")
    assert "kafka-configs ... 2" in (problem.action or "") and "kafka-ops remediation clear-throttles" in (
        problem.action or ""
    )
    assert _idle_throttles(Rows({"idle_throttles": []})) == [] and _idle_throttles(Rows({})) == []
