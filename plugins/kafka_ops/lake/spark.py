"""Reading lake tables from Spark with the documented schema and string partition columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from kafka_ops.lake.schema import TABLES, commit_table_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def read_table(spark: SparkSession, root: str, table: str, committed_only: bool = True) -> DataFrame:
    """`table` as a DataFrame with `cluster` and `dt` as strings; by default only rows of
    published batches (whose `snapshot_id` is in the table's commit log, see `lake.store`).
    A documented table never written yet reads as empty (e.g. group tables of a lake that only
    has ZooKeeper snapshots)."""
    from pyspark.errors import AnalysisException  # noqa: PLC0415 - only Spark callers import pyspark

    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    path = f"{root.rstrip('/')}/{table}"
    reader = spark.read
    if table in TABLES:  # the documented schema: a column added since an older file was written reads as null
        empty = TABLES[table].append(pa.field("cluster", pa.string())).append(pa.field("dt", pa.string()))
        reader = reader.schema(spark.createDataFrame(empty.empty_table()).schema)
    try:
        frame = reader.option("basePath", path).parquet(path)
    except AnalysisException as e:
        if table not in TABLES or e.getCondition() != "PATH_NOT_FOUND":
            raise
        return spark.createDataFrame(empty.empty_table())
    if table in TABLES:
        frame = frame.select(*TABLES[table].names, "cluster", "dt")
    commit_table = commit_table_of(table)
    if committed_only and table != commit_table:
        commits = read_table(spark, root, commit_table).select("cluster", "snapshot_id")
        frame = frame.join(commits, ["cluster", "snapshot_id"], "left_semi")
    return frame
