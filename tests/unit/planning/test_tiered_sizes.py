"""Tiered storage and the load-aware planners: a partition of a topic with remote storage counts its local
bytes only (DescribeLogDirs' size, `replica_sizes`), as what a move copies and what fills the receiving disk.
A new replica of such a partition fetches only the leader's local log (the remote part stays where it is),
so its remote part, however large, must weigh nothing in a plan."""

from __future__ import annotations

from kafka_ops.capacities import BrokerCapacity, Capacities
from kafka_ops.model.cluster import ClusterSnapshot, LogDir, ReplicaSize, TieredLog, TieredTopic, TopicAssignment
from kafka_ops.planning import plan_decommission
from kafka_ops.planning.load import cluster_load
from kafka_ops.planning.log_dir_balance import plan_log_dir_balance
from tests.unit.planning.builders import check_invariants, cluster
from tests.unit.snapshots import state

GB = 1_000_000_000
LOCAL = 2 * GB
"""The tiered partition's local bytes: one active segment and what local.retention.bytes keeps."""


def with_tiered_partition(snap: ClusterSnapshot, broker: int, log_dir: str = "/data") -> ClusterSnapshot:
    """`snap` with `tiered-0` on `broker`: 2 GB local, and a remote part of some 500 million offsets (about
    500 GB at 1 kB a record) that only the remote storage holds."""
    snap.topics["tiered"] = TopicAssignment("tiered", "id-tiered", {0: (broker,)}, {}, {}, 3)
    snap.partition_states[("tiered", 0)] = state("tiered", 0, broker, (broker,))
    snap.replica_sizes.append(ReplicaSize("tiered", 0, broker, log_dir, LOCAL))
    snap.remote_storage = {"tiered": True}
    snap.tiered_topics = {"tiered": TieredTopic("tiered", -2, LOCAL, False)}
    snap.tiered_logs = {("tiered", 0): TieredLog("tiered", 0, broker, 0, 499_000_000, 499_999_000, 500_001_000)}
    return snap


def test_a_tiered_partition_weighs_its_local_bytes_in_the_load_model() -> None:
    snap = cluster({1: None, 2: None}, {"t": {0: (1,)}})
    snap.replica_sizes = [ReplicaSize("t", 0, 1, "/data", 5 * GB)]
    with_tiered_partition(snap, 1)
    assert cluster_load(snap).sizes == {("t", 0): 5 * GB, ("tiered", 0): LOCAL}


def test_a_decommission_moves_and_fills_with_local_bytes_only() -> None:
    """Broker 2 can take 10 GB: the tiered partition fits by its local 2 GB, and the plan's bytes are
    local bytes, although the partition's whole log (remote part included) is some 500 GB."""
    snap = cluster({1: None, 2: None}, {"t": {0: (1,)}})
    snap.replica_sizes = [ReplicaSize("t", 0, 1, "/data", 5 * GB)]
    with_tiered_partition(snap, 1)
    load = cluster_load(snap, Capacities(BrokerCapacity(disk_bytes=10 * GB), max_disk_share=1.0))
    plan = plan_decommission(snap, [1], load=load)
    check_invariants(plan, snap)
    assert {(m.topic, m.size_bytes) for m in plan.reassignments} == {("t", 5 * GB), ("tiered", LOCAL)}
    assert plan.figures["bytes_moved"] == 7 * GB
    assert {b.broker_id: b.disk_bytes_after for b in plan.brokers} == {1: 0, 2: 7 * GB}


def test_a_log_dir_move_copies_the_local_bytes_only() -> None:
    snap = cluster({1: None}, {"t": {0: (1,)}})
    snap.replica_sizes = [ReplicaSize("t", 0, 1, "/a", 3 * GB)]
    with_tiered_partition(snap, 1, "/a")
    snap.log_dirs = [LogDir(1, "/a", None, 100 * GB, 95 * GB), LogDir(1, "/b", None, 100 * GB, 100 * GB)]
    plan = plan_log_dir_balance(snap)
    # /a holds 5 GB and /b nothing: moving the tiered partition's 2 GB local part evens them best
    assert [(d.topic, d.size_bytes) for d in plan.dir_moves] == [("tiered", LOCAL)]
    assert plan.figures["bytes_moved"] == LOCAL
