"""Lake maintenance on real tmp lakes: compaction to one file per closed day, vacuum, checkpoint,
retention that never shows a torn batch (failing between steps, and SIGKILLed maintenance runs)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from kafka_ops.errors import LakeError
from kafka_ops.lake import retention
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.maintenance import maintain, tidy
from kafka_ops.lake.policy import RetentionPolicy
from kafka_ops.lake.retention import expire
from kafka_ops.lake.schema import REMEDIATION_PLANS_TABLE, TABLES
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.lake.time_travel import batch_as_of
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.lake_maintainers import policy
from tests.unit.snapshots import small_snapshot

ROOT = Path(__file__).parents[2]
DAY0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)
EXPECTED_ROWS = {t: d.num_rows for t, d in snapshot_batch(small_snapshot("x")).tables.items() if d.num_rows}


def publish_days(lake: Lake, days: int, per_day: int) -> list[str]:
    """`per_day` snapshots 5 minutes apart on each of `days` days from DAY0; their batch ids."""
    ids = []
    for day in range(days):
        for i in range(per_day):
            snap = small_snapshot(f"d{day}-{i:03d}")
            snap.captured_at = DAY0 + timedelta(days=day, minutes=5 * i)
            lake.publish(snapshot_batch(snap))
            ids.append(snap.snapshot_id)
    return ids


def whole_batches(lake: Lake) -> set[str]:
    """The committed batches, after checking each has all its rows in every table (none torn)."""
    committed = lake.snapshots().column("snapshot_id").to_pylist()
    assert len(committed) == len(set(committed)), "a commit row twice"
    for table, expected in EXPECTED_ROWS.items():
        rows = Counter(lake.read(table).column("snapshot_id").to_pylist())
        torn = {b: rows[b] for b in committed if rows[b] != expected}
        assert not torn, f"{table}: committed batches with rows missing or doubled (want {expected}): {torn}"
    return set(committed)


def raw_days(lake: Lake, table: str) -> set[str]:
    return set(lake._read_raw(table, None).column("dt").to_pylist())


@pytest.fixture
def delta(tmp_path: Path) -> DeltaLake:
    return DeltaLake(tmp_path / "lake")


def test_compaction_leaves_one_file_per_closed_day_and_the_same_batches(delta: DeltaLake) -> None:
    ids = publish_days(delta, days=2, per_day=12)
    before = {t: Counter(delta.read(t).column("snapshot_id").to_pylist()) for t in EXPECTED_ROWS}
    lines: list[str] = []
    report = maintain(delta, policy(keep_days=35), DAY0 + timedelta(days=1, hours=1), log=lines.append)

    partitions = next(t for t in report.tables if t.table == "partitions")
    assert [(c.dt, c.files_before, c.files_after) for c in partitions.compactions] == [("2026-11-01", 12, 1)]
    assert partitions.most_files_in_a_closed_day == 1
    assert report.files_per_table_day == 1
    assert {t.table for t in report.tables} == set(EXPECTED_ROWS)
    day2 = DeltaTable(delta.table_uri("partitions")).get_add_actions(flatten=True).column("partition.dt")
    assert Counter(day2.to_pylist()) == {"2026-11-01": 1, "2026-11-02": 12}  # today's day is left open
    assert whole_batches(delta) == set(ids)
    assert {t: Counter(delta.read(t).column("snapshot_id").to_pylist()) for t in EXPECTED_ROWS} == before
    assert any("partitions cluster=c1 dt=2026-11-01: 12 -> 1 files" in line for line in lines), lines

    # vacuumed at 0 h: the replaced files are gone from disk; the log is checkpointed
    on_disk = list((Path(delta.root) / "partitions").glob("cluster=*/dt=*/*.parquet"))
    assert len(on_disk) == 13
    last_checkpoint = json.loads((Path(delta.root) / "partitions" / "_delta_log" / "_last_checkpoint").read_text())
    assert last_checkpoint["version"] == DeltaTable(delta.table_uri("partitions")).version()

    again = maintain(delta, policy(keep_days=35), DAY0 + timedelta(days=1, hours=1), log=lines.append)
    assert all(not t.compactions and t.files_vacuumed == 0 for t in again.tables)  # idempotent


def test_vacuum_keeps_replaced_files_for_time_travel(delta: DeltaLake) -> None:
    publish_days(delta, days=1, per_day=3)
    # as a table created before the writers set a checkpoint interval: Delta's default
    DeltaTable(delta.table_uri("partitions")).alter.set_table_properties({"delta.checkpointInterval": "100"})
    old_version = DeltaTable(delta.table_uri("partitions")).version()
    maintain(delta, RetentionPolicy(), DAY0 + timedelta(days=1))
    table = DeltaTable(delta.table_uri("partitions"))
    assert table.get_add_actions().num_rows == 1
    table.load_as_version(old_version)  # the 3 files the compaction replaced are still there
    assert table.get_add_actions().num_rows == 3
    assert table.to_pyarrow_table().num_rows == 3 * EXPECTED_ROWS["partitions"]
    props = DeltaTable(delta.table_uri("partitions")).metadata().configuration
    assert props["delta.logRetentionDuration"] == "interval 168 hours"
    assert props["delta.deletedFileRetentionDuration"] == "interval 168 hours"
    assert props["delta.checkpointInterval"] == "10"


@pytest.mark.parametrize("fmt", ["delta", "parquet"])
def test_retention_hides_commit_rows_first_then_deletes_data_next_run(tmp_path: Path, fmt: str) -> None:
    lake = DeltaLake(tmp_path / "lake") if fmt == "delta" else Lake(tmp_path / "lake")
    ids = publish_days(lake, days=3, per_day=2)
    now = DAY0 + timedelta(days=3)  # keep 2 days: 2026-11-01 expires

    first = expire(lake, policy(keep_days=2), now)
    assert [(e.table, e.rows) for e in first] == [("snapshots", 2)]
    assert whole_batches(lake) == {i for i in ids if not i.startswith("d0")}
    assert "2026-11-01" in raw_days(lake, "partitions")  # invisible, deleted by the next run

    second = expire(lake, policy(keep_days=2), now)
    assert {e.table: e.rows for e in second if e.rows} == {
        t: 2 * n for t, n in EXPECTED_ROWS.items() if t != "snapshots"
    }  # (the Parquet lake also drops the files of tables a batch left empty)
    assert all(e.days == ("2026-11-01",) and not e.commit for e in second)
    assert all("2026-11-01" not in raw_days(lake, t) for t in EXPECTED_ROWS)
    assert whole_batches(lake) == {i for i in ids if not i.startswith("d0")}
    assert expire(lake, policy(keep_days=2), now) == []


def test_parquet_lake_is_only_expired(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    publish_days(lake, days=1, per_day=2)
    lines: list[str] = []
    report = maintain(lake, policy(keep_days=35), DAY0 + timedelta(days=2), log=lines.append)
    assert report.tables == ()
    assert any("Parquet lake" in line and "no compaction or vacuum" in line for line in lines)


def test_plans_and_audit_are_kept_forever(delta: DeltaLake) -> None:
    at = DAY0 - timedelta(days=400)
    row = {"snapshot_id": "p1", "captured_at": at, "plan_id": "p1", "kind": "election", "created_at": at}
    plans = pa.Table.from_pylist([row], schema=TABLES[REMEDIATION_PLANS_TABLE])
    delta.publish(Batch("p1", "c1", at, {REMEDIATION_PLANS_TABLE: plans}, REMEDIATION_PLANS_TABLE))
    lines: list[str] = []
    assert expire(delta, RetentionPolicy(), DAY0, lines.append) == []
    assert delta.read(REMEDIATION_PLANS_TABLE).column("plan_id").to_pylist() == ["p1"]
    assert lines == ["kept forever: remediation_plans"]


@pytest.mark.parametrize("fmt", ["delta", "parquet"])
def test_a_retention_failing_at_any_step_shows_no_torn_batch_and_a_rerun_finishes(
    tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = tmp_path / "template"
    lake = DeltaLake(template) if fmt == "delta" else Lake(template)
    ids = publish_days(lake, days=3, per_day=2)
    expire(lake, policy(keep_days=2), DAY0 + timedelta(days=3))  # day 0: commit rows gone, data left
    kept = {i for i in ids if i.startswith("d2")}
    store = retention._DeltaDays if fmt == "delta" else retention._ParquetDays
    real_delete = store.delete
    for fail_at in range(len(retention.lake_tables(lake))):  # day 1's commit rows, then day 0's data rows
        root = tmp_path / f"run{fail_at}"
        shutil.copytree(template, root)
        lake = DeltaLake(root) if fmt == "delta" else Lake(root)
        calls = Counter[str]()

        def delete(
            self: object, table: str, *args: object, fail_at: int = fail_at, calls: Counter[str] = calls
        ) -> retention.Expired:
            if calls.total() == fail_at:
                raise OSError(f"disk gone before deleting {table}")
            calls[table] += 1
            return real_delete(self, table, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(store, "delete", delete)
        with pytest.raises(OSError, match="disk gone"):
            expire(lake, policy(keep_days=1), DAY0 + timedelta(days=3))
        visible = whole_batches(lake)
        assert kept <= visible <= {i for i in ids if not i.startswith("d0")}, fail_at
        monkeypatch.setattr(store, "delete", real_delete)
        expire(lake, policy(keep_days=1), DAY0 + timedelta(days=3))
        expire(lake, policy(keep_days=1), DAY0 + timedelta(days=3))
        assert whole_batches(lake) == kept
        assert all(raw_days(lake, t) == {"2026-11-03"} for t in EXPECTED_ROWS), fail_at


def test_maintenance_killed_at_random_steps_shows_no_torn_batch_and_a_rerun_finishes(tmp_path: Path) -> None:
    template = DeltaLake(tmp_path / "template")
    ids = publish_days(template, days=3, per_day=3)
    expire(template, policy(keep_days=2), DAY0 + timedelta(days=3))  # day 0: commit rows gone, data left
    now = (DAY0 + timedelta(days=3)).isoformat()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins")])}
    rng = random.Random(15)
    kills = 0
    for run in range(6):
        root = tmp_path / f"run{run}"
        shutil.copytree(template.root, root)
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.unit.lake_maintainers", str(root), now, "1"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert child.stdout is not None
        step = rng.randrange(12)  # expire day 1's commit rows, day 0's data rows, compaction, vacuum
        for _ in range(step + 1):
            if not child.stdout.readline():
                break
        child.kill()  # SIGKILL, inside the next step
        kills += child.wait() == -9
        lake = DeltaLake(root)
        assert {i for i in ids if i.startswith("d2")} <= whole_batches(lake) <= {i for i in ids if i[:2] != "d0"}
        report = maintain(lake, policy(keep_days=1), datetime.fromisoformat(now))
        maintain(lake, policy(keep_days=1), datetime.fromisoformat(now))
        assert whole_batches(lake) == {i for i in ids if i.startswith("d2")}
        assert all(raw_days(lake, t) == {"2026-11-03"} for t in EXPECTED_ROWS)
        assert report.files_per_table_day <= 1
    assert kills >= 4


def test_a_failing_table_is_named_after_the_others_are_done(delta: DeltaLake) -> None:
    publish_days(delta, days=2, per_day=2)
    shutil.rmtree(Path(delta.root) / "brokers" / "_delta_log")
    (Path(delta.root) / "brokers" / "_delta_log").mkdir()  # a log with no commit: not a readable table
    with pytest.raises(LakeError, match=r"failed for 1 table\(s\), the others were done.*brokers"):
        maintain(delta, policy(keep_days=35), DAY0 + timedelta(days=2))
    partitions = DeltaTable(delta.table_uri("partitions")).get_add_actions(flatten=True)
    assert Counter(partitions.column("partition.dt").to_pylist()) == {"2026-11-01": 1, "2026-11-02": 1}


def test_time_travel_beyond_the_vacuum_window_is_refused_clearly(delta: DeltaLake) -> None:
    """Log and vacuum retentions equal (0 h here, 168 h by default): a version whose files were
    vacuumed is gone from the log too, so `as-of` says where history starts instead of failing."""
    publish_days(delta, days=1, per_day=2)
    time.sleep(1.1)  # Delta versions carry millisecond times: leave a gap to point into
    between = datetime.now(UTC)
    time.sleep(1.1)
    assert batch_as_of(delta, "c1", between) is not None
    maintain(delta, policy(keep_days=35), DAY0 + timedelta(days=1))
    with pytest.raises(LakeError, match="its kept history starts at"):
        batch_as_of(delta, "c1", between)


def test_compaction_racing_a_writer_on_the_same_day_loses_nothing(delta: DeltaLake) -> None:
    """A late batch published into the day being compacted: the losing Delta commit retries."""
    publish_days(delta, days=1, per_day=3)
    errors: list[BaseException] = []
    tidy_policy = RetentionPolicy(vacuum_retention_hours=1, log_retention_hours=1)  # no file a reader uses goes

    def write() -> None:
        for i in range(3, 15):
            snap = small_snapshot(f"d0-{i:03d}")
            snap.captured_at = DAY0 + timedelta(minutes=5 * i)
            try:
                delta.publish(snapshot_batch(snap))
            except LakeError as e:
                errors.append(e)

    writer = threading.Thread(target=write)
    writer.start()
    compacted_while_writing = 0
    while writer.is_alive():
        tables = tidy(DeltaLake(delta.root), tidy_policy, DAY0 + timedelta(days=1))
        compacted_while_writing += sum(len(t.compactions) for t in tables) if writer.is_alive() else 0
    writer.join()
    assert not errors
    assert compacted_while_writing  # the test's premise: the day was compacted while being written
    assert whole_batches(delta) == {f"d0-{i:03d}" for i in range(15)}
    tidy(delta, tidy_policy, DAY0 + timedelta(days=1))
    assert DeltaTable(delta.table_uri("partitions")).get_add_actions().num_rows == 1


def test_an_unreadable_expiring_parquet_file_is_deleted_all_the_same(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    publish_days(lake, days=2, per_day=1)
    broken = Path(lake.base) / "partitions" / "cluster=c1" / "dt=2026-11-01" / "d0-000.parquet"
    broken.write_bytes(b"not parquet")
    expire(lake, policy(keep_days=1), DAY0 + timedelta(days=2))
    expire(lake, policy(keep_days=1), DAY0 + timedelta(days=2))
    assert not broken.parent.exists()
    assert whole_batches(lake) == {"d1-000"}
