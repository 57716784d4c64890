"""Benchmark: the batched consumer-group collector against per-group, per-partition calls, on a
Kafka 4.4 KRaft sandbox with every group type.

500 consumer groups in all, each with offsets on 20 partitions (25 topics x 20 partitions, with
messages; group i reads topic i % 25): `--live-groups` groups of each live type formed by real Java
clients of Kafka 4.4 (classic and consumer protocol: two consumers each; a share group: one share
consumer; a streams group: one Kafka Streams app), all stopped once they hold their partitions, and
the rest classic groups that only commit offsets. Every committed offset of those lags, so the exact
lag in seconds reads the first unconsumed record of each (group, partition). Then, in the same run:
- the baseline: what a first implementation would do: list the groups, then per group one describe
  request of its type's API and one OffsetFetch (DescribeShareGroupOffsets for a share group), per
  committed partition one ListOffsets, and per lagging partition one Fetch of the record at the
  committed offset;
- the collector: `GroupCollector.collect()` (per batch and coordinator one describe request per type
  and one OffsetFetch, two ListOffsets per partition leader (latest; earliest, which the baseline does
  not read), the first unconsumed records in one Fetch per leader per round, last stable offsets and
  open transactions).
Both must see the same lag and find the same record times. Targets: collector >= 5x faster than the
baseline, <= 15 s. Last line: one JSON object with the figures (`seconds`, `baseline_seconds`,
`ratio`, `group_types`, `exact_lag_rows`: rows whose lag in seconds is exact).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import _repo  # noqa: F401 - the checkout on sys.path, for the sandbox package
from _timing import best_of
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic, OffsetSpec
from kafka.errors import CoordinatorNotAvailableError, NoError
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_ops.model.groups import GroupSnapshot
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from kafka_ops.sources.groups.record_times import first_record_times
from kafka_ops.sources.groups.share import share_offsets
from kafka_ops.sources.groups.types import DESCRIBERS, group_type_of
from sandbox import KRaftSandbox, ensure_kafka4_jars
from sandbox.java_consumer import JavaConsumer
from sandbox.share_consumer import JavaShareConsumer
from sandbox.streams_app import JavaStreamsApp

TOPICS = 25
PARTITIONS = 20
MESSAGES = 40  # per partition
OUT = "bench-streams-out"
"""The streams apps' output topic."""


def seed(sandbox: KRaftSandbox, groups: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=60_000)
    try:
        admin.create_topics([NewTopic(f"bench-{t:02d}", PARTITIONS, 1) for t in range(TOPICS)] + [NewTopic(OUT, 1, 1)])
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
            commit_offsets(admin, f"bench-group-{g:03d}", offsets)
    finally:
        admin.close()


def commit_offsets(admin: KafkaAdminClient, group: str, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
    """Commit `offsets` for `group`, retrying while the coordinator is not there yet: the first commit
    creates __consumer_offsets, and a loading coordinator answers per partition, not by raising."""
    failed: dict[TopicPartition, object] = {}
    for _ in range(60):
        try:
            answers = admin.alter_group_offsets(group, offsets)
        except CoordinatorNotAvailableError as e:
            failed = {tp: e for tp in offsets}
        else:
            failed = {tp: error for tp, error in answers.items() if error is not NoError}
            if not failed:
                return
        time.sleep(1)
    raise SystemExit(f"could not commit offsets for group {group}: {sorted(map(str, failed.values()))[:3]}")


def baseline(bootstrap: str) -> tuple[int, int]:
    """Per group: one describe of its type, its offsets; per committed partition: ListOffsets; per
    lagging one: a Fetch of the record at the committed offset. (Total lag, record times found.)"""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60_000)
    total = found = 0
    try:
        for listed in admin.list_groups():
            group, kind = listed["group_id"], group_type_of(listed)
            DESCRIBERS[kind](admin, [group])  # type: ignore[index]
            if kind == "share":
                share_offsets(admin, [group])
                continue
            for tp, committed in admin.list_group_offsets({group: None})[group].items():
                end = admin.list_partition_offsets({tp: OffsetSpec.LATEST})[tp].offset
                total += max(end - committed.offset, 0)
                if end > committed.offset:
                    found += len(first_record_times(admin, [(tp.topic, tp.partition, committed.offset)]).times)
    finally:
        admin.close()
    return total, found


