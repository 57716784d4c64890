"""`Lake.latest_commits`: the newest commit rows, found by reading the commit log's days newest first
and no further than needed (a corrupt older day is never opened), in both formats; the latest
snapshot id, the analysis job's latest batch and auto-election all go through it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.schema import COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot

FORMATS = {"parquet": Lake, "delta": DeltaLake}


def publish_days(lake: Lake) -> None:
    """c1: s1, s2 on day 0 (s2 later); s3, s4 on day 1 at the same time (ties go to the higher id)."""
    for snapshot_id, days, minutes in [("s1", 0, 0), ("s2", 0, 5), ("s4", 1, 0), ("s3", 1, 0)]:
        snap = small_snapshot(snapshot_id)
        snap = replace(snap, captured_at=snap.captured_at + timedelta(days=days, minutes=minutes))
        lake.publish(snapshot_batch(snap))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_newest_rows_come_newest_first_with_their_day(tmp_path: Path, fmt: str) -> None:
    lake = FORMATS[fmt](tmp_path / "lake")
    assert lake.latest_commits("c1") == [] and lake.latest_commit("c1") is None
    assert lake.latest_snapshot_id("c1") is None
    publish_days(lake)
    (day0, day1) = sorted({r["dt"] for r in lake.latest_commits("c1", count=10)})

    rows = lake.latest_commits("c1", count=3)
    assert [(r["snapshot_id"], r["dt"]) for r in rows] == [("s4", day1), ("s3", day1), ("s2", day0)]
    assert lake.latest_snapshot_id("c1") == "s4"
    assert [r["snapshot_id"] for r in lake.latest_commits("c1", count=10)] == ["s4", "s3", "s2", "s1"]
    odd = lake.latest_commits("c1", count=2, keep=lambda r: r["snapshot_id"] in {"s1", "s3"})
    assert [r["snapshot_id"] for r in odd] == ["s3", "s1"]
    assert lake.latest_commits("other") == []


def test_only_the_days_needed_are_read(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    publish_days(lake)
    older, _ = sorted((tmp_path / "lake" / COMMIT_TABLE / "cluster=c1").iterdir())
    for file in older.iterdir():
        file.write_bytes(b"not parquet")
    assert lake.latest_snapshot_id("c1") == "s4"
    assert [r["snapshot_id"] for r in lake.latest_commits("c1", count=2)] == ["s4", "s3"]
    with pytest.raises(LakeError, match=f"cannot read .*{older.name}"):
        lake.latest_commits("c1", count=3)


def test_a_table_that_is_no_commit_log_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LakeError, match="'partitions' is not a commit log"):
        Lake(tmp_path / "lake").latest_commits("c1", "partitions")
