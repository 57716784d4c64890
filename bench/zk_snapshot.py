"""Benchmark: the pipelined ZooKeeper collector against a sequential kazoo walk.

Seeds a chroot of a sandbox ZooKeeper with 100,000 partitions over 2,000 topics and 60
brokers (Kafka's exact znode formats), then in the same run times:
- the baseline: the straightforward sequential walk, one blocking `get` per znode;
- the collector: `ZooKeeperCollector.collect()` (pipelined async reads + parsing);
- the whole job: collect + publish to a fresh lake (what the DAG task does).
Targets: collector >= 5x faster than the baseline; 100k partitions snapshotted and published
in <= 10 s. Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time

import _repo  # noqa: F401 - the checkout on sys.path, for the sandbox package
from _timing import best_of
from kazoo.client import KazooClient
from synthetic_zk import seed

from kafka_ops.lake.store import Lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from sandbox import SandboxCluster

CHROOT = "/bench"


def sequential_walk(connect: str) -> int:
    """One blocking round trip per znode: what a first implementation would do."""
    zk = KazooClient(hosts=connect, timeout=30)
    zk.start()
    reads = 0
    try:
        for b in zk.get_children("/brokers/ids"):
            zk.get(f"/brokers/ids/{b}")
            reads += 1
        for path in ("/controller", "/controller_epoch", "/cluster/id"):
            zk.get(path)
            reads += 1
        for topic in zk.get_children("/brokers/topics"):
            data, _ = zk.get(f"/brokers/topics/{topic}")
            reads += 1
            for p in json.loads(data)["partitions"]:
                zk.get(f"/brokers/topics/{topic}/partitions/{p}/state")
                reads += 1
        for topic in zk.get_children("/config/topics"):
            zk.get(f"/config/topics/{topic}")
            reads += 1
    finally:
        zk.stop()
        zk.close()
    return reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=2_000)
    parser.add_argument("--brokers", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with SandboxCluster(brokers=0) as sandbox:
        start = time.perf_counter()
        made = seed(sandbox.zookeeper_hosts, CHROOT, args.topics, args.partitions, args.brokers)
        print(f"seeded {made} znodes in {time.perf_counter() - start:.1f}s", file=sys.stderr)
        connect = sandbox.zookeeper_hosts + CHROOT
        target = ZooKeeperTarget(sandbox.zookeeper_hosts, CHROOT, timeout_s=30)

        baseline_s, reads = best_of(args.runs, lambda: sequential_walk(connect))
        collect_s, snap = best_of(args.runs, lambda: ZooKeeperCollector("bench", target).collect())
        if snap.partition_count != args.partitions or snap.issues:
            raise SystemExit(f"collector saw {snap.partition_count} partitions, {len(snap.issues)} issues")

        def collect_and_publish() -> None:
            with tempfile.TemporaryDirectory() as lake_dir:
                s = ZooKeeperCollector("bench", target).collect()
                Lake(lake_dir).publish(snapshot_batch(s))

        total_s, _ = best_of(args.runs, collect_and_publish)

    ratio = baseline_s / collect_s
    print(f"sequential walk ({reads} gets): {baseline_s:.2f}s", file=sys.stderr)
    print(f"pipelined collector:           {collect_s:.2f}s  ({ratio:.1f}x faster)", file=sys.stderr)
    print(f"collect + publish to the lake: {total_s:.2f}s  (target <= 10s)", file=sys.stderr)
    print(json.dumps({
        "bench": "zk_snapshot", "partitions": args.partitions, "topics": args.topics,
        "brokers": args.brokers, "seconds": round(total_s, 3), "collect_seconds": round(collect_s, 3),
        "baseline_seconds": round(baseline_s, 3), "ratio": round(ratio, 2),
        "targets": {"ratio": 5, "seconds": 10},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
