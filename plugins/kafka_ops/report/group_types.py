"""The group collection's groups by type (classic, consumer, share, streams) and its groups (consumer
protocol, streams) with members still reconciling (assignment not yet the broker's target), from `consumer_groups`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pyarrow.compute as pc

from kafka_ops.lake.store import Lake
from kafka_ops.report import reads
from kafka_ops.report.model import Collected, OffenderTable

Row = dict[str, Any]
CLASSIC = "classic"  # a row collected before group types were has no type: it was classic
_COLUMNS = ("group_id", "group_type", "state", "group_epoch", "assignment_epoch", "reconciling_member_count",
            "member_count")  # fmt: skip


@dataclass(frozen=True)
class GroupTypes:
    """`types`: group id → type; `counts`: e.g. "classic 3, consumer 2"; `reconciling`: the table of
    consumer-protocol and streams groups with a member still reconciling."""

    types: dict[str, str] = field(default_factory=dict)
    counts: str = ""
    reconciling: OffenderTable | None = None


def group_types(lake: Lake, cluster: str, groups: Collected | None, top_rows: int) -> GroupTypes:
    if groups is None:
        return GroupTypes()
    day = f"{groups.captured_at:%Y-%m-%d}"
    where = pc.field("snapshot_id") == groups.snapshot_id
    rows: list[Row] = reads.read_days(
        lake, "consumer_groups", cluster, [day], columns=_COLUMNS, where=where
    ).to_pylist()
    types = {r["group_id"]: r["group_type"] or CLASSIC for r in rows}
    counts = ", ".join(f"{t} {n}" for t, n in sorted(Counter(types.values()).items()))
    moving = sorted(
        (r for r in rows if r["reconciling_member_count"]),
        key=lambda r: (-r["reconciling_member_count"], r["group_id"]),
    )
    table = OffenderTable(
        title="Groups with members still reconciling (consumer protocol, streams)",
        source="consumer_groups",
        columns=("Group", "Type", "State", "Group epoch", "Assignment epoch", "Reconciling members", "Members"),
        rows=tuple(
            (
                r["group_id"],
                types[r["group_id"]],
                r["state"],
                r["group_epoch"],
                r["assignment_epoch"],
                r["reconciling_member_count"],
                r["member_count"],
            )
            for r in moving[:top_rows]
        ),
        total=len(moving),
        none="every member of every consumer-protocol and streams group holds its target assignment",
    )
    return GroupTypes(types, counts, table)
