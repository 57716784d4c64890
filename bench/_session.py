"""The Spark session a Spark benchmark runs on."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from pyspark.sql import SparkSession

from kafka_ops.analysis.connect import connect_mode_restored, connect_session
from kafka_ops.analysis.detector import Detector
from kafka_ops.analysis.job import analyse_job
from kafka_ops.analysis.runner import AnalysisResult, build_session
from kafka_ops.lake.names import DEFAULT_LAKE_FORMAT


@contextmanager
def spark_session(app_name: str, lake_format: str = DEFAULT_LAKE_FORMAT) -> Iterator[SparkSession]:
    """A local Spark of its own (2 cores, a 6 GB driver), stopped at the end; or, when `main` is called in a
    process that already runs a session (the toy runs of `make test`, on the test run's warm Spark), that
    session, left running: a benchmark's toy size is mostly a JVM's start and warm-up otherwise."""
    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--master local[2] --driver-memory 6g pyspark-shell")
    spark = build_session(app_name, lake_format)
    try:
        yield spark
    finally:
        spark.stop()


def on_connect_server(url: str, detectors: Mapping[str, Detector]) -> Callable[[list[str]], AnalysisResult]:
    """`cluster_health.py`'s job with these arguments, run with `detectors` on a new session of the Spark Connect
    server at `url`, as the analysis DAG's task runs it."""

    def server_session(_app: str, lake_format: str, _root: str) -> SparkSession:
        return connect_session(url, "the benchmark's server", lake_format)

    def run(args: list[str]) -> AnalysisResult:
        with connect_mode_restored():
            return analyse_job(args, "cluster_health.py", "", detectors, session=server_session)

    return run
