"""Reading lake tables from Spark with the documented schema and string partition columns.

A Delta lake (`lake_format="delta"`) is read at each table's latest Delta version (or the version asked
for), then semi-joined on its commit table as for Parquet. Its files are listed by delta-rs from the
table's log, and Spark reads just those Parquet files (`_delta_files`): the lake's tables are reader
version 1 (`delta_store.check_protocol`: no deletion vectors, no column mapping), whose data is exactly
its live files' rows, so this is the table; and it spares Spark's Delta connector rebuilding each
table's state in a dozen small Spark jobs per read (the warm 1-day analysis of `bench/lake_history.py`'s
toy lake: 65 s through the connector, 31 s so, on a loaded machine). A table with more features, or a
file outside its partition's folder, is read through the connector, whose jars must then be on the
session's classpath (`spark.jars`, see `kafka_ops.jars.fetch.ensure_delta_spark_jars`).

A read restricted to one cluster's days (`read_table`'s `cluster` and `days`, as the analysis reads
its window) touches only those partitions, of the table and of its commit table alike, so its cost
does not grow with the lake's history: the Parquet reader lists only those `dt=` folders and Delta
prunes the log's files to them, and the commit table is pruned before the semi-join."""

from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING
from urllib.parse import unquote

import pyarrow as pa

from kafka_ops.errors import LakeError
from kafka_ops.lake.names import DEFAULT_LAKE_FORMAT, check_name
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
    lake_format: str = DEFAULT_LAKE_FORMAT,
    versions: Mapping[str, int | None] | None = None,
    cluster: str | None = None,
    days: tuple[date, date] | None = None,
) -> DataFrame:
    """`table` as a DataFrame with `cluster` and `dt` as strings; by default only rows of
    published batches (whose `snapshot_id` is in the table's commit log, see `lake.store`).
    A documented table never written yet reads as empty (e.g. group tables of a lake that only
    has ZooKeeper snapshots). On a Delta lake, a table named in `versions` (it and its commit
    table: see `lake.time_travel.version_as_of`) is read at that Delta version (`versionAsOf`),
    None or a negative version meaning it did not exist yet.

    With `cluster`, only that cluster's rows; with `days` too (the first and last `dt`, inclusive),
    only those days' partitions, of the table and of its commit table, are read (see above): a batch
    is committed in the partition of its own day, so this changes no row of those days."""
    if versions and lake_format != "delta":
        raise LakeError(f"the Parquet lake at {root} keeps no table versions: reading as of a version needs Delta")
    if days is not None and (cluster is None or days[1] < days[0]):
        raise LakeError(
            f"reading {table!r} of the lake at {root} by days needs a cluster and a first day no later than "
            f"the last: got cluster {cluster!r}, days {days[0]} to {days[1]}"
        )
    if lake_format == "delta":
        frame = _read_delta(spark, root, table, (versions or {}).get(table, LATEST), cluster, days)
    elif lake_format == "parquet":
        frame = _read_parquet(spark, root, table, cluster, days)
    else:
        raise LakeError(f"unknown lake format {lake_format!r} for the lake at {root}: use 'parquet' or 'delta'")
    frame = _partitions(frame, cluster, days)
    commit_table = commit_table_of(table)
    if committed_only and table != commit_table:
        commits = read_table(
            spark, root, commit_table, lake_format=lake_format, versions=versions, cluster=cluster, days=days
        )
        commits = commits.select("cluster", "snapshot_id")
        frame = frame.join(commits, ["cluster", "snapshot_id"], "left_semi")
    return frame


def _partitions(frame: DataFrame, cluster: str | None, days: tuple[date, date] | None) -> DataFrame:
    """`frame`'s rows of `cluster` and `days` (first and last, inclusive): partition filters, which
    Spark and Delta apply to the files before reading any."""
    from pyspark.sql import functions as F  # noqa: PLC0415 - only Spark callers import pyspark

    if cluster is not None:
        frame = frame.where(F.col("cluster") == cluster)
    if days is not None:
        frame = frame.where(F.col("dt").between(f"{days[0]:%Y-%m-%d}", f"{days[1]:%Y-%m-%d}"))
    return frame


def _folders(path: str, cluster: str | None, days: tuple[date, date] | None) -> str:
    """The Parquet reader's path: the table's folder, or a glob of only `cluster`'s folder or of only
    its `days`' folders (a lake's cluster names hold no glob characters: `check_name`)."""
    if cluster is None:
        return path
    check_name("cluster", cluster)
    if days is None:
        return f"{path}/cluster={cluster}"
    first, last = days
    dts = [f"{first + timedelta(days=i):%Y-%m-%d}" for i in range((last - first).days + 1)]
    return f"{path}/cluster={cluster}/dt={{{','.join(dts)}}}"


