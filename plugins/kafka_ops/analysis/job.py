"""The shared `main` of the `spark_jobs/*.py` analysis jobs: arguments, session, exit code."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence

from kafka_ops.analysis.detector import Detector
from kafka_ops.analysis.runner import add_arguments, analyse, build_session, parse_capacity, parse_thresholds
from kafka_ops.errors import KafkaOpsError
from kafka_ops.lake.open import lake_format_or_settings
from kafka_ops.lake.spark_connect import connect_session


def run_job(
    argv: Sequence[str] | None,
    prog: str,
    description: str,
    registry: Mapping[str, Detector],
    *,
    remote: str | None = None,
    conn_id: str | None = None,
) -> int:
    """Run `registry`'s detectors (or those named with --detectors) for one cluster and publish
    their findings; print one JSON summary line. Exit 0, or 2 with a message on a bad argument,
    a missing lake batch or any other `KafkaOpsError`.

    With `remote` (`sc://host:port`), on a session of that Spark Connect server (see
    `lake.spark_connect`; `conn_id` names the Airflow connection it came from in errors) instead of
    a Spark driver of this process's own."""
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
        print(f"{prog}: --min-insync-replicas-default must be >= 1, got {args.min_insync_replicas_default}",
              file=sys.stderr)  # fmt: skip
        return 2
    names = [n.strip() for n in args.detectors.split(",") if n.strip()]
    unknown = sorted(set(names) - set(registry))
    if unknown:
        print(f"{prog}: unknown detector(s) {unknown}; known: {sorted(registry)}", file=sys.stderr)
        return 2
    try:
        thresholds = parse_thresholds(args.thresholds)
        capacity = parse_capacity(args.capacity)
        lake_format = lake_format_or_settings(args.lake_format)
        if remote is None:
            spark = build_session(f"kafka-ops {prog}: {args.cluster}", lake_format)
        else:
            spark = connect_session(remote, conn_id)
        try:
            detectors = [registry[n] for n in names]
            result = analyse(
                spark, args.lake, args.cluster, detectors, thresholds, snapshot_id=args.snapshot_id,
                min_insync_replicas_default=args.min_insync_replicas_default, capacity=capacity,
                lake_format=lake_format, as_of=args.as_of,
            )  # fmt: skip
        finally:
            spark.stop()
    except KafkaOpsError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result.summary(), sort_keys=True))
    return 0
