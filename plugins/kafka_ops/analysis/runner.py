"""Run detectors for one cluster: read the lake, detect, publish findings atomically.

The shared body of every `spark_jobs/*.py` main. Findings are small (rows per partition or
broker of one snapshot, events of one day), so they are collected to the driver as Arrow
and published with the same atomic staging/commit as snapshots (`Lake.publish`), with the
`analysis_runs` table as their commit log.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kafka_ops.analysis import partition_runs
from kafka_ops.analysis.detector import SEVERITIES, Context, Detector
from kafka_ops.analysis.partition_runs import COVERAGE_TABLE, RUNS_TABLE
from kafka_ops.capacities import Capacities
from kafka_ops.errors import ConfigError, LakeError
from kafka_ops.jars.fetch import ensure_delta_spark_jars, ensure_spark_s3_jars
from kafka_ops.lake.names import DEFAULT_LAKE_FORMAT
from kafka_ops.lake.object_store import is_s3
from kafka_ops.lake.open import add_lake_format_argument, open_lake
from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE, COMMIT_TABLE, commit_table_of
from kafka_ops.lake.spark import read_table
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.thresholds import Thresholds

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

COLLECTING_THREADS = 4
"""Findings tables computed at a time (`_collect`)."""

LOCAL_SPARK_DEFAULTS = {
    # small data: a handful of brokers and at most ~1M rows per table per day
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # a Delta table's log is small too (daily maintenance checkpoints it): Delta's default of 50
    # partitions to rebuild each table's state cost cluster_health.py on a small Delta lake 57 s, not 41
    "spark.databricks.delta.snapshotPartitions": "8",
    # a window's table is read from the Parquet files its Delta log lists (`lake.spark`), one per snapshot:
    # 288 a day. Past 32 paths Spark lists them with a Spark job of its own, per table: building the 16 input
    # tables of a 20,000-partition day took 34-49 s that way, 4-9 s listed by the driver (same run)
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000",
}


@dataclass(frozen=True)
class Connector:
    """Jars a session needs for a kind of lake: how to recognise them in `spark.jars`, a class they
    hold, and the function that fetches them (Maven once, then cached)."""

    what: str
    marker: str
    main_class: str
    fetch: Callable[[], list[Path]]


DELTA_CONNECTOR = Connector(
    "Delta's Spark connector", "delta-spark", "io.delta.sql.DeltaSparkSessionExtension", ensure_delta_spark_jars
)
S3A_CONNECTOR = Connector(
    "Hadoop's S3A filesystem", "hadoop-aws", "org.apache.hadoop.fs.s3a.S3AFileSystem", ensure_spark_s3_jars
)


def _loadable(class_name: str) -> bool:
    """Whether the driver's JVM (spark-submit's, already running) can load `class_name`."""
    from py4j.protocol import Py4JError  # noqa: PLC0415
    from pyspark import SparkContext  # noqa: PLC0415

    jvm = SparkContext._jvm
    if jvm is None:
        return False
    loader = jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader()
    try:
        jvm.java.lang.Class.forName(class_name, False, loader)
    except Py4JError:  # ClassNotFoundException, through py4j
        return False
    return True


@dataclass(frozen=True)
class AnalysisResult:
    cluster: str
    snapshot_id: str
    counts: dict[str, dict[str, int]]
    """findings table → severity → rows."""
    seconds: dict[str, float] = field(default_factory=dict)
    """findings table → seconds Spark took to compute it, in the order computed (work shared with a
    table computed before it, such as reading the history, counts for that earlier one); the slow
    detector of a slow analysis."""
    partition_runs: dict[str, Any] = field(default_factory=dict)
    """How the partition runs were built, where detectors took them: `carried_from` (the analysed
    snapshot whose runs were carried on; None: rebuilt from the window's rows) and `snapshots_read`."""

    def summary(self) -> dict[str, Any]:
        return {"cluster": self.cluster, "snapshot_id": self.snapshot_id, "findings": self.counts,
                "seconds": self.seconds, "partition_runs": self.partition_runs}  # fmt: skip


def build_session(app_name: str, lake_format: str = DEFAULT_LAKE_FORMAT, lake_root: str | None = None) -> SparkSession:
    """A session with the defaults above, except where spark-submit's --conf already set a value.
    For a Delta lake, also Delta's SQL extension and catalog, and Delta's Spark connector jars; for a
    lake root on S3 (`s3://`, `s3a://`), Hadoop's S3A filesystem configured from this process's AWS
    variables (`lake.spark_s3`) and its jars. The jars go in `spark.jars` (fetched once by Maven:
    `kafka_ops.jars`); under spark-submit they must come with its --jars (or be on Spark's own class
    path), as a session cannot add them to a running driver's class path (Spark only logs a
    ClassNotFoundException for Delta's extension and goes on without it)."""
    from pyspark import SparkConf, SparkContext  # noqa: PLC0415 - only jobs need Spark
    from pyspark.sql import SparkSession  # noqa: PLC0415

    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))  # spark-submit started the driver's JVM
    if submitted:  # join it first: only then does SparkConf see spark-submit's --conf and --jars
        SparkContext._ensure_initialized()
    given = SparkConf()
    wanted = dict(LOCAL_SPARK_DEFAULTS)
    needed: list[Connector] = []
    if lake_format == "delta":
        from kafka_ops.lake.spark import DELTA_SPARK_CONF  # noqa: PLC0415

        wanted.update(DELTA_SPARK_CONF)
        needed.append(DELTA_CONNECTOR)
    if lake_root is not None and is_s3(lake_root):
        from kafka_ops.lake.spark_s3 import spark_s3_conf  # noqa: PLC0415

        wanted.update(spark_s3_conf(lake_root, os.environ))
        needed.append(S3A_CONNECTOR)
    jars = [j for j in (given.get("spark.jars") or "").split(",") if j]
    missing = [
        c for c in needed if not any(c.marker in j for j in jars) and not (submitted and _loadable(c.main_class))
    ]
    if missing and submitted:  # a running driver's class path is fixed
        fetches = " and ".join(f"kafka_ops.jars.fetch.{c.fetch.__name__}()" for c in missing)
        raise ConfigError(
            f"a {lake_format} lake{f' at {lake_root}' if lake_root else ''} needs "
            f"{' and '.join(c.what for c in missing)} on the driver's class path: run spark-submit with "
            f"--jars <the jars of {fetches}> (the analysis DAG does)"
        )
    builder = SparkSession.builder.appName(app_name)
    for key, value in wanted.items():
        if not given.contains(key):
            builder = builder.config(key, value)
    if missing:
        builder = builder.config("spark.jars", ",".join(jars + [str(j) for c in missing for j in c.fetch()]))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    jvm = spark.sparkContext._jvm
    if jvm is not None:
        # the detectors order a window's few hundred snapshots without a partition key, on purpose; and
        # a Parquet read of a window's day folders (a glob, see `lake.spark`) is no streaming sink's
        # output, which Spark looks for on a single path and logs a stack trace for not finding; and Delta
        # logs the stack trace of a lake it cannot reach before it raises the error, which the job reports
        quiet = ("execution.window.WindowExec", "execution.streaming.sinks.FileStreamSink", "delta.DeltaTableUtils")
        for logger in quiet:
            jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
                f"org.apache.spark.sql.{logger}", jvm.org.apache.logging.log4j.Level.ERROR
            )
    return spark


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lake", required=True, help="lake root path or URL")
    parser.add_argument("--cluster", required=True, help="cluster name in the lake")
    add_lake_format_argument(parser)
    parser.add_argument("--snapshot-id", default=None, help="snapshot to analyse (default: the latest)")
    parser.add_argument(
        "--as-of",
        type=parse_as_of,
        default=None,
        help="analyse the lake as it was at this ISO 8601 time with its zone (a Delta lake's time travel): "
        "its latest batch then (or --snapshot-id), each table read at its Delta version current then",
    )
    parser.add_argument(
        "--thresholds",
        default="{}",
        help="JSON object of threshold overrides, e.g. '{\"stuck_reassignment_minutes\": 30}'",
    )
    parser.add_argument(
        "--min-insync-replicas-default",
        type=int,
        default=1,
        help="the brokers' static min.insync.replicas (server.properties), assumed where no dynamic "
        "or topic config sets it (default: 1, Kafka's)",
    )
    parser.add_argument(
        "--capacity",
        default="{}",
        help="JSON object of the cluster's [clusters.capacity] settings (disk and network per broker), e.g. "
        '\'{"disk_bytes": 2000000000000, "brokers": {"4": {"disk_bytes": 4000000000000}}}\'',
    )


