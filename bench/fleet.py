"""Benchmark: how many 20,000-partition clusters this machine keeps on a 5-minute cadence.

One cluster's cycle is what the running topology does for it every 5 minutes, stage by stage, each on
its own real input and timed in CPU seconds (this process's and its children's, the Spark JVMs included):
- **snapshot**: a ZooKeeper collection of a synthetic --partitions cluster (Kafka 3.9's znode formats,
  --brokers brokers, on a real ZooKeeper) and its publish to a lake;
- **page**: the checks that page from that snapshot (`validation.snapshot_checks`) and their dispatch;
- **analysis**: every detector of `spark_jobs/cluster_health.py` over a lake holding a day of that
  cluster's history (--snapshots snapshots, one every 5 minutes), with --spark-cores cores: on a warm
  Spark Connect server of that many cores (`--spark connect`, the default: as the stack's analysis DAG
  runs it with `KAFKA_OPS_SPARK_CONNECT_CONN_ID`, the server warmed by one untimed analysis), or a
  spark-submit per analysis (`--spark submit`, a new JVM each cycle);
- **gates and alerts**: validation of the snapshot, the health gates over the analysis, the alerts.
The group collection and the groups' analysis are NOT in the cycle yet (they need a cluster with live
groups; `group_collection.py` times the collection): the figure is an upper bound.

clusters = floor(0.8 × cores × 300 s / CPU seconds per cycle), the cycle's stages running one after the
other for each cluster and the clusters' cycles side by side; `cycle_s` is one cycle's wall time (it
must stay under 300 s too). Since the paging path needs no analysis (dead brokers, offline and
under-min-ISR partitions page from the snapshot), it also gives `paged_clusters` (snapshot and pages
alone every 5 minutes) and `analysis_every_s_at_10_clusters` (how often each of 10 clusters paged every
5 minutes gets its analysis, validation, gates and alerts from the CPU left). CPU seconds count this
process and every process under it (the Spark Connect server's or spark-submit's JVM, live or ended).
Last line: one JSON object with `clusters`, `cpu_s_per_cluster_hour`, `cycle_s`, `paged_clusters`,
`analysis_every_s_at_10_clusters`, per Spark core count (`by_spark_cores`), and the stages' CPU seconds.

At toy size (`make test`), `--spark session` analyses on the process's own local Spark (the test run's)
and --detectors names a few (the gates, which need every detector's findings, are then left out): the
benchmark's own code, checked in seconds; its figures say nothing then.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins")]
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")

import _detectors  # noqa: E402
from _session import on_connect_server, spark_session  # noqa: E402
from synthetic_history import generate  # noqa: E402
from synthetic_zk import seed  # noqa: E402

from kafka_ops.alerting.alert import Links  # noqa: E402
from kafka_ops.alerting.dispatch import dispatch  # noqa: E402
from kafka_ops.alerting.firing import analysis_judgement, firing_alerts  # noqa: E402
from kafka_ops.alerting.from_snapshot import snapshot_alerts, snapshot_judgement  # noqa: E402
from kafka_ops.alerting.log_sink import LogNotifier  # noqa: E402
from kafka_ops.analysis.connect_server import local_server  # noqa: E402
from kafka_ops.analysis.detector import Detector  # noqa: E402
from kafka_ops.analysis.runner import analyse  # noqa: E402
from kafka_ops.detectors.registry import DETECTORS  # noqa: E402
from kafka_ops.lake.open import open_lake  # noqa: E402
from kafka_ops.lake.schema import COMMIT_TABLE  # noqa: E402
from kafka_ops.snapshot.tables import snapshot_batch  # noqa: E402
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget  # noqa: E402
from kafka_ops.thresholds import Thresholds  # noqa: E402
from kafka_ops.validation import snapshot_checks  # noqa: E402
from kafka_ops.validation.gates import run_gates  # noqa: E402
from kafka_ops.validation.pipeline import validate_batches  # noqa: E402
from sandbox import SandboxCluster  # noqa: E402
from sandbox.cluster import free_port  # noqa: E402

CHROOT = "/fleet"
CYCLE_S = 300.0
BUSY = 0.8
BIN = Path(sys.executable).parent
REMINDER = timedelta(hours=1)


def cpu_seconds() -> float:
    """CPU seconds of this process, of its children that ended (a spark-submit and its JVM), and of every
    live process under it (a Spark Connect server's JVM, a local Spark's)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
        except psutil.Error:  # ended since the listing: its time is in its parent's children's now
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


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


