"""Load-aware planning on the real KRaft sandbox (Kafka 4.4) with real data: partitions of very different
sizes produced for real, a snapshot through the collector (DescribeLogDirs), a byte balance that moves the
big partitions off the fullest broker and leaves the small ones alone, executed through the Admin API,
and the disk spread afterwards as the plan said."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kafka import KafkaProducer

from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import plan_replica_balance
from kafka_ops.planning.load import DISK_SPREAD, cluster_load
from sandbox import KRaftSandbox
from tests.integration.test_kraft_remediation_sandbox import base, create, run, snapshot

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BIG, SMALL = "lp_big", "lp_small"
RECORDS, VALUE = 1_000, 1_000
"""Each big partition gets 1,000 records of 1,000 bytes (about 1 MB); each small one 2 records."""


def fill(cluster: KRaftSandbox) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=5)
    try:
        for partition in range(3):
            for _ in range(RECORDS):
                producer.send(BIG, b"b" * VALUE, partition=partition)
        for partition in range(6):
            for _ in range(2):
                producer.send(SMALL, b"s" * VALUE, partition=partition)
        producer.flush(120)
    finally:
        producer.close()


def only_ours(snap: ClusterSnapshot) -> ClusterSnapshot:
    """The snapshot restricted to this test's topics: the session sandbox holds other tests' topics too."""
    ours = {BIG, SMALL}
    return replace(
        snap,
        topics={t: a for t, a in snap.topics.items() if t in ours},
        partition_states={tp: s for tp, s in snap.partition_states.items() if tp[0] in ours},
        replica_sizes=[r for r in snap.replica_sizes if r.topic in ours],
    )


def disk_per_broker(snap: ClusterSnapshot) -> dict[int, int]:
    used = dict.fromkeys(snap.brokers, 0)
    for r in snap.replica_sizes:
        if r.topic in (BIG, SMALL) and not r.is_future:
            used[r.broker_id] += r.size_bytes
    return used


def test_the_byte_balance_moves_the_big_partitions_and_the_disks_end_as_planned(
    healthy_kraft_sandbox: KRaftSandbox, lake: Lake
) -> None:
    cluster = healthy_kraft_sandbox
    create(cluster, BIG, {0: [1], 1: [1], 2: [1]})
    create(cluster, SMALL, {p: [1 if p < 3 else 2] for p in range(6)})
    fill(cluster)
    snap = only_ours(base(cluster, lake))
    before = disk_per_broker(snap)
    assert before[1] > 3 * RECORDS * VALUE and before[3] == 0, before

    plan = plan_replica_balance(snap, load=cluster_load(snap))

    assert {m.topic for m in plan.reassignments} == {BIG}, "the small partitions stay where they are"
    assert [m.current for m in plan.reassignments] == [(1,), (1,)]
    assert sorted(m.target for m in plan.reassignments) == [(2,), (3,)]
    assert plan.figures["bytes_moved"] == sum(m.estimated_bytes or 0 for m in plan.reassignments)
    (spread,) = [g for g in plan.goals if g.goal == DISK_SPREAD]
    assert spread.status == "improved" and spread.after is not None and spread.after < 0.1 * before[1]

    report = run(cluster, plan, lake)

    assert report.status == "done"
    after = disk_per_broker(snapshot(cluster))
    planned = {b.broker_id: b.disk_bytes_after for b in plan.brokers}
    for broker, used in after.items():
        assert used == pytest.approx(planned[broker], rel=0.02), f"broker {broker}: {after} against {planned}"
