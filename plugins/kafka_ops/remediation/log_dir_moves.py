"""Apply a `log_dir_balance` plan: replicas moved between a broker's log dirs (AlterReplicaLogDirs).

The same gates as the reassignment executor (`reassignment`): the plan is stored first; a refusal is an
audit row and writes nothing: writes enabled for the cluster, the plan not cancelled
(`preflight.check_offline_config`), its base snapshot trusted (`check_trusted`), and, on a fresh
DescribeLogDirs of the plan's brokers, every replica where the plan found it (or already moving to, or
in, its target dir) and every target dir healthy.

Then batch by batch (`ExecutionOptions.batch_max_partitions` moves, a replica at most once per batch;
the split is fixed on the first run and stored in the progress document): the throttle
`replica.alter.log.dirs.io.max.bytes.per.second` (`ExecutionOptions.throttle_bytes_per_s`) is set on
the batch's brokers (recorded before it is written), the moves still at their source dir are submitted
(`kafka-python`'s `alter_replica_log_dirs`), and the executor waits until DescribeLogDirs shows each
replica in its target dir with no future replica left (verified). A step is `submitting` before the
write and `submitted` after, as in `progress`; on a rerun each move is read live:

| live state of a move                                    | decision                                  |
|---------------------------------------------------------|-------------------------------------------|
| in its target dir, no future replica                    | done (no write)                           |
| in its source dir, a future replica in its target dir   | wait (never resubmitted)                  |
| in its source dir, no future replica, step not submitted| submit                                    |
| in its source dir, no future replica, step submitted    | refuse: the copy was dropped (a restart?) |
| elsewhere, gone, or its target dir in error             | refuse: the broker changed since the plan |

The run loop is the reassignment executor's (`batch_runner`): resumable from the progress document,
audited, and cancellable. No progress (a future replica's size and lag unchanged) for `stuck_after_s` is
`ReassignmentStuck` (a `wait stuck` audit row); the copy stays in flight with its throttle, and a later
run resumes waiting. At the end, and on failure, the throttle is removed unless a move of the plan is
still copying.

`cancellation.cancel` marks the plan cancelled: a running execution stops with `PlanCancelled` before its
next batch, its next save or at its next poll, and writes nothing more (the plan stays cancelled, never
resumed). The cancel removes this throttle (`backends.broker_throttles`), as `clear_throttles` does;
neither can stop a copy already running (Kafka has no way to cancel a move between log dirs short of
moving the replica back) nor sees it as in flight, so a copy still running goes on unthrottled.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from kafka.errors import KafkaError

from kafka_ops.errors import KafkaOpsError, ReassignmentStuck, RemediationFailed, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.plan import DirMove, Plan
from kafka_ops.remediation.backends import ALTER_LOG_DIRS_THROTTLE, AdminApiBackend
from kafka_ops.remediation.batch_runner import BatchDecision, BatchPoll, BatchRun, ExecutionOptions, ExecutionReport
from kafka_ops.remediation.preflight import TrustCheck, check_offline_config, check_trusted
from kafka_ops.remediation.progress import Progress, Step
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources import log_dirs

MoveState = Literal["target", "moving", "base", "elsewhere"]
Replica = tuple[str, int, int]
"""(topic, partition, broker)."""


@dataclass(frozen=True)
class LiveDirs:
    """Where each replica of the plan's brokers is now: its dir, its future replica's dir and progress."""

    current: dict[Replica, str]
    future: dict[Replica, tuple[str, int, int | None]]
    """Replica → (dir, size, offset lag) of its future replica."""
    failed_dirs: set[tuple[int, str]]

    def state(self, m: DirMove) -> MoveState:
        key = (m.topic, m.partition, m.broker)
        current, future = self.current.get(key), self.future.get(key)
        if (m.broker, m.target_dir) in self.failed_dirs:
            return "elsewhere"
        if current == m.target_dir and future is None:
            return "target"
        if current == m.source_dir and future is None:
            return "base"
        if current == m.source_dir and future is not None and future[0] == m.target_dir:
            return "moving"
        return "elsewhere"

    def where(self, m: DirMove) -> str:
        key = (m.topic, m.partition, m.broker)
        future = self.future.get(key)
        failed = " (its target dir is in error)" if (m.broker, m.target_dir) in self.failed_dirs else ""
        return (f"{m.topic}-{m.partition} on broker {m.broker} is in {self.current.get(key) or 'no dir'}"
                f"{f', a future replica in {future[0]}' if future else ''}{failed}; planned {m.source_dir} -> "
                f"{m.target_dir}")  # fmt: skip


def read_live_dirs(backend: AdminApiBackend, brokers: Iterable[int], timeout_ms: int = 30_000) -> LiveDirs:
    """DescribeLogDirs of `brokers` now, through the back end's Admin client (`sources.log_dirs`)."""
    admin = backend.admin
    try:
        answers = admin._manager.run(lambda: log_dirs.send(admin, brokers, timeout_ms))
    except KafkaError as e:
        raise RemediationFailed(f"DescribeLogDirs failed for brokers {sorted(brokers)}: {e!r}") from e
    current: dict[Replica, str] = {}
    future: dict[Replica, tuple[str, int, int | None]] = {}
    failed: set[tuple[int, str]] = set()
    for broker, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            raise RemediationFailed(f"broker {broker} did not describe its log dirs: {type(answer).__name__}: {answer}")
        dirs, sizes, _ = log_dirs.parse_answer(broker, answer)
        failed |= {(broker, d.path) for d in dirs if d.error is not None}
        for r in sizes:
            key = (r.topic, r.partition, r.broker_id)
            if r.is_future:
                future[key] = (r.log_dir, r.size_bytes, r.offset_lag)
            else:
                current[key] = r.log_dir
    return LiveDirs(current, future, failed)