def analyse(
    spark: SparkSession,
    lake_root: str,
    cluster: str,
    detectors: Sequence[Detector],
    thresholds: Thresholds,
    *,
    snapshot_id: str | None = None,
    analysed_at: datetime | None = None,
    min_insync_replicas_default: int = 1,
    capacity: Capacities | None = None,
    lake_format: str = DEFAULT_LAKE_FORMAT,
    as_of: datetime | None = None,
) -> AnalysisResult:
    """Run `detectors` on `cluster`'s history up to `snapshot_id` (default: latest) and publish;
    `min_insync_replicas_default` and `capacity` are the cluster's settings of those names (see `Context`).

    With `as_of` (Delta lakes only: time travel, not a scan), the lake is read as it was then: the
    latest batch committed by that time (or `snapshot_id`, which must have been committed by then),
    and every input table at its Delta version current then. The findings are published now, as
    an analysis of that batch."""
    sources = sorted({d.source for d in detectors})
    if len(sources) != 1:
        raise ConfigError(f"one analysis run reads one commit log; these detectors read {sources}")
    source = sources[0]
    lake = open_lake(lake_root, lake_format)
    versions = _versions_as_of(lake, cluster, source, input_tables(detectors), as_of) if as_of is not None else {}
    context = _context(lake, cluster, snapshot_id, thresholds, source, as_of=as_of)
    context = replace(
        context, min_insync_replicas_default=min_insync_replicas_default, capacity=capacity or Capacities()
    )
    since = context.captured_at - timedelta(hours=thresholds.history_hours)
    until = context.captured_at
    windowed = window_tables(detectors)
    with _store_failures_as_lake_errors(spark, lake_root):
        # a table some detector scans over the window is read once and kept in memory; one only read at
        # the latest snapshot is read from that batch alone
        inputs = {
            t: read_history(
                spark, lake_root, t, cluster, since=since if t in windowed else until, until=until,
                lake_format=lake_format, versions=versions,
            ).cache()
            for t in input_tables(detectors)
        }  # fmt: skip
        state: dict[str, DataFrame] = {}
        built: dict[str, Any] = {}
        if RUNS_TABLE in tables_of(detectors):
            inputs[RUNS_TABLE], state, built = _partition_runs(
                spark, lake, cluster, context, since, inputs[COMMIT_TABLE], lake_format, versions, as_of is None
            )
        findings: dict[str, DataFrame] = {}
        for detector in detectors:
            for name, frame in detector.detect({t: inputs[t] for t in detector.tables}, context).items():
                findings[name] = frame
        try:
            arrow, seconds = _collect(findings)
            kept = {name: frame.toArrow() for name, frame in state.items()}
        finally:
            for frame in inputs.values():
                frame.unpersist()
    counts = {name: _severity_counts(table) for name, table in arrow.items()}
    arrow.update(kept)
    arrow[ANALYSIS_COMMIT_TABLE] = _commit_row(context, source, sorted(d.name for d in detectors), counts, analysed_at)
    lake.publish(Batch(f"{context.snapshot_id}.analysis", cluster, context.captured_at, arrow, ANALYSIS_COMMIT_TABLE))
    return AnalysisResult(cluster, context.snapshot_id, counts, seconds, built)


