"""The migration's phase from one snapshot, and the ZooKeeper/KRaft comparison, on hand-made inputs (the
real phases are walked on the migration sandbox in tests/integration/test_migration_sandbox.py; a real
divergence cannot be produced there without breaking Kafka's dual-write, so it is made up here)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kafka_ops.model.cluster import ClusterSnapshot, Divergence, MigrationZnode, Quorum, QuorumReplica
from kafka_ops.snapshot.tables import render_summary, snapshot_batch, summary
from kafka_ops.sources.migration import divergences, migration_status
from tests.unit.snapshots import AT, small_snapshot


def migrating(
    offset: int, written_s_ago: float, zk_brokers: tuple[int, ...] = (1, 2), observers: tuple[int, ...] | None = (1, 2)
) -> ClusterSnapshot:
    snap = small_snapshot()
    snap.brokers = {b: v for b, v in snap.brokers.items() if b in zk_brokers}
    written_ms = int((AT - timedelta(seconds=written_s_ago)).timestamp() * 1000)
    snap.migration = MigrationZnode(101, 1, offset, 1, written_ms)
    if observers is not None:
        replicas = (QuorumReplica(101, "voter", None, 500, None, None),
                    *(QuorumReplica(b, "observer", None, 500, None, None) for b in observers))  # fmt: skip
        snap.quorum = Quorum(101, 1, 500, replicas)
    return snap


def test_not_migrating_without_the_znode() -> None:
    assert migration_status(small_snapshot()) is None
    assert snapshot_batch(small_snapshot()).tables["migration"].num_rows == 0


def test_pre_migration_names_the_brokers_the_controllers_wait_for() -> None:
    status = migration_status(migrating(-1, 3, observers=(1,)))
    assert status is not None
    assert (status.phase, status.waiting_brokers, status.zookeeper_lag) == ("pre_migration", (2,), None)
    # without the controllers' address, who is waited for is unknown, not "nobody"
    blind = migration_status(migrating(-1, 3, observers=None))
    assert blind is not None and (blind.waiting_brokers, blind.kraft_brokers) == (None, None)


def test_dual_write_counts_brokers_on_each_side_and_zookeepers_lag() -> None:
    status = migration_status(migrating(480, 0.5, zk_brokers=(2,), observers=(1, 2)))
    assert status is not None
    assert (status.phase, status.zookeeper_brokers, status.kraft_brokers) == ("dual_write", (2,), (1,))
    assert status.zookeeper_lag == 20 and not status.zookeeper_writes_stopped
    # silent for 5 min with broker 2 still on ZooKeeper: dual-write stopped (the detector judges for how long)
    stopped = migration_status(migrating(480, 300, zk_brokers=(2,)))
    assert stopped is not None and stopped.phase == "dual_write" and stopped.zookeeper_writes_stopped


def test_every_broker_on_kraft_and_zookeeper_silent_is_post_migration() -> None:
    status = migration_status(migrating(300, 120, zk_brokers=(), observers=(1, 2, 3)))
    assert status is not None
    assert (status.phase, status.kraft_brokers, status.zookeeper_lag) == ("post_migration", (1, 2, 3), 200)
    row = snapshot_batch(migrating(300, 120, zk_brokers=())).tables["migration"].to_pylist()
    assert [(r["phase"], r["kraft_metadata_offset"], r["zookeeper_lag"], r["divergences"]) for r in row] == [
        ("post_migration", 300, 200, None)
    ]


def kraft_view(snap: ClusterSnapshot) -> list[dict[str, Any]]:
    """`describe_topics` rows that agree with `snap` everywhere."""
    return [
        {"name": topic, "error_code": 0, "partitions": [
            {"partition_index": p, "replica_nodes": list(replicas),
             "leader_id": snap.partition_states[(topic, p)].leader,
             "isr_nodes": list(reversed(snap.partition_states[(topic, p)].isr)),  # order does not matter
             "leader_epoch": snap.partition_states[(topic, p)].leader_epoch}
            for p, replicas in t.partitions.items()
        ]}
        for topic, t in snap.topics.items()
    ]  # fmt: skip


def test_views_that_agree_have_no_divergence() -> None:
    snap = small_snapshot()
    assert list(divergences(snap, kraft_view(snap))) == []


def test_every_disagreeing_field_topic_and_partition_is_named() -> None:
    snap = small_snapshot()
    view = kraft_view(snap)
    orders = view[0]["partitions"]
    orders[0] |= {"isr_nodes": [1, 2, 3], "leader_id": 2, "leader_epoch": 7}
    orders[1]["replica_nodes"] = [1, 2]
    del orders[2]
    view = [t for t in view if t["name"] != "solo"]
    view.append({"name": "ghost", "error_code": 0, "partitions": []})
    view.append({"name": "unknown", "error_code": 3, "partitions": []})  # an error row is no topic
    assert list(divergences(snap, view)) == [
        Divergence("ghost", None, "topic", None, "present"),
        Divergence("orders", 0, "leader", "1", "2"),
        Divergence("orders", 0, "isr", "[1, 2]", "[1, 2, 3]"),
        Divergence("orders", 0, "leader_epoch", "0", "7"),
        Divergence("orders", 1, "replicas", "[2, 1]", "[1, 2]"),
        Divergence("orders", 2, "partition", "present", None),
        Divergence("solo", None, "topic", "present", None),
    ]
    snap.divergences = list(divergences(snap, view))
    snap.migration = MigrationZnode(101, 1, 10, 1, int(AT.timestamp() * 1000))
    batch = snapshot_batch(snap)
    assert batch.tables["migration_divergences"].num_rows == 7
    assert batch.tables["migration"].to_pylist()[0]["divergences"] == 7


def test_the_snapshot_summary_says_where_the_migration_is() -> None:
    info = summary(migrating(480, 0.5, zk_brokers=(2,), observers=(1, 2)))
    assert info["migration"] == {"phase": "dual_write", "zookeeper_brokers": [2], "kraft_brokers": [1],
                                 "waiting_brokers": None, "zookeeper_lag": 20, "divergences": None}  # fmt: skip
    assert "  migration      dual_write, brokers on ZooKeeper [2], kraft brokers [1], zookeeper lag 20" in (
        render_summary(info)
    )
    assert summary(small_snapshot())["migration"] is None
