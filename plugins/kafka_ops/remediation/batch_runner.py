"""The run loop both executors share: a plan's batches applied one at a time, resumable, cancellable,
audited, with the throttles removed at the end. An executor (`reassignment` for reassignments and
elections, `log_dir_moves` for moves between log dirs) subclasses `BatchRun` and supplies only what
differs: its preflight, how a batch is decided on a fresh read of the cluster, its throttle, its
write, how a batch's progress is read, and how its throttles are removed. Its base, `PlanRun`, is
what every run that writes to a plan's cluster shares, the executions and also a cancel or a cleanup
of throttles (`cancellation`, `throttle_removal`): the audit, the progress document under the plan's
progress lock, and the cancel mark.

`BatchRun.execute(trusted)`:

1. A plan already `done` answers `already_done`, an empty one `nothing_to_do`. The plan is stored
   (`store.save_plan`, idempotent), so that even a refusal's audit row names a plan one can look up;
   then the executor's preflight: a `RemediationRefused` is a `refuse` audit row, nothing is written.
2. The progress document says `running` (the run's label appended to `runs`).
3. Each batch not yet `done` (the split is fixed on the first run): stop if the plan was cancelled;
   the executor decides on a fresh read (`decide`): submit what is still at its base, wait for a batch
   already in flight (never resubmitted), or mark done a batch already applied (`resume` audit row).
   A submit is one compare-and-set against `cancel` (`writing`): throttle (recorded before it is
   written), step `submitting`, the write, step `submitted`. Then the batch is polled until complete;
   no change in its progress signature for `stuck_after_s` is `ReassignmentStuck` (a `wait stuck` row;
   the batch stays in flight with its throttles, a later run resumes waiting). The cancel mark is read
   at every poll. A complete batch is a `verify ok` row and `done`.
4. The executor's work after the batches (`after_batches`: elections, the plan's verification), then
   `done`.
5. Always: a failure is stored as `stuck` (`ReassignmentStuck`) or `failed` with its message; the
   throttles are removed unless the executor says a copy still needs them; the progress is saved. A
   cleanup failure never hides the error that ended the run. A `PlanCancelled` run writes nothing
   more: the cancel owns the plan, its status and message stay.

Every progress save takes the plan's progress lock and re-reads the stored status first, so a cancel
(which marks the plan under the same lock) is never overwritten by a run still executing.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, Literal, TypeVar

from kafka_ops.errors import (
    ConfigError,
    KafkaOpsError,
    PlanCancelled,
    ReassignmentStuck,
    RemediationRefused,
)
from kafka_ops.lake.store import Lake
from kafka_ops.planning.plan import Plan
from kafka_ops.remediation.plan_silence import PlanSilence
from kafka_ops.remediation.preflight import TrustCheck
from kafka_ops.remediation.progress import Action, Progress, Step
from kafka_ops.remediation.store import AuditLog, progress_lock, read_progress, save_plan, write_progress

log = logging.getLogger(__name__)

SILENCE_MARGIN = timedelta(minutes=10)
"""How much longer than `stuck_after_s` an execution's silence lasts unrenewed (`plan_silence`)."""

MoveT = TypeVar("MoveT")


@dataclass(frozen=True)
class ExecutionOptions:
    """How the executor paces itself; every field is validated (a `ConfigError` names it).

    `throttle_bytes_per_s`: the replication throttle per broker (None: no throttle).
    `stuck_after_s` must exceed the time to copy the largest moving partition at the throttled
    rate: only ISR and assignment changes count as progress, not bytes copied.
    `controller_quiet_s`: refuse when the controller changed more recently than this.
    `allow_offline`: run even though some partitions are offline.
    """

    batch_max_partitions: int = 10
    batch_max_moves_per_broker: int = 5
    throttle_bytes_per_s: int | None = 50_000_000
    stuck_after_s: float = 900.0
    poll_s: float = 5.0
    election_batch_size: int = 100
    election_timeout_s: float = 60.0
    controller_quiet_s: float = 300.0
    allow_offline: bool = False

    def __post_init__(self) -> None:
        for name in ("batch_max_partitions", "batch_max_moves_per_broker", "election_batch_size"):
            _positive_int(name, getattr(self, name))
        if self.throttle_bytes_per_s is not None:
            _positive_int("throttle_bytes_per_s", self.throttle_bytes_per_s)
        for name in ("stuck_after_s", "poll_s", "election_timeout_s"):
            _number(name, getattr(self, name), allow_zero=False)
        _number("controller_quiet_s", self.controller_quiet_s, allow_zero=True)
        if not isinstance(self.allow_offline, bool):
            raise ConfigError(f"allow_offline must be true or false, got {self.allow_offline!r}")


