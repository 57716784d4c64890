"""Every safety check refuses with a message that says what was found and what to do."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from kafka_ops.errors import KafkaOpsError, RemediationRefused, SnapshotUntrusted
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import (
    ClusterSnapshot,
    Controller,
    Quorum,
    QuorumReplica,
    ReassignmentRequest,
    TopicPartition,
)
from kafka_ops.planning import Plan, plan_preferred_election
from kafka_ops.remediation.preflight import LeaderSeen, check_live, check_offline_config, check_trusted, leaders_seen
from kafka_ops.remediation.progress import Progress
from kafka_ops.settings import ClusterConfig
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.remediation.clusters import CONTROLLER_MS, assign, live, moving, rf2_plan

PLAN = rf2_plan()
ENABLED = ClusterConfig("c1", writes_enabled=True)
LATER = CONTROLLER_MS + 3_600_000  # an hour after the controller was elected


def live_checks(
    snap: ClusterSnapshot | None = None,
    *,
    quiet_s: float = 300,
    allow_offline: bool = False,
    now_ms: int = LATER,
    reported: dict[TopicPartition, tuple[int, ...]] | None = None,
    plan: Plan = PLAN,
) -> None:
    check_live(
        plan,
        snap if snap is not None else live(),
        reported_in_flight=reported or {},
        controller_quiet_s=quiet_s,
        allow_offline=allow_offline,
        now_ms=now_ms,
    )


def refused(check: str, problem: str) -> pytest.RaisesExc[RemediationRefused]:
    """The message starts with the plan and the check, and contains `problem`."""
    prefix = re.escape(f"plan {PLAN.plan_id}: refused ({check}): ")
    return pytest.raises(RemediationRefused, match=f"^{prefix}.*{re.escape(problem)}")


def test_a_clean_cluster_passes() -> None:
    check_offline_config(PLAN, ENABLED, None)
    live_checks()


def test_writes_disabled_is_the_default_and_refused() -> None:
    with refused("writes enabled", "writes are disabled for cluster 'c1' (dry-run): set writes_enabled = true"):
        check_offline_config(PLAN, ClusterConfig("c1"), None)


def test_a_plan_for_another_cluster_is_refused() -> None:
    with refused("cluster", "the plan is for cluster 'c1', the settings are for 'c2'"):
        check_offline_config(PLAN, ClusterConfig("c2", writes_enabled=True), None)


def test_a_cancelled_plan_is_never_resumed() -> None:
    progress = Progress(PLAN.plan_id, "c1", "admin_api", [], [], status="cancelled", message="cancelled by bob")
    with refused("not cancelled", f"plan {PLAN.plan_id} was cancelled (cancelled by bob); make a new plan"):
        check_offline_config(PLAN, ENABLED, progress)


def test_an_untrusted_base_is_refused_with_the_validation_message(tmp_path: object) -> None:
    def untrusted(lake: Lake, cluster: str, snapshot_id: str) -> None:
        raise SnapshotUntrusted(cluster, snapshot_id, ("leader_in_isr",), "failed leader_in_isr (2 failing)")

    with refused("base snapshot trusted", "the plan's base snapshot base is not trusted: snapshot base of cluster c1 "
                 "is untrusted: failed leader_in_isr (2 failing)"):  # fmt: skip
        check_trusted(PLAN, Lake(str(tmp_path)), untrusted)


def test_the_trust_check_gets_lake_cluster_and_snapshot(tmp_path: object) -> None:
    seen = []
    lake = Lake(str(tmp_path))
    check_trusted(PLAN, lake, lambda *args: seen.append(args))
    assert seen == [(lake, "c1", "base")]
    with pytest.raises(RemediationRefused, match="not trusted: never validated"):
        check_trusted(PLAN, lake, _raise(KafkaOpsError("never validated")))


def _raise(error: Exception) -> object:
    def check(*_: object) -> None:
        raise error

    return check


def test_a_recent_controller_change_is_refused() -> None:
    with refused("controller stable", "the controller changed 120s ago (now broker 1, epoch 4); wait until it has "
                 "been stable for 300s"):  # fmt: skip
        live_checks(now_ms=CONTROLLER_MS + 120_000)
    live_checks(now_ms=CONTROLLER_MS + 120_000, quiet_s=60)


def test_no_controller_is_refused() -> None:
    snap = live()
    snap.controller = None
    with refused("controller stable", "the cluster has no active controller (/controller)"):
        live_checks(snap)


def test_offline_partitions_are_refused_unless_allowed() -> None:
    snap = live(leaders={("logs", 0): -1})
    with refused("no offline partitions", "1 partition(s) are offline: logs-0; bring them back first, or allow "
                 "offline partitions explicitly for this run"):  # fmt: skip
        live_checks(snap)
    live_checks(snap, allow_offline=True)


def test_stale_base_names_the_partition_and_both_assignments() -> None:
    snap = live()
    assign(snap, "orders", 2, (1,))
    with refused("live assignment equals the plan's base", f"cluster changed since plan {PLAN.plan_id}: orders-2 "
                 "is now [1], the plan was based on [3]. Make a new plan from a fresh snapshot"):  # fmt: skip
        live_checks(snap)


def test_partitions_already_at_or_moving_to_their_targets_pass() -> None:
    snap = live()
    assign(snap, "orders", 0, (1, 3))
    moving(snap, "orders", 1, (2, 3))
    live_checks(snap)


def test_a_foreign_reassignment_in_flight_is_refused() -> None:
    snap = live()
    moving(snap, "logs", 0, (3, 2))
    with refused("no reassignment in flight", "a reassignment is already in flight: logs-0 → [3, 2]; wait for it "
                 "to finish or cancel it"):  # fmt: skip
        live_checks(snap)
    snap = live()
    snap.reassignment_requests = [ReassignmentRequest("orders", 0, (1, 2))]  # ours, to another target
    with refused("no reassignment in flight", "orders-0 → [1, 2]"):
        live_checks(snap)
    with refused("no reassignment in flight", "logs-0 → [2]"):
        live_checks(reported={("logs", 0): (2,)})


def test_a_pending_election_is_refused() -> None:
    snap = live()
    snap.preferred_election_requests = [("logs", 0)]
    with refused("no reassignment in flight", "a preferred-leader election is pending in "
                 "/admin/preferred_replica_election for logs-0"):  # fmt: skip
        live_checks(snap)


def test_a_target_broker_that_left_is_refused() -> None:
    snap = live()
    del snap.brokers[3]
    with refused("target brokers registered", "broker(s) [3] would receive replicas but are not registered "
                 "(registered: [1, 2]); start them or make a new plan"):  # fmt: skip
        live_checks(snap, allow_offline=True)


def test_a_target_broker_cordoned_since_the_plan_is_refused_by_setting_or_by_kafka() -> None:
    targets = sorted({b for m in PLAN.reassignments for b in m.added})
    with refused("target brokers not cordoned", f"cordoned brokers: broker(s) [{targets[0]}] by the cluster's "
                 "cordoned_brokers setting; lift the cordon, or make a new plan"):  # fmt: skip
        check_live(PLAN, live(), reported_in_flight={}, controller_quiet_s=300, allow_offline=False, now_ms=LATER,
                   cordoned_brokers=(targets[0],))  # fmt: skip
    snap = live()
    snap.brokers[targets[-1]] = replace(snap.brokers[targets[-1]], cordoned=True)
    with refused("target brokers not cordoned", f"broker(s) [{targets[-1]}] by Kafka (cordoned.log.dirs)"):
        live_checks(snap)


def test_a_rollback_is_not_stopped_by_the_cordon_it_lifts_first() -> None:
    """A rollback of a decommission that cordoned its brokers lifts that cordon before it moves anything
    back (`uncordon_first`): that cordon is not in its way, any other Kafka cordon still is."""
    targets = sorted({b for m in PLAN.reassignments for b in m.added})
    snap = live()
    snap.brokers[targets[-1]] = replace(snap.brokers[targets[-1]], cordoned=True)
    rollback = replace(PLAN, request={**PLAN.request, "uncordon_first": [targets[-1]]})
    check_live(rollback, snap, reported_in_flight={}, controller_quiet_s=300, allow_offline=False, now_ms=LATER)
    other = replace(PLAN, request={**PLAN.request, "uncordon_first": [99]})
    with refused("target brokers not cordoned", f"broker(s) [{targets[-1]}] by Kafka (cordoned.log.dirs)"):
        check_live(other, snap, reported_in_flight={}, controller_quiet_s=300, allow_offline=False, now_ms=LATER)


def test_a_cordoned_broker_that_already_has_its_replica_does_not_stop_a_resumed_run() -> None:
    snap = live()
    for m in PLAN.reassignments:
        assign(snap, m.topic, m.partition, m.target)
    check_live(PLAN, snap, reported_in_flight={}, controller_quiet_s=300, allow_offline=False, now_ms=LATER,
               cordoned_brokers=(1, 2, 3))  # fmt: skip


def test_an_election_whose_preferred_replica_changed_is_refused() -> None:
    base = live({"t": {0: (1, 2), 1: (2, 1)}}, leaders={("t", 0): 2, ("t", 1): 1}, snapshot_id="base")
    plan = plan_preferred_election(base, topics=["t"])
    assert len(plan.elections) == 2
    snap = live({"t": {0: (1, 2), 1: (1, 2)}}, leaders={("t", 0): 2, ("t", 1): 1})
    with pytest.raises(RemediationRefused, match=re.escape(f"cluster changed since plan {plan.plan_id}: t-1 has "
                       "replicas [1, 2], the plan elects 2")):  # fmt: skip
        live_checks(snap, plan=plan)


# -- check 5 on KRaft: the quorum leader of the plan's snapshot, seen leading long enough, followed --

NOW = CONTROLLER_MS + 3_600_000
QUIET_MS = 300_000


def kraft_live(
    leader: int | None = 101, epoch: int = 7, fetched: dict[int, int | None] | None = None
) -> ClusterSnapshot:
    """`live()` read from a KRaft cluster: no znodes, controllers 101-103 in the quorum; `fetched`:
    each follower's last fetch (ms), by default a second before `NOW`."""
    snap = live()
    snap.controller_epoch_stat = None
    snap.controller = None if leader is None else Controller(leader, None, epoch, None, None)
    snap.controller_epoch = epoch
    fetches = {v: NOW - 1_000 for v in (101, 102, 103) if v != leader} | (fetched or {})
    voters = tuple(
        QuorumReplica(v, "voter", None, 500, NOW if v == leader else fetches[v], NOW if v == leader else fetches[v])
        for v in (101, 102, 103)
    )
    snap.quorum = Quorum(leader, epoch, 500, voters)
    return snap