def _collect(findings: Mapping[str, DataFrame]) -> tuple[dict[str, pa.Table], dict[str, float]]:
    """Each findings table as Arrow, and the seconds it took. `COLLECTING_THREADS` at a time: a findings
    table of one snapshot is small, and Spark spends most of its time planning it, compiling it and
    scheduling its few tasks, which queries running side by side overlap (on the driver, the executors
    and, for a Spark Connect session, the network)."""

    def one(name: str, frame: DataFrame) -> tuple[pa.Table, float]:
        started = time.perf_counter()
        table = _to_arrow(name, frame)
        return table, round(time.perf_counter() - started, 2)

    with ThreadPoolExecutor(COLLECTING_THREADS, thread_name_prefix="kafka-ops-findings") as pool:
        done = {name: pool.submit(one, name, frame) for name, frame in findings.items()}
        results = {name: future.result() for name, future in done.items()}
    return {n: r[0] for n, r in results.items()}, {n: r[1] for n, r in results.items()}


@contextmanager
def _store_failures_as_lake_errors(spark: SparkSession, lake_root: str) -> Iterator[None]:
    """A Spark read that failed on the lake's object store raises one `LakeError` line naming the lake
    root and S3A's endpoint (`lake.spark_s3`), not a JVM stack trace; any other error as it is."""
    from py4j.protocol import Py4JJavaError  # noqa: PLC0415
    from pyspark.errors import PySparkException  # noqa: PLC0415

    from kafka_ops.lake.spark_s3 import spark_store_error  # noqa: PLC0415

    try:
        yield
    except (Py4JJavaError, PySparkException) as e:
        endpoint = spark.conf.get("spark.hadoop.fs.s3a.endpoint", None)  # a Spark Connect session has no sparkContext
        error = spark_store_error(lake_root, endpoint, e)
        if error is None:
            raise
        raise error from e


