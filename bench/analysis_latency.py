"""Benchmark: one new snapshot analysed on the warm Spark (a Spark Connect server) against a cold
spark-submit of the same analysis in the same run, and how it grows with the history the lake keeps.

A synthetic cluster (`synthetic_history.py`: --partitions partitions in 3 racks of 12 brokers, a
snapshot every 5 minutes with a broker outage, flaps, shrinks and expands, controller elections and a
reassignment every day) is published into Delta lakes (`DeltaLake.publish`, one snapshot at a time, as
the snapshot DAG writes them, and `maintain` after each day but today, as the lake maintenance DAG runs
it), one per --histories value: a lake keeping 1 day, and one keeping 7 (the `[lake]` retention a
deployment chooses). Each lake's latest snapshot is then analysed end to end:
- **warm**: `analysis.job.analyse_job` on a session of a Spark Connect server (`python -m
  kafka_ops.analysis.connect_server`, local[2], started once and warmed up by one untimed analysis),
  as the analysis DAG's task runs it: every detector of `cluster_health.py`, findings published; then
  the health gates (`validation.gates.run_gates`, without Data Docs) on the new findings. Each lake
  --repeats times; `p50_s` is the median on the 1-day lake;
- **cold**: `spark-submit spark_jobs/cluster_health.py` (a new JVM, Delta's jars handed to it) on the
  1-day lake, then the same gates, --cold-runs times: what the DAG ran before the warm Spark.
Sending the alerts is left out: it reads the gates' result and posts a few requests.

At toy size (`make test`), `--warm session` analyses on the process's own local Spark (the test run's, warm)
instead of a Connect server, with --detectors naming a few (the gates, which need every detector's
findings, are then left out) and `--cold-runs 0`: the benchmark's own code, checked in seconds; its
figures say nothing then.

Last line: one JSON object: `p50_s`, `cold_p50_s`, `history_ratio` (the longest history's median over
the 1-day one), each run's `runs`, the sizes, and `targets` (p50 <= 10 s, history_ratio <= 1.2, warm
faster than cold) with whether each was met.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
REPO = Path(__file__).resolve().parents[1]

import _detectors  # noqa: E402
import _repo  # noqa: E402, F401 - the checkout on sys.path, for the sandbox package
from _session import on_connect_server, spark_session  # noqa: E402
from synthetic_history import DAY, START, snapshot_batches  # noqa: E402

from kafka_ops.analysis.connect_server import local_server  # noqa: E402
from kafka_ops.analysis.detector import Detector  # noqa: E402
from kafka_ops.analysis.runner import analyse  # noqa: E402
from kafka_ops.detectors.registry import DETECTORS  # noqa: E402
from kafka_ops.jars.fetch import ensure_delta_spark_jars  # noqa: E402
from kafka_ops.lake.maintenance import maintain  # noqa: E402
from kafka_ops.lake.open import open_lake  # noqa: E402
from kafka_ops.lake.policy import RetentionPolicy  # noqa: E402
from kafka_ops.lake.schema import COMMIT_TABLE  # noqa: E402
from kafka_ops.lake.store import Batch  # noqa: E402
from kafka_ops.thresholds import Thresholds  # noqa: E402
from kafka_ops.validation.gates import run_gates  # noqa: E402
from sandbox.cluster import free_port  # noqa: E402

CLUSTER = "synth"
BIN = Path(sys.executable).parent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--snapshots-per-day", type=int, default=DAY, help="288: one every 5 minutes")
    parser.add_argument("--histories", default="1,7", help="days of history each lake keeps (the first is the base)")
    parser.add_argument("--repeats", type=int, default=5, help="warm analyses of each lake")
    parser.add_argument("--cold-runs", type=int, default=2, help="cold spark-submits of the base lake (0: none)")
    parser.add_argument("--warm", choices=("connect", "session"), default="connect",
                        help="connect: a Spark Connect server of its own (the figures); session: this process's "
                        "local Spark (the toy size)")  # fmt: skip
    _detectors.add_option(parser)
    parser.add_argument("--driver-memory", default="6g", help="the Spark Connect server's and spark-submit's")
    args = parser.parse_args(argv)
    histories = [int(d) for d in args.histories.split(",")]
    if args.repeats < 1 or args.cold_runs < 0 or not histories or min(histories) < 1:
        parser.error("--repeats and every --histories value must be at least 1, --cold-runs at least 0")
    detectors = _detectors.chosen(args.detectors)

    work = Path(tempfile.mkdtemp(prefix="bench-analysis-latency-"))
    try:
        lakes: dict[int, str] = {}
        held: dict[int, list[Batch]] = {}  # each lake's newest snapshots, published one before each timed analysis
        for days in histories:
            started = time.perf_counter()
            hold = args.repeats + (args.cold_runs if days == histories[0] else 0)
            snapshots = days * args.snapshots_per_day
            lakes[days], held[days] = write_lake(
                work / f"lake-{days}d", args.partitions, snapshots, args.snapshots_per_day, hold
            )
            print(f"{days}-day lake: {args.partitions} partitions x {days * args.snapshots_per_day} snapshots "
                  f"written in {time.perf_counter() - started:.0f}s", file=sys.stderr)  # fmt: skip
        base = lakes[histories[0]]
        tables: dict[str, dict[str, float]] = {}  # lake → its last warm analysis's seconds per findings table
        built: list[dict[str, object]] = []  # each warm analysis's partition runs: rebuilt or carried
        with warm_spark(args.warm, work, args.driver_memory, detectors, tables, built) as warm_analysis:
            # untimed: the server's JIT and caches, and each lake's first analysis, which builds the partition
            # runs from the window's rows (`analysis.partition_runs`) that every later analysis carries on
            rebuild = {days: timed(lambda lake=lake: warm_analysis(lake)) for days, lake in lakes.items()}  # type: ignore[misc]
            warm = {days: [timed(lambda days=days, lake=lake: warm_analysis(next_snapshot(lake, held[days])))  # type: ignore[misc]
                           for _ in range(args.repeats)]
                    for days, lake in lakes.items()}  # fmt: skip
        cold = [timed(lambda: cold_analysis(next_snapshot(base, held[histories[0]]), args.driver_memory, detectors))
                for _ in range(args.cold_runs)]  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)

    medians = {days: statistics.median(runs) for days, runs in warm.items()}
    result: dict[str, object] = {
        "bench": "analysis_latency",
        "partitions": args.partitions,
        "snapshots_per_day": args.snapshots_per_day,
        "detectors": len(detectors),
        "warm": args.warm,
        "p50_s": round(medians[histories[0]], 2),
        "cold_p50_s": round(statistics.median(cold), 2) if cold else None,
        "history_ratio": round(medians[histories[-1]] / medians[histories[0]], 3),
        "p50_by_history_days": {str(d): round(m, 2) for d, m in medians.items()},
        "rebuild_s": round(rebuild[histories[0]], 2),
        "runs": {"warm": {str(d): [round(s, 2) for s in r] for d, r in warm.items()},
                 "cold": [round(s, 2) for s in cold]},
        "slowest_tables_s": dict(sorted(tables[base].items(), key=lambda t: -t[1])[:6]),
        "partition_runs": {"rebuilt": built[: len(lakes)], "timed": built[len(lakes) :]},
    }  # fmt: skip
    result["targets"] = {
        "p50_at_most_10_s": result["p50_s"] <= 10,  # type: ignore[operator]
        "history_ratio_at_most_1_2": result["history_ratio"] <= 1.2,  # type: ignore[operator]
        "warm_faster_than_cold": bool(cold) and result["p50_s"] < result["cold_p50_s"],  # type: ignore[operator]
        # each timed analysis read one new snapshot's partitions, carrying the runs of the one before it
        "timed_analyses_carried_their_runs": all(b.get("snapshots_read") == 1 for b in built[len(lakes) :]),
    }
    print(json.dumps(result))


def write_lake(root: Path, partitions: int, snapshots: int, per_day: int, held: int) -> tuple[str, list[Batch]]:
    """Publish the snapshots one by one, as the snapshot DAG does, and maintain the lake after each day but
    the last (`maintain` at 00:30 the next day, the default policy), as the lake maintenance DAG does: the
    last day is today, written and not compacted yet. The newest `held` snapshots are returned, not
    published: each timed analysis is of a snapshot published just before it."""
    lake = open_lake(str(root), "delta")
    batches = snapshot_batches(CLUSTER, partitions, snapshots, per_day=per_day)
    for n, batch in enumerate(itertools.islice(batches, snapshots - held), 1):
        lake.publish(batch)
        if n % per_day == 0 and n < snapshots:
            maintain(lake, RetentionPolicy(), START + timedelta(days=n // per_day, minutes=30))
    return str(root), list(batches)


def next_snapshot(lake: str, held: list[Batch]) -> str:
    """Publish the next held snapshot into `lake` (as the snapshot DAG does before the analysis runs)."""
    open_lake(lake, "delta").publish(held.pop(0))
    return lake


@contextmanager
def warm_spark(
    how: str,
    work: Path,
    driver_memory: str,
    detectors: dict[str, Detector],
    tables: dict[str, dict[str, float]],
    built: list[dict[str, object]],
) -> Iterator[Callable[[str], None]]:
    """A function analysing a lake's latest snapshot end to end on a warm Spark: a Spark Connect server
    started for the run (`connect`), as the analysis DAG's task does, or this process's session (`session`).
    Each analysis leaves its seconds per findings table in `tables[lake]`, and how it built its partition
    runs (`AnalysisResult.partition_runs`) at the end of `built`."""
    if how == "session":
        with spark_session("kafka-ops bench: analysis latency", "delta") as spark:

            def on_session(lake: str) -> None:
                result = analyse(spark, lake, CLUSTER, list(detectors.values()), Thresholds(), lake_format="delta")
                tables[lake] = result.seconds
                built.append(result.partition_runs)
                gates(lake, result.snapshot_id, detectors)

            yield on_session
        return
    conf = {"spark.driver.memory": driver_memory, "spark.ui.enabled": "false"}
    with local_server(work / "connect.log", free_port(), conf=conf) as url:
        analysis = on_connect_server(url, detectors)

        def on_server(lake: str) -> None:
            result = analysis(["--lake", lake, "--cluster", CLUSTER, "--lake-format", "delta"])
            tables[lake] = result.seconds
            built.append(result.partition_runs)
            gates(lake, result.snapshot_id, detectors)

        yield on_server


def cold_analysis(lake: str, driver_memory: str, detectors: dict[str, Detector]) -> None:
    jars = ",".join(str(j) for j in ensure_delta_spark_jars())
    command = [str(BIN / "spark-submit"), "--master", "local[2]", "--driver-memory", driver_memory, "--jars", jars,
               "--conf", "spark.ui.enabled=false", str(REPO / "spark_jobs" / "cluster_health.py"),
               "--lake", lake, "--cluster", CLUSTER, "--lake-format", "delta",
               "--detectors", ",".join(detectors)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"cluster_health.py exited {done.returncode}:\n{done.stderr[-3000:]}")
    row = open_lake(lake, "delta").latest_commit(CLUSTER, COMMIT_TABLE)
    assert row is not None
    gates(lake, str(row["snapshot_id"]), detectors)


def gates(lake: str, snapshot_id: str, detectors: dict[str, Detector]) -> None:
    """The health gates on the analysis's findings, when it ran every detector (the gates need them all)."""
    if set(detectors) == set(DETECTORS):
        run_gates(open_lake(lake, "delta"), CLUSTER, snapshot_id, data_docs=False)


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    seconds = time.perf_counter() - started
    print(f"{getattr(fn, '__name__', 'run')}: {seconds:.1f}s", file=sys.stderr)
    return seconds


if __name__ == "__main__":
    main()
