"""Spark job: analyse one cluster's consumer-group history and publish findings to the lake.

    spark-submit spark_jobs/consumer_groups.py --lake ./var/lake --cluster default
    spark-submit spark_jobs/consumer_groups.py --help

Runs every consumer-group detector (or those named with --detectors) over the committed group
collections of the last `history_hours` up to the latest one (or --snapshot-id, a group
collection id): lag status by Burrow's rules, lag in seconds as Kafka Lag Exporter estimates
it, records retention deleted or is about to delete before a group read them, assignor skew.
Publishes one findings table per detector output atomically (commit log:
`analysis_runs`, source `group_snapshots`). Prints one JSON summary line at the end.
"""

from __future__ import annotations

import sys

from kafka_ops.analysis.job import run_job
from kafka_ops.detectors.registry import GROUP_DETECTORS


def main(argv: list[str] | None = None) -> int:
    return run_job(argv, "consumer_groups.py", __doc__ or "", GROUP_DETECTORS)


if __name__ == "__main__":
    sys.exit(main())