def tables_of(detectors: Sequence[Detector]) -> list[str]:
    """The inputs `detectors` take: lake tables, and `partition_runs` (see `analysis.partition_runs`)."""
    return sorted({t for d in detectors for t in d.tables})


def input_tables(detectors: Sequence[Detector]) -> list[str]:
    """The lake tables an analysis by `detectors` reads: their tables, and the partitions and the
    snapshots' commit log where they take the partitions' runs (built from those)."""
    tables = set(tables_of(detectors))
    if RUNS_TABLE in tables:
        tables = (tables - {RUNS_TABLE}) | {"partitions", COMMIT_TABLE}
    return sorted(tables)


def window_tables(detectors: Sequence[Detector]) -> frozenset[str]:
    """The lake tables some detector of `detectors` reads over the window (not only at the latest
    snapshot: `Detector.latest_only`); the commit log too where runs are built (it orders the window)."""
    tables = {t for d in detectors for t in d.tables if t not in d.latest_only}
    if RUNS_TABLE in tables:
        tables.add(COMMIT_TABLE)
    return frozenset(tables - {RUNS_TABLE})


def _partition_runs(  # noqa: PLR0917 - analyse's own values, passed on
    spark: SparkSession,
    lake: Lake,
    cluster: str,
    context: Context,
    since: datetime,
    snapshots: DataFrame,
    lake_format: str,
    versions: Mapping[str, int | None],
    incremental: bool,
) -> tuple[DataFrame, dict[str, DataFrame], dict[str, Any]]:
    """The window's partition runs (kept in memory), carried from the previous analysis' or rebuilt
    from the window's rows (see `analysis.partition_runs`); the state tables to publish with the
    findings (the runs and the snapshots they cover); and how they were built (`AnalysisResult`)."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    # the detectors' own order of the window (`snapshot_order`), held on the driver: the coverage and
    # the snapshots to read come from it, and every query joins a small local relation
    ordered = partition_runs.snapshot_order(snapshots).orderBy("idx").collect()
    order_rows = [(r.snapshot_id, r.captured_at) for r in ordered]
    order = spark.createDataFrame(
        [(r.snapshot_id, r.captured_at, r.idx) for r in ordered], "snapshot_id string, captured_at timestamp, idx int"
    )
    until = context.captured_at
    previous = _previous_runs(lake, cluster, context) if incremental else None
    if previous is not None and partition_runs.usable(previous, since, until):
        missing = partition_runs.uncovered(order_rows, previous)
        rows = _partition_rows(spark, lake, cluster, missing, until, lake_format, versions)
        earlier = read_table(
            spark, lake.root, RUNS_TABLE, lake_format=lake_format, cluster=cluster,
            days=(previous.captured_at.date(), previous.captured_at.date()),
        ).where(F.col("snapshot_id") == previous.snapshot_id)  # fmt: skip
        runs = partition_runs.extended(earlier, rows, order)
        built = {"carried_from": previous.snapshot_id, "snapshots_read": len(missing)}
    else:
        rows = _partition_rows(spark, lake, cluster, order_rows, until, lake_format, versions)
        runs = partition_runs.runs_of(rows, order)
        built = {"carried_from": None, "snapshots_read": len(order_rows)}
    log.info("partition runs of %s: %s", cluster, built)
    runs = runs.cache()
    coverage = spark.createDataFrame(
        [(context.snapshot_id, context.captured_at, s, at, since) for s, at in order_rows],
        "snapshot_id string, captured_at timestamp, covered_snapshot_id string, covered_at timestamp, "
        "window_start timestamp",
    )
    stored = partition_runs.stored(runs, order, context.snapshot_id, context.captured_at)
    return runs, {RUNS_TABLE: stored, COVERAGE_TABLE: coverage}, built


def _partition_rows(  # noqa: PLR0917
    spark: SparkSession,
    lake: Lake,
    cluster: str,
    snapshots: Sequence[tuple[str, datetime]],
    until: datetime,
    lake_format: str,
    versions: Mapping[str, int | None],
) -> DataFrame:
    """The `partitions` rows of `snapshots` ((snapshot_id, captured_at), none: no rows)."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    first = min((at for _, at in snapshots), default=until)
    rows = read_history(
        spark, lake.root, "partitions", cluster, since=first, until=until, lake_format=lake_format, versions=versions
    )
    return rows.where(F.col("snapshot_id").isin([s for s, _ in snapshots]))


