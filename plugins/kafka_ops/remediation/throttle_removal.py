"""Removing the replication throttles a plan set: at the end of its execution or of its cancel
(`remove_plan_throttles`), and on the operator's request when it had to leave them (`clear_throttles`).

An execution removes its throttles only when no reassignment is in flight anywhere in the cluster
(Kafka's own tool keeps them then too: removing them would let a stuck or slow copy saturate the
brokers); kept throttles stay recorded in the progress document. `clear_throttles` removes them once
nothing of the plan is in flight; what another move still needs stays (`throttles.clearance`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from kafka_ops.errors import KafkaOpsError, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import tp_text
from kafka_ops.planning.plan import FOLLOWER_THROTTLED, LEADER_THROTTLED
from kafka_ops.remediation.backends import Backend, broker_throttles
from kafka_ops.remediation.batch_runner import PlanRun
from kafka_ops.remediation.live import LiveSource, in_flight
from kafka_ops.remediation.run_context import ContextRun, RunContext, live_source
from kafka_ops.remediation.store import load_plan, read_progress
from kafka_ops.remediation.throttles import TOPIC_THROTTLES, clearance
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget


@dataclass
class ThrottleReport:
    """What `clear_throttles` removed (or, dry run, would remove) and what it kept, with why."""

    plan_id: str
    cluster: str
    status: str
    dry_run: bool
    brokers_cleared: list[int]
    topics_cleared: list[str]
    kept: dict[str, str]

    def summary(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def clear_command(cluster: str, plan_id: str) -> str:
    """How an operator removes a plan's leftover throttles (the CLI, or the cancel DAG's action)."""
    return (
        f"`kafka-ops remediation clear-throttles --cluster {cluster} --plan-id {plan_id}` "
        "(or the kafka_remediation_cancel DAG with action clear_throttles)"
    )


def remove_plan_throttles(run: PlanRun, ctx: RunContext) -> bool:
    """Remove every throttle `run`'s progress records, unless a reassignment is in flight anywhere
    (then they stay, audited as `kept`). Call under `run.writing()`. True when none is left."""
    p = run.progress
    if not p.throttled_topics and not p.throttled_brokers:
        return True
    live = ctx.reader.full()
    moving = {**ctx.backend.reassignments_in_flight(), **in_flight(live)}
    if moving:
        run.audit.record(
            "remove_throttle",
            "kept",
            partitions=len(moving),
            detail=f"a reassignment is still in flight ({tp_text(moving)}): the throttles stay until "
            f"it finishes; then remove them with {clear_command(ctx.plan.cluster, ctx.plan.plan_id)}",
        )
        return False
    topics = {t: (LEADER_THROTTLED, FOLLOWER_THROTTLED) for t in p.throttled_topics if t in live.topics}
    brokers = {b: broker_throttles(ctx.plan.kind) for b in p.throttled_brokers}
    detail = f"brokers {sorted(brokers)}, topics {sorted(topics)}"
    try:
        ctx.backend.delete_configs(topics, brokers)
    except KafkaOpsError as e:
        run.audit.record("remove_throttle", "failed", detail=f"{e}; {detail}")
        raise
    run.audit.record("remove_throttle", "ok", detail=detail)
    p.throttled_topics, p.throttled_brokers = [], []
    run.save()
    return True


def clear_throttles(
    plan_id: str,
    *,
    lake: Lake,
    cluster_config: ClusterConfig,
    backend: Backend,
    zookeeper: ZooKeeperTarget | None = None,
    reader: LiveSource | None = None,
    actor: str,
    run_id: str | None = None,
    dry_run: bool = False,
) -> ThrottleReport:
    """Remove the replication throttles plan `plan_id` set and left (its execution ended while another
    reassignment was in flight), once nothing of the plan is in flight; throttles a move still in
    flight needs stay (`throttles.clearance`). Refused (`RemediationRefused`, audited) when writes
    are disabled, the plan never ran, an execution may be running, or a move of the plan is in
    flight. `dry_run`: the same checks and answer, nothing written."""
    plan = load_plan(lake, cluster_config.name, plan_id)
    ctx = RunContext(plan, lake, cluster_config, backend, live_source(plan, zookeeper, reader), actor, run_id)
    return _ClearRun(ctx).clear(dry_run)


class _ClearRun(ContextRun):
    """A cleanup of a plan's leftover throttles: under the plan's progress lock, never stopped by its
    cancel mark (a cancelled plan's throttles are cleared too)."""

    stops_on_cancel = False

    def clear(self, dry_run: bool) -> ThrottleReport:
        try:
            with self.writing():
                return self._clear_locked(dry_run)
        except RemediationRefused as e:
            if not dry_run:
                self.audit.record("refuse", "refused", detail=str(e))
            raise

    def _clear_locked(self, dry_run: bool) -> ThrottleReport:
        ctx = self.ctx
        stored = read_progress(self.lake, self.plan.cluster, self.plan.plan_id)
        plan_id = self.plan.plan_id
        if not ctx.config.writes_enabled and not dry_run:
            raise RemediationRefused(plan_id, "writes enabled", f"writes are disabled for cluster {ctx.config.name!r}")
        if stored is None:
            raise RemediationRefused(plan_id, "clear throttles", "the plan was never executed: it set no throttle")
        if stored.status == "running":
            raise RemediationRefused(
                plan_id,
                "clear throttles",
                "an execution of the plan is running (or was killed): it removes its throttles when it ends; "
                "trigger execute again with this plan id to resume it, or cancel the plan",
            )
        self.progress = stored
        live = ctx.reader.full()
        moving = {**ctx.backend.reassignments_in_flight(), **in_flight(live)}
        ours = sorted(tp for tp in ctx.moves if tp in moving)
        if ours:
            raise RemediationRefused(
                plan_id,
                "clear throttles",
                f"moves of the plan are in flight ({tp_text(ours)}): wait for them, or cancel the plan",
            )
        plan = clearance(stored.throttled_topics, stored.throttled_brokers, live, moving)
        report = ThrottleReport(
            plan_id, self.plan.cluster, stored.status, dry_run, list(plan.brokers), list(plan.topics), plan.kept
        )
        if dry_run or not (plan.topics or plan.brokers):
            return report
        detail = f"brokers {list(plan.brokers)}, topics {list(plan.topics)}" + (
            f"; kept: {plan.kept}" if plan.kept else ""
        )
        try:
            keys = broker_throttles(self.plan.kind)
            ctx.backend.delete_configs(dict.fromkeys(plan.topics, TOPIC_THROTTLES), dict.fromkeys(plan.brokers, keys))
        except KafkaOpsError as e:
            self.audit.record("remove_throttle", "failed", detail=f"{e}; {detail}")
            raise
        self.audit.record("remove_throttle", "ok", detail=detail)
        stored.throttled_topics = [t for t in stored.throttled_topics if t not in plan.topics and t in live.topics]
        stored.throttled_brokers = [b for b in stored.throttled_brokers if b not in plan.brokers]
        self.save()
        return report
