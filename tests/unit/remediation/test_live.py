from __future__ import annotations

from dataclasses import replace

from kafka_ops.model.cluster import ReassignmentRequest, tp_text
from kafka_ops.planning.plan import Move
from kafka_ops.remediation.live import batch_progress, classify, controller_changed_at_ms, in_flight
from tests.unit.remediation.clusters import CONTROLLER_MS, assign, live, moving
from tests.unit.snapshots import stat

MOVE = Move("orders", 0, (1,), (1, 3))


def test_in_flight_from_the_topic_znode_and_the_admin_request() -> None:
    snap = live()
    moving(snap, "orders", 0, (1, 3))
    moving(snap, "logs", 0, (3, 2))  # [1, 2] -> [3, 2]: adding 3, removing 1
    snap.reassignment_requests = [ReassignmentRequest("orders", 2, (3, 1))]
    assert snap.topics["logs"].partitions[0] == (3, 2, 1)
    assert in_flight(snap) == {("logs", 0): (3, 2), ("orders", 0): (1, 3), ("orders", 2): (3, 1)}
    assert in_flight(live()) == {}


def test_classify_each_partition_of_a_plan() -> None:
    snap = live()
    assert classify(MOVE, snap, in_flight(snap)) == "base"
    moving(snap, "orders", 0, (1, 3))
    assert classify(MOVE, snap, in_flight(snap)) == "in_flight"
    assert classify(replace(MOVE, target=(1, 2)), snap, in_flight(snap)) == "other_in_flight"
    snap = live()
    assign(snap, "orders", 0, (1, 3))
    assert classify(MOVE, snap, in_flight(snap)) == "target"
    assign(snap, "orders", 0, (2,))
    assert classify(MOVE, snap, in_flight(snap)) == "elsewhere"
    assert classify(replace(MOVE, topic="gone"), snap, in_flight(snap)) == "missing"


def test_batch_progress_complete_only_with_every_target_in_the_isr() -> None:
    snap = live()
    moving(snap, "orders", 0, (1, 3))
    progress = batch_progress([MOVE], snap)
    assert not progress.complete
    assert progress.waiting == ("orders-0: replicas [1, 3], target [1, 3], ISR [1]",)
    # the topic znode already shows the target, but the new replica is not in the ISR yet
    snap = live()
    snap.topics["orders"].partitions[0] = (1, 3)
    assert not batch_progress([MOVE], snap).complete
    assign(snap, "orders", 0, (1, 3))
    assert batch_progress([MOVE], snap) == replace(batch_progress([MOVE], snap), complete=True, waiting=())


def test_progress_signature_moves_with_the_isr() -> None:
    snap = live()
    moving(snap, "orders", 0, (1, 3))
    before = batch_progress([MOVE], snap).signature
    assert batch_progress([MOVE], snap).signature == before
    state = snap.partition_states[("orders", 0)]
    snap.partition_states[("orders", 0)] = replace(state, isr=(1, 3))
    assert batch_progress([MOVE], snap).signature != before


def test_a_target_on_a_dead_broker_is_named() -> None:
    snap = live()
    moving(snap, "orders", 0, (1, 3))
    del snap.brokers[3]
    assert "target replica(s) [3] on broker(s) that are not registered" in batch_progress([MOVE], snap).waiting[0]


def test_controller_change_time_is_the_later_of_election_and_epoch_write() -> None:
    snap = live()
    assert controller_changed_at_ms(snap) == CONTROLLER_MS
    snap.controller_epoch_stat = replace(stat(4, 60), mtime_ms=CONTROLLER_MS + 5_000)
    assert controller_changed_at_ms(snap) == CONTROLLER_MS + 5_000
    snap.controller, snap.controller_epoch_stat = None, None
    assert controller_changed_at_ms(snap) is None


def test_tp_text_caps_long_lists() -> None:
    assert tp_text([("b", 1), ("a", 2)]) == "a-2, b-1"
    assert tp_text([("t", p) for p in range(12)], limit=2) == "t-0, t-1 (and 10 more)"