def _previous_runs(lake: Lake, cluster: str, context: Context) -> partition_runs.Previous | None:
    """The runs the latest analysis of a snapshot no later than `context`'s published, if it did."""

    def mine(row: dict[str, Any]) -> bool:
        return row["source"] == COMMIT_TABLE and row["captured_at"] <= context.captured_at

    rows = lake.latest_commits(cluster, ANALYSIS_COMMIT_TABLE, keep=mine)
    if not rows:
        return None
    row: dict[str, Any] = rows[0]
    day = lake.read_day(COVERAGE_TABLE, cluster, str(row["dt"]))
    if day is None:
        return None
    covered = [r for r in day.to_pylist() if r["snapshot_id"] == row["snapshot_id"]]
    if not covered:
        return None
    return partition_runs.Previous(
        str(row["snapshot_id"]), row["captured_at"], min(r["window_start"] for r in covered),
        frozenset(r["covered_snapshot_id"] for r in covered),
    )  # fmt: skip


def read_history(
    spark: SparkSession,
    lake_root: str,
    table: str,
    cluster: str,
    *,
    since: datetime,
    until: datetime,
    lake_format: str = DEFAULT_LAKE_FORMAT,
    versions: Mapping[str, int | None] | None = None,
) -> DataFrame:
    """`table`'s committed rows for `cluster` captured in [since, until]; on a Delta lake, each table
    (and its commit table) at its version in `versions` when named there (see `analyse`'s `as_of`).
    Only the window's days are read, of the table and of its commit table: the analysis, run every
    few minutes, costs as much on a lake keeping 35 days as on one keeping a day."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    from kafka_ops.lake.spark import read_table  # noqa: PLC0415

    frame = read_table(
        spark,
        lake_root,
        table,
        lake_format=lake_format,
        versions=versions,
        cluster=cluster,
        days=(since.date(), until.date()),
    )
    return frame.where((F.col("captured_at") >= F.lit(since)) & (F.col("captured_at") <= F.lit(until))).drop(
        "cluster", "dt"
    )


def _versions_as_of(
    lake: Lake, cluster: str, source: str, tables: Sequence[str], at: datetime
) -> dict[str, int | None]:
    """The Delta version of `source` and of each of `tables` current at `at` (None: the table did
    not exist yet, it reads as empty); refused on a Parquet lake, which keeps no versions."""
    from kafka_ops.lake.delta_store import DeltaLake  # noqa: PLC0415 - deltalake only for Delta lakes
    from kafka_ops.lake.time_travel import version_as_of  # noqa: PLC0415

    if not isinstance(lake, DeltaLake):
        raise LakeError(
            f"as of {at.isoformat()}: the lake at {lake.root} is a Parquet lake, which keeps no past versions; "
            "time travel needs lake_format = 'delta' (see kafka-ops lake migrate)"
        )
    wanted = {source, *tables, *(commit_table_of(t) for t in tables)}
    return {t: version_as_of(lake, t, at) for t in sorted(wanted)}


def _context(
    lake: Lake, cluster: str, snapshot_id: str | None, thresholds: Thresholds, source: str, *, as_of: datetime | None
) -> Context:
    log_rows = _commit_rows(lake, cluster, source, as_of, latest=snapshot_id is None)
    if not log_rows:
        when = f" by {as_of.isoformat()}" if as_of is not None else ""
        raise LakeError(f"no committed batch of cluster {cluster!r} in commit log {source!r} of {lake.root}{when}")
    if snapshot_id is None:
        row = max(log_rows, key=lambda r: (r["captured_at"], r["snapshot_id"]))
    else:
        matches = [r for r in log_rows if r["snapshot_id"] == snapshot_id]
        if not matches:
            when = f" by {as_of.isoformat()}" if as_of is not None else ""
            raise LakeError(
                f"{snapshot_id!r} of cluster {cluster!r} is not committed in {source!r} in {lake.root}{when}"
            )
        row = matches[0]
    return Context(cluster, row["snapshot_id"], row["captured_at"].astimezone(UTC), thresholds)


def _commit_rows(
    lake: Lake, cluster: str, source: str, as_of: datetime | None, *, latest: bool = False
) -> list[dict[str, Any]]:
    """`source`'s commit rows of `cluster`: now, or as committed at `as_of` (a Delta lake). With
    `latest`, only the latest batch's (`Lake.latest_commit`: its newest day's rows, not the log's)."""
    if as_of is None and latest:
        row = lake.latest_commit(cluster, source)
        return [] if row is None else [{"snapshot_id": row["snapshot_id"], "captured_at": row["captured_at"]}]
    if as_of is None:
        return lake.commit_log(source, cluster).select(["snapshot_id", "captured_at"]).to_pylist()
    from kafka_ops.lake.time_travel import commit_rows_as_of  # noqa: PLC0415 - deltalake only for Delta lakes

    return commit_rows_as_of(lake, cluster, as_of, source)  # type: ignore[arg-type]  # a DeltaLake: checked


