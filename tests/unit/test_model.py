from __future__ import annotations

from tests.unit.snapshots import small_snapshot


def test_under_replicated_ignores_replicas_being_added() -> None:
    snap = small_snapshot()
    # orders/0: ISR (1,2) of (1,2,3); orders/2: 3 is being added, so (1,2) of (1,2) is complete;
    # solo/0 is offline but its ISR still holds its only replica, as kafka-topics counts it
    assert snap.under_replicated() == [("orders", 0)]


def test_replicas_without_adding() -> None:
    snap = small_snapshot()
    assert snap.replicas("orders", 2) == (1, 2)
    assert snap.replicas("orders", 0) == (1, 2, 3)


def test_offline_means_no_leader_or_a_dead_leader() -> None:
    snap = small_snapshot()
    assert snap.offline() == [("solo", 0)]
    del snap.brokers[2]
    assert snap.offline() == [("orders", 1), ("solo", 0)]


def test_partition_count() -> None:
    assert small_snapshot().partition_count == 4
