"""Benchmark: the KRaft collector (DescribeTopicPartitions in pages) against one describe per topic.

Starts a KRaft sandbox (3 controllers, 3 brokers on 127.0.0.1), creates 10,000 partitions over
1,000 topics (replication factor 1 by default: six JVMs holding 10,000 replicas each three times
over would not leave this 2-core machine much to measure with; the replication factor changes
what each partition's answer carries, not how many requests a snapshot sends), then in the same
run times:
- the baseline: what a first implementation would do for the same facts: DescribeQuorum and
  DescribeCluster once, the topic names (one Metadata for all topics), then per topic one
  DescribeTopicPartitions (ISR, ELR) and one DescribeConfigs (its overrides); it only fetches,
  building nothing;
- the collector: `KRaftCollector.collect()` end to end (its client's bootstrap, the quorum,
  brokers, partitions in pages of 2,000 with each page's topic configs asked for while the next
  page is read, reassignments, features, broker configs, quotas, ACLs, each broker's log dirs and
  replica sizes, and the snapshot model), and the Admin API requests it sent (`snap.requests`);
- the whole job: collect + `snapshot_batch` + `Lake.publish` to a fresh lake (the DAG task);
- for diagnosis, the partitions alone: a fresh client paging DescribeTopicPartitions through
  every partition (`pages_seconds`), the part of the collector the baseline's per-topic
  DescribeTopicPartitions stand for (the rest is fixed-count requests, parsing, and the topic
  configs, which overlap the pages).
Each is the best of --runs. Targets: collector >= 5x faster than the baseline; a full snapshot of
10,000 partitions in <= 5 s; requests grow with partitions / 2,000 (the page size), not with
partitions or topics: at most 10 + 2 x brokers + 2 x pages (a page and its topics' configs; per
broker its configs and its log dirs: the DescribeLogDirs added the second request per broker). Last
line: one JSON object with the figures, `targets` holding each threshold and whether it was met.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import _repo  # noqa: F401 - the checkout on sys.path, for the sandbox package
from _timing import best_of
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType

from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.kraft.collector import DEFAULT_PAGE_SIZE, KRaftCollector
from sandbox import KRaftSandbox

CLUSTER = "bench"
TOPICS_PER_CREATE = 100
"""Topics per CreateTopics request while seeding (not timed)."""
BROKER_HEAP = "1g"
"""Each broker holds a third of the replicas: more than the sandbox's default heap."""
TARGET_RATIO = 5
TARGET_SECONDS = 5
TARGET_PARTITIONS = 10_000
"""The partition count the time target is set for."""
FIXED_REQUESTS = 10
"""Requests besides the pages, their topic configs and the per-broker configs: quorum, cluster,
reassignments, features, default broker config, quotas, ACLs, with room for one retry."""


def topic_sizes(topics: int, partitions: int) -> dict[str, int]:
    """`partitions` partitions spread as evenly as they go over `topics` topics."""
    if not 1 <= topics <= partitions:
        raise SystemExit(f"need 1 <= --topics <= --partitions, got {topics} topics for {partitions} partitions")
    base, extra = divmod(partitions, topics)
    return {f"bench-{i:05d}": base + (i < extra) for i in range(topics)}


def seed(admin: KafkaAdminClient, sizes: dict[str, int], replication_factor: int) -> None:
    """Create the topics, `TOPICS_PER_CREATE` to a CreateTopics request."""
    names = list(sizes)
    for start in range(0, len(names), TOPICS_PER_CREATE):
        batch = names[start : start + TOPICS_PER_CREATE]
        admin.create_topics(
            {t: {"num_partitions": sizes[t], "replication_factor": replication_factor} for t in batch},
            timeout_ms=60_000,
        )


def led_partitions(admin: KafkaAdminClient) -> int:
    """Partitions that have a leader, read page by page as the collector reads them."""
    led, cursor = 0, None
    while True:
        page = admin.describe_topic_partitions([], DEFAULT_PAGE_SIZE, cursor)
        led += sum(p["leader_id"] >= 0 for t in page["topics"] for p in t["partitions"])
        cursor = page["next_cursor"]
        if cursor is None:
            return led


def build_cluster(sandbox: KRaftSandbox, sizes: dict[str, int], replication_factor: int) -> None:
    start = time.perf_counter()
    with sandbox.admin(timeout_ms=60_000) as admin:
        seed(admin, sizes, replication_factor)
        created = time.perf_counter() - start
        total = sum(sizes.values())
        sandbox.wait_for(lambda: led_partitions(admin) >= total, 600, f"{total} partitions with a leader")
    print(
        f"created {len(sizes)} topics ({total} partitions) in {created:.1f}s, "
        f"all led after {time.perf_counter() - start:.1f}s",
        file=sys.stderr,
    )