@contextmanager
def analyser(
    how: str, cores: int, lake_root: str, work: Path, detectors: dict[str, Detector]
) -> Iterator[Callable[[], None]]:
    """A function analysing the history's latest snapshot with `detectors` on `cores` Spark cores, as `how`
    says (see --spark)."""
    job = [str(REPO / "spark_jobs" / "cluster_health.py"), "--lake", lake_root, "--cluster", "synth",
           "--lake-format", "parquet", "--detectors", ",".join(detectors)]  # fmt: skip
    if how == "submit":
        command = [str(BIN / "spark-submit"), "--master", f"local[{cores}]", "--driver-memory", "4g",
                   "--conf", "spark.ui.enabled=false", *job]  # fmt: skip

        def submitted() -> None:
            done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
            if done.returncode != 0:
                raise SystemExit(f"cluster_health.py exited {done.returncode}:\n{done.stderr[-3000:]}")

        yield submitted
    elif how == "session":
        with spark_session("kafka-ops bench: fleet", "parquet") as spark:

            def on_session() -> None:
                analyse(spark, lake_root, "synth", list(detectors.values()), Thresholds(), lake_format="parquet")

            yield on_session
    else:
        conf = {"spark.driver.memory": "4g", "spark.ui.enabled": "false"}
        with local_server(work / f"connect-{cores}.log", free_port(), master=f"local[{cores}]", conf=conf) as url:
            analysis = on_connect_server(url, detectors)

            def on_server() -> None:
                analysis(job[1:])

            on_server()  # untimed: the server's JIT and caches, warm in a running deployment
            yield on_server


def analysis_stages(
    lake_root: str, analysis: Callable[[], None], stages: dict[str, dict[str, float]], *, gates: bool
) -> None:
    """The cluster's analysis, then validation, and the gates and alerts when `gates` (they need every
    detector's findings)."""
    measured("analysis", analysis, stages)
    lake = open_lake(lake_root, "parquet")

    def gates_and_alerts() -> None:
        row = lake.latest_commit("synth", COMMIT_TABLE)
        if row is None:
            raise SystemExit("the synthetic history has no snapshot")
        now = datetime.now(UTC)
        validate_batches(lake, "synth", now, snapshot_id=str(row["snapshot_id"]))
        if not gates:
            return
        report = run_gates(lake, "synth", str(row["snapshot_id"]), validated_at=now)
        sink = LogNotifier("log", str(Path(lake_root) / "_alerting" / "synth.alerts.jsonl"))
        dispatch("synth", firing_alerts(lake, "synth", report, Links()), now, lake_root=lake_root,
                 notifiers=[sink], reminder=REMINDER, judgement=analysis_judgement(lake, "synth", report))  # fmt: skip

    measured("gates_and_alerts", gates_and_alerts, stages)


def analysis_interval(clusters: int, paging_cpu_s: float, analysis_cpu_s: float, cores: int) -> float | None:
    """How often each of `clusters` clusters is analysed when every one is snapshotted and paged every 5
    minutes and the analysis DAG takes what CPU is left (it analyses each cluster's newest batch, one run
    after the other): None when the paging alone fills the machine."""
    left = BUSY * cores - clusters * paging_cpu_s / CYCLE_S  # cores free for the analyses
    return round(clusters * analysis_cpu_s / left) if left > 0 else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--topics", type=int, default=400)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--snapshots", type=int, default=288, help="the day of history the analysis reads")
    parser.add_argument("--spark-cores", default="1,2", help="local Spark core counts to analyse with")
    parser.add_argument("--spark", choices=("connect", "submit", "session"), default="connect",
                        help="connect: a warm Spark Connect server per core count; submit: a spark-submit "
                        "per analysis; session: this process's local Spark (the toy size; --spark-cores labels "
                        "it)")  # fmt: skip
    _detectors.add_option(parser)
    args = parser.parse_args(argv)
    detectors = _detectors.chosen(args.detectors)
    gates = set(detectors) == set(DETECTORS)
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
            with analyser(args.spark, n, f"{work}/history", Path(work), detectors) as analysis:
                analysis_stages(f"{work}/history", analysis, by_cores[n], gates=gates)
    results = {}
    for n, stages in by_cores.items():
        cycle = {**snapshot, **stages}
        cpu = sum(s["cpu_s"] for s in cycle.values())
        paging = cycle["snapshot"]["cpu_s"] + cycle["page"]["cpu_s"]
        results[n] = {
            "clusters": int(BUSY * cores * CYCLE_S // cpu),
            "cpu_s_per_cycle": round(cpu, 1),
            "cpu_s_per_cluster_hour": round(cpu * 3600 / CYCLE_S, 0),
            "cycle_s": round(sum(s["wall_s"] for s in cycle.values()), 1),
            "paged_clusters": int(BUSY * cores * CYCLE_S // paging),
            "analysis_every_s_at_10_clusters": analysis_interval(10, paging, cpu - paging, cores),
            "stages": cycle,
        }
    best = max(results, key=lambda n: (results[n]["clusters"], -results[n]["cpu_s_per_cycle"]))
    print(json.dumps({
        "bench": "fleet", "partitions": args.partitions, "snapshots": args.snapshots, "cores": cores,
        "spark": args.spark, "detectors": len(detectors), "gates": gates,
        "clusters": results[best]["clusters"], "cpu_s_per_cluster_hour": results[best]["cpu_s_per_cluster_hour"],
        "cycle_s": results[best]["cycle_s"], "paged_clusters": results[best]["paged_clusters"],
        "analysis_every_s_at_10_clusters": results[best]["analysis_every_s_at_10_clusters"],
        "spark_cores": best, "by_spark_cores": results,
        "excluded": "group collection and the groups' analysis (an upper bound)",
        "targets": {"clusters_at_least_10": results[best]["clusters"] >= 10,
                    "cycle_within_300_s": results[best]["cycle_s"] <= CYCLE_S},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
