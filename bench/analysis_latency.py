"""Benchmark: one new snapshot analysed on the warm Spark (a Spark Connect server) against a cold
spark-submit of the same analysis in the same run, and how it grows with the history the lake keeps.

A synthetic cluster (`synthetic_history.py`: --partitions partitions in 3 racks of 12 brokers, a
snapshot every 5 minutes with a broker outage, flaps, shrinks and expands, controller elections and a
reassignment every day) is published into Delta lakes (`DeltaLake.publish`, one snapshot at a time, as
the snapshot DAG writes them), one per --histories value: a lake keeping 1 day, and one keeping 7 (the
`[lake]` retention a deployment chooses). Each lake's latest snapshot is then analysed end to end:
- **warm**: `analysis.job.analyse_job` on a session of a Spark Connect server (`python -m
  kafka_ops.analysis.connect_server`, local[2], started once and warmed up by one untimed analysis),
  as the analysis DAG's task runs it: every detector of `cluster_health.py`, findings published; then
  the health gates (`validation.gates.run_gates`, without Data Docs) on the new findings. Each lake
  --repeats times; `p50_s` is the median on the 1-day lake;
- **cold**: `spark-submit spark_jobs/cluster_health.py` (a new JVM, Delta's jars handed to it) on the
  1-day lake, then the same gates, --cold-runs times: what the DAG ran before the warm Spark.
Sending the alerts is left out: it reads the gates' result and posts a few requests.

Last line: one JSON object: `p50_s`, `cold_p50_s`, `history_ratio` (the longest history's median over
the 1-day one), each run's `runs`, the sizes, and `targets` (p50 <= 10 s, history_ratio <= 1.2, warm
faster than cold) with whether each was met.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
REPO = Path(__file__).resolve().parents[1]

import _repo  # noqa: E402, F401 - the checkout on sys.path, for the sandbox package
from synthetic_history import DAY, snapshot_batches  # noqa: E402

from kafka_ops.analysis.connect import connect_mode_restored, connect_session  # noqa: E402
from kafka_ops.analysis.connect_server import local_server  # noqa: E402
from kafka_ops.analysis.job import analyse_job  # noqa: E402
from kafka_ops.detectors.registry import DETECTORS  # noqa: E402
from kafka_ops.jars.fetch import ensure_delta_spark_jars  # noqa: E402
from kafka_ops.lake.open import open_lake  # noqa: E402
from kafka_ops.lake.schema import COMMIT_TABLE  # noqa: E402
from kafka_ops.validation.gates import run_gates  # noqa: E402
from sandbox.cluster import free_port  # noqa: E402

CLUSTER = "synth"
BIN = Path(sys.executable).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--snapshots-per-day", type=int, default=DAY, help="288: one every 5 minutes")
    parser.add_argument("--histories", default="1,7", help="days of history each lake keeps (the first is the base)")
    parser.add_argument("--repeats", type=int, default=5, help="warm analyses of each lake")
    parser.add_argument("--cold-runs", type=int, default=2, help="cold spark-submits of the base lake")
    parser.add_argument("--driver-memory", default="6g", help="the Spark Connect server's and spark-submit's")
    args = parser.parse_args()
    histories = [int(d) for d in args.histories.split(",")]
    if min(args.repeats, args.cold_runs) < 1 or not histories or min(histories) < 1:
        parser.error("--repeats, --cold-runs and every --histories value must be at least 1")

    work = Path(tempfile.mkdtemp(prefix="bench-analysis-latency-"))
    try:
        lakes: dict[int, str] = {}
        for days in histories:
            started = time.perf_counter()
            lakes[days] = write_lake(work / f"lake-{days}d", args.partitions, days * args.snapshots_per_day,
                                     args.snapshots_per_day)  # fmt: skip
            print(f"{days}-day lake: {args.partitions} partitions x {days * args.snapshots_per_day} snapshots "
                  f"written in {time.perf_counter() - started:.0f}s", file=sys.stderr)  # fmt: skip
        base = lakes[histories[0]]
        conf = {"spark.driver.memory": args.driver_memory, "spark.ui.enabled": "false"}
        with local_server(work / "connect.log", free_port(), conf=conf) as url:
            warm_analysis(url, base)  # untimed: the server's JIT and caches
            warm = {days: [timed(lambda lake=lake: warm_analysis(url, lake)) for _ in range(args.repeats)]  # type: ignore[misc]
                    for days, lake in lakes.items()}  # fmt: skip
        cold = [timed(lambda: cold_analysis(base, args.driver_memory)) for _ in range(args.cold_runs)]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    medians = {days: statistics.median(runs) for days, runs in warm.items()}
    result: dict[str, object] = {
        "bench": "analysis_latency",
        "partitions": args.partitions,
        "snapshots_per_day": args.snapshots_per_day,
        "detectors": len(DETECTORS),
        "p50_s": round(medians[histories[0]], 2),
        "cold_p50_s": round(statistics.median(cold), 2),
        "history_ratio": round(medians[histories[-1]] / medians[histories[0]], 3),
        "p50_by_history_days": {str(d): round(m, 2) for d, m in medians.items()},
        "runs": {"warm": {str(d): [round(s, 2) for s in r] for d, r in warm.items()},
                 "cold": [round(s, 2) for s in cold]},
    }  # fmt: skip
    result["targets"] = {
        "p50_at_most_10_s": result["p50_s"] <= 10,  # type: ignore[operator]
        "history_ratio_at_most_1_2": result["history_ratio"] <= 1.2,  # type: ignore[operator]
        "warm_faster_than_cold": result["p50_s"] < result["cold_p50_s"],  # type: ignore[operator]
    }
    print(json.dumps(result))


def write_lake(root: Path, partitions: int, snapshots: int, per_day: int) -> str:
    lake = open_lake(str(root), "delta")
    for batch in snapshot_batches(CLUSTER, partitions, snapshots, per_day=per_day):
        lake.publish(batch)
    return str(root)


def warm_analysis(url: str, lake: str) -> None:
    with connect_mode_restored():
        result = analyse_job(
            ["--lake", lake, "--cluster", CLUSTER, "--lake-format", "delta"], "cluster_health.py", "", DETECTORS,
            session=lambda _app, lake_format, _root: connect_session(url, "the benchmark's server", lake_format),
        )  # fmt: skip
    gates(lake, result.snapshot_id)


def cold_analysis(lake: str, driver_memory: str) -> None:
    jars = ",".join(str(j) for j in ensure_delta_spark_jars())
    command = [str(BIN / "spark-submit"), "--master", "local[2]", "--driver-memory", driver_memory, "--jars", jars,
               "--conf", "spark.ui.enabled=false", str(REPO / "spark_jobs" / "cluster_health.py"),
               "--lake", lake, "--cluster", CLUSTER, "--lake-format", "delta"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"cluster_health.py exited {done.returncode}:\n{done.stderr[-3000:]}")
    row = open_lake(lake, "delta").latest_commit(CLUSTER, COMMIT_TABLE)
    assert row is not None
    gates(lake, str(row["snapshot_id"]))


def gates(lake: str, snapshot_id: str) -> None:
    run_gates(open_lake(lake, "delta"), CLUSTER, snapshot_id, data_docs=False)


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    seconds = time.perf_counter() - started
    print(f"{getattr(fn, '__name__', 'run')}: {seconds:.1f}s", file=sys.stderr)
    return seconds


if __name__ == "__main__":
    main()