def counted(admin: KafkaAdminClient) -> list[int]:
    """Count every request `admin` sends from now on (as the collector counts its own)."""
    sent = [0]
    manager = admin._manager
    send = manager.send

    def counting(*args: Any, **kwargs: Any) -> Any:
        sent[0] += 1
        return send(*args, **kwargs)

    manager.send = counting
    return sent


def naive_snapshot(target: KafkaTarget) -> int:
    """The baseline: the quorum and brokers once, then each topic's partitions and config overrides,
    one topic at a time (the facts the collector's snapshot holds). Returns the requests it sent."""
    admin = target()
    sent = counted(admin)
    try:
        admin.describe_metadata_quorum()
        admin.describe_cluster()
        for topic in admin.list_topics():
            admin.describe_topic_partitions([topic])
            admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="modified")
    finally:
        admin.close()
    return sent[0]


def pages_only(target: KafkaTarget) -> int:
    """Every partition through DescribeTopicPartitions pages, nothing else. Returns the partitions."""
    admin = target()
    try:
        return led_partitions(admin)
    finally:
        admin.close()


def collect_and_publish(collect: Callable[[], ClusterSnapshot]) -> None:
    with tempfile.TemporaryDirectory() as lake_dir:
        Lake(lake_dir).publish(snapshot_batch(collect()))


def check(snap: ClusterSnapshot, partitions: int) -> None:
    if snap.partition_count < partitions or snap.issues:
        issues = "; ".join(f"{i.path}: {i.problem}" for i in snap.issues[:5])
        raise SystemExit(
            f"collector saw {snap.partition_count} of {partitions} partitions in {len(snap.topics)} topics; "
            f"issues: {issues}"
        )


def say(line: str) -> None:
    print(line, file=sys.stderr)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--topics", type=int, default=1_000)
    parser.add_argument("--replication-factor", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    sizes = topic_sizes(args.topics, args.partitions)
    with KRaftSandbox(broker_heap=BROKER_HEAP) as sandbox:
        build_cluster(sandbox, sizes, args.replication_factor)
        target = KafkaTarget(sandbox.bootstrap_servers, {"request_timeout_ms": 60_000})

        def collect() -> ClusterSnapshot:
            return KRaftCollector(CLUSTER, target).collect()

        baseline_s, baseline_requests = best_of(args.runs, lambda: naive_snapshot(target))
        collect_s, snap = best_of(args.runs, collect)
        check(snap, args.partitions)
        publish_s, _ = best_of(args.runs, lambda: collect_and_publish(collect))
        pages_s, _ = best_of(args.runs, lambda: pages_only(target))
        brokers = len(sandbox.broker_ids())

    timings = {
        "seconds": collect_s,
        "baseline_seconds": baseline_s,
        "publish_seconds": publish_s,
        "pages_seconds": pages_s,
    }
    report(args, snap, brokers, baseline_requests, timings)


def report(
    args: argparse.Namespace,
    snap: ClusterSnapshot,
    brokers: int,
    baseline_requests: int,
    timings: dict[str, float],
) -> None:
    collect_s, baseline_s = timings["seconds"], timings["baseline_seconds"]
    ratio = baseline_s / collect_s
    requests = snap.requests or 0
    pages = math.ceil(snap.partition_count / DEFAULT_PAGE_SIZE)
    max_requests = FIXED_REQUESTS + 2 * brokers + 2 * pages  # per broker: DescribeConfigs, DescribeLogDirs
    met = {
        "ratio": ratio >= TARGET_RATIO,
        "seconds": collect_s <= TARGET_SECONDS,
        "requests": requests <= max_requests,
    }
    say(f"one describe per topic ({baseline_requests} requests): {baseline_s:.2f}s")
    say(f"KRaft collector ({requests} requests, {pages} pages): {collect_s:.2f}s ({ratio:.1f}x faster)")
    say(f"  of which the partitions alone take about:   {timings['pages_seconds']:.2f}s")
    say(f"collect + publish to the lake:               {timings['publish_seconds']:.2f}s")
    say(
        f"targets: ratio >= {TARGET_RATIO} {met['ratio']}, <= {TARGET_SECONDS}s for {TARGET_PARTITIONS} partitions "
        f"{met['seconds']}, requests <= {max_requests} {met['requests']}"
    )
    print(json.dumps({
        "bench": "kraft_snapshot", "partitions": snap.partition_count, "topics": len(snap.topics),
        "brokers": brokers, "replication_factor": args.replication_factor,
        **{name: round(value, 3) for name, value in timings.items()}, "ratio": round(ratio, 2),
        "requests": requests, "baseline_requests": baseline_requests, "pages": pages,
        "targets": {
            "ratio": TARGET_RATIO, "seconds": TARGET_SECONDS, "seconds_partitions": TARGET_PARTITIONS,
            "requests": max_requests, "met": met,
        },
    }))  # fmt: skip


if __name__ == "__main__":
    main()
