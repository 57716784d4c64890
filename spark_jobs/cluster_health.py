"""Spark job: analyse one cluster's snapshot history and publish findings to the lake.

    spark-submit spark_jobs/cluster_health.py --lake ./var/lake --cluster default
    spark-submit spark_jobs/cluster_health.py --help

Runs every detector (or those named with --detectors) over the committed snapshots of the
last `history_hours` up to the latest snapshot (or --snapshot-id), in one Spark session, and
publishes one findings table per detector output atomically (commit log: `analysis_runs`).
The detectors are pure DataFrame functions in `kafka_ops.detectors`; this file only parses
arguments, builds the session and delegates. Prints one JSON summary line at the end.
"""

from __future__ import annotations

import argparse
import json
import sys

from kafka_ops.analysis.runner import add_arguments, analyse, build_session, parse_thresholds
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.errors import KafkaOpsError


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="cluster_health.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(parser)
    parser.add_argument(
        "--detectors",
        default=",".join(DETECTORS),
        help=f"comma-separated detectors to run (default: all of {', '.join(DETECTORS)})",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = [n.strip() for n in args.detectors.split(",") if n.strip()]
    unknown = sorted(set(names) - set(DETECTORS))
    if unknown:
        known = sorted(DETECTORS)
        print(f"cluster_health.py: unknown detector(s) {unknown}; known: {known}", file=sys.stderr)
        return 2
    try:
        thresholds = parse_thresholds(args.thresholds)
        spark = build_session(f"kafka-ops cluster health: {args.cluster}")
        try:
            detectors = [DETECTORS[n] for n in names]
            result = analyse(spark, args.lake, args.cluster, detectors, thresholds, snapshot_id=args.snapshot_id)
        finally:
            spark.stop()
    except KafkaOpsError as e:
        print(f"cluster_health.py: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result.summary(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
