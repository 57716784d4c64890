"""Reading lake tables from Spark with the documented schema and string partition columns.

A Delta lake (`lake_format="delta"`) is read through Delta's Spark connector, whose jars must be
on the session's classpath (`spark.jars`, see `kafka_ops.sandbox.jars.ensure_delta_spark_jars`):
each table at its latest Delta version, then semi-joined on its commit table as for Parquet."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from kafka_ops.errors import LakeError
from kafka_ops.lake.schema import TABLES, commit_table_of

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

LATEST = -2
"""`_read_delta`'s version for "the latest" (a real version is >= 0; -1 or None: not created yet)."""

DELTA_SPARK_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
"""What a session needs, besides the connector's jars, to read or write a Delta lake."""


def read_table(
    spark: SparkSession,
    root: str,
    table: str,
    committed_only: bool = True,
    *,
    lake_format: str = "parquet",
    versions: Mapping[str, int | None] | None = None,
) -> DataFrame:
    """`table` as a DataFrame with `cluster` and `dt` as strings; by default only rows of
    published batches (whose `snapshot_id` is in the table's commit log, see `lake.store`).
    A documented table never written yet reads as empty (e.g. group tables of a lake that only
    has ZooKeeper snapshots). On a Delta lake, a table named in `versions` (it and its commit
    table: see `lake.time_travel.version_as_of`) is read at that Delta version (`versionAsOf`),
    None or a negative version meaning it did not exist yet."""
    if versions and lake_format != "delta":
        raise LakeError(f"the Parquet lake at {root} keeps no table versions: reading as of a version needs Delta")
    if lake_format == "delta":
        frame = _read_delta(spark, root, table, (versions or {}).get(table, LATEST))
    elif lake_format == "parquet":
        frame = _read_parquet(spark, root, table)
    else:
        raise LakeError(f"unknown lake format {lake_format!r} for the lake at {root}: use 'parquet' or 'delta'")
    commit_table = commit_table_of(table)
    if committed_only and table != commit_table:
        commits = read_table(spark, root, commit_table, lake_format=lake_format, versions=versions)
        commits = commits.select("cluster", "snapshot_id")
        frame = frame.join(commits, ["cluster", "snapshot_id"], "left_semi")
    return frame


def _read_parquet(spark: SparkSession, root: str, table: str) -> DataFrame:
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
    return frame


def _read_delta(spark: SparkSession, root: str, table: str, version: int | None) -> DataFrame:
    from pyspark.errors import AnalysisException  # noqa: PLC0415 - only Spark callers import pyspark
    from pyspark.sql import functions as F  # noqa: PLC0415

    path = f"{root.rstrip('/')}/{table}"
    known = _documented(spark, table)
    if version is None or (version < 0 and version != LATEST):  # not yet created at the time asked for
        if known is None:
            raise LakeError(f"lake table {table!r} under {root} did not exist at the time asked for")
        return spark.createDataFrame([], known)
    reader = spark.read.format("delta")
    if version != LATEST:
        reader = reader.option("versionAsOf", version)
    try:
        frame = reader.load(path)
    except AnalysisException as e:
        if known is None or e.getCondition() not in ("PATH_NOT_FOUND", "DELTA_MISSING_DELTA_TABLE"):
            raise
        return spark.createDataFrame([], known)
    if known is None:
        return frame
    # the documented schema: a column added since an older version was written reads as null
    return frame.select(
        *[
            (F.col(f.name) if f.name in frame.columns else F.lit(None)).cast(f.dataType).alias(f.name)
            for f in known.fields
        ]
    )


def _documented(spark: SparkSession, table: str) -> StructType | None:
    if table not in TABLES:
        return None
    empty = TABLES[table].append(pa.field("cluster", pa.string())).append(pa.field("dt", pa.string()))
    return spark.createDataFrame(empty.empty_table()).schema