@dataclass
class ExecutionReport:
    """What one run did; `summary()` is small enough for XCom."""

    plan_id: str
    cluster: str
    status: Literal["done", "already_done", "nothing_to_do"]
    batches: int = 0
    submitted: list[int] = field(default_factory=list)
    resumed: list[int] = field(default_factory=list)
    election_chunks_submitted: list[int] = field(default_factory=list)
    elections_refused: dict[str, str] = field(default_factory=dict)
    throttles_removed: bool = False
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class BatchDecision(Generic[MoveT]):
    """What to do with one batch now (the executor's resume rule): `submit` the moves in `todo`, `wait`
    for the batch already in flight, or `mark_done` a batch already applied; `reason` is the `resume`
    row's detail."""

    action: Action
    todo: tuple[MoveT, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class BatchPoll:
    """One read of a submitted batch: `complete`, else a `signature` that changes whenever the batch
    progresses and `waiting`, what it still waits for (the `wait stuck` row's detail)."""

    complete: bool
    signature: object = None
    waiting: str = ""


class PlanRun(ABC):
    """A run on one plan that may write to its cluster: its audit, its progress document (read, or the
    plan split by `new_progress` on its first run) saved under the plan's progress lock, and the cancel
    mark. An execution (`BatchRun`) stops when another run cancelled the plan; a run that is not
    executing (a cancel, a cleanup of throttles) sets `stops_on_cancel` False."""

    stops_on_cancel: bool = True

    def __init__(
        self,
        plan: Plan,
        *,
        lake: Lake,
        backend_name: str,
        actor: str,
        run_id: str | None,
        options: ExecutionOptions,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        if not isinstance(actor, str) or not actor.strip():
            raise ConfigError(f"actor must name who runs the executor (Airflow user or DAG run), got {actor!r}")
        self.plan = plan
        self.lake = lake
        self.options = options
        self.clock = clock
        self.sleep = sleep
        self.actor = actor
        self.label = actor if run_id is None else f"{actor} ({run_id})"
        self.audit = AuditLog(lake, plan, backend_name, actor, run_id)
        self.progress: Progress = read_progress(lake, plan.cluster, plan.plan_id) or self.new_progress()
        self._locked = False

    @abstractmethod
    def new_progress(self) -> Progress:
        """The plan split into steps, on its first run."""

    # -- the progress document and the cancel mark ---------------------------------------------------

    @contextmanager
    def writing(self, step: Step | None = None) -> Iterator[None]:
        """Hold the plan's progress lock and stop (`PlanCancelled`) if the stored status is cancelled:
        the check and whatever runs inside (progress saves, one write to the cluster) are one
        compare-and-set against `cancel`, which marks the plan under the same lock. Re-entrant."""
        if self._locked:
            yield
            return
        with progress_lock(self.lake, self.plan.cluster, self.plan.plan_id):
            self._locked = True
            try:
                self.stop_if_cancelled(step)
                yield
            finally:
                self._locked = False

    def save(self) -> None:
        with self.writing():
            write_progress(self.lake, self.progress)

    def stop_if_cancelled(self, step: Step | None = None) -> None:
        """Raise `PlanCancelled` when another run cancelled the plan: its stored status says so."""
        if not self.stops_on_cancel:
            return
        stored = read_progress(self.lake, self.plan.cluster, self.plan.plan_id)
        if stored is None or stored.status != "cancelled":
            return
        self.progress.status, self.progress.message = stored.status, stored.message
        where = "" if step is None else f" before batch {step.index} was done"
        self.audit.record("stop", "cancelled", batch=None if step is None else step.index, detail=stored.message or "")
        raise PlanCancelled(f"plan {self.plan.plan_id} was cancelled{where} ({stored.message}); this run stopped")


class BatchRun(PlanRun, Generic[MoveT]):
    """One execution of an executor on one plan (see the module docstring). A subclass sets what its
    hooks need, then calls `__init__`, which reads the stored progress or splits the plan
    (`new_progress`)."""

    verified: str = ""
    """The `verify ok` row's detail: what a complete batch means."""

    def __init__(
        self,
        plan: Plan,
        *,
        lake: Lake,
        backend_name: str,
        actor: str,
        run_id: str | None,
        options: ExecutionOptions,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        super().__init__(plan, lake=lake, backend_name=backend_name, actor=actor, run_id=run_id, options=options,
                         clock=clock, sleep=sleep)  # fmt: skip
        self.started = clock()
        self.silence = PlanSilence(plan, lake.root, actor, timedelta(seconds=options.stuck_after_s) + SILENCE_MARGIN)
        self.report = ExecutionReport(plan.plan_id, plan.cluster, "done", batches=len(self.progress.batches))

    # -- what each executor supplies ----------------------------------------------------------------

    @abstractmethod
    def preflight(self, trusted: TrustCheck) -> None:
        """Every check before the first write; `RemediationRefused` refuses (audited by the runner)."""

    @abstractmethod
    def decide(self, step: Step) -> BatchDecision[MoveT]:
        """The resume rule for `step` on a fresh read; a refusal is audited here and raised."""

    @abstractmethod
    def set_throttles(self, step: Step, todo: Sequence[MoveT]) -> None:
        """Throttle the batch's copies: recorded in the progress (saved) before they are written."""

    @abstractmethod
    def write(self, step: Step, todo: Sequence[MoveT]) -> None:
        """Submit the batch to the cluster, and audit the write."""

    @abstractmethod
    def poll(self, step: Step) -> BatchPoll:
        """Where the batch stands now; raises when it can no longer complete."""

    @abstractmethod
    def stuck(self, step: Step, waiting: str) -> ReassignmentStuck:
        """The error for a batch that made no progress for `stuck_after_s`."""

    @abstractmethod
    def remove_throttles_locked(self) -> bool:
        """Remove the throttles the plan set, unless a copy still needs them; True when none is left."""

    def before_batches(self) -> None:
        """The executor's work before its first batch, after the preflight (nothing by default)."""

    def after_batches(self) -> None:
        """The executor's work once every batch is done (nothing by default)."""

    # -- the run ------------------------------------------------------------------------------------

    def execute(self, trusted: TrustCheck) -> ExecutionReport:
        if self.progress.status == "done":
            self.report.status = "already_done"
            return self.report
        if self.plan.is_empty:
            self.report.status = "nothing_to_do"
            return self.report
        # stored first, so that even a refusal's audit row names a plan one can look up
        save_plan(self.lake, self.plan, created_by=self.actor)
        try:
            self.preflight(trusted)
        except RemediationRefused as e:
            self.audit.record("refuse", "refused", detail=str(e))
            raise
        self.progress.status = "running"
        self.progress.message = None
        self.progress.runs.append(self.label)
        self.save()
        error: BaseException | None = None
        self.silence.start()
        try:
            self.before_batches()
            for step in self.progress.batches:
                self._batch(step)
            self.after_batches()
            self.progress.status = "done"
        except PlanCancelled as e:  # the cancelling run's status and message stay
            error = e
            raise
        except BaseException as e:  # recorded in the progress document, then re-raised as is
            error = e
            self.progress.status = "stuck" if isinstance(e, ReassignmentStuck) else "failed"
            self.progress.message = f"{type(e).__name__}: {e}"
            raise
        finally:
            self.silence.end()
            self._finish(error)
        self.report.seconds = round(self.clock() - self.started, 3)
        return self.report

    def _batch(self, step: Step) -> None:
        if step.state == "done":
            return
        self.stop_if_cancelled(step)
        decision = self.decide(step)
        if decision.action == "submit":
            with self.writing(step):
                self._submit_locked(step, decision.todo)
            self.report.submitted.append(step.index)
        else:
            outcome = "in_flight" if decision.action == "wait" else "already_applied"
            self.audit.record(
                "resume", outcome, batch=step.index, partitions=len(step.partitions), detail=decision.reason
            )
            self.report.resumed.append(step.index)
        self._wait(step)
        self.audit.record("verify", "ok", batch=step.index, partitions=len(step.partitions), detail=self.verified)
        step.state = "done"
        step.done_at = now()
        self.save()

    def _submit_locked(self, step: Step, todo: Sequence[MoveT]) -> None:
        self.set_throttles(step, todo)
        step.state = "submitting"
        step.submitted_by = self.label
        self.save()
        self.write(step, todo)
        step.state = "submitted"
        step.submitted_at = now()
        self.save()

    def _wait(self, step: Step) -> None:
        """Poll until the batch is complete; `ReassignmentStuck` after `stuck_after_s` without progress."""
        signature: object = None
        changed_at = self.clock()
        while True:
            polled = self.poll(step)
            if polled.complete:
                return
            if polled.signature != signature:
                signature, changed_at = polled.signature, self.clock()
            elif self.clock() - changed_at >= self.options.stuck_after_s:
                self.audit.record(
                    "wait", "stuck", batch=step.index, partitions=len(step.partitions), detail=polled.waiting
                )
                raise self.stuck(step, polled.waiting)
            self.sleep(self.options.poll_s)
            self.silence.renew()
            self.stop_if_cancelled(step)

    def _finish(self, error: BaseException | None) -> None:
        """Remove throttles when allowed, and always save the progress; a cleanup failure never hides
        the error that ended the run. A cancelled run writes nothing: the cancel owns the plan now."""
        if isinstance(error, PlanCancelled):
            return
        try:
            self.report.throttles_removed = self._remove_throttles()
        except KafkaOpsError as e:
            if error is None:
                raise
            log.error("plan %s: could not remove the throttles after %r: %s", self.plan.plan_id, error, e)
        finally:
            self.save()

    def _remove_throttles(self) -> bool:
        """Remove every throttle this execution set, unless a copy still needs it. True when none is left."""
        with self.writing():
            return self.remove_throttles_locked()


def now() -> str:
    """The wall time a step changed state, as the progress document stores it."""
    return datetime.now(UTC).isoformat()


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")


def _number(name: str, value: object, *, allow_zero: bool) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or (value == 0 and not allow_zero)
    ):
        raise ConfigError(f"{name} must be a number {'>= 0' if allow_zero else '> 0'} (seconds), got {value!r}")
