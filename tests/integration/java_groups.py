"""Helpers for tests with real Java consumer groups on the sandbox."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_ops.model.groups import ConsumerGroup, GroupSnapshot
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from sandbox import KRaftSandbox, SandboxCluster
from sandbox.java_consumer import JavaConsumer

FAST = {"request_timeout_ms": 10_000}

Sandbox = SandboxCluster | KRaftSandbox


def make_topics(sandbox: Sandbox, partitions: dict[str, int], messages: int = 0) -> None:
    """Create the topics (RF 1) and produce `messages` to every partition."""
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, **FAST)
    try:
        admin.create_topics([NewTopic(t, num_partitions=n, replication_factor=1) for t, n in partitions.items()])
    finally:
        admin.close()
    if messages:
        produce(sandbox, {(t, p): messages for t, n in partitions.items() for p in range(n)})


def produce(sandbox: Sandbox, counts: dict[tuple[str, int], int]) -> None:
    producer = KafkaProducer(bootstrap_servers=sandbox.bootstrap_servers, linger_ms=5)
    try:
        for (topic, partition), n in counts.items():
            for _ in range(n):
                producer.send(topic, b"m", partition=partition)
        producer.flush(30)
    finally:
        producer.close()


def collect(sandbox: Sandbox, include: str) -> GroupSnapshot:
    return GroupCollector("sandbox", KafkaTarget(sandbox.bootstrap_servers, FAST), include=include).collect()


def described(sandbox: Sandbox, group: str) -> ConsumerGroup | None:
    snap = collect(sandbox, group)
    return next(iter(snap.groups), None)


def partitions_of(sandbox: Sandbox, topics: Iterable[str]) -> set[tuple[str, int]]:
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, **FAST)
    try:
        described = admin.describe_topics(sorted(topics))
        return {(t["name"], p["partition_index"]) for t in described for p in t["partitions"]}
    finally:
        admin.close()


def wait_settled(
    sandbox: Sandbox,
    group: str,
    consumers: Sequence[JavaConsumer],
    subscribed: set[tuple[str, int]],
    timeout_s: float = 90,
) -> None:
    """Until the group is Stable with every consumer, what each consumer holds is what the
    coordinator records for it (by client id), and every `subscribed` partition is held: every
    rebalance round is over (a cooperative rebalance passes through a Stable generation whose
    revoked partitions nobody holds yet; for a consumer-protocol group: every member holds its
    target)."""
    deadline = time.monotonic() + timeout_s
    while True:
        d = described(sandbox, group)
        if d is not None and d.state == "Stable" and len(d.members) == len(consumers):
            recorded = {m.client_id: sorted(m.assignment) for m in d.members}  # the broker's order
            held = {tp for c in consumers for tp in c.assignment or ()}
            if (
                all(recorded.get(c.name) == sorted(c.assignment or ()) for c in consumers)
                and not d.reconciling_members
                and held == subscribed
            ):
                return
        if time.monotonic() > deadline:
            holding = {c.name: c.assignment for c in consumers}
            raise AssertionError(f"group {group} did not settle: described {d}, consumers hold {holding}")
        time.sleep(0.5)


@contextmanager
def java_group(
    sandbox: Sandbox,
    group: str,
    subscriptions: Sequence[Sequence[str]],
    assignor: str,
    log_dir: Path,
    racks: Sequence[str | None] | None = None,
    **options: Any,
) -> Iterator[list[JavaConsumer]]:
    """Consumers `{group}-c0`, `-c1`, ... (one per subscription list), settled; closed at the end.
    `options` go to every `JavaConsumer` (e.g. `protocol`, `remote_assignor`, `jars`)."""
    with ExitStack() as stack:
        consumers = [
            stack.enter_context(
                JavaConsumer(
                    sandbox.bootstrap_servers,
                    group,
                    topics,
                    assignor,
                    client_id=f"{group}-c{i}",
                    rack=racks[i] if racks else None,
                    log_dir=log_dir,
                    **options,
                )
            )
            for i, topics in enumerate(subscriptions)
        ]
        wait_settled(sandbox, group, consumers, partitions_of(sandbox, {t for s in subscriptions for t in s}))
        yield consumers
