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


def main(argv: list[str] | None = None, remote: str | None = None, conn_id: str | None = None) -> int:
    """The job; with `remote` (`sc://host:port`), on that Spark Connect server (the analysis DAG's
    `spark_connect` connection `conn_id`) instead of a driver of its own."""
    return run_job(argv, "cluster_health.py", __doc__ or "", DETECTORS, remote=remote, conn_id=conn_id)


if __name__ == "__main__":
    sys.exit(main())
