"""Spark reads a Delta lake written by `DeltaLake` (the files its log lists, or through Delta's Spark
connector, pinned to pyspark 4.1), sees exactly the committed batches, and its writes keep the tables
readable by delta-rs."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

from deltalake import DeltaTable
from pyspark.sql import SparkSession

from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.spark import LATEST, _delta_files, read_table
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot
from tests.unit.test_delta_lake import EXPECTED_ROWS, finish, run_writer


def test_spark_reads_only_committed_batches(spark: SparkSession, tmp_path: Path) -> None:
    lake = DeltaLake(tmp_path / "lake")
    lake.publish(snapshot_batch(small_snapshot("s1")))
    lake.publish(snapshot_batch(small_snapshot("s2", cluster="c2")))
    torn = snapshot_batch(small_snapshot("torn"))  # a writer died before its commit row
    lake._replace_batch_rows("partitions", torn, lake._with_partition(torn, "partitions"))

    partitions = read_table(spark, lake.root, "partitions", lake_format="delta")
    rows = sorted((r.cluster, r.snapshot_id, r.topic, r.partition) for r in partitions.collect())
    expected = lake.read("partitions").sort_by([("cluster", "ascending"), ("topic", "ascending")])
    assert rows == sorted(
        zip(*(expected.column(c).to_pylist() for c in ("cluster", "snapshot_id", "topic", "partition")), strict=True)
    )
    assert {r.snapshot_id for r in partitions.select("snapshot_id").distinct().collect()} == {"s1", "s2"}
    assert sorted(partitions.columns) == sorted(lake.read("partitions").column_names)
    assert read_table(spark, lake.root, "partitions", committed_only=False, lake_format="delta").count() == 12
    assert read_table(spark, lake.root, "group_offsets", lake_format="delta").count() == 0  # never written


def test_a_spark_append_keeps_the_table_readable_by_delta_rs(spark: SparkSession, tmp_path: Path) -> None:
    lake = DeltaLake(tmp_path / "lake")
    lake.publish(snapshot_batch(small_snapshot("s1")))
    brokers = read_table(spark, lake.root, "brokers", lake_format="delta")
    brokers.drop("snapshot_id").selectExpr("*", "'spark' AS snapshot_id").select(*brokers.columns).write.format(
        "delta"
    ).mode("append").save(f"{lake.base}/brokers")
    assert sorted(lake._read_raw("brokers", "c1").column("snapshot_id").to_pylist()) == ["s1", "s1", "spark", "spark"]
    protocol = DeltaTable(f"{lake.base}/brokers").protocol()
    assert (protocol.min_reader_version, protocol.min_writer_version) == (1, 2)
    assert not protocol.reader_features and not protocol.writer_features


def test_spark_sees_no_torn_batch_after_killed_writers(spark: SparkSession, tmp_path: Path) -> None:
    lake = DeltaLake(tmp_path / "lake")
    attempts = finish(run_writer("kill", lake.root, "23", "20"))
    assert sum(a["fate"] == "killed" for a in attempts) >= 10, attempts
    committed = set(lake.snapshots().column("snapshot_id").to_pylist())
    tables = ("partitions", "brokers", "configs")
    # the data tables are written at once, so the biggest (partitions) is often the last a kill spares
    raw = {s for t in tables for s in lake._read_raw(t, None).column("snapshot_id").to_pylist()}
    assert raw - committed, f"no kill left rows without a commit row: {attempts}"  # the test's premise
    for table in tables:
        frame = read_table(spark, lake.root, table, lake_format="delta")
        counts = {r.snapshot_id: r["count"] for r in frame.groupBy("snapshot_id").count().collect()}
        assert counts == dict.fromkeys(committed, EXPECTED_ROWS[table]), table


def test_spark_reads_the_files_delta_rs_lists_and_the_connector_reads_the_same_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A table the lake wrote is read from the Parquet files its log lists (no Delta connector job), one
    cluster's days only; the same rows as Delta's connector reads; a table the lake does not write is read
    through the connector."""
    lake = DeltaLake(tmp_path / "lake")
    lake.publish(snapshot_batch(small_snapshot("s1")))
    lake.publish(snapshot_batch(small_snapshot("s2", cluster="c2")))
    files = _delta_files(lake.root, "partitions", LATEST, "c1", None)
    assert files and all("/partitions/cluster=c1/dt=2026-11-21/" in f for f in files)
    assert _delta_files(lake.root, "partitions", LATEST, "c1", (date(2026, 11, 22), date(2026, 11, 23))) == []
    assert _delta_files(lake.root, "group_offsets", LATEST, None, None) == []  # never written

    listed = read_table(spark, lake.root, "partitions", lake_format="delta", cluster="c1")
    connector = spark.read.format("delta").load(f"{lake.base}/partitions").where("cluster = 'c1'")
    columns = ("cluster", "dt", "snapshot_id", "topic", "partition", "leader", "isr")
    assert sorted(tuple(r) for r in listed.select(*columns).collect()) == sorted(
        tuple(r) for r in connector.select(*columns).collect()
    )
    first = DeltaTable(f"{lake.base}/brokers").version()
    lake.publish(snapshot_batch(small_snapshot("s3")))
    at_first = read_table(spark, lake.root, "brokers", committed_only=False, lake_format="delta",
                          versions={"brokers": first})  # fmt: skip
    assert {r.snapshot_id for r in at_first.collect()} == {"s1", "s2"}


def test_a_file_outside_its_partition_folder_is_read_through_the_connector(spark: SparkSession, tmp_path: Path) -> None:
    """Spark takes a row's cluster and day from its file's folder: a table whose log adds a file elsewhere
    (a writer other than the lake's) is read through Delta's connector, which takes them from the log."""
    lake = DeltaLake(tmp_path / "lake")
    lake.publish(snapshot_batch(small_snapshot("s1")))
    table = Path(lake.base) / "brokers"
    (written,) = (table / "cluster=c1" / "dt=2026-11-21").glob("*.parquet")
    (table / "elsewhere").mkdir()
    shutil.copy(written, table / "elsewhere" / "copy.parquet")
    add = {"path": "elsewhere/copy.parquet", "partitionValues": {"cluster": "c2", "dt": "2026-11-21"},
           "size": written.stat().st_size, "modificationTime": 0, "dataChange": True}  # fmt: skip
    version = DeltaTable(str(table)).version() + 1
    (table / "_delta_log" / f"{version:020d}.json").write_text(json.dumps({"add": add}) + "\n")
    assert _delta_files(lake.root, "brokers", LATEST, None, None) is None
    rows = read_table(spark, lake.root, "brokers", committed_only=False, lake_format="delta").collect()
    assert sorted({(r.cluster, r.snapshot_id) for r in rows}) == [("c1", "s1"), ("c2", "s1")]
