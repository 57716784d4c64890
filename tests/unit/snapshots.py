"""Small hand-built snapshots for unit tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kafka_ops.model.cluster import (
    Broker,
    ClusterSnapshot,
    ConfigOverride,
    Controller,
    PartitionState,
    ReassignmentRequest,
    TopicAssignment,
    ZnodeStat,
)
from kafka_ops.model.groups import (
    Commit,
    ConsumerGroup,
    GroupIssue,
    GroupMember,
    GroupSnapshot,
    LoggedCommit,
    OpenTransaction,
    RecordTime,
    offset_rows,
)

AT = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def stat(version: int = 0, zxid: int = 10) -> ZnodeStat:
    return ZnodeStat(version, zxid, zxid, 1_795_000_000_000, 1_795_000_000_000)


def broker(broker_id: int, rack: str) -> Broker:
    port = 9000 + broker_id
    endpoint = f"PLAINTEXT://127.0.0.1:{port}"
    return Broker(broker_id, "127.0.0.1", port, (endpoint,), {"PLAINTEXT": "PLAINTEXT"}, -1,
                  1_795_000_000_000, rack, {}, 5, 100 + broker_id)  # fmt: skip


def state(topic: str, p: int, leader: int, isr: tuple[int, ...], version: int = 0) -> PartitionState:
    return PartitionState(topic, p, leader, 0, 1, isr, None, stat(version))


def small_snapshot(snapshot_id: str = "s1", cluster: str = "c1") -> ClusterSnapshot:
    """Brokers 1-2 up (3 is down); `orders` has one under-replicated partition and one being
    reassigned; `solo` (RF 1) is offline."""
    snap = ClusterSnapshot(cluster=cluster, snapshot_id=snapshot_id, captured_at=AT, zookeeper="zk:2181/kafka")
    snap.brokers = {1: broker(1, "rack-a"), 2: broker(2, "rack-b")}
    snap.topics = {
        "orders": TopicAssignment(
            "orders",
            "id-orders",
            {0: (1, 2, 3), 1: (2, 1), 2: (1, 2, 3)},
            adding_replicas={2: (3,)},
            removing_replicas={},
            version=3,
        ),
        "solo": TopicAssignment("solo", "id-solo", {0: (3,)}, {}, {}, 3),
    }
    snap.partition_states = {
        ("orders", 0): state("orders", 0, 1, (1, 2), version=2),
        ("orders", 1): state("orders", 1, 2, (2, 1)),
        ("orders", 2): state("orders", 2, 1, (1, 2)),
        ("solo", 0): state("solo", 0, -1, (3,), version=1),
    }
    snap.controller = Controller(1, 1_795_000_000_000, -1, 2, stat(0, 50))
    snap.controller_epoch = 4
    snap.controller_epoch_stat = stat(3, 50)
    snap.reassignment_requests = [ReassignmentRequest("orders", 2, (1, 2, 3))]
    snap.configs = [
        ConfigOverride("topic", "orders", {"min.insync.replicas": "2"}),
        ConfigOverride(
            "broker",
            "<default>",
            {
                "listener.name.sasl.plain.sasl.jaas.config": "secret!",
                "ssl.keystore.password": "hunter2",
                "log.retention.ms": "1",
            },
        ),
    ]
    snap.pending_topic_deletions = ["old"]
    snap.preferred_election_requests = [("orders", 1)]
    return snap


GROUPS_AT = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
GROUP_PARTITIONS = frozenset({("orders", 0), ("orders", 1), ("orders", 2)})
GROUP_ENDS = {("orders", 0): 100, ("orders", 1): 50, ("orders", 2): 0}
GROUP_RECORD_MS = int(GROUPS_AT.timestamp() * 1000) - 90_000


def group_snapshot(snapshot_id: str = "g1", cluster: str = "c1") -> GroupSnapshot:
    """A Stable range group of two members (one static) with lag, plus an offsets-only group,
    one offset on a deleted topic and one collection issue; the record at orders-0's committed
    offset was produced 90 s before the collection, a transaction open on orders-0 since offset
    80 holds its last stable offset there, and the commit log holds orders-0's last two commits."""
    members = (
        GroupMember("m-a", None, "client-a", "/10.0.0.1", (("orders", 0), ("orders", 1))),
        GroupMember("m-b", "static-b", "client-b", "/10.0.0.2", (("orders", 2),)),
    )
    committed = {("orders", 0): Commit(60), ("orders", 1): Commit(75), ("gone", 0): Commit(3)}
    assigned = [("orders", 0), ("orders", 1), ("orders", 2)]
    offsets = offset_rows("stable", committed, assigned, GROUP_PARTITIONS, GROUP_ENDS)
    return GroupSnapshot(
        cluster=cluster,
        snapshot_id=snapshot_id,
        captured_at=GROUPS_AT,
        bootstrap_servers="k1:9092",
        groups=(
            ConsumerGroup("stable", "Stable", "consumer", "range", members),
            ConsumerGroup("committer", "Empty", "", ""),
        ),
        offsets=tuple(offsets),
        end_offsets=GROUP_ENDS,
        issues=(GroupIssue("broken", "offsets", "GroupAuthorizationFailedError"),),
        completed_at=GROUPS_AT,
        record_times={("orders", 0, 60): RecordTime(60, GROUP_RECORD_MS, "CreateTime")},
        stable_offsets={("orders", 0): 80, ("orders", 1): 50, ("orders", 2): 0},
        transactions=(
            OpenTransaction("tx-1", 7, 0, "Ongoing", 2, "orders", 0, GROUPS_AT - timedelta(minutes=20), 60_000, 80),
        ),
        commits=(
            LoggedCommit("stable", "orders", 0, 55, GROUPS_AT - timedelta(seconds=40)),
            LoggedCommit("stable", "orders", 0, 60, GROUPS_AT - timedelta(seconds=20)),
        ),
    )