def seen(*rows: tuple[str, int, int | None, int | None]) -> list[LeaderSeen]:
    """(snapshot id, ms before NOW, controller, epoch), the plan's base first."""
    return [LeaderSeen(sid, NOW - ago, controller, epoch) for sid, ago, controller, epoch in rows]


def kraft_checks(snap: ClusterSnapshot, leaders: list[LeaderSeen], quiet_s: float = 300) -> None:
    check_live(PLAN, snap, reported_in_flight={}, controller_quiet_s=quiet_s, allow_offline=False, now_ms=NOW,
               leaders=leaders)  # fmt: skip


SETTLED = seen(("base", 60_000, 101, 7), ("s0", QUIET_MS + 60_000, 101, 7))


def test_kraft_a_leader_settled_since_before_the_plan_passes() -> None:
    kraft_checks(kraft_live(), SETTLED)
    kraft_checks(kraft_live(), seen(("base", QUIET_MS, 101, 7)))  # the base alone is old enough


def test_kraft_a_quorum_without_leader_is_refused() -> None:
    with refused("controller stable", "the KRaft controller quorum has no leader (DescribeQuorum, epoch 7): an "
                 "election is under way; run again once a leader is elected and has settled"):  # fmt: skip
        kraft_checks(kraft_live(leader=None), SETTLED)


