"""Spark reads the lake with the documented types and no partition-column surprises."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from kafka_ops.lake.spark import read_table
from kafka_ops.lake.store import Lake
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot

pytestmark = pytest.mark.slow


def test_spark_reads_snapshot_tables(spark: SparkSession, tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(small_snapshot("s1", cluster="1")))  # a numeric-looking cluster name
    parts = read_table(spark, str(tmp_path), "partitions")
    fields = {f.name: f.dataType for f in parts.schema.fields}
    assert fields["cluster"] == T.StringType()
    assert fields["dt"] == T.StringType()
    assert fields["replicas"] == T.ArrayType(T.IntegerType(), True)
    assert fields["captured_at"] == T.TimestampType()
    assert fields["state_version"] == T.IntegerType()
    rows = parts.where("topic = 'orders' AND partition = 0").collect()
    assert {(r.cluster, r.dt, r.isr[0]) for r in rows} == {("1", "2026-11-21", 1)}
    log = read_table(spark, str(tmp_path), "snapshots").collect()
    assert [(r.snapshot_id, r.under_replicated_count) for r in log] == [("s1", 1)]


def test_spark_skips_uncommitted_snapshots(spark: SparkSession, tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(small_snapshot("s1")))
    lake.publish(snapshot_batch(small_snapshot("s2")))
    (tmp_path / "snapshots" / "cluster=c1" / "dt=2026-11-21" / "s2.parquet").unlink()  # s2 never committed
    ids = {r.snapshot_id for r in read_table(spark, str(tmp_path), "brokers").collect()}
    assert ids == {"s1"}


def test_spark_reads_a_table_never_written_as_empty(spark: SparkSession, tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    lake.publish(snapshot_batch(small_snapshot("s1")))  # ZooKeeper tables only: no group table yet
    members = read_table(spark, str(tmp_path), "group_members")
    assert members.count() == 0
    fields = {f.name: f.dataType for f in members.schema.fields}
    assert fields["subscription"] == T.BinaryType() and fields["cluster"] == T.StringType()
