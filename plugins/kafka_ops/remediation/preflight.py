"""The safety checks that must all pass before the executor writes anything to a cluster.

Each check raises `RemediationRefused` naming the check, what it found and what to do; the
executor records the refusal in the audit table and writes nothing to the cluster. In order
(cheap, offline checks first, so a disabled cluster is never even read):

1. the plan belongs to the configured cluster;
2. writes are enabled for the cluster (`ClusterConfig.writes_enabled`, false by default);
3. the plan was not cancelled (a cancelled plan is never resumed: make a new one);
4. the plan's base snapshot passed integrity validation: `trusted(lake, cluster, snapshot_id)`
   raises a `KafkaOpsError` when it did not (the DAG passes
   `kafka_ops.validation.integrity.require_trusted`; tests pass a stub);
5. no controller change in the last `controller_quiet_s` seconds (a new controller is still
   loading state and re-sending LeaderAndIsr; a reassignment or election started now races it).
   ZooKeeper: `/controller`'s creation and `/controller_epoch`'s last write tell when. KRaft
   (`ClusterSnapshot.quorum`, DescribeQuorum) tells no election time, so the quorum must have a
   leader; that leader and its epoch must be the ones of the plan's base snapshot (a leader elected
   since is refused: make a new plan); the lake's snapshots must show it leading for
   `controller_quiet_s` (the earliest of an unbroken run of snapshots, back from the base, with
   that leader and epoch); and a majority of the voters, the leader included, must have fetched
   from it within `QUORUM_FETCH_S` (a leader its followers do not fetch from commits nothing);
6. no offline partition anywhere, unless explicitly allowed (a cluster that has lost partitions
   needs an operator, not more data movement);
7. no reassignment in flight anywhere except this plan's own partitions on their way to their
   planned targets, and no election pending in `/admin/preferred_replica_election`;
8. the live assignment still equals the plan's base for every partition the plan touches:
   "cluster changed since plan <id>: <topic>-<p> is now [..], the plan was based on [..]". A
   partition already at its target, or on its way there, passes (a resumed execution, or an
   operator who ran the plan's own file); for an election, the partition's first replica must
   still be the preferred leader the plan elects;
9. every broker that still has to receive a replica is registered (a replica on a dead broker
   never joins the ISR, and the batch would hang);
10. no broker that still has to receive a replica is cordoned now: by the cluster's
    `cordoned_brokers` setting as it reads at run time, or by Kafka itself (KIP-1066, the live
    snapshot's `Broker.cordoned`). A plan made before the cordon, a rollback returning replicas to
    a broker cordoned since, or a resumed run would otherwise place what the cordon forbids. A
    rollback's own source plan's cordon (`view.UNCORDON_FIRST`) is not in the way: it is lifted first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from kafka_ops.errors import KafkaOpsError, RemediationRefused
from kafka_ops.lake.schema import COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot, Quorum, TopicPartition, tp_text
from kafka_ops.planning.plan import Plan
from kafka_ops.planning.view import UNCORDON_FIRST
from kafka_ops.remediation.live import assigned, classify, controller_changed_at_ms, in_flight
from kafka_ops.remediation.progress import Progress, drift_message
from kafka_ops.settings import ClusterConfig
from kafka_ops.validation.lake_batches import days, find_commit, find_day_commits

QUORUM_FETCH_S = 30.0
"""A KRaft voter that has not fetched from the quorum leader for longer than this does not count
towards a settled majority (`quorum_health`'s default; Kafka's controller.quorum.fetch.timeout.ms is
2 s, so a live follower fetches many times within it)."""

TrustCheck = Callable[[Lake, str, str], None]
"""`trusted(lake, cluster, snapshot_id)`: returns if the snapshot passed integrity validation,
raises a `KafkaOpsError` (e.g. `SnapshotUntrusted`) saying why not otherwise."""


def check_offline_config(plan: Plan, config: ClusterConfig, progress: Progress | None) -> None:
    """Checks 1-3: nothing but the plan, the settings and the progress document."""
    if plan.cluster != config.name:
        raise RemediationRefused(
            plan.plan_id, "cluster", f"the plan is for cluster {plan.cluster!r}, the settings are for {config.name!r}"
        )
    if not config.writes_enabled:
        raise RemediationRefused(
            plan.plan_id,
            "writes enabled",
            f"writes are disabled for cluster {config.name!r} (dry-run): set writes_enabled = true for it in the "
            "kafka-ops settings to let the executor write",
        )
    if progress is not None and progress.status == "cancelled":
        raise RemediationRefused(
            plan.plan_id, "not cancelled", f"plan {plan.plan_id} was cancelled ({progress.message}); make a new plan"
        )


def check_trusted(plan: Plan, lake: Lake, trusted: TrustCheck) -> None:
    """Check 4."""
    try:
        trusted(lake, plan.cluster, plan.snapshot_id)
    except KafkaOpsError as e:
        raise RemediationRefused(
            plan.plan_id, "base snapshot trusted", f"the plan's base snapshot {plan.snapshot_id} is not trusted: {e}"
        ) from e


@dataclass(frozen=True)
class LeaderSeen:
    """The controller (KRaft: the quorum leader) and epoch one snapshot in the lake recorded."""

    snapshot_id: str
    captured_at_ms: int
    controller_id: int | None
    epoch: int | None

    def same_leader(self, other: LeaderSeen) -> bool:
        return (self.controller_id, self.epoch) == (other.controller_id, other.epoch)


def leaders_seen(lake: Lake, cluster: str, snapshot_id: str, until_ms: int) -> list[LeaderSeen]:
    """The controller of snapshot `snapshot_id` (a plan's base), then of the cluster's earlier
    snapshots, newest first, until one captured at or before `until_ms` or one with another
    controller or epoch: what check 5 needs on KRaft. Empty when the snapshot is not in the lake."""
    base = find_commit(lake, COMMIT_TABLE, cluster, snapshot_id)
    if base is None:
        return []
    first = _seen(base.commit)
    out = [first]
    if first.captured_at_ms <= until_ms:
        return out
    key = (base.captured_at, snapshot_id)
    for dt in (d for d in days(lake, COMMIT_TABLE, cluster) if d <= base.dt):
        rows = [r for r in find_day_commits(lake, COMMIT_TABLE, cluster, dt) if _key(r) < key]
        for row in sorted(rows, key=_key, reverse=True):
            seen = _seen(row)
            out.append(seen)
            if seen.captured_at_ms <= until_ms or not seen.same_leader(first):
                return out
    return out


def _key(row: Mapping[str, object]) -> tuple[datetime, str]:
    at = row["captured_at"]
    if not isinstance(at, datetime):
        raise TypeError(f"snapshot commit {row['snapshot_id']} has no captured_at")
    return at, str(row["snapshot_id"])


def _seen(row: Mapping[str, object]) -> LeaderSeen:
    controller, epoch = row.get("controller_id"), row.get("controller_epoch")
    return LeaderSeen(
        str(row["snapshot_id"]),
        int(_key(row)[0].timestamp() * 1000),
        int(controller) if isinstance(controller, int) else None,
        int(epoch) if isinstance(epoch, int) else None,
    )


def check_controller_stable(
    plan: Plan, live: ClusterSnapshot, quiet_s: float, now_ms: int, seen: Sequence[LeaderSeen] = ()
) -> None:
    """Check 5. `seen`: on KRaft, `leaders_seen` of the plan's base snapshot."""
    if live.quorum is not None:
        check_quorum_stable(plan, live.quorum, quiet_s, now_ms, seen)
        return
    if live.controller is None:
        raise RemediationRefused(
            plan.plan_id, "controller stable", "the cluster has no active controller (/controller)"
        )
    changed = controller_changed_at_ms(live)
    if changed is not None and now_ms - changed < quiet_s * 1000:
        ago = max(0.0, (now_ms - changed) / 1000)
        raise RemediationRefused(
            plan.plan_id,
            "controller stable",
            f"the controller changed {ago:.0f}s ago (now broker {live.controller.broker_id}, epoch "
            f"{live.controller_epoch}); wait until it has been stable for {quiet_s:g}s",
        )


def check_quorum_stable(plan: Plan, quorum: Quorum, quiet_s: float, now_ms: int, seen: Sequence[LeaderSeen]) -> None:
    """Check 5 on KRaft (see the module docstring)."""
    check = "controller stable"
    leader, epoch = quorum.leader_id, quorum.leader_epoch
    if leader is None:
        raise RemediationRefused(
            plan.plan_id,
            check,
            f"the KRaft controller quorum has no leader (DescribeQuorum, epoch {epoch}): an election is under way; "
            "run again once a leader is elected and has settled",
        )
    now = f"controller {leader} at epoch {epoch}"
    if not seen:
        raise RemediationRefused(
            plan.plan_id,
            check,
            f"the plan's base snapshot {plan.snapshot_id} is not in the lake, so whether the quorum leader (now "
            f"{now}) changed since the plan cannot be told; make a new plan from a fresh snapshot",
        )
    base = seen[0]
    if (base.controller_id, base.epoch) != (leader, epoch):
        raise RemediationRefused(
            plan.plan_id,
            check,
            f"the KRaft quorum leader changed since the plan's base snapshot {base.snapshot_id}: it was controller "
            f"{base.controller_id} at epoch {base.epoch}, it is now {now}; a new active controller may still be "
            f"catching up: make a new plan from a fresh snapshot once it has led for {quiet_s:g}s",
        )
    run = _same_leader(seen)
    since = run[-1]
    if now_ms - since.captured_at_ms < quiet_s * 1000:
        ago = max(0.0, (now_ms - since.captured_at_ms) / 1000)
        before = seen[len(run)] if len(run) < len(seen) else None
        earlier = (
            f"snapshot {before.snapshot_id} before it shows controller {before.controller_id} at epoch {before.epoch}"
            if before is not None
            else "no earlier snapshot is in the lake"
        )
        raise RemediationRefused(
            plan.plan_id,
            check,
            f"the KRaft quorum leader, {now}, is known to have led for only {ago:.0f}s (first seen in snapshot "
            f"{since.snapshot_id}; {earlier}); wait until it has led for {quiet_s:g}s, then run again",
        )
    voters = quorum.voters
    fetching = {
        r.replica_id
        for r in quorum.replicas
        if r.role == "voter"
        and r.replica_id != leader
        and r.last_fetch_ms is not None
        and now_ms - r.last_fetch_ms <= QUORUM_FETCH_S * 1000
    }
    if 2 * (len(fetching) + 1) <= len(voters):
        silent = sorted(v for v in voters if v != leader and v not in fetching)
        raise RemediationRefused(
            plan.plan_id,
            check,
            f"the KRaft quorum leader, {now}, has no settled majority: only {len(fetching)} of the other "
            f"{len(voters) - 1} voters fetched from it within {QUORUM_FETCH_S:g}s (not: controller "
            f"{', '.join(map(str, silent))}); bring those controllers back (kafka-metadata-quorum describe "
            "--replication shows them), then run again",
        )


def _same_leader(seen: Sequence[LeaderSeen]) -> list[LeaderSeen]:
    """The unbroken run of snapshots, from the first, with the first's controller and epoch."""
    run = []
    for s in seen:
        if not s.same_leader(seen[0]):
            break
        run.append(s)
    return run


def check_no_offline(plan: Plan, live: ClusterSnapshot, allow_offline: bool) -> None:
    """Check 6."""
    offline = live.offline()
    if offline and not allow_offline:
        raise RemediationRefused(
            plan.plan_id,
            "no offline partitions",
            f"{len(offline)} partition(s) are offline: {tp_text(offline)}; bring them back first, or allow offline "
            "partitions explicitly for this run",
        )


def check_base(plan: Plan, live: ClusterSnapshot) -> None:
    """Check 8."""
    moving = in_flight(live)
    drifted = [m for m in plan.reassignments if classify(m, live, moving) not in ("base", "target", "in_flight")]
    if drifted:
        raise RemediationRefused(plan.plan_id, "live assignment equals the plan's base",
                                 drift_message(plan.plan_id, drifted, live))  # fmt: skip
    reassigned = {(m.topic, m.partition): m.target for m in plan.reassignments}
    changed = []
    for e in plan.elections:
        tp = (e.topic, e.partition)
        replicas = assigned(live, tp)
        expected = reassigned[tp][0] if tp in reassigned else e.preferred
        if replicas is None or not replicas or replicas[0] != expected:
            changed.append(f"{e.topic}-{e.partition} has replicas {list(replicas or ())}, the plan elects {expected}")
    if changed:
        more = f" (and {len(changed) - 10} more)" if len(changed) > 10 else ""
        raise RemediationRefused(
            plan.plan_id,
            "live assignment equals the plan's base",
            f"cluster changed since plan {plan.plan_id}: " + "; ".join(changed[:10]) + more
            + ". Make a new plan from a fresh snapshot",
        )  # fmt: skip


def check_nothing_else_in_flight(
    plan: Plan, live: ClusterSnapshot, reported: Mapping[TopicPartition, tuple[int, ...]]
) -> None:
    """Check 7. `reported`: what the back end itself lists in flight (Admin API)."""
    ours = {(m.topic, m.partition): m.target for m in plan.reassignments}
    moving = {**reported, **in_flight(live)}
    foreign = {tp: target for tp, target in moving.items() if ours.get(tp) != target}
    if foreign:
        first = sorted(foreign)[:5]
        shown = ", ".join(f"{t}-{p} → {list(foreign[(t, p)])}" for t, p in first)
        more = f" (and {len(foreign) - 5} more)" if len(foreign) > 5 else ""
        raise RemediationRefused(
            plan.plan_id,
            "no reassignment in flight",
            f"a reassignment is already in flight: {shown}{more}; wait for it to finish or cancel it",
        )
    if live.preferred_election_requests:
        raise RemediationRefused(
            plan.plan_id,
            "no reassignment in flight",
            f"a preferred-leader election is pending in /admin/preferred_replica_election for "
            f"{tp_text(live.preferred_election_requests)}; wait for the controller to finish it",
        )


def check_targets_registered(plan: Plan, live: ClusterSnapshot) -> None:
    """Check 9."""
    moving = in_flight(live)
    pending = [m for m in plan.reassignments if classify(m, live, moving) != "target"]
    dead = sorted({b for m in pending for b in m.added if b not in live.brokers})
    if dead:
        raise RemediationRefused(
            plan.plan_id,
            "target brokers registered",
            f"broker(s) {dead} would receive replicas but are not registered (registered: {sorted(live.brokers)}); "
            "start them or make a new plan",
        )


def check_targets_not_cordoned(plan: Plan, live: ClusterSnapshot, cordoned_brokers: Sequence[int]) -> None:
    """Check 10. `cordoned_brokers`: the cluster's setting as read now."""
    moving = in_flight(live)
    pending = [m for m in plan.reassignments if classify(m, live, moving) != "target"]
    receiving = {b for m in pending for b in m.added}
    by_setting = sorted(receiving & set(cordoned_brokers))
    lifted_first = set(plan.request.get(UNCORDON_FIRST) or ())  # a rollback lifts its source plan's cordon first
    by_kafka = sorted(
        b for b in receiving - lifted_first if (broker := live.brokers.get(b)) is not None and broker.cordoned
    )
    if by_setting or by_kafka:
        found = [f"broker(s) {by_setting} by the cluster's cordoned_brokers setting"] if by_setting else []
        found += [f"broker(s) {by_kafka} by Kafka (cordoned.log.dirs)"] if by_kafka else []
        raise RemediationRefused(
            plan.plan_id,
            "target brokers not cordoned",
            f"the plan would add replicas to cordoned brokers: {' and '.join(found)}; lift the cordon, or make a "
            "new plan (planners never place on a cordoned broker)",
        )


def check_live(
    plan: Plan,
    live: ClusterSnapshot,
    *,
    reported_in_flight: Mapping[TopicPartition, tuple[int, ...]],
    controller_quiet_s: float,
    allow_offline: bool,
    now_ms: int,
    leaders: Sequence[LeaderSeen] = (),
    cordoned_brokers: Sequence[int] = (),
) -> None:
    """Checks 5-10 on a fresh, full read of the cluster; `leaders`: on KRaft, `leaders_seen`;
    `cordoned_brokers`: the cluster's setting."""
    check_controller_stable(plan, live, controller_quiet_s, now_ms, leaders)
    check_no_offline(plan, live, allow_offline)
    check_nothing_else_in_flight(plan, live, reported_in_flight)
    check_base(plan, live)
    check_targets_registered(plan, live)
    check_targets_not_cordoned(plan, live, cordoned_brokers)
