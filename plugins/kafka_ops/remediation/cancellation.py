"""Cancelling a plan: its moves in flight stopped, the plan marked so it is never resumed, its
throttles removed and the cordons it set lifted (`cordons`).

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
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_ops.errors import RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import TopicPartition, tp_text
from kafka_ops.remediation.backends import Backend
from kafka_ops.remediation.batch_runner import ExecutionOptions, now
from kafka_ops.remediation.cordons import uncordon_recorded
from kafka_ops.remediation.live import LiveSource, classify, in_flight, moving_as_planned
from kafka_ops.remediation.progress import Progress
from kafka_ops.remediation.run_context import ContextRun, RunContext, live_source, reasons
from kafka_ops.remediation.store import load_plan, read_progress
from kafka_ops.remediation.throttle_removal import remove_plan_throttles
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget


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
    ctx = RunContext(plan, lake, cluster_config, backend, live_source(plan, zookeeper, reader), actor, run_id,
                     ExecutionOptions(poll_s=poll_s), clock, sleep)  # fmt: skip
    return _CancelRun(ctx).cancel(wait_s)


class _CancelRun(ContextRun):
    """A cancel of one plan: under the plan's progress lock, never stopped by the mark it sets."""

    stops_on_cancel = False

    def cancel(self, wait_s: float) -> CancelReport:
        refusal = cancel_refusal(self.plan.plan_id, self.progress, self.ctx.config)
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
        while self.ctx.moves:
            cancelled |= self._cancel_ours()
            moving = in_flight(self.ctx.reader.topics({t for t, _ in self.ctx.moves}))
            still = sorted(tp for tp in self.ctx.moves if tp in moving)
            now = self.clock()
            if still:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            if (quiet_since is not None and now - quiet_since >= self.options.poll_s) or now >= deadline:
                break
            self.sleep(self.options.poll_s)
        with self.writing():
            removed = remove_plan_throttles(self, self.ctx)
            uncordon_recorded(self, self.ctx)
        p = self.progress  # as marked, with the throttles removed
        stored = read_progress(self.lake, p.cluster, p.plan_id)
        if stored is not None:  # the executing run's batch states are newer than this run's
            p.batches, p.elections = stored.batches, stored.elections
        self.save()
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
        live = self.ctx.reader.topics({t for t, _ in self.ctx.moves}) if self.ctx.moves else None
        status: dict[TopicPartition, str] = {}
        if live is not None:
            moving = in_flight(live)
            status = {tp: classify(m, live, moving) for tp, m in self.ctx.moves.items()}
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
        if not self.ctx.moves:
            return set()
        ctx = self.ctx
        live = ctx.reader.topics({t for t, _ in ctx.moves})
        ours = moving_as_planned(ctx.moves.values(), {**ctx.backend.reassignments_in_flight(), **in_flight(live)})
        if not ours:
            return set()
        try:
            refused = self.ctx.backend.cancel(ours)
        except RemediationRefused as e:
            refusal = RemediationRefused(self.plan.plan_id, e.check, e.problem)
            self.audit.record("cancel", "refused", partitions=len(ours), detail=str(refusal))
            raise refusal from e
        self.audit.record(
            "cancel",
            "partial" if refused else "ok",
            partitions=len(ours),
            detail=tp_text(ours) + (f"; refused: {reasons(refused)}" if refused else ""),
        )
        return set(ours)

    def _mark_cancelled(self) -> None:
        """Store the `cancelled` status, on the latest stored progress (another run may be executing), under
        the progress lock: an executing run's check-and-write happens wholly before or after it."""
        with self.writing():
            p = read_progress(self.lake, self.plan.cluster, self.plan.plan_id) or self.progress
            p.status = "cancelled"
            p.message = f"cancelled by {self.label} at {now()}"
            self.progress = p
            self.save()


def cancel_refusal(plan_id: str, progress: Progress | None, config: ClusterConfig) -> RemediationRefused | None:
    """Why `cancel` refuses before it reads the cluster (None: it goes ahead)."""
    if progress is not None and progress.status == "done":
        return RemediationRefused(
            plan_id, "cancel", "the plan already completed; to undo it, apply its rollback.json as a new plan"
        )
    if not config.writes_enabled:
        return RemediationRefused(plan_id, "writes enabled", f"writes are disabled for cluster {config.name!r}")
    return None
