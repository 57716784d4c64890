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
3. Elections, in chunks: only partitions not already led by their preferred replica are asked
   for; the leaders are then checked against the plan.
4. Verification of the whole plan on a fresh read, then the plan is `done`.
5. Always (also on failure or interruption): throttles are removed, unless a reassignment is
   still in flight anywhere in the cluster (Kafka's own tool keeps them then too; removing them
   would let a stuck or slow copy saturate the brokers); kept throttles stay recorded in the
   progress document, and the next run or `cancel` removes them.

Steps 1, 2 and 5 are the run loop this executor shares with the log dir executor (`batch_runner`);
this module supplies its preflight, the resume rule, the throttles, the reassignment, the wait and
the elections. Every write, refusal and resume decision is an audit row (who, what, when, plan id, batch,
outcome). Progress is written before and after each write (see `progress`), so a run killed at
any point is resumed by the next run without applying a batch twice.

`cancel(plan_id, ...)` stops the plan's in-flight reassignments (Admin API: replicas `None`;
ZooKeeper mode cannot cancel and says what to do), marks the plan cancelled so it is never
resumed, and removes its throttles. Batches already completed stay applied: the plan's
`rollback.json` puts them back. It may run while another process executes the plan. A cancelled
plan never writes again: the executing run takes the plan's progress lock
(`store.progress_lock`), reads the stored status and, unless cancelled, saves its progress and
makes its one write to the cluster (throttles and reassignment of a batch, an election, the
removal of throttles) before releasing it; `cancel` marks the plan under the same lock. So the
status check and the write are one compare-and-set: a cancel lands before the check (the run
stops with `PlanCancelled` and writes nothing more, not even its progress) or after the write
(whose throttles are then recorded, and whose moves `cancel` sees in flight and cancels: it
keeps cancelling the plan's moves until none has been in flight for a poll interval after the
mark). The run also reads the status at every poll, to stop waiting early.

Time: `clock` (wall seconds) and `sleep` are injectable; the controller-change check compares
ZooKeeper's znode times, or on KRaft the capture times of the lake's snapshots that show the quorum
leader and the voters' last fetch times, with `clock`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_ops.errors import ConfigError, KafkaOpsError, ReassignmentStuck, RemediationFailed, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.planning.plan import FOLLOWER_THROTTLED, LEADER_THROTTLED, Election, Move, Plan
from kafka_ops.remediation.backends import FOLLOWER_RATE, LEADER_RATE, Backend, broker_throttles
from kafka_ops.remediation.batch_runner import (
    BatchDecision,
    BatchPoll,
    BatchRun,
    ExecutionOptions,
    ExecutionReport,
    now,
)
from kafka_ops.remediation.batching import chunk_elections, split_moves
from kafka_ops.remediation.live import (
    LiveReader,
    LiveSource,
    assigned,
    batch_progress,
    classify,
    in_flight,
    moving_as_planned,
    tp_text,
)
from kafka_ops.remediation.preflight import (
    TrustCheck,
    check_live,
    check_offline_config,
    check_trusted,
    leaders_seen,
)
from kafka_ops.remediation.progress import Progress, Step, decide
from kafka_ops.remediation.store import load_plan, read_progress
from kafka_ops.remediation.throttles import TOPIC_THROTTLES, clearance
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget

log = logging.getLogger(__name__)


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


@dataclass
class CancelReport:
    """What a cancel did, and where each planned move stands on the cluster afterwards (read live,
    not from the progress document: a batch may have completed after its executor died)."""

    plan_id: str
    cluster: str
    cancelled: list[str]
    still_in_flight: list[str]
    batches_applied: list[int]
    throttles_removed: bool
    note: str
    at_target: list[str] = field(default_factory=list)
    not_started: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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
    run = _Run(
        plan,
        lake=lake,
        config=cluster_config,
        backend=backend,
        reader=live_source(plan, zookeeper, reader),
        actor=actor,
        run_id=run_id,
        options=options or ExecutionOptions(),
        clock=clock,
        sleep=sleep,
    )
    return run.execute(trusted)