def parse_as_of(text: str) -> datetime:
    """--as-of: an ISO 8601 time with its zone."""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time, e.g. 2026-11-21T03:10:00+00:00") from None
    if at.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone: give one, e.g. {text}+00:00")
    return at


def _to_arrow(name: str, frame: DataFrame) -> pa.Table:
    forbidden = {"cluster", "dt"} & set(frame.columns)
    missing = {"snapshot_id", "severity"} - set(frame.columns)
    if forbidden or missing:
        raise LakeError(f"findings table {name!r}: must have snapshot_id and severity, not cluster/dt")
    return frame.toArrow()


def _severity_counts(table: pa.Table) -> dict[str, int]:
    counts = {s: 0 for s in SEVERITIES}
    for severity in table.column("severity").to_pylist():
        if severity not in counts:
            raise LakeError(f"unknown severity {severity!r} (known: {SEVERITIES})")
        counts[severity] += 1
    return counts


def _commit_row(
    context: Context, source: str, detectors: list[str], counts: dict[str, dict[str, int]], analysed_at: datetime | None
) -> pa.Table:
    return pa.table(
        {
            "snapshot_id": [context.snapshot_id],
            "captured_at": pa.array([context.captured_at], pa.timestamp("us", tz="UTC")),
            "analysed_at": pa.array([analysed_at or datetime.now(UTC)], pa.timestamp("us", tz="UTC")),
            "source": [source],
            "detectors": [detectors],
            "findings": [json.dumps(counts, sort_keys=True)],
        }
    )


def parse_capacity(text: str) -> Capacities:
    """--capacity: the `[clusters.capacity]` table as JSON (broker ids as string keys, as in TOML)."""
    try:
        values = json.loads(text)
    except ValueError as e:
        raise ConfigError(f"--capacity is not a JSON object: {e}") from e
    return Capacities.from_mapping(values, "--capacity")


def parse_thresholds(text: str) -> Thresholds:
    try:
        values = json.loads(text)
    except ValueError as e:
        raise ConfigError(f"--thresholds is not a JSON object: {e}") from e
    if not isinstance(values, dict):
        raise ConfigError("--thresholds must be a JSON object")
    return Thresholds.from_mapping(values, "--thresholds")
