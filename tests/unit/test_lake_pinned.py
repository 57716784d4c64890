"""`Lake.pinned`: a reader of several tables sees each Delta table as it first read it (one consistent
view, each table opened once); outside it, every read sees the latest commit."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from kafka_ops.lake.open import open_lake
from kafka_ops.sources.groups.tables import group_batch
from tests.unit.snapshots import GROUPS_AT, group_snapshot


def test_a_pinned_delta_lake_reads_each_table_as_first_read(tmp_path: Path) -> None:
    lake = open_lake(tmp_path / "lake", "delta")
    lake.publish(group_batch(group_snapshot("g1")))
    later = replace(group_snapshot("g2"), captured_at=GROUPS_AT + timedelta(minutes=1))
    day = GROUPS_AT.date().isoformat()

    def ids() -> list[str]:
        rows = lake.read_day("group_snapshots", "c1", day)
        return sorted(r["snapshot_id"] for r in ([] if rows is None else rows.to_pylist()))

    with lake.pinned():
        assert ids() == ["g1"]
        lake.publish(group_batch(later))
        assert ids() == ["g1"]  # as first read inside: the same view throughout
        with lake.pinned():  # nested: still the outer view
            assert ids() == ["g1"]
    assert ids() == ["g1", "g2"]


def test_pinning_a_parquet_lake_changes_nothing(tmp_path: Path) -> None:
    lake = open_lake(tmp_path / "lake", "parquet")
    with lake.pinned():
        lake.publish(group_batch(group_snapshot("g1")))
        assert lake.latest_snapshot_id("c1", "group_snapshots") == "g1"