def cancel(
    plan_id: str,
    *,
    lake: Lake,
    cluster_config: ClusterConfig,
    backend: Backend,
    zookeeper: ZooKeeperTarget | None = None,
    reader: LiveSource | None = None,
    actor: str,
    run_id: str | None = None,
    wait_s: float = 60.0,
    poll_s: float = 1.0,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> CancelReport:
    """Cancel plan `plan_id` of `cluster_config`'s cluster (see the module docstring)."""
    plan = load_plan(lake, cluster_config.name, plan_id)
    run = _Run(
        plan,
        lake=lake,
        config=cluster_config,
        backend=backend,
        reader=live_source(plan, zookeeper, reader),
        actor=actor,
        run_id=run_id,
        options=ExecutionOptions(poll_s=poll_s),
        clock=clock,
        sleep=sleep,
    )
    return run.cancel(wait_s)


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
    run = _Run(
        plan,
        lake=lake,
        config=cluster_config,
        backend=backend,
        reader=live_source(plan, zookeeper, reader),
        actor=actor,
        run_id=run_id,
        options=ExecutionOptions(),
        clock=time.time,
        sleep=time.sleep,
    )
    return run.clear_throttles(dry_run)


def live_source(plan: Plan, zookeeper: ZooKeeperTarget | None, reader: LiveSource | None) -> LiveSource:
    """Where live state is read: `reader` (a KRaft cluster's `KRaftLiveReader`), else ZooKeeper."""
    if reader is not None:
        return reader
    if zookeeper is None:
        raise ConfigError(f"plan {plan.plan_id}: no live source given (a ZooKeeper target or a reader)")
    return LiveReader(plan.cluster, zookeeper)


def clear_command(cluster: str, plan_id: str) -> str:
    """How an operator removes a plan's leftover throttles (the CLI, or the cancel DAG's action)."""
    return (
        f"`kafka-ops remediation clear-throttles --cluster {cluster} --plan-id {plan_id}` "
        "(or the kafka_remediation_cancel DAG with action clear_throttles)"
    )


class _Run(BatchRun[Move]):
    """One run of the executor on one plan: the shared run loop (`batch_runner`) with reassignments as
    its batches, then elections; or a cancel, or a cleanup of leftover throttles."""

    verified = "every partition at its target replicas, all in the ISR"

    def __init__(
        self,
        plan: Plan,
        *,
        lake: Lake,
        config: ClusterConfig,
        backend: Backend,
        reader: LiveSource,
        actor: str,
        run_id: str | None,
        options: ExecutionOptions,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self.config = config
        self.backend = backend
        self.reader = reader
        self.moves = {(m.topic, m.partition): m for m in plan.reassignments}
        self.elections = {(e.topic, e.partition): e for e in plan.elections}
        super().__init__(plan, lake=lake, backend_name=backend.name, actor=actor, run_id=run_id, options=options,
                         clock=clock, sleep=sleep)  # fmt: skip

    def new_progress(self) -> Progress:
        o = self.options
        batches = split_moves(self.plan.reassignments, o.batch_max_partitions, o.batch_max_moves_per_broker)
        chunks = chunk_elections(self.plan.elections, o.election_batch_size)
        return Progress(
            plan_id=self.plan.plan_id,
            cluster=self.plan.cluster,
            backend=self.backend.name,
            batches=[Step(i, tuple((m.topic, m.partition) for m in b)) for i, b in enumerate(batches)],
            elections=[Step(i, tuple((e.topic, e.partition) for e in c)) for i, c in enumerate(chunks)],
        )

    # -- execute: the batch runner's hooks ----------------------------------------------------------

    def preflight(self, trusted: TrustCheck) -> None:
        check_offline_config(self.plan, self.config, self.progress)
        check_trusted(self.plan, self.lake, trusted)
        live = self.reader.full()
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
            reported_in_flight=self.backend.reassignments_in_flight(),
            controller_quiet_s=quiet_s,
            allow_offline=self.options.allow_offline,
            now_ms=now_ms,
            leaders=seen,
            cordoned_brokers=self.config.cordoned_brokers,
        )

    def after_batches(self) -> None:
        refused: dict[TopicPartition, str] = {}
        for chunk in self.progress.elections:
            refused.update(self._election(chunk))
        self.report.elections_refused = {f"{t}-{p}": why for (t, p), why in sorted(refused.items())}
        self._verify_plan(refused)

    def decide(self, step: Step) -> BatchDecision[Move]:
        moves = [self.moves[tp] for tp in step.partitions]
        live = self.reader.topics({m.topic for m in moves})
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
            self.backend.reassign(targets)
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
        self._save()
        detail = f"{rate} B/s on brokers {sorted(brokers)}; throttled replicas: " + json.dumps(topics, sort_keys=True)
        try:
            self.backend.set_configs(topics, brokers)
        except KafkaOpsError as e:
            self.audit.record("set_throttle", "failed", batch=step.index, partitions=len(todo), detail=f"{e}; {detail}")
            raise
        self.audit.record("set_throttle", "ok", batch=step.index, partitions=len(todo), detail=detail)

    def poll(self, step: Step) -> BatchPoll:
        moves = [self.moves[tp] for tp in step.partitions]
        progress = batch_progress(moves, self.reader.topics({m.topic for m in moves}))
        waiting = "; ".join(progress.waiting[:5]) + (" ..." if len(progress.waiting) > 5 else "")
        return BatchPoll(progress.complete, progress.signature, waiting)

    def stuck(self, step: Step, waiting: str) -> ReassignmentStuck:
        return ReassignmentStuck(
            f"plan {self.plan.plan_id} batch {step.index}: no progress for {self.options.stuck_after_s:g}s "
            f"({waiting}). It is still in flight with its throttles: run the executor again to keep "
            "waiting, or cancel the plan"
        )

    # -- elections ----------------------------------------------------------------------------------

    def _preferred(self, tp: TopicPartition) -> int:
        move = self.moves.get(tp)
        return move.target[0] if move is not None else self.elections[tp].preferred

    def _election(self, step: Step) -> dict[TopicPartition, str]:
        """Elect the chunk's partitions not yet led by their preferred replica; returns the refused."""
        if step.state == "done":
            return {}
        self._stop_if_cancelled()
        chosen: list[Election] = [self.elections[tp] for tp in step.partitions]
        topics = {e.topic for e in chosen}
        live = self._wait_for_no_pending_election(topics)
        todo = [tp for tp in step.partitions if _leader(live, tp) != self._preferred(tp)]
        refused: dict[TopicPartition, str] = {}
        if not todo:
            outcome = "not_needed" if step.state == "pending" else "already_applied"
            self.audit.record(
                "resume" if step.state != "pending" else "elect",
                outcome,
                batch=step.index,
                partitions=len(chosen),
                detail="every partition is led by its preferred replica",
            )
        else:
            with self._writing(step):
                refused = self._elect(step, todo)
            self._wait_for_leaders([tp for tp in todo if tp not in refused], topics)
        step.state = "done"
        step.done_at = now()
        self._save()
        return refused

    def _elect(self, step: Step, todo: list[TopicPartition]) -> dict[TopicPartition, str]:
        step.state = "submitting"
        step.submitted_by = self.label
        self._save()
        try:
            refused = self.backend.elect_preferred(todo)
        except RemediationRefused as e:
            refusal = RemediationRefused(self.plan.plan_id, e.check, e.problem)
            self.audit.record("elect", "refused", batch=step.index, partitions=len(todo), detail=str(refusal))
            raise refusal from e
        except KafkaOpsError as e:
            self.audit.record("elect", "failed", batch=step.index, partitions=len(todo), detail=str(e))
            raise
        detail = tp_text(todo) + (f"; refused: {_reasons(refused)}" if refused else "")
        outcome = "partial" if refused else "ok"
        self.audit.record("elect", outcome, batch=step.index, partitions=len(todo), detail=detail)
        self.report.election_chunks_submitted.append(step.index)
        step.state = "submitted"
        step.submitted_at = now()
        self._save()
        return refused

    def _wait_for_no_pending_election(self, topics: set[str]) -> ClusterSnapshot:
        deadline = self.clock() + self.options.election_timeout_s
        while True:
            live = self.reader.topics(topics)
            if not live.preferred_election_requests:
                return live
            if self.clock() >= deadline:
                raise RemediationFailed(
                    f"plan {self.plan.plan_id}: /admin/preferred_replica_election still lists "
                    f"{tp_text(live.preferred_election_requests)} after {self.options.election_timeout_s:g}s: "
                    "is the controller alive?"
                )
            self.sleep(self.options.poll_s)

    def _wait_for_leaders(self, partitions: list[TopicPartition], topics: set[str]) -> None:
        """Until each partition is led by its preferred replica, or the election timeout (the final
        verification then names the partitions that were not)."""
        deadline = self.clock() + self.options.election_timeout_s
        while partitions:
            live = self.reader.topics(topics)
            if all(_leader(live, tp) == self._preferred(tp) for tp in partitions) or self.clock() >= deadline:
                return
            self.sleep(self.options.poll_s)

    # -- verification and throttles -------------------------------------------------------------------

    def _verify_plan(self, refused: dict[TopicPartition, str]) -> None:
        topics = {m.topic for m in self.plan.reassignments} | {e.topic for e in self.plan.elections}
        live = self.reader.topics(topics)
        moving = in_flight(live)
        problems = []
        for tp, m in self.moves.items():
            replicas = assigned(live, tp)
            if tp in moving or replicas != m.target:
                problems.append(f"{tp[0]}-{tp[1]} has replicas {list(replicas or ())}, planned {list(m.target)}")
        for tp in self.elections:
            leader, preferred = _leader(live, tp), self._preferred(tp)
            if leader != preferred:
                why = f" ({refused[tp]})" if tp in refused else ""
                problems.append(f"{tp[0]}-{tp[1]} is led by {leader}, planned {preferred}{why}")
        if problems:
            detail = "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else "")
            self.audit.record("verify", "failed", partitions=len(problems), detail=detail)
            raise RemediationFailed(f"plan {self.plan.plan_id} did not end as planned: {detail}")
        self.audit.record(
            "verify",
            "ok",
            partitions=len(self.moves) + len(self.elections),
            detail="final assignment and leaders equal the plan",
        )

    def remove_throttles_locked(self) -> bool:
        p = self.progress
        if not p.throttled_topics and not p.throttled_brokers:
            return True
        live = self.reader.full()
        moving = {**self.backend.reassignments_in_flight(), **in_flight(live)}
        if moving:
            self.audit.record(
                "remove_throttle",
                "kept",
                partitions=len(moving),
                detail=f"a reassignment is still in flight ({tp_text(moving)}): the throttles stay until "
                f"it finishes; then remove them with {clear_command(self.plan.cluster, self.plan.plan_id)}",
            )
            return False
        topics = {t: (LEADER_THROTTLED, FOLLOWER_THROTTLED) for t in p.throttled_topics if t in live.topics}
        brokers = {b: broker_throttles(self.plan.kind) for b in p.throttled_brokers}
        detail = f"brokers {sorted(brokers)}, topics {sorted(topics)}"
        try:
            self.backend.delete_configs(topics, brokers)
        except KafkaOpsError as e:
            self.audit.record("remove_throttle", "failed", detail=f"{e}; {detail}")
            raise
        self.audit.record("remove_throttle", "ok", detail=detail)
        p.throttled_topics, p.throttled_brokers = [], []
        self._save()
        return True

    # -- leftover throttles ---------------------------------------------------------------------------

    def clear_throttles(self, dry_run: bool) -> ThrottleReport:
        self.stops_on_cancel = False
        try:
            with self._writing():
                return self._clear_throttles_locked(dry_run)
        except RemediationRefused as e:
            if not dry_run:
                self.audit.record("refuse", "refused", detail=str(e))
            raise

    def _clear_throttles_locked(self, dry_run: bool) -> ThrottleReport:
        stored = read_progress(self.lake, self.plan.cluster, self.plan.plan_id)
        plan_id = self.plan.plan_id
        if not self.config.writes_enabled and not dry_run:
            raise RemediationRefused(plan_id, "writes enabled", f"writes are disabled for cluster {self.config.name!r}")
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
        live = self.reader.full()
        moving = {**self.backend.reassignments_in_flight(), **in_flight(live)}
        ours = sorted(tp for tp in self.moves if tp in moving)
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
            self.backend.delete_configs(dict.fromkeys(plan.topics, TOPIC_THROTTLES), dict.fromkeys(plan.brokers, keys))
        except KafkaOpsError as e:
            self.audit.record("remove_throttle", "failed", detail=f"{e}; {detail}")
            raise
        self.audit.record("remove_throttle", "ok", detail=detail)
        stored.throttled_topics = [t for t in stored.throttled_topics if t not in plan.topics and t in live.topics]
        stored.throttled_brokers = [b for b in stored.throttled_brokers if b not in plan.brokers]
        self._save()
        return report

    # -- cancel ---------------------------------------------------------------------------------------

    def cancel(self, wait_s: float) -> CancelReport:
        self.stops_on_cancel = False
        refusal = cancel_refusal(self.plan.plan_id, self.progress, self.config)
        if refusal is not None:
            self.audit.record("refuse", "refused", detail=str(refusal))
            raise refusal
        # before the plan is marked: a back end that cannot cancel refuses with nothing changed
        cancelled = self._cancel_ours()
        self._mark_cancelled()
        deadline = self.clock() + wait_s
        still: list[TopicPartition] = []
        # until none of ours has been in flight for a poll interval after the mark: a run executing
        # the plan checks the mark before each submit, so at most one batch can slip in, and is cancelled
        quiet_since: float | None = None
        while self.moves:
            cancelled |= self._cancel_ours()
            moving = in_flight(self.reader.topics({t for t, _ in self.moves}))
            still = sorted(tp for tp in self.moves if tp in moving)
            now = self.clock()
            if still:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            if (quiet_since is not None and now - quiet_since >= self.options.poll_s) or now >= deadline:
                break
            self.sleep(self.options.poll_s)
        removed = self._remove_throttles()
        p = self.progress  # as marked, with the throttles removed
        stored = read_progress(self.lake, p.cluster, p.plan_id)
        if stored is not None:  # the executing run's batch states are newer than this run's
            p.batches, p.elections = stored.batches, stored.elections
        self._save()
        report = CancelReport(
            self.plan.plan_id,
            self.plan.cluster,
            [f"{t}-{q}" for t, q in sorted(cancelled)],
            [f"{t}-{q}" for t, q in still],
            [],
            removed,
            "",
        )
        self._report_live(report, p)
        return report

    def _report_live(self, report: CancelReport, p: Progress) -> None:
        """Where each planned move stands on the cluster now, and the batches whose every partition is
        at its target (completed, whatever the progress document says: its executor may have died
        before it noted the batch done)."""
        live = self.reader.topics({t for t, _ in self.moves}) if self.moves else None
        status: dict[TopicPartition, str] = {}
        if live is not None:
            moving = in_flight(live)
            status = {tp: classify(m, live, moving) for tp, m in self.moves.items()}
        names: dict[str, list[str]] = {}
        for (t, q), kind in sorted(status.items()):
            names.setdefault(kind, []).append(f"{t}-{q}")
        report.at_target = names.get("target", [])
        report.not_started = names.get("base", [])
        report.elsewhere = [*names.get("elsewhere", []), *names.get("other_in_flight", []), *names.get("missing", [])]
        report.batches_applied = [
            s.index for s in p.batches if s.partitions and all(status.get(tp) == "target" for tp in s.partitions)
        ]
        report.note = (
            f"{len(report.at_target)} partition(s) reached their target ({', '.join(report.at_target[:10])}); "
            f"batches {report.batches_applied} completed. They stay applied: the plan's rollback.json puts them back"
            if report.at_target
            else "no partition of the plan reached its target: the cluster is as before the plan"
        )

    def _cancel_ours(self) -> set[TopicPartition]:
        """Cancel the plan's moves now in flight towards their targets; returns them."""
        if not self.moves:
            return set()
        live = self.reader.topics({t for t, _ in self.moves})
        ours = moving_as_planned(self.moves.values(), {**self.backend.reassignments_in_flight(), **in_flight(live)})
        if not ours:
            return set()
        try:
            refused = self.backend.cancel(ours)
        except RemediationRefused as e:
            refusal = RemediationRefused(self.plan.plan_id, e.check, e.problem)
            self.audit.record("cancel", "refused", partitions=len(ours), detail=str(refusal))
            raise refusal from e
        self.audit.record(
            "cancel",
            "partial" if refused else "ok",
            partitions=len(ours),
            detail=tp_text(ours) + (f"; refused: {_reasons(refused)}" if refused else ""),
        )
        return set(ours)

    def _mark_cancelled(self) -> None:
        """Store the `cancelled` status, on the latest stored progress (another run may be executing), under
        the progress lock: an executing run's check-and-write happens wholly before or after it."""
        with self._writing():
            p = read_progress(self.lake, self.plan.cluster, self.plan.plan_id) or self.progress
            p.status = "cancelled"
            p.message = f"cancelled by {self.label} at {now()}"
            self.progress = p
            self._save()


def cancel_refusal(plan_id: str, progress: Progress | None, config: ClusterConfig) -> RemediationRefused | None:
    """Why `cancel` refuses before it reads the cluster (None: it goes ahead)."""
    if progress is not None and progress.status == "done":
        return RemediationRefused(
            plan_id, "cancel", "the plan already completed; to undo it, apply its rollback.json as a new plan"
        )
    if not config.writes_enabled:
        return RemediationRefused(plan_id, "writes enabled", f"writes are disabled for cluster {config.name!r}")
    return None


def _leader(live: ClusterSnapshot, tp: TopicPartition) -> int:
    state = live.partition_states.get(tp)
    return -1 if state is None else state.leader


def _reasons(refused: dict[TopicPartition, str]) -> str:
    return "; ".join(f"{t}-{p}: {why}" for (t, p), why in sorted(refused.items())[:10])