def _read_parquet(
    spark: SparkSession, root: str, table: str, cluster: str | None, days: tuple[date, date] | None
) -> DataFrame:
    from pyspark.errors import AnalysisException  # noqa: PLC0415 - only Spark callers import pyspark

    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    path = f"{root.rstrip('/')}/{table}"
    reader = spark.read
    known = _documented(table)
    if known is not None:  # the documented schema: a column added since an older file was written reads as null
        reader = reader.schema(known)
    try:
        frame = reader.option("basePath", path).parquet(_folders(path, cluster, days))
        frame.schema  # noqa: B018 - resolves the paths now: Spark Connect's reads are lazy, classic Spark's eager
    except AnalysisException as e:  # no such table, or none of its folders asked for
        if known is None or e.getCondition() != "PATH_NOT_FOUND":
            raise
        return spark.createDataFrame([], known)
    if table in TABLES:
        frame = frame.select(*TABLES[table].names, "cluster", "dt")
    return frame


def _read_delta(  # noqa: PLR0917 - read_table's own arguments, passed on
    spark: SparkSession,
    root: str,
    table: str,
    version: int | None,
    cluster: str | None = None,
    days: tuple[date, date] | None = None,
) -> DataFrame:
    from pyspark.errors import AnalysisException  # noqa: PLC0415 - only Spark callers import pyspark
    from pyspark.sql import functions as F  # noqa: PLC0415

    path = f"{root.rstrip('/')}/{table}"
    known = _documented(table)
    if version is None or (version < 0 and version != LATEST):  # not yet created at the time asked for
        if known is None:
            raise LakeError(f"lake table {table!r} under {root} did not exist at the time asked for")
        return spark.createDataFrame([], known)
    files = _delta_files(root, table, version, cluster, days) if known is not None else None
    if known is not None and files == []:  # not created yet, or none of its files in the partitions asked for
        return spark.createDataFrame([], known)
    if known is not None and files:
        frame = spark.read.schema(known).option("basePath", path).parquet(*files)
        return frame.select(*TABLES[table].names, "cluster", "dt")
    reader = spark.read.format("delta")
    if version != LATEST:
        reader = reader.option("versionAsOf", version)
    try:
        frame = reader.load(path)
        frame.schema  # noqa: B018 - resolves the table now (Spark Connect's reads are lazy)
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


def _delta_files(
    root: str, table: str, version: int, cluster: str | None, days: tuple[date, date] | None
) -> list[str] | None:
    """The Parquet files of Delta table `table` at `version` (`LATEST`: the latest) in `cluster`'s `days`
    (either None: all), as delta-rs lists them from the table's log; [] when the table does not exist
    yet; None when Spark must read it through Delta's connector instead: a table whose protocol has
    features the lake never writes, or a file not in the `cluster=/dt=` folder of its partition values
    (the path Spark's reader takes them from)."""
    from kafka_ops.lake.delta_store import DeltaLake, check_protocol  # noqa: PLC0415 - delta-rs for Delta only

    lake = DeltaLake(root)
    delta = lake.table_at(table, None if version == LATEST else version)
    if delta is None:
        return []
    try:
        check_protocol(delta, lake.table_uri(table))
    except LakeError:
        return None
    actions = delta.get_add_actions(flatten=True)
    if "partition.cluster" not in actions.schema.names or "partition.dt" not in actions.schema.names:
        return None  # not partitioned as the lake writes its tables
    paths, clusters, dts = (actions.column(c).to_pylist() for c in ("path", "partition.cluster", "partition.dt"))
    base = f"{root.rstrip('/')}/{table}"
    window = None if days is None else (f"{days[0]:%Y-%m-%d}", f"{days[1]:%Y-%m-%d}")
    files = []
    for path, part_cluster, part_dt in zip(paths, clusters, dts, strict=True):
        relative = unquote(str(path))
        if not relative.startswith(f"cluster={part_cluster}/dt={part_dt}/"):
            return None
        if cluster in (None, part_cluster) and (window is None or window[0] <= str(part_dt) <= window[1]):
            files.append(f"{base}/{relative}")
    return files


def _documented(table: str) -> StructType | None:
    """`table`'s documented schema with its partition columns, as Spark types (converted here, not by
    `createDataFrame` of an empty Arrow table, which Spark Connect refuses: no rows to infer from)."""
    from pyspark.sql.pandas.types import from_arrow_schema  # noqa: PLC0415 - only Spark callers import pyspark

    if table not in TABLES:
        return None
    return from_arrow_schema(TABLES[table].append(pa.field("cluster", pa.string())).append(pa.field("dt", pa.string())))
