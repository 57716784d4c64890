"""The lake's atomic publish: committed reads, crashes while staging and while placing."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.schema import TABLES
from kafka_ops.lake.store import STAGING, STALE_STAGING_S, Lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from tests.unit.snapshots import group_snapshot, small_snapshot


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    """The Parquet `Lake`: the cases taking this fixture test its layout and commit protocol."""
    return Lake(tmp_path / "lake")


@pytest.fixture(params=["parquet", "delta"])
def any_lake(request: pytest.FixtureRequest, tmp_path: Path) -> Lake:
    """The same API in both formats: the cases taking this fixture run on `Lake` and `DeltaLake`."""
    return open_lake(tmp_path / "lake", request.param)


def test_publish_then_read(any_lake: Lake) -> None:
    lake = any_lake
    lake.publish(snapshot_batch(small_snapshot("s1")))
    lake.publish(snapshot_batch(small_snapshot("s2")))
    log = lake.snapshots("c1")
    assert sorted(log.column("snapshot_id").to_pylist()) == ["s1", "s2"]
    assert log.column("cluster").to_pylist() == ["c1", "c1"]
    assert log.column("dt").to_pylist() == ["2026-11-21", "2026-11-21"]
    parts = lake.read("partitions", "c1", ["s2"])
    assert parts.num_rows == 4
    assert set(parts.column("snapshot_id").to_pylist()) == {"s2"}
    assert lake.read("partitions", "other").num_rows == 0


def test_layout_is_hive_partitioned_by_cluster_and_date(lake: Lake) -> None:
    lake.publish(snapshot_batch(small_snapshot("s1")))
    expected = Path(lake.base) / "partitions" / "cluster=c1" / "dt=2026-11-21" / "s1.parquet"
    assert expected.is_file()
    assert not (Path(lake.base) / STAGING).exists() or not any((Path(lake.base) / STAGING).iterdir())


def test_latest_snapshot(any_lake: Lake) -> None:
    lake = any_lake
    assert lake.latest_snapshot_id("c1") is None
    lake.publish(snapshot_batch(small_snapshot("s1")))
    later = small_snapshot("s2")
    later.captured_at = later.captured_at.replace(minute=5)
    lake.publish(snapshot_batch(later))
    assert lake.latest_snapshot_id("c1") == "s2"


def test_bad_names_are_refused(any_lake: Lake) -> None:
    with pytest.raises(LakeError, match=r"cluster '\.\./x' cannot be used in lake paths"):
        any_lake.publish(snapshot_batch(small_snapshot("s1", cluster="../x")))


def test_unknown_table_is_named(any_lake: Lake) -> None:
    with pytest.raises(LakeError, match="no lake table 'nope' under"):
        any_lake.read("nope")


CRASHING_PUBLISH = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {root!r})
    from kafka_ops.lake.store import Lake
    from kafka_ops.snapshot.tables import snapshot_batch
    from tests.unit.snapshots import small_snapshot

    lake = Lake({lake!r})
    real = lake.fs

    class CrashingFs:
        # dies (no cleanup, like kill -9) at the first write or move into the named table
        def __getattr__(self, name):
            return getattr(real, name)

        def open_output_stream(self, path, *a, **k):
            if {phase!r} == "staging" and path.endswith("/partitions.parquet"):
                os._exit(86)
            return real.open_output_stream(path, *a, **k)

        def move(self, src, dst):
            if {phase!r} == "placing" and "/partitions/" in dst:
                os._exit(86)
            return real.move(src, dst)

    lake.fs = CrashingFs()
    lake.publish(snapshot_batch(small_snapshot("crashed")))
    """
)


def run_crashing_publish(lake: Lake, phase: str) -> None:
    root = str(Path(__file__).parents[2])
    script = CRASHING_PUBLISH.format(root=root, lake=lake.root, phase=phase)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, str(Path(root) / "plugins")])}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 86, result.stderr


def raw_partition_rows(lake: Lake) -> int:
    path = Path(lake.base) / "partitions"
    return ds.dataset(path, format="parquet").count_rows() if path.exists() else 0


