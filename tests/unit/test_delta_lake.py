"""The Delta lake: batches atomic across tables for the project's readers, with writers killed
(SIGKILL) mid-publish, retried and racing; table protocol; the `lake_format` setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from kafka_ops.errors import ConfigError, LakeError
from kafka_ops.lake.delta_store import CHECKPOINT_INTERVAL, PENDING, DeltaLake
from kafka_ops.lake.open import lake_of
from kafka_ops.settings import Settings, load_settings
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot

ROOT = Path(__file__).parents[2]
EXPECTED_ROWS = {name: t.num_rows for name, t in snapshot_batch(small_snapshot("x")).tables.items()}


@pytest.fixture
def delta(tmp_path: Path) -> DeltaLake:
    return DeltaLake(tmp_path / "lake")


def run_writer(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins")])}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.unit.lake_writers", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(writer: subprocess.Popen[str]) -> list[dict[str, object]]:
    out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def batch_rows(lake: DeltaLake, committed: bool) -> dict[str, Counter[str]]:
    """Rows per table per batch id, as the project's readers see them (`committed`) or raw."""
    tables = [t for t in EXPECTED_ROWS if EXPECTED_ROWS[t] > 0]
    read = lake.read if committed else lambda t: lake._read_raw(t, None)
    return {t: Counter(read(t).column("snapshot_id").to_pylist()) for t in tables}


def assert_whole_batches(lake: DeltaLake) -> list[str]:
    """Every committed batch has exactly its rows in every table (none torn, none doubled)."""
    committed = lake.snapshots().column("snapshot_id").to_pylist()
    assert len(committed) == len(set(committed)), f"a commit row was written twice: {sorted(committed)}"
    for table, rows in batch_rows(lake, committed=True).items():
        assert set(rows) == set(committed), table
        assert {b: rows[b] for b in committed} == dict.fromkeys(committed, EXPECTED_ROWS[table]), table
    return committed


def test_writers_killed_at_random_points_leave_no_torn_or_doubled_batch(delta: DeltaLake) -> None:
    attempts = finish(run_writer("kill", delta.root, "15", "20"))
    assert len(attempts) == 20
    assert Counter(a["fate"] for a in attempts)["killed"] >= 10, attempts
    committed = assert_whole_batches(delta)
    assert {"warmup", "timed"} <= set(committed)
    raw = batch_rows(delta, committed=False)
    torn = {b for rows in raw.values() for b in rows if b not in committed}
    assert torn, f"no kill landed between a data commit and the commit row: {attempts}"  # the test's premise
    assert all(n <= EXPECTED_ROWS[t] for t, rows in raw.items() for n in rows.values()), "a retry doubled rows"

    assert set(delta.recover()) >= torn  # a later run (or the next publish, once they are stale) undoes them
    raw = batch_rows(delta, committed=False)
    assert {b for rows in raw.values() for b in rows} == set(committed)
    assert not any((Path(delta.base) / PENDING).rglob("*.json"))

    delta.publish(snapshot_batch(small_snapshot("after")))
    assert set(assert_whole_batches(delta)) == {*committed, "after"}


def test_two_writers_racing_on_one_cluster_lose_nothing(delta: DeltaLake) -> None:
    delta.publish(snapshot_batch(small_snapshot("first")))  # the tables exist: both writers append
    writers = [run_writer("race", delta.root, name, "6", "2") for name in ("w0", "w1")]
    results = [finish(w)[0] for w in writers]
    assert sum(r["retries"] for r in results) > 0, results  # they did race
    published = {b for r in results for b in r["published"]}
    errors = [e for r in results for e in r["errors"]]
    assert all("another writer keeps committing; retry the publish" in e for e in errors), errors
    committed = assert_whole_batches(delta)
    assert set(committed) == {"first", *published}
    assert len(published) + len(errors) == 12


def test_a_retried_batch_replaces_its_rows(delta: DeltaLake) -> None:
    delta.publish(snapshot_batch(small_snapshot("s1")))
    delta.publish(snapshot_batch(small_snapshot("s1")))
    assert assert_whole_batches(delta) == ["s1"]
    assert delta._read_raw("partitions", None).num_rows == EXPECTED_ROWS["partitions"]


def test_rows_without_a_commit_row_are_invisible(delta: DeltaLake) -> None:
    batch = snapshot_batch(small_snapshot("s1"))
    delta._replace_batch_rows("partitions", batch, delta._with_partition(batch, "partitions"))
    assert delta._read_raw("partitions", "c1").num_rows == EXPECTED_ROWS["partitions"]
    assert delta.read("partitions", "c1").num_rows == 0
    assert delta.latest_snapshot_id("c1") is None


