"""The load tables' expectations (log dirs and replica sizes): a consistent snapshot is trusted, each rule
broken on purpose fails alone and names its rows."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot, LogDir, ReplicaSize
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.validation.integrity import validate_snapshot
from tests.unit.snapshots import small_snapshot


def loaded(snapshot_id: str) -> ClusterSnapshot:
    """small_snapshot with the load brokers 1 and 2 report (3 is down: no rows)."""
    snap = small_snapshot(snapshot_id)
    snap.log_dirs = [LogDir(1, "/d1", None, 10_000, 4_000), LogDir(2, "/d2", None, None, None),
                     LogDir(2, "/bad", "KAFKA_STORAGE_ERROR")]  # fmt: skip
    snap.replica_sizes = [ReplicaSize("orders", p, b, f"/d{b}", 100 * p) for p in range(3) for b in (1, 2)]
    snap.replica_sizes.append(ReplicaSize("orders", 2, 1, "/d1", 50, 7, is_future=True))
    return snap


def test_a_consistent_load_is_trusted(lake: Lake) -> None:
    lake.publish(snapshot_batch(loaded("s1")))
    result = validate_snapshot(lake, "c1", "s1")
    assert result.trusted, result.message()
    assert {"zookeeper_snapshot_log_dirs", "zookeeper_snapshot_replica_sizes"} <= set(result.pages)


def unknown_broker_dir(snap: ClusterSnapshot) -> None:
    snap.log_dirs.append(LogDir(7, "/d7"))


def negative_usable(snap: ClusterSnapshot) -> None:
    snap.log_dirs[0] = LogDir(1, "/d1", None, 10_000, -5)


def usable_above_total(snap: ClusterSnapshot) -> None:
    snap.log_dirs[0] = LogDir(1, "/d1", None, 10_000, 20_000)


def negative_size(snap: ClusterSnapshot) -> None:
    snap.replica_sizes[0] = ReplicaSize("orders", 0, 1, "/d1", -1)


def stray_replica(snap: ClusterSnapshot) -> None:
    snap.replica_sizes.append(ReplicaSize("solo", 0, 1, "/d1", 10))  # solo's only replica is broker 3


def unknown_partition(snap: ClusterSnapshot) -> None:
    snap.replica_sizes.append(ReplicaSize("orders", 9, 2, "/d2", 10))


CASES: list[tuple[Callable[[ClusterSnapshot], None], str, dict[str, object]]] = [
    (unknown_broker_dir, "log_dir_of_a_serving_broker",
     {"broker_id": 7, "log_dir": "/d7", "problem": "broker 7 is not a broker of this snapshot"}),
    (negative_usable, "log_dir_usable_bytes_not_negative", {"broker_id": 1, "log_dir": "/d1"}),
    (usable_above_total, "log_dir_usable_within_total", {"broker_id": 1, "log_dir": "/d1"}),
    (negative_size, "replica_size_not_negative", {"topic": "orders", "partition": 0, "broker_id": 1}),
    (stray_replica, "replica_size_of_an_assigned_replica",
     {"topic": "solo", "partition": 0, "broker_id": 1, "problem": "broker 1 holds solo-0, whose replicas are [3]"}),
    (unknown_partition, "replica_size_of_an_assigned_replica",
     {"topic": "orders", "partition": 9, "problem": "orders-9 on broker 2 is not a partition of this snapshot"}),
]  # fmt: skip


@pytest.mark.parametrize(("corrupt", "expectation", "row"), CASES, ids=[c[0].__name__ for c in CASES])
def test_each_load_rule_fails_alone_and_names_its_rows(
    lake: Lake, corrupt: Callable[[ClusterSnapshot], None], expectation: str, row: dict[str, object]
) -> None:
    snap = loaded("bad")
    corrupt(snap)
    lake.publish(snapshot_batch(snap))
    result = validate_snapshot(lake, "c1", "bad")
    assert result.failed == (expectation,)
    (failure,) = result.failures
    assert failure.count == 1 and failure.severity == "critical"
    (failed_row,) = failure.rows
    assert {k: failed_row.get(k) for k in row} == row
