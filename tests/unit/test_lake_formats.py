"""Opening a lake root in one format while its tables are in the other fails at once, naming the
root, the tables and the fix, and writes nothing; a root in its own format (or a new one) opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.formats import table_formats
from kafka_ops.lake.migrate import migrate_to_delta
from kafka_ops.lake.open import lake_of, open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.settings import Settings
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot


def files_under(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


@pytest.fixture
def parquet_root(tmp_path: Path) -> Path:
    Lake(tmp_path / "lake").publish(snapshot_batch(small_snapshot("s1")))
    (tmp_path / "lake" / "reports" / "c1").mkdir(parents=True)  # plain files are no table
    (tmp_path / "lake" / "reports" / "c1" / "latest.html").write_text("<p>report</p>")
    return tmp_path / "lake"


def test_a_parquet_lake_opened_as_delta_is_refused_and_untouched(parquet_root: Path) -> None:
    before = files_under(parquet_root)
    expected = (
        rf"the lake at {parquet_root} holds Parquet tables without a Delta log "
        r"\(acls, admin_requests, .* and 17 more\) "
        rf"but lake_format is 'delta': convert the lake with `kafka-ops lake migrate --lake {parquet_root}` "
        r".*or set lake_format = \"parquet\""
    )
    with pytest.raises(LakeError, match=expected):
        open_lake(parquet_root, "delta")
    with pytest.raises(LakeError, match=expected):
        lake_of(Settings(lake_root=str(parquet_root), lake_format="delta"))
    assert files_under(parquet_root) == before  # no Delta log started next to the Parquet files
    assert open_lake(parquet_root, "parquet").latest_snapshot_id("c1") == "s1"


def test_a_delta_lake_opened_as_parquet_is_refused_and_untouched(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    DeltaLake(root).publish(snapshot_batch(small_snapshot("s1")))
    before = files_under(root)
    with pytest.raises(
        LakeError,
        match=rf"the lake at {root} holds Delta tables \(admin_requests, brokers, .* and 3 more\) "
        r"but lake_format is 'parquet': "
        r"set lake_format = \"delta\"",
    ):
        open_lake(root, "parquet")
    assert files_under(root) == before
    assert open_lake(root, "delta").latest_snapshot_id("c1") == "s1"


def test_a_migrated_lake_opens_only_as_delta(parquet_root: Path) -> None:
    migrate_to_delta(parquet_root)
    assert set(table_formats(Lake(parquet_root)).values()) == {"delta"}
    assert "reports" not in table_formats(Lake(parquet_root))
    with pytest.raises(LakeError, match="holds Delta tables"):
        open_lake(parquet_root, "parquet")
    assert open_lake(parquet_root, "delta").latest_snapshot_id("c1") == "s1"


def test_a_half_migrated_lake_is_refused_both_ways(parquet_root: Path) -> None:
    (parquet_root / "partitions" / "_delta_log").mkdir()  # as a migration that stopped after one table
    assert table_formats(Lake(parquet_root))["partitions"] == "delta"
    with pytest.raises(
        LakeError,
        match=r"holds Parquet tables without a Delta log \(acls, .* and 16 more\)",
    ):
        open_lake(parquet_root, "delta")
    with pytest.raises(LakeError, match=r"holds Delta tables \(partitions\)"):
        open_lake(parquet_root, "parquet")


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_a_new_root_opens_in_either_format(tmp_path: Path, fmt: str) -> None:
    lake = open_lake(tmp_path / "new", fmt)
    lake.publish(snapshot_batch(small_snapshot("s1")))
    assert set(table_formats(lake).values()) == {fmt}
    assert open_lake(tmp_path / "new", fmt).latest_snapshot_id("c1") == "s1"


def test_a_table_whose_first_delta_commit_failed_is_no_parquet_table(tmp_path: Path) -> None:
    """A Delta writer that fails a table's first commit (a full disk: tests/integration/
    test_lake_unwritable.py) leaves its data file and no log: the lake still opens as Delta, and the
    next publish creates the table over the orphan."""
    root = tmp_path / "lake"
    orphan = root / "brokers" / "cluster=c1" / "dt=2026-11-21" / "part-00001-0a1b-c000.zstd.parquet"
    orphan.parent.mkdir(parents=True)
    orphan.write_bytes(b"half a file")
    assert table_formats(Lake(root)) == {"brokers": "parquet"}  # by its folders alone
    lake = open_lake(root, "delta")
    lake.publish(snapshot_batch(small_snapshot("s1")))
    assert lake.latest_snapshot_id("c1") == "s1" and lake.read("brokers").num_rows == 2
    parquet_file = root / "legacy" / "cluster=c1" / "dt=2026-11-21" / "s0.parquet"  # a Parquet lake's file
    parquet_file.parent.mkdir(parents=True)
    parquet_file.write_bytes(b"rows")
    with pytest.raises(LakeError, match=r"holds Parquet tables without a Delta log \(legacy\)"):
        open_lake(root, "delta")
