"""Apply a `log_dir_balance` plan: replicas moved between a broker's log dirs (AlterReplicaLogDirs).

The same gates as the reassignment executor (`executor`): the plan is stored first; a refusal is an
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

No progress (a future replica's size and lag unchanged) for `stuck_after_s` is `ReassignmentStuck`;
the copy stays in flight with its throttle, and a later run resumes waiting. At the end, and on
failure, the throttle is removed unless a move of the plan is still copying.

`executor.cancel` marks the plan cancelled (a running execution submits no further batch) and removes
this throttle (`backends.broker_throttles`), as `clear_throttles` does; neither can stop a copy already
running (Kafka has no way to cancel a move between log dirs short of moving the replica back) nor sees
it as in flight, so a copy still running goes on unthrottled.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kafka.errors import KafkaError

from kafka_ops.errors import KafkaOpsError, ReassignmentStuck, RemediationFailed, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.planning.plan import DirMove, Plan
from kafka_ops.remediation.backends import ALTER_LOG_DIRS_THROTTLE, AdminApiBackend
from kafka_ops.remediation.executor import ExecutionOptions, ExecutionReport
from kafka_ops.remediation.preflight import TrustCheck, check_offline_config, check_trusted
from kafka_ops.remediation.progress import Progress, Step
from kafka_ops.remediation.store import AuditLog, progress_lock, read_progress, save_plan, write_progress
from kafka_ops.settings import ClusterConfig
from kafka_ops.snapshot.model import TopicPartition
from kafka_ops.sources import log_dirs

log = logging.getLogger(__name__)

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


class _DirRun:
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
        self.plan, self.lake, self.config, self.backend, self.options = plan, lake, config, backend, options
        self.clock, self.sleep = clock, sleep
        self.label = actor if run_id is None else f"{actor} ({run_id})"
        self.audit = AuditLog(lake, plan, "admin_api", actor, run_id)
        self.brokers = sorted({m.broker for m in plan.dir_moves})
        self.started = clock()
        self.progress = read_progress(lake, plan.cluster, plan.plan_id) or self._new_progress()
        self.report = ExecutionReport(plan.plan_id, plan.cluster, "done", batches=len(self.progress.batches))

    def _new_progress(self) -> Progress:
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

    def _save(self) -> None:
        write_progress(self.lake, self.progress)

    def execute(self, trusted: TrustCheck) -> ExecutionReport:
        if self.progress.status == "done":
            self.report.status = "already_done"
            return self.report
        if not self.plan.dir_moves:
            self.report.status = "nothing_to_do"
            return self.report
        save_plan(self.lake, self.plan, created_by=self.label)
        try:
            check_offline_config(self.plan, self.config, self.progress)
            check_trusted(self.plan, self.lake, trusted)
            self._check_live(read_live_dirs(self.backend, self.brokers))
        except RemediationRefused as e:
            self.audit.record("refuse", "refused", detail=str(e))
            raise
        self.progress.status, self.progress.message = "running", None
        self.progress.runs.append(self.label)
        self._save()
        error: BaseException | None = None
        try:
            for step in self.progress.batches:
                self._batch(step, self._moves_of()[step.index])
            self.progress.status = "done"
        except BaseException as e:
            error = e
            self.progress.status = "stuck" if isinstance(e, ReassignmentStuck) else "failed"
            self.progress.message = f"{type(e).__name__}: {e}"
            raise
        finally:
            self._finish(error)
        self.report.seconds = round(self.clock() - self.started, 3)
        return self.report

    def _check_live(self, live: LiveDirs) -> None:
        drifted = [live.where(m) for m in self.plan.dir_moves if live.state(m) == "elsewhere"]
        if drifted:
            raise RemediationRefused(
                self.plan.plan_id,
                "log dirs as planned",
                "; ".join(drifted[:10]) + f"{' ...' if len(drifted) > 10 else ''}: make a new plan",
            )

    def _batch(self, step: Step, moves: list[DirMove]) -> None:
        if step.state == "done":
            return
        live = read_live_dirs(self.backend, {m.broker for m in moves})
        self._check_live_step(step, moves, live)
        todo = [m for m in moves if live.state(m) == "base"]
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
            self._submit(step, todo)
            self.report.submitted.append(step.index)
        else:
            self.report.resumed.append(step.index)
            self.audit.record("resume", "in_flight" if any(live.state(m) == "moving" for m in moves) else
                              "already_applied", batch=step.index, partitions=len(moves))  # fmt: skip
        self._wait(step, moves)
        self.audit.record("verify", "ok", batch=step.index, partitions=len(moves),
                          detail="every replica in its target log dir, no future replica left")  # fmt: skip
        step.state = "done"
        self._save()

    def _check_live_step(self, step: Step, moves: list[DirMove], live: LiveDirs) -> None:
        drifted = [live.where(m) for m in moves if live.state(m) == "elsewhere"]
        if drifted:
            detail = "; ".join(drifted[:10])
            self.audit.record("refuse", "refused", batch=step.index, partitions=len(drifted), detail=detail)
            raise RemediationRefused(self.plan.plan_id, "log dirs as planned", f"{detail}: make a new plan")

    def _submit(self, step: Step, todo: list[DirMove]) -> None:
        with progress_lock(self.lake, self.plan.cluster, self.plan.plan_id):
            stored = read_progress(self.lake, self.plan.cluster, self.plan.plan_id)
            check_offline_config(self.plan, self.config, stored)  # cancelled or writes disabled meanwhile
            self._set_throttle({m.broker for m in todo})
            step.state, step.submitted_by = "submitting", self.label
            self._save()
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
            step.state = "submitted"
            self._save()

    def _set_throttle(self, brokers: set[int]) -> None:
        rate = self.options.throttle_bytes_per_s
        if rate is None:
            return
        self.progress.throttled_brokers = sorted(set(self.progress.throttled_brokers) | brokers)
        self._save()  # recorded before it is written: a crash never leaves a throttle nobody knows about
        detail = f"{ALTER_LOG_DIRS_THROTTLE}={rate} on brokers {sorted(brokers)}"
        try:
            self.backend.set_configs({}, {b: {ALTER_LOG_DIRS_THROTTLE: str(rate)} for b in brokers})
        except KafkaOpsError as e:
            self.audit.record("set_throttle", "failed", detail=f"{e}; {detail}")
            raise
        self.audit.record("set_throttle", "ok", detail=detail)

    def _wait(self, step: Step, moves: list[DirMove]) -> None:
        """Until every move is in its target dir with no future replica; stuck when nothing changes."""
        seen: Any = None
        since = self.clock()
        brokers = {m.broker for m in moves}
        while True:
            live = read_live_dirs(self.backend, brokers)
            states = {m: live.state(m) for m in moves}
            if all(s == "target" for s in states.values()):
                return
            lost = [live.where(m) for m, s in states.items() if s in ("elsewhere", "base")]
            if lost:
                raise RemediationFailed(f"plan {self.plan.plan_id} batch {step.index}: {'; '.join(lost[:10])}")
            now_seen = sorted((m.topic, m.partition, m.broker, live.future.get((m.topic, m.partition, m.broker)))
                              for m in moves)  # fmt: skip
            if now_seen != seen:
                seen, since = now_seen, self.clock()
            elif self.clock() - since > self.options.stuck_after_s:
                moving = [live.where(m) for m, s in states.items() if s == "moving"]
                raise ReassignmentStuck(
                    f"plan {self.plan.plan_id} batch {step.index}: no copy progressed for "
                    f"{self.options.stuck_after_s:g}s ({'; '.join(moving[:5])}); it stays in flight with its "
                    "throttle: run again to keep waiting"
                )
            self.sleep(self.options.poll_s)

    def _finish(self, error: BaseException | None) -> None:
        try:
            self.report.throttles_removed = self._remove_throttle()
        except KafkaOpsError as e:
            if error is None:
                raise
            log.error("plan %s: could not remove the throttle after %r: %s", self.plan.plan_id, error, e)
        finally:
            self._save()

    def _remove_throttle(self) -> bool:
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
