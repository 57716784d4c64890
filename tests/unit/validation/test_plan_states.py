from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from kafka_ops.lake.store import Lake
from kafka_ops.validation.plan_states import left_by_plans

PLAN = "0123456789abcdef"


def store(lake: Lake, status: str) -> None:
    """A plan t-0, t-1: [1] → [1, 2], as the executor stores it, with its progress `status`."""
    base = Path(lake.base)
    (base / "_executions" / "c1").mkdir(parents=True)
    (base / "_executions" / "c1" / f"{PLAN}.json").write_text(json.dumps({"version": 1, "status": status}))
    folder = base / "_plans" / "c1" / PLAN
    folder.mkdir(parents=True)
    rows = [{"topic": "t", "partition": p, "replicas": r} for p, r in ((0, [1, 2]), (1, [1, 2]))]
    (folder / "reassignment.json").write_text(json.dumps({"version": 1, "partitions": rows}))
    rows = [{"topic": "t", "partition": p, "replicas": [1]} for p in (0, 1)]
    (folder / "rollback.json").write_text(json.dumps({"version": 1, "partitions": rows}))


def partitions(replicas: dict[int, list[int]]) -> pa.Table:
    return pa.Table.from_pylist([{"topic": "t", "partition": p, "replicas": r} for p, r in replicas.items()])


@pytest.mark.parametrize(
    ("status", "replicas", "excused"),
    [
        ("cancelled", {0: [1, 2], 1: [1], 2: [1]}, True),  # half applied: the plan's doing
        ("failed", {0: [1, 2], 1: [1], 2: [1]}, True),
        ("done", {0: [1, 2], 1: [1], 2: [1]}, False),  # a completed plan leaves no mixed factors
        ("cancelled", {0: [3, 2], 1: [1], 2: [1]}, False),  # t-0 is neither base nor target
        ("cancelled", {0: [1], 1: [1], 2: [1, 2, 3], 3: [1, 2]}, False),  # the rest is mixed on its own
        ("cancelled", {0: [1], 1: [1], 2: [1]}, False),  # nothing mixed
    ],
)
def test_mixed_factors_are_excused_only_when_an_unfinished_plan_explains_them(
    lake: Lake, status: str, replicas: dict[int, list[int]], excused: bool
) -> None:
    store(lake, status)
    left = left_by_plans(lake, "c1", partitions(replicas))
    assert ("t" in left) == excused, left
    if excused:
        assert left["t"].startswith(f"topic t: mixed replication factors [1, 2] left by plan {PLAN} ({status}): ")
        assert "1 of its partitions at the plan's target, 1 at its base" in left["t"]


def test_no_plans_no_excuse(lake: Lake) -> None:
    assert left_by_plans(lake, "c1", partitions({0: [1, 2], 1: [1]})) == {}
