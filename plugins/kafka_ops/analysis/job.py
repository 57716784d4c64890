"""The shared `main` of the `spark_jobs/*.py` analysis jobs: arguments, session, exit code.

`analyse_job` is the job without its exit code, for a caller that brings its own session (the analysis
DAG on a Spark Connect server: `kafka_ops.analysis.connect`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kafka_ops.analysis.detector import Detector
from kafka_ops.analysis.runner import (
    AnalysisResult,
    add_arguments,
    analyse,
    build_session,
    parse_capacity,
    parse_thresholds,
)
from kafka_ops.errors import ConfigError, KafkaOpsError
from kafka_ops.lake.open import lake_format_or_settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SessionFactory = Callable[[str, str, str], "SparkSession"]
"""(app name, lake format, lake root) → a session: `runner.build_session`, or one of a Spark Connect server."""


def run_job(argv: Sequence[str] | None, prog: str, description: str, registry: Mapping[str, Detector]) -> int:
    """Run `registry`'s detectors (or those named with --detectors) for one cluster and publish
    their findings; print one JSON summary line. Exit 0, or 2 with a message on a bad argument,
    a missing lake batch or any other `KafkaOpsError`."""
    try:
        result = analyse_job(argv, prog, description, registry)
    except KafkaOpsError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result.summary(), sort_keys=True))
    return 0


def analyse_job(
    argv: Sequence[str] | None,
    prog: str,
    description: str,
    registry: Mapping[str, Detector],
    session: SessionFactory = build_session,
) -> AnalysisResult:
    """The job of `run_job` on a session from `session`, stopped at the end (a Spark Connect session only
    releases its state on the server). Raises `KafkaOpsError` (`ConfigError` for a bad argument)."""
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(parser)
    parser.add_argument(
        "--detectors",
        default=",".join(registry),
        help=f"comma-separated detectors to run (default: all of {', '.join(registry)})",
    )
    args = parser.parse_args(argv)
    if args.min_insync_replicas_default < 1:
        raise ConfigError(f"--min-insync-replicas-default must be >= 1, got {args.min_insync_replicas_default}")
    names = [n.strip() for n in args.detectors.split(",") if n.strip()]
    unknown = sorted(set(names) - set(registry))
    if unknown:
        raise ConfigError(f"unknown detector(s) {unknown}; known: {sorted(registry)}")
    thresholds = parse_thresholds(args.thresholds)
    capacity = parse_capacity(args.capacity)
    lake_format = lake_format_or_settings(args.lake_format)
    spark = session(f"kafka-ops {prog}: {args.cluster}", lake_format, args.lake)
    try:
        return analyse(
            spark, args.lake, args.cluster, [registry[n] for n in names], thresholds, snapshot_id=args.snapshot_id,
            min_insync_replicas_default=args.min_insync_replicas_default, capacity=capacity,
            lake_format=lake_format, as_of=args.as_of,
        )  # fmt: skip
    finally:
        spark.stop()
