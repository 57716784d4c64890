"""Findings whose tables are given, not read from a lake: what `kafka_ops.problems` reads."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

CAPTURED_AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


class Tables:
    """`problems.problem.FindingsRows` over in-memory tables; a table not given was not written."""

    def __init__(self, tables: dict[str, list[dict[str, Any]]], captured_at: datetime = CAPTURED_AT) -> None:
        self.tables = tables
        self._captured_at = captured_at

    @property
    def captured_at(self) -> datetime:
        return self._captured_at

    def rows(self, table: str) -> list[dict[str, Any]] | None:
        return self.tables.get(table)
