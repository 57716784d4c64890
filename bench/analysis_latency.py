"""Benchmark: a new snapshot published and analysed end to end on a warm Spark Connect server, against
a cold spark-submit of the same analysis, and flat in the history the lake keeps.

A synthetic cluster of `--partitions` partitions (20,000 at full size; `synthetic_history.py`: a
broker outage, flaps, visible shrink/expand, controller elections and a reassignment a day)
snapshotted `--per-day` times a day (288: every 5 minutes). The same batches go into two Delta
lakes through `DeltaLake.publish`, one snapshot at a time: one keeps `--days` days (default 7),
the other only the last day. The last `--runs` snapshots are held back.

Then, on a local Spark Connect server (`local[2]`, 2g driver, started from
`kafka_ops.lake.spark_connect.server_argv` as production starts it; its start is not timed), each
held-back snapshot is, in turn for both lakes: published (`DeltaLake.publish`), then analysed by
every ZooKeeper detector exactly as the analysis DAG's task runs `spark_jobs/cluster_health.py` over
a `spark_connect` connection (a new Connect session, read the day's window, detect, publish the
findings). The time of that publish + analysis is one run. The server is warmed by one untimed
analysis of each lake first. Last, `--cold-runs` spark-submits of the same job on the 1-day lake
(a new JVM with Delta's jars each: what a `spark` connection costs).

Figures: `p50_s` (median warm run, 1-day lake), `p50_history_s` (the same on the `--days`-day
lake), `history_ratio` (their ratio), `cold_p50_s`, `speedup` (cold/warm), `runs_s` (every run),
`findings_equal` (the warm and cold analyses of the 1-day lake's last snapshot published the same
counts). Targets: p50_s <= 10 s, history_ratio <= 1.2. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")

from synthetic_history import snapshot_batches

from kafka_ops.airflow.analysis_operator import run_job_file
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE
from kafka_ops.lake.spark_connect import classic_environment
from kafka_ops.lake.store import Batch
from kafka_ops.sandbox.connect_server import LocalConnectServer
from kafka_ops.sandbox.jars import ensure_delta_spark_jars

JOB = Path(__file__).resolve().parents[1] / "spark_jobs" / "cluster_health.py"
TARGETS = {"p50_s": 10.0, "history_ratio": 1.2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--per-day", type=int, default=288, help="snapshots a day")
    parser.add_argument("--days", type=int, default=7, help="history of the longer lake")
    parser.add_argument("--runs", type=int, default=5, help="new snapshots analysed warm, per lake")
    parser.add_argument("--cold-runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as work:
        root = Path(work)
        lakes = {"1d": DeltaLake(root / "lake-1d"), "long": DeltaLake(root / "lake-long")}
        held = write(lakes, args)
        with LocalConnectServer(root / "connect-server.log") as server:
            for lake in lakes.values():  # untimed: the server's JIT, caches and Delta's log readers
                analyse_warm(lake, server.url)
            runs: dict[str, list[float]] = {"1d": [], "long": []}
            for batch in held:
                for name, lake in lakes.items():
                    started = time.perf_counter()
                    lake.publish(batch)
                    analyse_warm(lake, server.url)
                    runs[name].append(time.perf_counter() - started)
                    print(f"warm {name}: {runs[name][-1]:.1f}s", file=sys.stderr)
        warm_counts = last_counts(lakes["1d"])
        cold = [cold_run(lakes["1d"]) for _ in range(args.cold_runs)]
        cold_counts = last_counts(lakes["1d"])
    p50, p50_long = statistics.median(runs["1d"]), statistics.median(runs["long"])
    result = {
        "bench": "analysis_latency",
        "partitions": args.partitions,
        "per_day": args.per_day,
        "days": args.days,
        "p50_s": round(p50, 2),
        "p50_history_s": round(p50_long, 2),
        "history_ratio": round(p50_long / p50, 3),
        "cold_p50_s": round(statistics.median(cold), 2),
        "speedup": round(statistics.median(cold) / p50, 2),
        "runs_s": {name: [round(s, 2) for s in times] for name, times in runs.items()},
        "cold_runs_s": [round(s, 2) for s in cold],
        "findings_equal": warm_counts == cold_counts,
        "targets": TARGETS,
    }
    print(json.dumps(result, sort_keys=True))


def write(lakes: dict[str, DeltaLake], args: argparse.Namespace) -> list[Batch]:
    """Publish the history into both lakes (the 1-day one: only the last day's); return the held-back
    last `runs` batches."""
    total = args.days * args.per_day
    last_day = total - args.per_day
    held: list[Batch] = []
    started = time.perf_counter()
    for i, batch in enumerate(snapshot_batches("synth", args.partitions, total, per_day=args.per_day)):
        if i >= total - args.runs:
            held.append(batch)
            continue
        lakes["long"].publish(batch)
        if i >= last_day:
            lakes["1d"].publish(batch)
    print(f"wrote {total - args.runs} snapshots in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return held


def analyse_warm(lake: DeltaLake, url: str) -> None:
    code = run_job_file(
        str(JOB), ["--lake", str(lake.root), "--cluster", "synth", "--lake-format", "delta"], url, "bench"
    )
    if code != 0:
        raise SystemExit(f"the analysis over Spark Connect exited {code}")


def cold_run(lake: DeltaLake) -> float:
    spark_submit = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "spark-submit")
    jars = ",".join(str(j) for j in ensure_delta_spark_jars())
    argv = [spark_submit, "--master", "local[2]", "--driver-memory", "2g", "--jars", jars, str(JOB),
            "--lake", str(lake.root), "--cluster", "synth", "--lake-format", "delta"]  # fmt: skip
    env = {
        **classic_environment(os.environ),
        "PYSPARK_PYTHON": sys.executable,
        "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}",
    }
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"the cold spark-submit exited {done.returncode}:\n{done.stderr[-3000:]}")
    seconds = time.perf_counter() - started
    print(f"cold: {seconds:.1f}s", file=sys.stderr)
    return seconds


def last_counts(lake: DeltaLake) -> str:
    """The findings counts of the lake's latest analysis."""
    runs = lake.read(ANALYSIS_COMMIT_TABLE, "synth").to_pylist()
    return str(max(runs, key=lambda r: r["analysed_at"])["findings"])


if __name__ == "__main__":
    main()
