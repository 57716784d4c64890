"""Benchmark: the whole Spark health analysis over a synthetic day of snapshots.

20,000 partitions × 288 snapshots (one day at 5-minute intervals, ~5.8M partition-state rows)
with a broker outage, visible ISR shrink/expand, hidden flaps (epoch jumps), controller
elections and a reassignment in flight; then the same day at 2× and 4× the partitions. Each
size is analysed by every detector in one warm local Spark session (2 cores), exactly as
`spark_jobs/cluster_health.py` runs it (read the lake, detect, publish findings). Reports the
time per run and its growth against the 1× run in the same process: linear growth is 2.0 and
4.0. Target: the 1× day in <= 90 s, growth no worse than linear. Last line: one JSON object.

The lakes are Parquet (`synthetic_history` writes them with `Lake.publish`; `lake_format="parquet"`),
as in the published figures (docs/benchmarks.md): this measures the detectors' growth with the cluster's size. The
default Delta lake's analysis over growing history is `lake_history.py`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")

import _detectors
from _session import spark_session
from synthetic_history import generate

from kafka_ops.analysis.runner import analyse
from kafka_ops.thresholds import Thresholds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--snapshots", type=int, default=288)
    parser.add_argument("--scales", default="1,2,4")
    parser.add_argument("--warm-up", choices=("small", "none"), default="small",
                        help="small: one untimed analysis of a small lake first (the JIT, Spark's caches)")  # fmt: skip
    _detectors.add_option(parser)
    args = parser.parse_args(argv)
    scales = [int(s) for s in args.scales.split(",")]
    detectors = _detectors.chosen(args.detectors)

    started = time.perf_counter()
    seconds: dict[int, float] = {}
    findings: dict[int, dict[str, dict[str, int]]] = {}
    with spark_session("kafka-ops bench: health analysis", "parquet") as spark:
        session_s = time.perf_counter() - started
        if args.warm_up == "small":
            warm = tempfile.mkdtemp(prefix="bench-warm-")
            generate(warm, "warm", 500, snapshots=12)
            analyse(spark, warm, "warm", list(detectors.values()), Thresholds(), lake_format="parquet")
        for scale in scales:
            with tempfile.TemporaryDirectory(prefix=f"bench-{scale}x-") as lake:
                t = time.perf_counter()
                generate(lake, "synth", args.partitions * scale, snapshots=args.snapshots)
                print(f"{scale}x: generated {args.partitions * scale} partitions x {args.snapshots} snapshots "
                      f"in {time.perf_counter() - t:.1f}s", file=sys.stderr)  # fmt: skip
                t = time.perf_counter()
                result = analyse(spark, lake, "synth", list(detectors.values()), Thresholds(), lake_format="parquet")
                seconds[scale] = time.perf_counter() - t
                findings[scale] = result.counts
                print(f"{scale}x: analysed in {seconds[scale]:.1f}s", file=sys.stderr)
    base = seconds[scales[0]]
    figures = {
        "bench": "health_analysis",
        "partitions": args.partitions,
        "snapshots": args.snapshots,
        "rows": args.partitions * args.snapshots,
        "detectors": sorted(detectors),
        "warm_up": args.warm_up,
        "seconds": round(base, 2),
        "session_start_seconds": round(session_s, 2),
        **{f"seconds_{s}x": round(seconds[s], 2) for s in scales},
        **{f"growth_{s}x": round(seconds[s] / base, 2) for s in scales[1:]},
        "targets": {"seconds": 90, "growth": "<= linear (2x -> 2.0, 4x -> 4.0)"},
        "findings_1x": findings[scales[0]],
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
