"""Kafka data helpers for the remediation tests (executor and DAGs): topics with an exact
assignment, keyed messages in and out, and the replication throttles the brokers report."""

from __future__ import annotations

import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from kafka_ops.model.cluster import ClusterSnapshot
from sandbox import SandboxCluster

THROTTLE_KEYS = {
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
}


def admin_for(sandbox: SandboxCluster) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=10_000)


def create_topic(sandbox: SandboxCluster, name: str, assignment: dict[int, list[int]]) -> ClusterSnapshot:
    admin = admin_for(sandbox)
    try:
        admin.create_topics([NewTopic(name, replica_assignments=assignment)])
    finally:
        admin.close()
    return sandbox.wait_for(
        lambda s: all(
            (name, p) in s.partition_states and len(s.partition_states[(name, p)].isr) == len(r)
            for p, r in assignment.items()
        ),
        60,
        f"topic {name} created with its ISR full",
    )


def produce(sandbox: SandboxCluster, topic: str, count: int, value_bytes: int = 0) -> dict[bytes, bytes]:
    """`count` keyed messages (the default partitioner spreads them by key); returns key → value."""
    sent = {}
    producer = KafkaProducer(bootstrap_servers=sandbox.bootstrap_servers, acks="all", linger_ms=20)
    try:
        for i in range(count):
            key = f"key-{i:05d}".encode()
            value = f"value-{i:05d}".encode() + b"x" * value_bytes
            producer.send(topic, key=key, value=value)
            sent[key] = value
        producer.flush(60)
    finally:
        producer.close()
    return sent


def consume_all(sandbox: SandboxCluster, topic: str, expected: int, timeout_s: float = 60) -> dict[bytes, bytes]:
    """Every message of `topic` from the beginning (no group: nothing is committed)."""
    consumer = KafkaConsumer(
        bootstrap_servers=sandbox.bootstrap_servers,
        enable_auto_commit=False,
        request_timeout_ms=10_000,
        consumer_timeout_ms=1_000,
    )
    got: dict[bytes, bytes] = {}
    count = 0
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        consumer.assign([TopicPartition(topic, p) for p in sorted(partitions)])
        consumer.seek_to_beginning()
        deadline = time.monotonic() + timeout_s
        while count < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=1_000).values():
                for record in batch:
                    got[record.key] = record.value
                    count += 1
    finally:
        consumer.close()
    assert count == expected, f"read {count} messages of {topic}, expected {expected}"
    return got


def throttle_configs(
    sandbox: SandboxCluster, topics: list[str], brokers: list[int] | None = None
) -> dict[str, dict[str, str]]:
    """Every throttle key set on a broker (default: every broker; a stopped one cannot answer) or one
    of `topics`, as the brokers report them."""
    admin = admin_for(sandbox)
    try:
        ids = sandbox.broker_ids() if brokers is None else brokers
        resources = [ConfigResource(ConfigResourceType.BROKER, str(b)) for b in ids]
        resources += [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
        described = admin.describe_configs(resources)
    finally:
        admin.close()
    out = {}
    for kind, entities in described.items():
        for name, configs in entities.items():
            found = {k: v["value"] for k, v in configs.items() if k in THROTTLE_KEYS and v["value"]}
            if found:
                out[f"{kind} {name}"] = found
    return out


def throttles_settled(sandbox: SandboxCluster, topics: list[str], timeout_s: float = 30) -> dict[str, dict[str, str]]:
    """`throttle_configs` once it is empty, or as it stands after `timeout_s`: brokers apply a config change
    when they see its notification (at once through the Admin API back end, which waits for it; a moment
    later after a ZooKeeper write), so "no throttle left" is asserted on what they settle to."""
    deadline = time.monotonic() + timeout_s
    while (left := throttle_configs(sandbox, topics)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left
