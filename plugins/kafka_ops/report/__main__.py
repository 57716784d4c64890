"""Write a cluster's health report from the lake, and optionally a screenshot of it.

python -m kafka_ops.report --lake var/lake --cluster default [--png report.png]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kafka_ops.errors import KafkaOpsError
from kafka_ops.lake.open import add_lake_format_argument, lake_at
from kafka_ops.report import browser
from kafka_ops.report.model import ReportLinks
from kafka_ops.report.publish import write_report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kafka_ops.report", description="Write a cluster's health report from the lake."
    )
    parser.add_argument("--lake", required=True, help="lake root path or URL")
    add_lake_format_argument(parser)
    parser.add_argument("--cluster", required=True, help="cluster name in the lake")
    parser.add_argument("--snapshot-id", default=None, help="ZooKeeper snapshot (default: the latest analysed)")
    parser.add_argument("--group-snapshot-id", default=None, help="group collection (default: the latest analysed)")
    parser.add_argument("--airflow-run", default=None, help="URL of the Airflow run to link to")
    parser.add_argument("--data-docs", default=None, help="Data Docs page to link to")
    parser.add_argument("--png", default=None, help="also save a screenshot here (needs Chromium)")
    parser.add_argument("--width", type=int, default=1280, help="screenshot width in CSS pixels")
    parser.add_argument("--height", type=int, default=2000, help="screenshot height in CSS pixels")
    parser.add_argument("--scale", type=float, default=1.0, help="screenshot device pixels per CSS pixel")
    args = parser.parse_args(argv)
    try:
        path = write_report(
            lake_at(args.lake, args.lake_format),
            args.cluster,
            snapshot_id=args.snapshot_id,
            group_snapshot_id=args.group_snapshot_id,
            links=ReportLinks(data_docs=args.data_docs, airflow_run=args.airflow_run),
        )
        print(path)
        if args.png:
            browser.screenshot(path, args.png, width=args.width, height=args.height, scale=args.scale)
            print(args.png)
    except KafkaOpsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
