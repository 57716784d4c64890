"""Benchmark: what the load rows add to a ZooKeeper snapshot of 100,000 partitions.

A ZooKeeper snapshot reads its brokers' log dirs beside ZooKeeper (`sources.log_dirs.collect_beside`:
one DescribeLogDirs per broker). This builds the answers of 60 brokers for 100,000 partitions over
2,000 topics at replication factor 3 (300,000 replicas, two log dirs per broker), encodes them with
kafka-python as a broker sends them (DescribeLogDirs v4, what 3.3+ brokers answer), then times, best
of `--runs`, the work on the client's side:
- decode: kafka-python's `DescribeLogDirsResponse.decode` of every answer (the client's IO thread);
- parse: `log_dirs.add_answers`, the rows of the snapshot (`LogDir`, `ReplicaSize`);
- publish: the snapshot's Arrow tables built and written to a fresh lake (`snapshot_batch`, the
  `replica_sizes` table being the one that grows).
No network: the brokers' own time to answer is theirs, and runs in parallel with ZooKeeper's reads.
Target: the ZooKeeper snapshot's (`bench/zk_snapshot.py`): 100k partitions snapshotted and
published in <= 10 s; its collect + publish took `--zk-seconds` (docs/benchmarks.md has the current
figure), so the load rows may add at most the rest. Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime
from typing import Any

from _timing import best_of
from kafka.protocol.admin import DescribeLogDirsResponse

from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources import log_dirs

VERSION = 4
TARGET_SECONDS = 10.0
ZK_SECONDS = 5.72
"""An earlier measurement of `bench/zk_snapshot.py`'s collect + publish at 100k partitions; pass the current
one with `--zk-seconds`."""

_Result = DescribeLogDirsResponse.DescribeLogDirsResult
_Topic = _Result.DescribeLogDirsTopic
_Partition = _Topic.DescribeLogDirsPartition


def answers(partitions: int, topics: int, brokers: int, rf: int, dirs: int) -> dict[int, bytes]:
    """Each broker's encoded DescribeLogDirs answer: replica r of partition p on broker (p + r) % brokers,
    in log dir p % dirs, sized by p."""
    held: dict[int, dict[int, dict[str, list[Any]]]] = {b: {d: {} for d in range(dirs)} for b in range(brokers)}
    per_topic = partitions // topics
    for i in range(partitions):
        topic, p = f"topic-{i // per_topic:05d}", i % per_topic
        for r in range(rf):
            held[(i + r) % brokers][i % dirs].setdefault(topic, []).append(
                _Partition(partition_index=p, partition_size=1_000_000 + i, offset_lag=0, is_future_key=False)
            )
    out = {}
    for b, by_dir in held.items():
        results = [
            _Result(error_code=0, log_dir=f"/data/{d}", total_bytes=4 * 10**12, usable_bytes=2 * 10**12,
                    topics=[_Topic(name=t, partitions=ps) for t, ps in sorted(by_topic.items())])
            for d, by_topic in by_dir.items()
        ]  # fmt: skip
        out[b] = DescribeLogDirsResponse(throttle_time_ms=0, error_code=0, results=results).encode(version=VERSION)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=2_000)
    parser.add_argument("--brokers", type=int, default=60)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--dirs", type=int, default=2, help="log dirs per broker")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--zk-seconds", type=float, default=ZK_SECONDS)
    args = parser.parse_args()

    encoded = answers(args.partitions, args.topics, args.brokers, args.replication_factor, args.dirs)
    size = sum(len(a) for a in encoded.values())

    def decode() -> dict[int, Any]:
        return {b: DescribeLogDirsResponse.decode(data, version=VERSION) for b, data in encoded.items()}

    decode_s, decoded = best_of(args.runs, decode)

    def parse() -> ClusterSnapshot:
        snap = ClusterSnapshot("bench", "bench-1", datetime(2026, 1, 1, tzinfo=UTC), "bench")
        log_dirs.add_answers(snap, decoded)
        return snap

    parse_s, snap = best_of(args.runs, parse)
    replicas = args.partitions * args.replication_factor
    if len(snap.replica_sizes) != replicas or snap.issues:
        raise SystemExit(f"parsed {len(snap.replica_sizes)} replicas of {replicas}, {len(snap.issues)} issues")

    def publish() -> None:
        with tempfile.TemporaryDirectory() as lake_dir:
            Lake(lake_dir).publish(snapshot_batch(snap))

    publish_s, _ = best_of(args.runs, publish)
    load_s = decode_s + parse_s + publish_s
    total = args.zk_seconds + load_s
    print(f"{len(encoded)} answers, {size / 1e6:.1f} MB, {replicas:,} replicas", file=sys.stderr)
    print(f"decode {decode_s:.2f}s  parse {parse_s:.2f}s  publish {publish_s:.2f}s  = {load_s:.2f}s", file=sys.stderr)
    print(f"with the ZooKeeper snapshot ({args.zk_seconds:g}s): {total:.2f}s (target <= {TARGET_SECONDS:g}s)",
          file=sys.stderr)  # fmt: skip
    print(json.dumps({
        "bench": "log_dirs_decode", "partitions": args.partitions, "replicas": replicas, "brokers": args.brokers,
        "answer_bytes": size, "decode_seconds": round(decode_s, 3), "parse_seconds": round(parse_s, 3),
        "publish_seconds": round(publish_s, 3), "seconds": round(load_s, 3),
        "with_zk_snapshot_seconds": round(total, 3), "targets": {"with_zk_snapshot_seconds": TARGET_SECONDS},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
