"""A broker killed on the Kafka 4.4 sandbox, and the consumer groups collected at once, before the
controller fences it (6 s without heartbeats): the broker is still in the metadata, a coordinator
and a leader, and refuses every connection. The collection must not call the cluster unreachable
(that would page "cannot see cluster" instead of the dead broker): the groups the other brokers
coordinate are described with their lag, and what the dead broker held is an issue naming it. Nor
may any Admin API collection fail because kafka-python sent its first request to the dead broker."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaConsumer
from kafka.admin import NewTopic
from kafka.errors import CoordinatorNotAvailableError
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_ops.sources.admin import with_admin
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from sandbox import KRaftSandbox
from tests.integration.java_groups import FAST

pytestmark = [pytest.mark.integration]

DEAD = 2
PARTITIONS = 6


def coordinator(cluster: KRaftSandbox, group: str) -> int:
    """`group`'s coordinator (FindCoordinator), once there is one: a fresh cluster creates
    __consumer_offsets on the first FindCoordinator and answers COORDINATOR_NOT_AVAILABLE meanwhile."""
    found: dict[str, int] = {}

    def ask() -> bool:
        with cluster.admin() as admin:
            try:
                found.update(admin._manager.run(admin._find_coordinator_ids, [group]))
            except CoordinatorNotAvailableError:
                return False
        return True

    cluster.wait_for(ask, 60, f"a coordinator for group {group}")
    return found[group]


def leaders(cluster: KRaftSandbox, topic: str) -> dict[int, int]:
    with cluster.admin() as admin:
        return {p["partition_index"]: p["leader_id"] for p in admin.describe_topics([topic])[0]["partitions"]}


def test_groups_are_collected_while_a_killed_broker_is_not_fenced_yet(healthy_kraft_sandbox: KRaftSandbox) -> None:
    cluster, run = healthy_kraft_sandbox, uuid.uuid4().hex[:6]
    topic = f"down-{run}"
    with cluster.admin(timeout_ms=30_000) as admin:
        admin.create_topics([NewTopic(topic, PARTITIONS, 3)])
    cluster.wait_for(lambda: all(b >= 0 for b in leaders(cluster, topic).values()), 60, f"{topic} led")
    by_coordinator: dict[bool, list[str]] = {True: [], False: []}
    candidates = iter(f"down-{run}-{i}" for i in range(200))
    while min(len(g) for g in by_coordinator.values()) < 2:  # groups on the broker to kill, and on the others
        group = next(candidates)
        by_coordinator[coordinator(cluster, group) == DEAD].append(group)
    groups = [*by_coordinator[True], *by_coordinator[False]]
    for group in groups:  # each group commits offset 0 of every partition: Empty groups, lag 0
        consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=group, enable_auto_commit=False)
        try:
            consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(0, "", -1) for p in range(PARTITIONS)})
        finally:
            consumer.close()
    led_by_dead = {p for p, leader in leaders(cluster, topic).items() if leader == DEAD}

    target = KafkaTarget(cluster.bootstrap_servers, FAST)
    cluster.kill_broker(DEAD)
    try:
        # each fresh client's first request goes to a broker of the metadata at random: one in three the
        # dead one, so eight collections in a row all answered only if a refusal is asked again elsewhere
        clusters = [with_admin(target, "describing the cluster", lambda a, _: a.describe_cluster()) for _ in range(8)]
        snap = GroupCollector("sandbox-kraft", target, f"down-{run}-.*").collect()
        assert DEAD not in cluster.fenced_brokers(), "fenced before the collections ended: the case was not seen"
    finally:
        cluster.start_broker(DEAD)

    assert all(DEAD in {b["broker_id"] for b in d["brokers"]} for d in clusters)  # listed, not yet fenced
    described = {g.group_id for g in snap.groups}
    assert described == set(by_coordinator[False]), snap.issues
    problems = [(i.group_id, i.kind, i.problem) for i in snap.issues]
    listing = [p for g, kind, p in problems if kind == "list_groups"]
    assert len(listing) == 1 and listing[0].startswith(f"broker {DEAD} did not list its groups"), problems
    ends = {(t, p) for t, p in snap.end_offsets if t == topic}
    assert ends == {(topic, p) for p in range(PARTITIONS) if p not in led_by_dead}, problems
    if led_by_dead:
        assert any(kind == "end_offsets" and p.startswith(f"leader {DEAD} did not answer") for _, kind, p in problems)
    assert {o.group_id for o in snap.offsets} == described
    cluster.wait_healthy(120)
