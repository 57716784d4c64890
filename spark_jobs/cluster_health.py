"""Spark job: analyse one cluster's ZooKeeper snapshot history and publish findings to the lake.

    spark-submit spark_jobs/cluster_health.py --lake ./var/lake --cluster default
    spark-submit spark_jobs/cluster_health.py --help

Runs every ZooKeeper-metadata detector (or those named with --detectors) over the committed
snapshots of the last `history_hours` up to the latest snapshot (or --snapshot-id), in one
Spark session, and publishes one findings table per detector output atomically (commit log:
`analysis_runs`, source `snapshots`). The detectors are pure DataFrame functions in
`kafka_ops.detectors`; this file only delegates. Prints one JSON summary line at the end.
"""

from __future__ import annotations

import sys

from kafka_ops.analysis.job import run_job
from kafka_ops.detectors.registry import DETECTORS


def main(argv: list[str] | None = None) -> int:
    return run_job(argv, "cluster_health.py", __doc__ or "", DETECTORS)


if __name__ == "__main__":
    sys.exit(main())
