"""Benchmark: the batched consumer-group collector against per-group, per-partition calls.

On a sandbox cluster: 500 consumer groups, each with committed offsets on 20 partitions
(25 topics x 20 partitions, with messages; group i commits on topic i % 25), plus
`--live-groups` groups of two real Java consumers each (so DescribeGroups returns members
and assignments). Then, in the same run, times:
- the baseline: what a first implementation would do: list the groups, then per group one
  DescribeGroups and one OffsetFetch, and one ListOffsets per committed partition;
- the collector: `GroupCollector.collect()` (batched DescribeGroups/OffsetFetch per
  coordinator, one ListOffsets per partition leader).
Both must see the same lag. Targets: collector >= 5x faster than the baseline, <= 15 s.
Last line: one JSON object with the figures (`seconds`, `baseline_seconds`, `ratio`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from _timing import best_of
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic, OffsetSpec
from kafka.errors import CoordinatorNotAvailableError
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_ops.sandbox import SandboxCluster
from kafka_ops.sandbox.java_consumer import JavaConsumer
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget

TOPICS = 25
PARTITIONS = 20
MESSAGES = 40  # per partition


def seed(sandbox: SandboxCluster, groups: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=60_000)
    try:
        admin.create_topics([NewTopic(f"bench-{t:02d}", PARTITIONS, 1) for t in range(TOPICS)])
        producer = KafkaProducer(bootstrap_servers=sandbox.bootstrap_servers, linger_ms=20)
        for t in range(TOPICS):
            for p in range(PARTITIONS):
                for _ in range(MESSAGES):
                    producer.send(f"bench-{t:02d}", b"m", partition=p)
        producer.flush(60)
        producer.close()
        for g in range(groups):
            topic = f"bench-{g % TOPICS:02d}"
            offsets = {
                TopicPartition(topic, p): OffsetAndMetadata((g + p) % MESSAGES, "", -1) for p in range(PARTITIONS)
            }
            for attempt in range(60):  # the first commit creates __consumer_offsets: no coordinator for a while
                try:
                    admin.alter_group_offsets(f"bench-group-{g:03d}", offsets)
                    break
                except CoordinatorNotAvailableError:
                    if attempt == 59:
                        raise
                    time.sleep(1)
    finally:
        admin.close()


def baseline(bootstrap: str) -> int:
    """Per group: DescribeGroups, OffsetFetch; per committed partition: ListOffsets. Total lag."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60_000)
    total = 0
    try:
        for listed in admin.list_groups():
            group = listed["group_id"]
            admin.describe_groups([group])
            for tp, committed in admin.list_group_offsets({group: None})[group].items():
                end = admin.list_partition_offsets({tp: OffsetSpec.LATEST})[tp].offset
                total += max(end - committed.offset, 0)
    finally:
        admin.close()
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--live-groups", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with SandboxCluster() as sandbox:
        start = time.perf_counter()
        seed(sandbox, args.groups)
        consumers = [
            JavaConsumer(sandbox.bootstrap_servers, f"bench-live-{g}", [f"bench-{g:02d}"], "range", client_id=f"c{i}")
            for g in range(args.live_groups)
            for i in range(2)
        ]
        try:
            for c in consumers:
                c.wait_until(lambda c: bool(c.assignment), 120, "an assignment")
            for c in consumers:
                c.pause()  # a stable picture: nothing moves while both sides are timed
            time.sleep(2)
            print(f"seeded {args.groups} groups (+{args.live_groups} live) in {time.perf_counter() - start:.1f}s",
                  file=sys.stderr)  # fmt: skip
            target = KafkaTarget(sandbox.bootstrap_servers, {"request_timeout_ms": 60_000})
            collect_s, snap = best_of(args.runs, lambda: GroupCollector("bench", target).collect())
            baseline_s, baseline_lag = best_of(1, lambda: baseline(sandbox.bootstrap_servers))
        finally:
            for c in consumers:
                c.close()

    lag = sum(o.lag or 0 for o in snap.offsets)
    rows = len(snap.offsets)
    if snap.issues or lag != baseline_lag or len(snap.groups) < args.groups:
        raise SystemExit(f"collector disagrees: {len(snap.issues)} issues, lag {lag} vs baseline {baseline_lag}")
    ratio = baseline_s / collect_s
    print(f"per-group, per-partition calls ({rows} partitions): {baseline_s:.2f}s", file=sys.stderr)
    print(f"batched collector:                   {collect_s:.2f}s  ({ratio:.1f}x faster, target >= 5x, <= 15s)",
          file=sys.stderr)  # fmt: skip
    print(json.dumps({
        "bench": "group_collection", "groups": len(snap.groups), "group_partitions": rows,
        "seconds": round(collect_s, 3), "baseline_seconds": round(baseline_s, 3), "ratio": round(ratio, 2),
        "targets": {"ratio": 5, "seconds": 15},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