def test_kraft_a_leader_elected_since_the_plan_is_refused_naming_both() -> None:
    with refused("controller stable", "the KRaft quorum leader changed since the plan's base snapshot base: it was "
                 "controller 101 at epoch 7, it is now controller 102 at epoch 8; a new active controller may still "
                 "be catching up: make a new plan from a fresh snapshot once it has led for 300s"):  # fmt: skip
        kraft_checks(kraft_live(leader=102, epoch=8), SETTLED)
    # a new epoch with the same controller re-elected is a leader change too
    with refused("controller stable", "it was controller 101 at epoch 7, it is now controller 101 at epoch 8"):
        kraft_checks(kraft_live(epoch=8), SETTLED)
    # whatever the quiet period: the plan was made under another leader
    with refused("controller stable", "changed since the plan's base snapshot base"):
        kraft_checks(kraft_live(leader=102, epoch=8), SETTLED, quiet_s=0)


def test_kraft_a_leader_not_yet_seen_leading_for_the_quiet_period_is_refused() -> None:
    with refused("controller stable", "the KRaft quorum leader, controller 101 at epoch 7, is known to have led for "
                 "only 120s (first seen in snapshot s1; snapshot s0 before it shows controller 102 at epoch 6); wait "
                 "until it has led for 300s, then run again"):  # fmt: skip
        kraft_checks(kraft_live(), seen(("base", 60_000, 101, 7), ("s1", 120_000, 101, 7), ("s0", 400_000, 102, 6)))
    with refused("controller stable", "led for only 60s (first seen in snapshot base; no earlier snapshot is in the "
                 "lake)"):  # fmt: skip
        kraft_checks(kraft_live(), seen(("base", 60_000, 101, 7)))
    kraft_checks(kraft_live(), seen(("base", 60_000, 101, 7)), quiet_s=0)


