"""Every safety check refuses with a message that says what was found and what to do."""

from __future__ import annotations

import re

import pytest

from kafka_ops.errors import KafkaOpsError, RemediationRefused, SnapshotUntrusted
from kafka_ops.lake.store import Lake
from kafka_ops.planning import Plan, plan_preferred_election
from kafka_ops.remediation.preflight import check_live, check_offline_config, check_trusted
from kafka_ops.remediation.progress import Progress
from kafka_ops.settings import ClusterConfig
from kafka_ops.snapshot.model import ClusterSnapshot, ReassignmentRequest, TopicPartition
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


def test_an_election_whose_preferred_replica_changed_is_refused() -> None:
    base = live({"t": {0: (1, 2), 1: (2, 1)}}, leaders={("t", 0): 2, ("t", 1): 1}, snapshot_id="base")
    plan = plan_preferred_election(base, topics=["t"])
    assert len(plan.elections) == 2
    snap = live({"t": {0: (1, 2), 1: (1, 2)}}, leaders={("t", 0): 2, ("t", 1): 1})
    with pytest.raises(RemediationRefused, match=re.escape(f"cluster changed since plan {plan.plan_id}: t-1 has "
                       "replicas [1, 2], the plan elects 2")):  # fmt: skip
        live_checks(snap, plan=plan)
