"""The plan's preferred-leader elections, in chunks, after its reassignments (`reassignment`).

Only the partitions of a chunk not already led by their preferred replica are asked for, once no
election is pending; the run then waits until each is led by its preferred replica or the election
timeout passes (the plan's final verification names those that were not). Each chunk's election is
one write under the plan's progress lock, audited, and its step is `done` afterwards, so a resumed
run never elects a chunk twice.
"""

from __future__ import annotations

from typing import Any

from kafka_ops.errors import KafkaOpsError, RemediationFailed, RemediationRefused
from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition, tp_text
from kafka_ops.planning.plan import Election
from kafka_ops.remediation.batch_runner import BatchRun, now
from kafka_ops.remediation.progress import Step
from kafka_ops.remediation.run_context import RunContext, leader, reasons


def elect_all(run: BatchRun[Any], ctx: RunContext) -> dict[TopicPartition, str]:
    """Every election chunk of `run`'s progress not yet done; returns the partitions the cluster
    refused, with why."""
    refused: dict[TopicPartition, str] = {}
    for chunk in run.progress.elections:
        refused.update(_Chunk(run, ctx, chunk).elect())
    return refused


class _Chunk:
    """One chunk of elections within an execution (its lock, progress, audit and report)."""

    def __init__(self, run: BatchRun[Any], ctx: RunContext, step: Step) -> None:
        self.run, self.ctx, self.step = run, ctx, step

    def elect(self) -> dict[TopicPartition, str]:
        """Elect the chunk's partitions not yet led by their preferred replica; returns the refused."""
        run, ctx, step = self.run, self.ctx, self.step
        if step.state == "done":
            return {}
        run.stop_if_cancelled()
        chosen: list[Election] = [ctx.elections[tp] for tp in step.partitions]
        topics = {e.topic for e in chosen}
        live = self._wait_for_no_pending_election(topics)
        todo = [tp for tp in step.partitions if leader(live, tp) != ctx.preferred(tp)]
        refused: dict[TopicPartition, str] = {}
        if not todo:
            outcome = "not_needed" if step.state == "pending" else "already_applied"
            run.audit.record(
                "resume" if step.state != "pending" else "elect",
                outcome,
                batch=step.index,
                partitions=len(chosen),
                detail="every partition is led by its preferred replica",
            )
        else:
            with run.writing(step):
                refused = self._submit_locked(todo)
            self._wait_for_leaders([tp for tp in todo if tp not in refused], topics)
        step.state = "done"
        step.done_at = now()
        run.save()
        return refused

    def _submit_locked(self, todo: list[TopicPartition]) -> dict[TopicPartition, str]:
        run, step = self.run, self.step
        step.state = "submitting"
        step.submitted_by = run.label
        run.save()
        try:
            refused = self.ctx.backend.elect_preferred(todo)
        except RemediationRefused as e:
            refusal = RemediationRefused(run.plan.plan_id, e.check, e.problem)
            run.audit.record("elect", "refused", batch=step.index, partitions=len(todo), detail=str(refusal))
            raise refusal from e
        except KafkaOpsError as e:
            run.audit.record("elect", "failed", batch=step.index, partitions=len(todo), detail=str(e))
            raise
        detail = tp_text(todo) + (f"; refused: {reasons(refused)}" if refused else "")
        outcome = "partial" if refused else "ok"
        run.audit.record("elect", outcome, batch=step.index, partitions=len(todo), detail=detail)
        run.report.election_chunks_submitted.append(step.index)
        step.state = "submitted"
        step.submitted_at = now()
        run.save()
        return refused

    def _wait_for_no_pending_election(self, topics: set[str]) -> ClusterSnapshot:
        ctx = self.ctx
        deadline = ctx.clock() + ctx.options.election_timeout_s
        while True:
            live = ctx.reader.topics(topics)
            if not live.preferred_election_requests:
                return live
            if ctx.clock() >= deadline:
                raise RemediationFailed(
                    f"plan {ctx.plan.plan_id}: /admin/preferred_replica_election still lists "
                    f"{tp_text(live.preferred_election_requests)} after {ctx.options.election_timeout_s:g}s: "
                    "is the controller alive?"
                )
            ctx.sleep(ctx.options.poll_s)

    def _wait_for_leaders(self, partitions: list[TopicPartition], topics: set[str]) -> None:
        """Until each partition is led by its preferred replica, or the election timeout (the final
        verification then names the partitions that were not)."""
        ctx = self.ctx
        deadline = ctx.clock() + ctx.options.election_timeout_s
        while partitions:
            live = ctx.reader.topics(topics)
            if all(leader(live, tp) == ctx.preferred(tp) for tp in partitions) or ctx.clock() >= deadline:
                return
            ctx.sleep(ctx.options.poll_s)
