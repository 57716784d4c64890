"""The Delta lake's time travel (`kafka-ops lake as-of`) and the in-place Parquet → Delta migration
(`kafka-ops lake migrate`) of a lake written by the Parquet `Lake`."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from deltalake import DeltaTable

from kafka_ops.cli import main
from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.migrate import migrate_to_delta
from kafka_ops.lake.schema import METADATA_TABLES
from kafka_ops.lake.store import STAGING, Batch, Lake
from kafka_ops.lake.time_travel import batch_as_of
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot


def snapshot_at(snapshot_id: str, minute: int, cluster: str = "c1") -> Batch:
    snap = small_snapshot(snapshot_id, cluster)
    snap.captured_at = snap.captured_at.replace(minute=minute)
    return snapshot_batch(snap)


def test_as_of_reads_the_commit_table_at_its_version_then(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lake = DeltaLake(tmp_path / "lake")
    lake.publish(snapshot_at("s1", 0))
    time.sleep(0.05)
    between = datetime.now(UTC)
    time.sleep(0.05)
    lake.publish(snapshot_at("s2", 5))
    then, now = batch_as_of(lake, "c1", between), batch_as_of(lake, "c1", datetime.now(UTC))
    assert then is not None and (then.snapshot_id, then.captured_at.minute) == ("s1", 0)
    assert now is not None and now.snapshot_id == "s2" and now.version > then.version
    assert batch_as_of(lake, "c2", datetime.now(UTC)) is None
    with pytest.raises(LakeError, match=r"has no version at or before .*: its kept history starts at"):
        batch_as_of(lake, "c1", between - timedelta(days=1))
    with pytest.raises(LakeError, match="has no time zone"):
        batch_as_of(lake, "c1", between.replace(tzinfo=None))

    assert main(["lake", "as-of", "--cluster", "c1", "--at", between.isoformat(), "--lake", lake.root]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["snapshot_id"] == "s1"
    assert printed["rows"]["partitions"] == 4 and printed["rows"]["brokers"] == 2
    assert main(["lake", "as-of", "--cluster", "c1", "--at", "03:10", "--lake", lake.root]) == 2
    assert "--at '03:10' is not an ISO 8601 time" in capsys.readouterr().err


def committed_rows(lake: Lake) -> dict[str, list[tuple[object, ...]]]:
    """Every committed row of every snapshot table, sorted, as plain tuples."""
    out = {}
    for table in METADATA_TABLES:
        rows = lake.read(table).to_pylist()
        out[table] = sorted(tuple(sorted((k, repr(v)) for k, v in row.items())) for row in rows)
    return out


def test_migrating_a_parquet_lake_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parquet = Lake(tmp_path / "lake")
    parquet.publish(snapshot_at("s1", 0))
    parquet.publish(snapshot_at("s2", 5, cluster="c2"))
    (Path(parquet.base) / "reports" / "c1").mkdir(parents=True)  # plain files stay files
    (Path(parquet.base) / "reports" / "c1" / "latest.html").write_text("<p>report</p>")
    before = committed_rows(parquet)

    assert main(["lake", "migrate", "--lake", parquet.root]) == 0
    outcome = json.loads(capsys.readouterr().out)["tables"]
    assert outcome["partitions"] == outcome["snapshots"] == "converted"
    assert "reports" not in outcome
    delta = DeltaLake(parquet.root)
    assert committed_rows(delta) == before
    protocol = DeltaTable(f"{delta.base}/partitions").protocol()
    assert (protocol.min_reader_version, protocol.min_writer_version) == (1, 2)
    assert DeltaTable(f"{delta.base}/partitions").metadata().configuration["delta.checkpointInterval"] == "10"

    again = migrate_to_delta(parquet.root)  # idempotent: nothing changes
    assert {m.outcome for m in again} == {"already Delta"}
    assert DeltaTable(f"{delta.base}/partitions").version() == 0
    assert committed_rows(delta) == before

    delta.publish(snapshot_at("s3", 10))
    assert sorted(delta.snapshots().column("snapshot_id").to_pylist()) == ["s1", "s2", "s3"]
    assert delta.read("partitions", "c1", ["s3"]).num_rows == 4
    assert (Path(parquet.base) / "reports" / "c1" / "latest.html").read_text() == "<p>report</p>"


def test_migration_waits_for_a_live_parquet_publish(tmp_path: Path) -> None:
    parquet = Lake(tmp_path / "lake")
    parquet.publish(snapshot_at("s1", 0))
    (Path(parquet.base) / STAGING / "s2").mkdir(parents=True)  # a writer staging right now
    with pytest.raises(LakeError, match=r"a Parquet publish is in progress under .*pause the DAGs"):
        migrate_to_delta(parquet.root)
    assert not (Path(parquet.base) / "partitions" / "_delta_log").exists()
