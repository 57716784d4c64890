from __future__ import annotations

from typing import Any

from kafka_ops.problems.throttles import problems as idle_throttles
from tests.unit.problems.tables import Tables


def row(entity_type: str, name: str) -> dict[str, Any]:
    return {"entity_type": entity_type, "entity_name": name, "command": f"kafka-configs ... {name}"}


def test_idle_throttles_are_one_warning_naming_each_entity_and_the_command() -> None:
    (problem,) = idle_throttles(Tables({"idle_throttles": [row("topic", "t"), row("broker", "2")]}))
    assert problem.severity == "warning"
    assert problem.title == "replication throttle set with nothing moving on 2 entities"
    assert problem.cause.startswith("broker 2, topic t: they cap the next move")
    assert "kafka-configs ... 2" in (problem.action or "") and "kafka-ops remediation clear-throttles" in (
        problem.action or ""
    )
    assert idle_throttles(Tables({"idle_throttles": []})) == [] and idle_throttles(Tables({})) == []