def test_writer_killed_while_staging_leaves_nothing_visible(lake: Lake) -> None:
    lake.publish(snapshot_batch(small_snapshot("s1")))
    run_crashing_publish(lake, "staging")
    assert lake.snapshots().column("snapshot_id").to_pylist() == ["s1"]
    assert raw_partition_rows(lake) == 4  # even a raw pyarrow read sees only s1
    assert lake.recover() != []  # the half-staged batch is discarded...
    assert lake.snapshots().column("snapshot_id").to_pylist() == ["s1"]  # ...and never appears
    assert not any((Path(lake.base) / STAGING).iterdir())


def age_staging(lake: Lake, seconds: float) -> None:
    """Make every staged file look `seconds` old: its writer died that long ago."""
    then = time.time() - seconds
    for path in (Path(lake.base) / STAGING).rglob("*"):
        os.utime(path, (then, then))


def test_writer_killed_while_placing_is_rolled_forward(lake: Lake) -> None:
    run_crashing_publish(lake, "placing")
    assert lake.snapshots().num_rows == 0  # not committed: readers see nothing
    assert lake.read("brokers").num_rows == 0
    age_staging(lake, STALE_STAGING_S + 1)
    lake.publish(snapshot_batch(small_snapshot("s2")))  # the next publish recovers first
    assert sorted(lake.snapshots().column("snapshot_id").to_pylist()) == ["crashed", "s2"]
    assert lake.read("partitions", snapshot_ids=["crashed"]).num_rows == 4
    assert lake.read("brokers", snapshot_ids=["crashed"]).num_rows == 2


def test_a_publish_leaves_a_live_writers_staging_alone(lake: Lake) -> None:
    """Two writers at once (the snapshot DAG and the remediation audit): neither takes over or
    deletes the other's batch while it is being staged or placed."""
    run_crashing_publish(lake, "staging")  # a batch staged a moment ago, by a writer still running
    lake.publish(snapshot_batch(small_snapshot("s1")))
    assert [p.name for p in (Path(lake.base) / STAGING).iterdir()] == ["crashed"]
    age_staging(lake, STALE_STAGING_S + 1)  # ...until it has been idle long enough to be dead
    lake.publish(snapshot_batch(small_snapshot("s2")))
    assert not any((Path(lake.base) / STAGING).iterdir())


def test_commit_logs_by_name(any_lake: Lake) -> None:
    lake = any_lake
    assert lake.commit_log("group_snapshots", "c1").num_rows == 0
    assert lake.latest_snapshot_id("c1", "group_snapshots") is None
    with pytest.raises(LakeError, match="'partitions' is not a commit log"):
        lake.commit_log("partitions")


def test_a_batch_written_before_a_column_existed_reads_it_as_null(
    any_lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Columns are added nullable (here partition_end_offsets.log_start_offset): a batch an older
    kafka-ops wrote without one still reads, the column null, beside newer batches that have it."""
    lake, table, column = any_lake, "partition_end_offsets", "log_start_offset"
    old, new = group_batch(group_snapshot("g1")), group_batch(group_snapshot("g2"))
    new.tables[table] = new.tables[table].set_column(
        new.tables[table].schema.get_field_index(column), column, [[0, 5, 0]]
    )
    with monkeypatch.context() as older:  # the schema and the rows as the older kafka-ops had them
        older.setitem(TABLES, table, TABLES[table].remove(TABLES[table].get_field_index(column)))
        lake.publish(dataclasses.replace(old, tables={**old.tables, table: old.tables[table].drop_columns([column])}))
    lake.publish(new)
    rows = lake.read(table, "c1").sort_by([("snapshot_id", "ascending"), ("partition", "ascending")])
    assert rows.select(["snapshot_id", column]).to_pylist() == [
        {"snapshot_id": s, column: v} for s, v in [("g1", None), ("g1", None), ("g1", None), ("g2", 0), ("g2", 5),
                                                  ("g2", 0)]
    ]  # fmt: skip
    one = lake.read_batch(table, "c1", old.dt, "g1", {"snapshot_id": "g1"})
    assert one is not None and one.schema.equals(TABLES[table]) and one.column(column).to_pylist() == [None] * 3
