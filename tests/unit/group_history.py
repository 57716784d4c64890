"""Group collections a minute apart, published to a lake as the snapshot DAG's `collect_groups` does:
groups that keep up, stop, rewind or commit one offset over and over, for the tests of the paging path
that rates them without Spark."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from kafka_ops.lake.store import Lake
from kafka_ops.model.groups import Commit, ConsumerGroup, GroupMember, LoggedCommit, offset_rows
from kafka_ops.sources.groups.tables import group_batch
from tests.unit.snapshots import group_snapshot

START = datetime(2026, 11, 21, 23, 50, tzinfo=UTC)
"""The first collection: the window crosses midnight, so it is read from two day partitions."""
PARTITIONS = [("orders", p) for p in range(3)]


def collections(lake: Lake, count: int, seed: int, *, caught_up: bool = False) -> list[str]:
    """`count` collections a minute apart of four groups: `moving` (keeps up), `stopped` (stops committing
    halfway, its member still there), `rewound` (an offset reset halfway) and `logged` (its commits read
    from the commit log, the same offset again and again from halfway, then none), with a random producer; their ids.
    `caught_up`: in the last collection every group has consumed everything (lag 0)."""
    rng = random.Random(seed)
    ends = dict.fromkeys(PARTITIONS, 1_000)
    positions = {g: dict.fromkeys(PARTITIONS, 900) for g in ("moving", "stopped", "rewound", "logged")}
    ids = []
    for i in range(count):
        at = START + timedelta(minutes=i)
        ends = {tp: e + rng.randint(0, 120) for tp, e in ends.items()}
        for tp in PARTITIONS:
            positions["moving"][tp] = max(positions["moving"][tp], ends[tp] - rng.randint(0, 30))
            if i < count // 2:
                positions["stopped"][tp] = ends[tp] - rng.randint(0, 50)
                positions["logged"][tp] = ends[tp] - rng.randint(0, 50)
            positions["rewound"][tp] = ends[tp] - 40 if i != count // 2 else 10
            if caught_up and i == count - 1:
                for held in positions.values():
                    held[tp] = ends[tp]
        groups = tuple(
            ConsumerGroup(g, "Stable", "consumer", "range", (GroupMember(f"{g}-m", None, "app", "/10.0.0.1",
                                                                         tuple(PARTITIONS)),))
            for g in positions
        )  # fmt: skip
        offsets = [
            row
            for g, held in positions.items()
            for row in offset_rows(g, {tp: Commit(o) for tp, o in held.items()}, PARTITIONS, frozenset(ends), ends)
        ]
        commits = tuple(
            LoggedCommit("logged", t, p, positions["logged"][(t, p)], at - timedelta(seconds=s))
            for t, p in PARTITIONS
            for s in (40, 10)
            if i <= count // 2
        )
        snap = replace(group_snapshot(f"g{i:02d}"), captured_at=at, completed_at=at, groups=groups,
                       offsets=tuple(offsets), end_offsets=ends, commits=commits, record_times={},
                       stable_offsets={}, transactions=())  # fmt: skip
        lake.publish(group_batch(snap))
        ids.append(snap.snapshot_id)
    return ids