def split_dir_moves(moves: Sequence[DirMove], batch_size: int) -> list[list[DirMove]]:
    """Batches of at most `batch_size` moves in plan order, each moving a partition at most once (a
    progress step lists partitions); a partition's moves on several brokers keep their plan order."""
    batches: list[list[DirMove]] = []
    for m in moves:
        tp = (m.topic, m.partition)
        i = 0
        while i < len(batches) and (len(batches[i]) >= batch_size or any((d.topic, d.partition) == tp
                                                                          for d in batches[i])):  # fmt: skip
            i += 1
        if i == len(batches):
            batches.append([])
        batches[i].append(m)
    return batches


def execute_dir_moves(
    plan: Plan,
    *,
    lake: Lake,
    cluster_config: ClusterConfig,
    backend: AdminApiBackend,
    actor: str,
    trusted: TrustCheck,
    options: ExecutionOptions | None = None,
    run_id: str | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> ExecutionReport:
    """Apply `plan`'s moves between log dirs (see the module docstring)."""
    run = _DirRun(plan, lake=lake, config=cluster_config, backend=backend, actor=actor, run_id=run_id,
                  options=options or ExecutionOptions(), clock=clock, sleep=sleep)  # fmt: skip
    return run.execute(trusted)


class _DirRun(BatchRun[DirMove]):
    """One run on one log dir balance plan: the shared run loop (`batch_runner`) with AlterReplicaLogDirs
    batches."""

    verified = "every replica in its target log dir, no future replica left"

    def __init__(
        self,
        plan: Plan,
        *,
        lake: Lake,
        config: ClusterConfig,
        backend: AdminApiBackend,
        actor: str,
        run_id: str | None,
        options: ExecutionOptions,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        if plan.kind != "log_dir_balance":
            raise RemediationRefused(plan.plan_id, "plan kind", f"a {plan.kind} plan is not a log dir balance")
        self.config, self.backend = config, backend
        self.brokers = sorted({m.broker for m in plan.dir_moves})
        super().__init__(plan, lake=lake, backend_name="admin_api", actor=actor, run_id=run_id, options=options,
                         clock=clock, sleep=sleep)  # fmt: skip
        self.moves = self._moves_of()

    def new_progress(self) -> Progress:
        batches = split_dir_moves(self.plan.dir_moves, self.options.batch_max_partitions)
        steps = [Step(i, tuple((m.topic, m.partition) for m in b)) for i, b in enumerate(batches)]
        return Progress(self.plan.plan_id, self.plan.cluster, "admin_api", steps, [])

    def _moves_of(self) -> dict[int, list[DirMove]]:
        """Each step's moves: the k-th time a partition appears in the steps is its k-th move in the plan."""
        left: dict[TopicPartition, list[DirMove]] = {}
        for m in self.plan.dir_moves:
            left.setdefault((m.topic, m.partition), []).append(m)
        out: dict[int, list[DirMove]] = {}
        for step in self.progress.batches:
            out[step.index] = [left[tp].pop(0) for tp in step.partitions]
        return out

    # -- the batch runner's hooks -------------------------------------------------------------------

    def preflight(self, trusted: TrustCheck) -> None:
        check_offline_config(self.plan, self.config, self.progress)
        check_trusted(self.plan, self.lake, trusted)
        self._check_live(read_live_dirs(self.backend, self.brokers))

    def _check_live(self, live: LiveDirs) -> None:
        drifted = [live.where(m) for m in self.plan.dir_moves if live.state(m) == "elsewhere"]
        if drifted:
            raise RemediationRefused(
                self.plan.plan_id,
                "log dirs as planned",
                "; ".join(drifted[:10]) + f"{' ...' if len(drifted) > 10 else ''}: make a new plan",
            )

    def decide(self, step: Step) -> BatchDecision[DirMove]:
        """The resume rule of the module docstring's table."""
        moves = self.moves[step.index]
        live = read_live_dirs(self.backend, {m.broker for m in moves})
        self._check_live_step(step, moves, live)
        todo = tuple(m for m in moves if live.state(m) == "base")
        if todo and step.state == "submitted":
            detail = "; ".join(live.where(m) for m in todo[:10])
            self.audit.record("refuse", "refused", batch=step.index, partitions=len(todo), detail=detail)
            raise RemediationRefused(
                self.plan.plan_id,
                "submitted once",
                f"batch {step.index} was submitted, but {detail}: the broker dropped the copy (a restart, a dir "
                "failure?); it is never submitted twice: make a new plan",
            )
        if todo:
            return BatchDecision("submit", todo)
        return BatchDecision("wait" if any(live.state(m) == "moving" for m in moves) else "mark_done")

    def _check_live_step(self, step: Step, moves: list[DirMove], live: LiveDirs) -> None:
        drifted = [live.where(m) for m in moves if live.state(m) == "elsewhere"]
        if drifted:
            detail = "; ".join(drifted[:10])
            self.audit.record("refuse", "refused", batch=step.index, partitions=len(drifted), detail=detail)
            raise RemediationRefused(self.plan.plan_id, "log dirs as planned", f"{detail}: make a new plan")

    def write(self, step: Step, todo: Sequence[DirMove]) -> None:
        request = {(m.topic, m.partition, m.broker): m.target_dir for m in todo}
        detail = json.dumps({f"{t}-{p}@{b}": d for (t, p, b), d in request.items()})
        try:
            answer = self.backend.admin.alter_replica_log_dirs(request)
        except KafkaError as e:
            self.audit.record("alter_log_dirs", "failed", batch=step.index, partitions=len(todo), detail=detail)
            raise RemediationFailed(f"plan {self.plan.plan_id}: AlterReplicaLogDirs failed: {e!r}") from e
        refused = {f"{k.topic}-{k.partition}@{k.broker_id}": e.__name__ for k, e in answer.items()
                   if e.__name__ != "NoError"}  # fmt: skip
        missing = set(request) - {(k.topic, k.partition, k.broker_id) for k in answer}
        refused |= {f"{t}-{p}@{b}": "no answer from the broker" for t, p, b in missing}
        if refused:
            self.audit.record("alter_log_dirs", "failed", batch=step.index, partitions=len(todo),
                              detail=json.dumps(refused))  # fmt: skip
            raise RemediationFailed(f"plan {self.plan.plan_id} batch {step.index}: the brokers refused {refused}")
        self.audit.record("alter_log_dirs", "ok", batch=step.index, partitions=len(todo), detail=detail)

    def set_throttles(self, step: Step, todo: Sequence[DirMove]) -> None:
        rate = self.options.throttle_bytes_per_s
        if rate is None:
            return
        brokers = {m.broker for m in todo}
        self.progress.throttled_brokers = sorted(set(self.progress.throttled_brokers) | brokers)
        self.save()  # recorded before it is written: a crash never leaves a throttle nobody knows about
        detail = f"{ALTER_LOG_DIRS_THROTTLE}={rate} on brokers {sorted(brokers)}"
        try:
            self.backend.set_configs({}, {b: {ALTER_LOG_DIRS_THROTTLE: str(rate)} for b in brokers})
        except KafkaOpsError as e:
            self.audit.record("set_throttle", "failed", detail=f"{e}; {detail}")
            raise
        self.audit.record("set_throttle", "ok", detail=detail)

    def poll(self, step: Step) -> BatchPoll:
        """Complete when every move is in its target dir with no future replica; progress is a future
        replica's size or lag changing."""
        moves = self.moves[step.index]
        live = read_live_dirs(self.backend, {m.broker for m in moves})
        states = {m: live.state(m) for m in moves}
        if all(s == "target" for s in states.values()):
            return BatchPoll(complete=True)
        lost = [live.where(m) for m, s in states.items() if s in ("elsewhere", "base")]
        if lost:
            raise RemediationFailed(f"plan {self.plan.plan_id} batch {step.index}: {'; '.join(lost[:10])}")
        signature = sorted((m.topic, m.partition, m.broker, live.future.get((m.topic, m.partition, m.broker)))
                           for m in moves)  # fmt: skip
        moving = [live.where(m) for m, s in states.items() if s == "moving"]
        return BatchPoll(False, signature, "; ".join(moving[:5]))

    def stuck(self, step: Step, waiting: str) -> ReassignmentStuck:
        return ReassignmentStuck(
            f"plan {self.plan.plan_id} batch {step.index}: no copy progressed for "
            f"{self.options.stuck_after_s:g}s ({waiting}); it stays in flight with its "
            "throttle: run again to keep waiting"
        )

    def remove_throttles_locked(self) -> bool:
        brokers = self.progress.throttled_brokers
        if not brokers:
            return True
        live = read_live_dirs(self.backend, brokers)
        copying = [live.where(m) for m in self.plan.dir_moves if live.state(m) == "moving"]
        if copying:
            self.audit.record("remove_throttle", "kept", partitions=len(copying),
                              detail=f"still copying: {'; '.join(copying[:5])}")  # fmt: skip
            return False
        detail = f"{ALTER_LOG_DIRS_THROTTLE} on brokers {brokers}"
        try:
            self.backend.delete_configs({}, dict.fromkeys(brokers, (ALTER_LOG_DIRS_THROTTLE,)))
        except KafkaOpsError as e:
            self.audit.record("remove_throttle", "failed", detail=f"{e}; {detail}")
            raise
        self.audit.record("remove_throttle", "ok", detail=detail)
        self.progress.throttled_brokers = []
        return True