class LiveGroups:
    """`per_type` groups of each live type, formed by real Kafka 4.4 clients, then stopped."""

    def __init__(self, sandbox: KRaftSandbox, per_type: int) -> None:
        jars = ensure_kafka4_jars()
        bootstrap = sandbox.bootstrap_servers
        self.consumers = [
            JavaConsumer(bootstrap, f"bench-{protocol}-{g}", [f"bench-{g:02d}"], "range", client_id=f"c{i}",
                         protocol=protocol, jars=jars)
            for protocol in ("classic", "consumer")
            for g in range(per_type)
            for i in range(2)
        ]  # fmt: skip
        self.shares = [JavaShareConsumer(bootstrap, f"bench-share-{g}", [f"bench-{g:02d}"]) for g in range(per_type)]
        self.apps = [JavaStreamsApp(bootstrap, f"bench-streams-{g}", [f"bench-{g:02d}"], OUT) for g in range(per_type)]

    def settle(self) -> None:
        """Until every client holds its partitions, then stop them all: nothing moves while timed."""
        for c in self.consumers:
            c.wait_until(lambda c: bool(c.assignment), 120, "an assignment")
        for share in self.shares:
            share.wait_until(lambda s: bool(s.consumed), 120, "records")
        for app in self.apps:
            app.wait_running(PARTITIONS, 120)
        for c in self.consumers:
            c.pause()
        for share in self.shares:
            share.stop()
        for app in self.apps:
            app.pause()

    def close(self) -> None:
        for consumer in self.consumers:
            consumer.close()
        for share in self.shares:
            share.close()
        for app in self.apps:
            app.close()


def check(snap: GroupSnapshot, groups: int, baseline_lag: int, baseline_found: int) -> tuple[int, int]:
    """The collector's lag and record times (over committed offsets) agree with the baseline's."""
    lag = sum(o.lag or 0 for o in snap.offsets if o.committed_offset is not None)
    found = sum(1 for o in snap.offsets if o.lag and o.committed_offset is not None
                and (o.topic, o.partition, o.committed_offset) in snap.record_times)  # fmt: skip
    if snap.issues or lag != baseline_lag or found != baseline_found or len(snap.groups) < groups:
        issues = "; ".join(f"{i.group_id}: {i.problem}" for i in snap.issues[:5])
        raise SystemExit(
            f"collector disagrees: {len(snap.groups)} groups, lag {lag} vs baseline {baseline_lag}, record times "
            f"{found} vs {baseline_found}; {len(snap.issues)} issues: {issues}"
        )
    return lag, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=500, help="groups in all, live ones included")
    parser.add_argument("--live-groups", type=int, default=1, help="live groups of each type (classic, consumer, "
                        "share, streams)")  # fmt: skip
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    live = 4 * args.live_groups
    if not 0 <= args.live_groups <= TOPICS or args.groups < live:
        raise SystemExit(f"need 0 <= --live-groups <= {TOPICS} and --groups >= 4 x --live-groups")

    with KRaftSandbox() as sandbox:
        start = time.perf_counter()
        seed(sandbox, args.groups - live)
        clients = LiveGroups(sandbox, args.live_groups)
        try:
            clients.settle()
            time.sleep(2)
            print(f"seeded {args.groups - live} groups (+{live} live) in {time.perf_counter() - start:.1f}s",
                  file=sys.stderr)  # fmt: skip
            target = KafkaTarget(sandbox.bootstrap_servers, {"request_timeout_ms": 60_000})
            collect_s, snap = best_of(args.runs, lambda: GroupCollector("bench", target).collect())
            baseline_s, (baseline_lag, baseline_found) = best_of(1, lambda: baseline(sandbox.bootstrap_servers))
        finally:
            clients.close()

    _, exact = check(snap, args.groups, baseline_lag, baseline_found)
    types: dict[str, int] = {}
    for g in snap.groups:
        types[g.group_type] = types.get(g.group_type, 0) + 1
    rows = len(snap.offsets)
    ratio = baseline_s / collect_s
    print(f"per-group, per-partition calls ({rows} partitions, {exact} record times): {baseline_s:.2f}s",
          file=sys.stderr)  # fmt: skip
    print(f"batched collector:                   {collect_s:.2f}s  ({ratio:.1f}x faster, target >= 5x, <= 15s)",
          file=sys.stderr)  # fmt: skip
    print(json.dumps({
        "bench": "group_collection", "groups": len(snap.groups), "group_types": dict(sorted(types.items())),
        "group_partitions": rows, "exact_lag_rows": exact,
        "seconds": round(collect_s, 3), "baseline_seconds": round(baseline_s, 3), "ratio": round(ratio, 2),
        "targets": {"ratio": 5, "seconds": 15},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
