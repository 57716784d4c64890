"""Spark reads the lake with the documented types and no partition-column surprises: the Parquet
lake's files (the first tests; the Delta lake's reads are `tests/unit/test_delta_spark.py`), then
both formats' window reads."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from kafka_ops.errors import LakeError
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.spark import read_table
from kafka_ops.lake.store import Lake
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import AT, small_snapshot

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_spark_reads_snapshot_tables(spark: SparkSession, tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(small_snapshot("s1", cluster="1")))  # a numeric-looking cluster name
    parts = read_table(spark, str(tmp_path), "partitions", lake_format="parquet")
    fields = {f.name: f.dataType for f in parts.schema.fields}
    assert fields["cluster"] == T.StringType()
    assert fields["dt"] == T.StringType()
    assert fields["replicas"] == T.ArrayType(T.IntegerType(), True)
    assert fields["captured_at"] == T.TimestampType()
    assert fields["state_version"] == T.IntegerType()
    rows = parts.where("topic = 'orders' AND partition = 0").collect()
    assert {(r.cluster, r.dt, r.isr[0]) for r in rows} == {("1", "2026-11-21", 1)}
    log = read_table(spark, str(tmp_path), "snapshots", lake_format="parquet").collect()
    assert [(r.snapshot_id, r.under_replicated_count) for r in log] == [("s1", 1)]


def test_spark_skips_uncommitted_snapshots(spark: SparkSession, tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(small_snapshot("s1")))
    lake.publish(snapshot_batch(small_snapshot("s2")))
    (tmp_path / "snapshots" / "cluster=c1" / "dt=2026-11-21" / "s2.parquet").unlink()  # s2 never committed
    ids = {r.snapshot_id for r in read_table(spark, str(tmp_path), "brokers", lake_format="parquet").collect()}
    assert ids == {"s1"}


def test_spark_reads_a_table_never_written_as_empty(spark: SparkSession, tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(small_snapshot("s1")))  # ZooKeeper tables only: no group table yet
    members = read_table(spark, str(tmp_path), "group_members", lake_format="parquet")
    assert members.count() == 0
    fields = {f.name: f.dataType for f in members.schema.fields}
    assert fields["subscription"] == T.BinaryType() and fields["cluster"] == T.StringType()


def test_a_file_written_before_a_column_existed_reads_it_as_null(spark: SparkSession, tmp_path: Path) -> None:
    """Lakes outlive releases: a snapshot written before `source`, ELR and the quorum existed is read
    with those columns null (Spark and pyarrow alike), beside a newer snapshot that has them."""
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(small_snapshot("s1")))
    lake.publish(snapshot_batch(small_snapshot("s2")))
    for table, dropped in (("snapshots", ["source", "bootstrap_servers", "metadata_version"]),
                           ("partitions", ["elr", "last_known_elr", "offline_replicas"])):  # fmt: skip
        old = tmp_path / table / "cluster=c1" / "dt=2026-11-21" / "s1.parquet"
        pq.write_table(pq.read_table(old).drop_columns(dropped), old)  # as an older release wrote it
    snapshots = read_table(spark, str(tmp_path), "snapshots", lake_format="parquet")
    log = {r.snapshot_id: r.source for r in snapshots.collect()}
    assert log == {"s1": None, "s2": "zookeeper"}
    parts = read_table(spark, str(tmp_path), "partitions", lake_format="parquet")
    parts = parts.where("partition = 0 AND topic = 'orders'")
    assert {r.snapshot_id: r.elr for r in parts.collect()} == {"s1": None, "s2": None}
    assert set(lake.read("snapshots").column("source").to_pylist()) == {None, "zookeeper"}


@pytest.mark.parametrize("lake_format", ["parquet", "delta"])
def test_a_read_of_a_clusters_days_opens_no_file_of_other_days(
    spark: SparkSession, tmp_path: Path, lake_format: str
) -> None:
    """The analysis reads its window's days only (`read_table`'s `cluster` and `days`), of the table
    and of its commit table: its cost must not grow with the lake's history. An older day's files
    made unreadable would fail any read that opened one."""
    lake = open_lake(tmp_path, lake_format)
    for days_ago, snapshot_id, cluster in ((2, "old", "c1"), (1, "yesterday", "c1"), (0, "today", "c1"),
                                           (0, "other", "c2")):  # fmt: skip
        lake.publish(
            snapshot_batch(replace(small_snapshot(snapshot_id, cluster), captured_at=AT - timedelta(days_ago)))
        )
    for table in ("partitions", "snapshots"):
        for file in (tmp_path / table / "cluster=c1" / f"dt={AT - timedelta(2):%Y-%m-%d}").glob("*.parquet"):
            file.write_bytes(b"not a parquet file")

    window = read_table(spark, str(tmp_path), "partitions", lake_format=lake_format, cluster="c1",
                        days=((AT - timedelta(1)).date(), AT.date()))  # fmt: skip
    seen = {(r.cluster, r.dt, r.snapshot_id) for r in window.select("cluster", "dt", "snapshot_id").collect()}
    assert seen == {("c1", f"{AT - timedelta(1):%Y-%m-%d}", "yesterday"), ("c1", f"{AT:%Y-%m-%d}", "today")}
    later = read_table(spark, str(tmp_path), "brokers", lake_format=lake_format, cluster="c1",
                       days=((AT + timedelta(1)).date(), (AT + timedelta(2)).date()))  # fmt: skip
    assert later.count() == 0 and "broker_id" in later.columns  # days never written: empty, documented columns
    with pytest.raises(LakeError, match="first day no later than the last"):
        read_table(spark, str(tmp_path), "partitions", cluster="c1", days=(AT.date(), (AT - timedelta(1)).date()))
    with pytest.raises(Exception, match=r"(?i)parquet"):  # the check has teeth: a whole read opens the old day
        read_table(spark, str(tmp_path), "partitions", lake_format=lake_format).count()
