"""Benchmark: how many 20,000-partition clusters this machine keeps on a 5-minute cadence.

One cluster's cycle is what the running topology does for it every 5 minutes, stage by stage, each on
its own real input and timed in CPU seconds (this process's and its children's, the Spark JVMs included):
- **snapshot**: a ZooKeeper collection of a synthetic --partitions cluster (Kafka 3.9's znode formats,
  --brokers brokers, on a real ZooKeeper) and its publish to a lake;
- **page**: the checks that page from that snapshot (`validation.snapshot_checks`) and their dispatch;
- **analysis**: `spark_jobs/cluster_health.py` through spark-submit (as the stack runs it) over a lake
  holding a day of that cluster's history (--snapshots snapshots, one every 5 minutes), on a local Spark
  of each --spark-cores count (the number of Spark workers' cores it may use);
- **gates and alerts**: validation of the snapshot, the health gates over the analysis, the alerts.
The group collection and the groups' analysis are NOT in the cycle yet (they need a cluster with live
groups; `group_collection.py` times the collection): the figure is an upper bound.

clusters = floor(0.8 × cores × 300 s / CPU seconds per cycle), the cycle's stages running one after the
other for each cluster and the clusters' cycles side by side; `cycle_s` is one cycle's wall time (it
must stay under 300 s too). Last line: one JSON object with `clusters`, `cpu_s_per_cluster_hour`,
`cycle_s`, per Spark core count (`by_spark_cores`), and the stages' CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins")]
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")

from synthetic_history import generate  # noqa: E402
from synthetic_zk import seed  # noqa: E402

from kafka_ops.alerting.alert import Links  # noqa: E402
from kafka_ops.alerting.dispatch import dispatch  # noqa: E402
from kafka_ops.alerting.firing import analysis_judgement, firing_alerts  # noqa: E402
from kafka_ops.alerting.from_snapshot import snapshot_alerts, snapshot_judgement  # noqa: E402
from kafka_ops.alerting.log_sink import LogNotifier  # noqa: E402
from kafka_ops.lake.open import open_lake  # noqa: E402
from kafka_ops.lake.schema import COMMIT_TABLE  # noqa: E402
from kafka_ops.snapshot.tables import snapshot_batch  # noqa: E402
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget  # noqa: E402
from kafka_ops.validation import snapshot_checks  # noqa: E402
from kafka_ops.validation.gates import run_gates  # noqa: E402
from kafka_ops.validation.pipeline import validate_batches  # noqa: E402
from sandbox import SandboxCluster  # noqa: E402

CHROOT = "/fleet"
CYCLE_S = 300.0
BUSY = 0.8
BIN = Path(sys.executable).parent
REMINDER = timedelta(hours=1)


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended (a spark-submit and its JVM)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measured(name: str, fn: Callable[[], Any], stages: dict[str, dict[str, float]]) -> Any:
    cpu, wall = cpu_seconds(), time.perf_counter()
    result = fn()
    stages[name] = {"cpu_s": round(cpu_seconds() - cpu, 2), "wall_s": round(time.perf_counter() - wall, 2)}
    print(f"{name}: {stages[name]}", file=sys.stderr)
    return result


def snapshot_stages(zookeeper: str, lake_root: str, stages: dict[str, dict[str, float]]) -> None:
    """Collect the synthetic cluster from ZooKeeper, publish it, page from it."""
    lake = open_lake(lake_root, "parquet")
    target = ZooKeeperTarget(zookeeper, CHROOT, timeout_s=30)

    def snapshot() -> str:
        snap = ZooKeeperCollector("fleet", target).collect()
        lake.publish(snapshot_batch(snap))
        return snap.snapshot_id

    snapshot_id = measured("snapshot", snapshot, stages)

    def page() -> None:
        look = snapshot_checks.look(lake, "fleet", snapshot_id)
        sink = LogNotifier("log", str(Path(lake_root) / "_alerting" / "fleet.alerts.jsonl"))
        dispatch("fleet", snapshot_alerts("fleet", look, Links()), datetime.now(UTC), lake_root=lake_root,
                 notifiers=[sink], reminder=REMINDER, judgement=snapshot_judgement(look))  # fmt: skip

    measured("page", page, stages)


def analysis_stages(lake_root: str, cores: int, stages: dict[str, dict[str, float]]) -> None:
    """The cluster's analysis through spark-submit, then validation, gates and alerts."""
    command = [str(BIN / "spark-submit"), "--master", f"local[{cores}]", "--driver-memory", "4g",
               "--conf", "spark.ui.enabled=false", str(REPO / "spark_jobs" / "cluster_health.py"),
               "--lake", lake_root, "--cluster", "synth", "--lake-format", "parquet"]  # fmt: skip

    def analysis() -> None:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
        if done.returncode != 0:
            raise SystemExit(f"cluster_health.py exited {done.returncode}:\n{done.stderr[-3000:]}")

    measured("analysis", analysis, stages)
    lake = open_lake(lake_root, "parquet")

    def gates_and_alerts() -> None:
        row = lake.latest_commit("synth", COMMIT_TABLE)
        if row is None:
            raise SystemExit("the synthetic history has no snapshot")
        now = datetime.now(UTC)
        validate_batches(lake, "synth", now, snapshot_id=str(row["snapshot_id"]))
        report = run_gates(lake, "synth", str(row["snapshot_id"]), validated_at=now)
        sink = LogNotifier("log", str(Path(lake_root) / "_alerting" / "synth.alerts.jsonl"))
        dispatch("synth", firing_alerts(lake, "synth", report, Links()), now, lake_root=lake_root,
                 notifiers=[sink], reminder=REMINDER, judgement=analysis_judgement(lake, "synth", report))  # fmt: skip

    measured("gates_and_alerts", gates_and_alerts, stages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--topics", type=int, default=400)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--snapshots", type=int, default=288, help="the day of history the analysis reads")
    parser.add_argument("--spark-cores", default="1,2", help="local Spark core counts to analyse with")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    spark_cores = [int(c) for c in args.spark_cores.split(",")]
    snapshot: dict[str, dict[str, float]] = {}
    by_cores: dict[int, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as work:
        with SandboxCluster(brokers=0) as zookeeper:
            seed(zookeeper.zookeeper_hosts, CHROOT, args.topics, args.partitions, args.brokers)
            snapshot_stages(zookeeper.zookeeper_hosts, f"{work}/snapshots", snapshot)
        started = time.perf_counter()
        generate(f"{work}/history", "synth", args.partitions, snapshots=args.snapshots, brokers=args.brokers)
        print(f"history: {args.snapshots} snapshots in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        for n in spark_cores:
            by_cores[n] = {}
            analysis_stages(f"{work}/history", n, by_cores[n])
    results = {}
    for n, stages in by_cores.items():
        cycle = {**snapshot, **stages}
        cpu = sum(s["cpu_s"] for s in cycle.values())
        results[n] = {
            "clusters": int(BUSY * cores * CYCLE_S // cpu),
            "cpu_s_per_cycle": round(cpu, 1),
            "cpu_s_per_cluster_hour": round(cpu * 3600 / CYCLE_S, 0),
            "cycle_s": round(sum(s["wall_s"] for s in cycle.values()), 1),
            "stages": cycle,
        }
    best = max(results, key=lambda n: results[n]["clusters"])
    print(json.dumps({
        "bench": "fleet", "partitions": args.partitions, "snapshots": args.snapshots, "cores": cores,
        "clusters": results[best]["clusters"], "cpu_s_per_cluster_hour": results[best]["cpu_s_per_cluster_hour"],
        "cycle_s": results[best]["cycle_s"], "spark_cores": best, "by_spark_cores": results,
        "excluded": "group collection and the groups' analysis (an upper bound)",
        "targets": {"clusters_at_least_10": results[best]["clusters"] >= 10,
                    "cycle_within_300_s": results[best]["cycle_s"] <= CYCLE_S},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