def test_tables_need_only_reader_1_writer_2(delta: DeltaLake) -> None:
    delta.publish(snapshot_batch(small_snapshot("s1")))
    for table in ("snapshots", "partitions", "brokers"):
        protocol = DeltaTable(f"{delta.base}/{table}").protocol()
        assert (protocol.min_reader_version, protocol.min_writer_version) == (1, 2), table
        assert not protocol.reader_features and not protocol.writer_features, table


def test_tables_are_checkpointed_every_ten_commits(delta: DeltaLake) -> None:
    for i in range(CHECKPOINT_INTERVAL):
        delta.publish(snapshot_batch(small_snapshot(f"s{i}")))
    log = Path(delta.base) / "partitions" / "_delta_log"
    assert DeltaTable(str(log.parent)).metadata().configuration["delta.checkpointInterval"] == "10"
    assert [p.name for p in log.glob("*.checkpoint.parquet")] == [f"{CHECKPOINT_INTERVAL - 1:020d}.checkpoint.parquet"]
    assert len(assert_whole_batches(delta)) == CHECKPOINT_INTERVAL


def test_a_table_with_deletion_vectors_is_refused(delta: DeltaLake) -> None:
    rows = pa.table({"snapshot_id": ["s0"], "cluster": ["c1"], "dt": ["2026-11-21"]})
    path = f"{delta.base}/brokers"
    write_deltalake(path, rows, partition_by=["cluster", "dt"], configuration={"delta.enableDeletionVectors": "true"})
    with pytest.raises(LakeError, match=r"Delta table .*/brokers needs reader 3 / writer 7 .*deletionVectors"):
        delta.publish(snapshot_batch(small_snapshot("s1")))
    assert delta.snapshots().num_rows == 0


def test_bad_rows_fail_before_anything_is_written(delta: DeltaLake) -> None:
    batch = snapshot_batch(small_snapshot("s1"))
    tables = {**batch.tables, "brokers": batch.tables["brokers"].drop_columns(["rack"])}
    with pytest.raises(LakeError, match="rows for lake table 'brokers' do not fit its schema"):
        delta.publish(type(batch)(batch.batch_id, batch.cluster, batch.captured_at, tables))
    assert not Path(delta.base).exists()


def test_lake_format_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(lake_of(Settings(lake_root=str(tmp_path))), DeltaLake)  # the default
    assert type(lake_of(Settings(lake_root=str(tmp_path), lake_format="parquet"))).__name__ == "Lake"
    config = tmp_path / "settings.toml"
    config.write_text("")
    assert load_settings(config).lake_format == "delta"
    config.write_text('lake_format = "parquet"\n')
    assert load_settings(config).lake_format == "parquet"  # every reader and writer honours it (test_lake_callers)
    config.write_text('lake_format = "delta"\n')
    monkeypatch.setenv("KAFKA_OPS_LAKE_FORMAT", "delta")
    assert isinstance(lake_of(load_settings()), DeltaLake)
    monkeypatch.setenv("KAFKA_OPS_LAKE_FORMAT", "parquet")
    assert load_settings(config).lake_format == "parquet"
    monkeypatch.setenv("KAFKA_OPS_LAKE_FORMAT", "iceberg")
    with pytest.raises(
        ConfigError, match=r"\$KAFKA_OPS_LAKE_FORMAT: lake_format must be one of \['parquet', 'delta'\]"
    ):
        load_settings(config)
    monkeypatch.delenv("KAFKA_OPS_LAKE_FORMAT")
    config.write_text('lake_format = "orc"\n')
    with pytest.raises(ConfigError, match=r"settings.toml: lake_format must be one of .* not 'orc'"):
        load_settings(config)


def test_a_broken_table_is_named(delta: DeltaLake) -> None:
    delta.publish(snapshot_batch(small_snapshot("s1")))
    (Path(delta.base) / "brokers" / "_delta_log" / "00000000000000000000.json").write_text("{not json")
    with pytest.raises(LakeError, match=r"cannot open the Delta table .*/brokers: "):
        delta.read("brokers", "c1")
    for data in (Path(delta.base) / "partitions").rglob("*.parquet"):
        data.write_bytes(b"not parquet")
    with pytest.raises(LakeError, match=r"cannot read the Delta table .*/partitions: "):
        delta.read("partitions", "c1")
    assert delta.latest_snapshot_id("c1") == "s1"  # the other tables still read
