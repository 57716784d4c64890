"""Retention of the lake's side folders: HTML reports expire by `keep_reports_days` (never
`latest.html`); plans, executions, alerting state and publish leftovers are not retention's."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_ops.lake.open import open_lake
from kafka_ops.lake.policy import RetentionPolicy
from kafka_ops.lake.retention import expire

NOW = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)


def written(path: Path, days_ago: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    when = (NOW - timedelta(days=days_ago)).timestamp()
    os.utime(path, (when, when))
    return path


def side_folders(root: Path) -> list[Path]:
    """Reports of two clusters either side of a 35-day cutoff, and old files of the other side folders."""
    return [
        written(root / "_reports" / "c1" / "s-old.html", 36),
        written(root / "_reports" / "c1" / "s-35.html", 35.2),  # the day before the cutoff day: expires
        written(root / "_reports" / "c1" / "s-34.html", 34.9),  # the cutoff day: kept
        written(root / "_reports" / "c1" / "s-new.html", 0),
        written(root / "_reports" / "c1" / "latest.html", 90),  # never expires, however old
        written(root / "_reports" / "c1" / "s-old.html.0a1b.tmp", 40),  # an interrupted write
        written(root / "_reports" / "c2" / "g-old.html", 50),
        written(root / "_plans" / "p1" / "reassignment.json", 400),
        written(root / "_executions" / "p1" / "progress.json", 400),
        written(root / "_alerting" / "c1.alerts.jsonl", 400),
    ]


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_reports_expire_by_the_day_they_were_written_and_nothing_else(tmp_path: Path, fmt: str) -> None:
    files = side_folders(tmp_path)
    said: list[str] = []
    expired = expire(open_lake(tmp_path, fmt), RetentionPolicy(), NOW, said.append)

    gone = {files[0], files[1], files[5], files[6]}
    assert [f for f in files if not f.exists()] == [f for f in files if f in gone]
    (reports,) = expired
    assert (reports.table, reports.files, reports.cutoff) == ("_reports", 4, "2026-10-17")
    assert reports.days == ("2026-10-02", "2026-10-12", "2026-10-16")
    assert "expired _reports: 4 reports written on days 2026-10-02, 2026-10-12, 2026-10-16 (before 2026-10-17)" in said
    assert expire(open_lake(tmp_path, fmt), RetentionPolicy(), NOW) == []  # a rerun has nothing left to do


def test_reports_kept_forever(tmp_path: Path) -> None:
    files = side_folders(tmp_path)
    said: list[str] = []
    assert expire(open_lake(tmp_path), RetentionPolicy(keep_reports_days=None), NOW, said.append) == []
    assert all(f.exists() for f in files)
    assert "kept forever: _reports" in said