def test_kraft_a_leader_most_voters_do_not_fetch_from_is_refused() -> None:
    stale = NOW - 31_000  # beyond QUORUM_FETCH_S
    with refused("controller stable", "the KRaft quorum leader, controller 101 at epoch 7, has no settled majority: "
                 "only 0 of the other 2 voters fetched from it within 30s (not: controller 102, 103); bring "
                 "those controllers back (kafka-metadata-quorum describe --replication shows them)"):  # fmt: skip
        kraft_checks(kraft_live(fetched={102: stale, 103: None}), SETTLED)
    kraft_checks(kraft_live(fetched={103: None}), SETTLED)  # 101 and 102: a majority of 3


def test_kraft_a_base_snapshot_missing_from_the_lake_is_refused() -> None:
    with refused("controller stable", "the plan's base snapshot base is not in the lake, so whether the quorum leader "
                 "(now controller 101 at epoch 7) changed since the plan cannot be told"):  # fmt: skip
        kraft_checks(kraft_live(), [])


def test_zookeeper_ignores_what_the_lake_saw() -> None:
    # the ZooKeeper check reads the znode times; a leader history (KRaft only) changes nothing
    live_checks(now_ms=LATER)
    check_live(PLAN, live(), reported_in_flight={}, controller_quiet_s=300, allow_offline=False, now_ms=LATER,
               leaders=seen(("base", 0, 9, 99)))  # fmt: skip


def kraft_snapshot(snapshot_id: str, minutes: int, leader: int, epoch: int) -> ClusterSnapshot:
    snap = kraft_live(leader, epoch)
    snap.snapshot_id = snapshot_id
    snap.captured_at = datetime(2026, 11, 21, 6, 0, tzinfo=UTC) + timedelta(minutes=minutes)
    snap.source = "kraft"
    return snap


def test_leaders_seen_walks_back_from_the_base_until_old_enough_or_another_leader(tmp_path: object) -> None:
    lake = Lake(str(tmp_path))
    # one snapshot every 2 minutes across midnight: leader 102 until 23:56, then 101 (epoch 7)
    day = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
    for sid, minutes, leader, epoch in [("a", 18 * 60 - 6, 102, 6), ("b", 18 * 60 - 4, 101, 7),
                                        ("c", 18 * 60 - 2, 101, 7), ("d", 18 * 60, 101, 7),
                                        ("e", 18 * 60 + 2, 101, 7), ("f", 18 * 60 + 4, 101, 7)]:  # fmt: skip
        lake.publish(snapshot_batch(kraft_snapshot(sid, minutes, leader, epoch)))

    def ms(minutes: int) -> int:
        return int((day + timedelta(minutes=minutes)).timestamp() * 1000)

    ids = [(s.snapshot_id, s.controller_id, s.epoch) for s in leaders_seen(lake, "c1", "e", until_ms=ms(0))]
    assert ids == [("e", 101, 7), ("d", 101, 7), ("c", 101, 7), ("b", 101, 7), ("a", 102, 6)]  # stops at 102
    seen_e = leaders_seen(lake, "c1", "e", until_ms=ms(18 * 60 - 1))
    assert [s.snapshot_id for s in seen_e] == ["e", "d", "c"]  # c (23:58) is old enough: no need to go on
    assert seen_e[0].captured_at_ms == ms(18 * 60 + 2)
    assert [s.snapshot_id for s in leaders_seen(lake, "c1", "f", until_ms=ms(18 * 60 + 4))] == ["f"]
    assert leaders_seen(lake, "c1", "nope", until_ms=0) == []
