"""Apply a remediation plan to a live cluster: checked, batched, throttled, verified, resumable.

`execute(plan, ...)`:

1. The plan is stored in the lake (`store.save_plan`, idempotent), then preflight (`preflight`):
   every safety check on the settings, the base snapshot's validation and a fresh full read of
   the cluster. A refusal is recorded in the audit table and raised as `RemediationRefused`;
   nothing is written to the cluster.
2. Reassignments, one batch at a time (`batching`; the split is fixed on the first run). For each
   batch not yet done, on a fresh read of its partitions, the resume rule (`progress.decide`)
   says: skip, mark done without a write (already at target), wait (already in flight: never
   resubmitted), or submit. Submitting sets the throttles first (brokers' leader/follower
   `replication.throttled.rate` on every source and destination, the topics'
   `leader/follower.replication.throttled.replicas` lists as `kafka-reassign-partitions
   --throttle` computes them), then writes the reassignment. The executor then waits until the
   batch is complete (nothing of it in flight, replicas = target, every target replica in the
   ISR) or stuck (no ISR or assignment change for `stuck_after_s`: `ReassignmentStuck`, the batch
   stays in flight and a later run resumes waiting, or `cancel` stops it), and verifies it.
   A decommission planned on a cluster that takes Kafka's own cordon first cordons its brokers
   (`cordons`), and a rollback of one first lifts them.
3. Elections, in chunks: only partitions not already led by their preferred replica are asked
   for; the leaders are then checked against the plan.
4. Verification of the whole plan on a fresh read (and that the cordoned brokers hold no replica),
   then the plan is `done`.
5. Always (also on failure or interruption): throttles are removed, unless a reassignment is
   still in flight anywhere in the cluster (Kafka's own tool keeps them then too; removing them
   would let a stuck or slow copy saturate the brokers); kept throttles stay recorded in the
   progress document, and the next run or `cancel` removes them.

Steps 1, 2 and 5 are the run loop this executor shares with the log dir executor (`batch_runner`);
this module supplies its preflight, the resume rule, the throttles, the reassignment, the wait and
the final verification; the elections are `elections`, the removal of throttles `throttle_removal`.
Every write, refusal and resume decision is an audit row (who, what, when, plan id, batch,
outcome). Progress is written before and after each write (see `progress`), so a run killed at
any point is resumed by the next run without applying a batch twice.


A cancel (`cancellation`) marks the plan cancelled under the plan's progress lock; this run checks
the mark under the same lock before each write, so it stops with `PlanCancelled` and writes nothing
more once the plan is cancelled.

Time: `clock` (wall seconds) and `sleep` are injectable; the controller-change check compares
ZooKeeper's znode times, or on KRaft the capture times of the lake's snapshots that show the quorum
leader and the voters' last fetch times, with `clock`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence

from kafka_ops.errors import KafkaOpsError, ReassignmentStuck, RemediationFailed, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.plan import Move, Plan
from kafka_ops.remediation.backends import FOLLOWER_RATE, LEADER_RATE, Backend
from kafka_ops.remediation.batch_runner import BatchDecision, BatchPoll, BatchRun, ExecutionOptions, ExecutionReport
from kafka_ops.remediation.cordons import check_drained, cordon_first, uncordon_first
from kafka_ops.remediation.elections import elect_all
from kafka_ops.remediation.live import LiveSource, assigned, batch_progress, in_flight
from kafka_ops.remediation.preflight import TrustCheck, check_live, check_offline_config, check_trusted, leaders_seen
from kafka_ops.remediation.progress import Step, decide
from kafka_ops.remediation.run_context import ContextRun, RunContext, leader, live_source
from kafka_ops.remediation.throttle_removal import remove_plan_throttles
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget


def execute(
    plan: Plan,
    *,
    lake: Lake,
    cluster_config: ClusterConfig,
    backend: Backend,
    zookeeper: ZooKeeperTarget | None = None,
    reader: LiveSource | None = None,
    actor: str,
    trusted: TrustCheck,
    options: ExecutionOptions | None = None,
    run_id: str | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> ExecutionReport:
    """Apply `plan` (see the module docstring). Live state is read from `reader` (a KRaft cluster's
    `KRaftLiveReader`) or else from `zookeeper`, whatever back end writes; `actor` / `run_id` say who
    runs it (Airflow user, DAG run) for the audit; `trusted(lake, cluster, snapshot_id)` raises unless
    the base snapshot passed integrity validation (the DAG passes `kafka_ops.validation.integrity.require_trusted`)."""
    ctx = RunContext(plan, lake, cluster_config, backend, live_source(plan, zookeeper, reader), actor, run_id,
                     options or ExecutionOptions(), clock, sleep)  # fmt: skip
    return _ReassignmentRun(ctx).execute(trusted)


class _ReassignmentRun(ContextRun, BatchRun[Move]):
    """One execution of a plan: the shared run loop (`batch_runner`) with reassignments as its batches,
    then the elections and the verification of the whole plan."""

    verified = "every partition at its target replicas, all in the ISR"

    # -- the batch runner's hooks -------------------------------------------------------------------

    def preflight(self, trusted: TrustCheck) -> None:
        check_offline_config(self.plan, self.ctx.config, self.progress)
        check_trusted(self.plan, self.lake, trusted)
        live = self.ctx.reader.full()
        now_ms = int(self.clock() * 1000)
        quiet_s = self.options.controller_quiet_s
        # KRaft tells no election time: the lake's snapshots tell since when the quorum leader leads
        seen = (
            leaders_seen(self.lake, self.plan.cluster, self.plan.snapshot_id, now_ms - int(quiet_s * 1000))
            if live.quorum is not None
            else []
        )
        check_live(
            self.plan,
            live,
            reported_in_flight=self.ctx.backend.reassignments_in_flight(),
            controller_quiet_s=quiet_s,
            allow_offline=self.options.allow_offline,
            now_ms=now_ms,
            leaders=seen,
            cordoned_brokers=self.ctx.config.cordoned_brokers,
        )

    def before_batches(self) -> None:
        uncordon_first(self, self.ctx)
        cordon_first(self, self.ctx)

    def after_batches(self) -> None:
        refused = elect_all(self, self.ctx)
        self.report.elections_refused = {f"{t}-{p}": why for (t, p), why in sorted(refused.items())}
        self._verify_plan(refused)
        check_drained(self, self.progress.cordoned_brokers, self.ctx.reader.full())

    def decide(self, step: Step) -> BatchDecision[Move]:
        moves = [self.ctx.moves[tp] for tp in step.partitions]
        live = self.ctx.reader.topics({m.topic for m in moves})
        try:
            decision = decide(self.plan.plan_id, step, moves, live)
        except RemediationRefused as e:
            self.audit.record("refuse", "refused", batch=step.index, partitions=len(moves), detail=str(e))
            raise
        return BatchDecision(decision.action, decision.submit, decision.reason)

    def write(self, step: Step, todo: Sequence[Move]) -> None:
        targets = {(m.topic, m.partition): m.target for m in todo}
        detail = json.dumps({f"{t}-{p}": list(r) for (t, p), r in targets.items()})
        try:
            self.ctx.backend.reassign(targets)
        except RemediationRefused as e:
            refusal = RemediationRefused(self.plan.plan_id, e.check, e.problem)
            self.audit.record("reassign", "refused", batch=step.index, partitions=len(todo), detail=str(refusal))
            raise refusal from e
        except KafkaOpsError as e:
            self.audit.record("reassign", "failed", batch=step.index, partitions=len(todo), detail=f"{e}; {detail}")
            raise
        self.audit.record("reassign", "ok", batch=step.index, partitions=len(todo), detail=detail)

    def set_throttles(self, step: Step, todo: Sequence[Move]) -> None:
        rate = self.options.throttle_bytes_per_s
        if rate is None or not any(m.added for m in todo):
            return
        wanted = dataclasses.replace(self.plan, reassignments=tuple(todo)).throttles()
        topics = {t: {k: v for k, v in c.items() if v} for t, c in wanted["topics"].items()}
        brokers = {int(b): dict.fromkeys((LEADER_RATE, FOLLOWER_RATE), str(rate)) for b in wanted["brokers"]}
        # recorded before the write: a crash right after it must not leave a throttle nobody knows about
        self.progress.throttled_topics = sorted(set(self.progress.throttled_topics) | set(topics))
        self.progress.throttled_brokers = sorted(set(self.progress.throttled_brokers) | set(brokers))
        self.save()
        detail = f"{rate} B/s on brokers {sorted(brokers)}; throttled replicas: " + json.dumps(topics, sort_keys=True)
        try:
            self.ctx.backend.set_configs(topics, brokers)
        except KafkaOpsError as e:
            self.audit.record("set_throttle", "failed", batch=step.index, partitions=len(todo), detail=f"{e}; {detail}")
            raise
        self.audit.record("set_throttle", "ok", batch=step.index, partitions=len(todo), detail=detail)

    def poll(self, step: Step) -> BatchPoll:
        moves = [self.ctx.moves[tp] for tp in step.partitions]
        progress = batch_progress(moves, self.ctx.reader.topics({m.topic for m in moves}))
        waiting = "; ".join(progress.waiting[:5]) + (" ..." if len(progress.waiting) > 5 else "")
        return BatchPoll(progress.complete, progress.signature, waiting)

    def stuck(self, step: Step, waiting: str) -> ReassignmentStuck:
        return ReassignmentStuck(
            f"plan {self.plan.plan_id} batch {step.index}: no progress for {self.options.stuck_after_s:g}s "
            f"({waiting}). It is still in flight with its throttles: run the executor again to keep "
            "waiting, or cancel the plan"
        )

    def _verify_plan(self, refused: dict[TopicPartition, str]) -> None:
        topics = {m.topic for m in self.plan.reassignments} | {e.topic for e in self.plan.elections}
        live = self.ctx.reader.topics(topics)
        moving = in_flight(live)
        problems = []
        for tp, m in self.ctx.moves.items():
            replicas = assigned(live, tp)
            if tp in moving or replicas != m.target:
                problems.append(f"{tp[0]}-{tp[1]} has replicas {list(replicas or ())}, planned {list(m.target)}")
        for tp in self.ctx.elections:
            led_by, preferred = leader(live, tp), self.ctx.preferred(tp)
            if led_by != preferred:
                why = f" ({refused[tp]})" if tp in refused else ""
                problems.append(f"{tp[0]}-{tp[1]} is led by {led_by}, planned {preferred}{why}")
        if problems:
            detail = "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else "")
            self.audit.record("verify", "failed", partitions=len(problems), detail=detail)
            raise RemediationFailed(f"plan {self.plan.plan_id} did not end as planned: {detail}")
        self.audit.record(
            "verify",
            "ok",
            partitions=len(self.ctx.moves) + len(self.ctx.elections),
            detail="final assignment and leaders equal the plan",
        )

    def remove_throttles_locked(self) -> bool:
        return remove_plan_throttles(self, self.ctx)
