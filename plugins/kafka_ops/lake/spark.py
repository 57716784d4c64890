"""Reading lake tables from Spark with the documented schema and string partition columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_ops.lake.schema import COMMIT_TABLE, schema_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def read_table(spark: SparkSession, root: str, table: str, committed_only: bool = True) -> DataFrame:
    """`table` as a DataFrame with `cluster` and `dt` as strings; by default only rows of
    snapshots whose commit row exists (see `lake.store`)."""
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    path = f"{root.rstrip('/')}/{table}"
    frame = spark.read.option("basePath", path).parquet(path)
    expected = [*schema_of(table).names, "cluster", "dt"]
    frame = frame.select(*expected)
    if committed_only and table != COMMIT_TABLE:
        commits = read_table(spark, root, COMMIT_TABLE).select("snapshot_id")
        frame = frame.join(commits, "snapshot_id", "left_semi")
    return frame
