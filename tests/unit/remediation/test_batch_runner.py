"""The run loop both executors share (`batch_runner`), driven by a fake batch executor over an in-memory
cluster: the rules the reassignment and the log dir executors both follow (resume without repeating a
batch, cancel, stuck, failure) checked on their own, with a real lake for progress and audit. The two
executors themselves run against the sandboxes (tests/integration/test_remediation_sandbox.py,
test_log_dirs_jbod_sandbox.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_ops.alerting.dispatch import DispatchReport, dispatch
from kafka_ops.alerting.log_sink import LogNotifier
from kafka_ops.alerting.silence_store import silences_of
from kafka_ops.errors import KafkaOpsError, PlanCancelled, ReassignmentStuck, RemediationFailed, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning import Plan
from kafka_ops.problems.leaders import LEADER_IMBALANCE
from kafka_ops.problems.partitions import UNDER_REPLICATED
from kafka_ops.remediation.batch_runner import BatchDecision, BatchPoll, BatchRun, ExecutionOptions
from kafka_ops.remediation.preflight import TrustCheck
from kafka_ops.remediation.progress import Progress, Step
from kafka_ops.remediation.store import progress_lock, read_audit, read_progress, write_progress
from tests.unit.alerting.alerts import broker_down
from tests.unit.remediation.clusters import rf2_plan

Hook = Callable[["FakeRun", Step], None]


@dataclass
class FakeCluster:
    """Each partition `base`, `moving` or `target`; a moving one reaches its target after `polls_to_copy`
    polls (None: never). The `on_*` hooks let a test crash or cancel at a chosen point (`on_write` runs
    under the progress lock, as the write does: a cancel there would wait for it)."""

    state: dict[TopicPartition, str]
    polls_to_copy: int | None = 1
    writes: list[tuple[int, tuple[TopicPartition, ...]]] = field(default_factory=list)
    throttled: bool = False
    polls: int = 0
    on_write: Hook | None = None
    on_complete: Hook | None = None
    on_decide: Hook | None = None
    on_poll: Hook | None = None
    fail_throttle_removal: bool = False


class FakeRun(BatchRun[TopicPartition]):
    """Batches of two partitions; its resume rule is the real executors' (progress.decide's table)."""

    verified = "every partition at its target"

    def __init__(self, plan: Plan, lake: Lake, cluster: FakeCluster, clock: list[float]) -> None:
        self.cluster = cluster
        self.now = clock
        super().__init__(plan, lake=lake, backend_name="admin_api", actor="pytest", run_id="run-1",
                         options=ExecutionOptions(stuck_after_s=10, poll_s=1), clock=lambda: clock[0],
                         sleep=self._sleep)  # fmt: skip

    def _sleep(self, seconds: float) -> None:
        self.now[0] += seconds

    def new_progress(self) -> Progress:
        tps = [(m.topic, m.partition) for m in self.plan.reassignments]
        steps = [Step(i // 2, tuple(tps[i : i + 2])) for i in range(0, len(tps), 2)]
        return Progress(self.plan.plan_id, self.plan.cluster, "admin_api", steps, [])

    def preflight(self, trusted: TrustCheck) -> None:
        trusted(self.lake, self.plan.cluster, self.plan.snapshot_id)

    def decide(self, step: Step) -> BatchDecision[TopicPartition]:
        if self.cluster.on_decide is not None:
            self.cluster.on_decide(self, step)
        states = [self.cluster.state[tp] for tp in step.partitions]
        base = tuple(tp for tp in step.partitions if self.cluster.state[tp] == "base")
        if "moving" in states:
            return BatchDecision("wait", reason="in flight")
        if not base:
            return BatchDecision("mark_done", reason="at target")
        if step.state == "submitted":
            raise RemediationRefused(self.plan.plan_id, "never apply a batch twice", f"batch {step.index}")
        return BatchDecision("submit", base)

    def set_throttles(self, step: Step, todo: Sequence[TopicPartition]) -> None:
        self.progress.throttled_brokers = [1]
        self.save()
        self.cluster.throttled = True

    def write(self, step: Step, todo: Sequence[TopicPartition]) -> None:
        self.cluster.writes.append((step.index, tuple(todo)))
        for tp in todo:
            self.cluster.state[tp] = "moving"
        self.audit.record("reassign", "ok", batch=step.index, partitions=len(todo))
        if self.cluster.on_write is not None:
            self.cluster.on_write(self, step)

    def poll(self, step: Step) -> BatchPoll:
        self.cluster.polls += 1
        if self.cluster.on_poll is not None:
            self.cluster.on_poll(self, step)
        if self.cluster.polls_to_copy is not None and self.cluster.polls >= self.cluster.polls_to_copy:
            for tp in step.partitions:
                self.cluster.state[tp] = "target"
        if all(self.cluster.state[tp] == "target" for tp in step.partitions):
            if self.cluster.on_complete is not None:
                self.cluster.on_complete(self, step)
            return BatchPoll(complete=True)
        return BatchPoll(False, "no change", "orders: copying")

    def stuck(self, step: Step, waiting: str) -> ReassignmentStuck:
        return ReassignmentStuck(f"batch {step.index} stuck ({waiting})")

    def remove_throttles_locked(self) -> bool:
        if not self.progress.throttled_brokers:
            return True
        if "moving" in self.cluster.state.values():
            self.audit.record("remove_throttle", "kept")
            return False
        if self.cluster.fail_throttle_removal:
            raise KafkaOpsError("the brokers refused the config change")
        self.cluster.throttled = False
        self.progress.throttled_brokers = []
        self.audit.record("remove_throttle", "ok")
        return True


class Crash(BaseException):
    """The process dying mid-batch (what a kill would interrupt; the runner's cleanup still runs)."""


def trusted(*_: object) -> None:
    return None


@pytest.fixture
def plan() -> Plan:
    return rf2_plan()  # orders-0..3: two batches of two


def fresh(plan: Plan) -> FakeCluster:
    return FakeCluster({(m.topic, m.partition): "base" for m in plan.reassignments})


def run(plan: Plan, lake: Lake, cluster: FakeCluster) -> FakeRun:
    return FakeRun(plan, lake, cluster, [1000.0])


def actions(lake: Lake, plan: Plan) -> list[tuple[int | None, str, str]]:
    return [(r["batch"], r["action"], r["outcome"]) for r in read_audit(lake, plan.cluster, plan.plan_id)]


def stored(lake: Lake, plan: Plan) -> Progress:
    progress = read_progress(lake, plan.cluster, plan.plan_id)
    assert progress is not None
    return progress


def cancel_now(r: FakeRun, _: Step) -> None:
    """What `cancellation.cancel` does to the progress document, from another process: under the lock."""
    with progress_lock(r.lake, r.plan.cluster, r.plan.plan_id):
        p = stored(r.lake, r.plan)
        p.status, p.message = "cancelled", "cancelled by pytest-cancel"
        write_progress(r.lake, p)


def test_a_plan_runs_batch_by_batch_then_removes_its_throttles(plan: Plan, lake: Lake) -> None:
    cluster = fresh(plan)

    report = run(plan, lake, cluster).execute(trusted)

    assert (report.status, report.batches, report.submitted, report.resumed) == ("done", 2, [0, 1], [])
    assert report.throttles_removed and not cluster.throttled
    assert cluster.writes == [(0, (("orders", 0), ("orders", 1))), (1, (("orders", 2), ("orders", 3)))]
    assert actions(lake, plan) == [(0, "reassign", "ok"), (0, "verify", "ok"), (1, "reassign", "ok"),
                                   (1, "verify", "ok"), (None, "remove_throttle", "ok")]  # fmt: skip
    progress = stored(lake, plan)
    assert progress.status == "done" and progress.runs == ["pytest (run-1)"]
    assert all(s.state == "done" and s.submitted_at and s.done_at and s.submitted_by for s in progress.batches)
    assert run(plan, lake, cluster).execute(trusted).status == "already_done"


def test_a_refused_preflight_is_audited_and_writes_nothing(plan: Plan, lake: Lake) -> None:
    def untrusted(*_: object) -> None:
        raise RemediationRefused(plan.plan_id, "base snapshot trusted", "not validated")

    cluster = fresh(plan)
    with pytest.raises(RemediationRefused, match="not validated"):
        run(plan, lake, cluster).execute(untrusted)

    assert cluster.writes == [] and actions(lake, plan) == [(None, "refuse", "refused")]
    assert read_progress(lake, plan.cluster, plan.plan_id) is None


def test_a_run_that_crashed_mid_batch_resumes_without_writing_the_batch_again(plan: Plan, lake: Lake) -> None:
    """Killed right after batch 1's write reached the cluster: the step says `submitting`. The next run
    skips batch 0, finds batch 1 in flight and waits for it: every batch written exactly once."""
    cluster = fresh(plan)

    def crash_at_batch_1(r: FakeRun, step: Step) -> None:
        if step.index == 1:
            raise Crash

    cluster.on_write = crash_at_batch_1
    with pytest.raises(Crash):
        run(plan, lake, cluster).execute(trusted)
    died = stored(lake, plan)
    assert died.status == "failed" and [s.state for s in died.batches] == ["done", "submitting"]
    assert died.throttled_brokers == [1] and cluster.throttled  # batch 1 still copying: the throttle stays

    cluster.on_write = None
    report = run(plan, lake, cluster).execute(trusted)

    assert (report.status, report.submitted, report.resumed) == ("done", [], [1])
    assert [index for index, _ in cluster.writes] == [0, 1]
    resumed = [(1, "resume", "in_flight"), (1, "verify", "ok"), (None, "remove_throttle", "ok")]
    assert actions(lake, plan)[-3:] == resumed
    assert stored(lake, plan).status == "done" and not cluster.throttled


def test_a_batch_already_applied_is_marked_done_without_a_write(plan: Plan, lake: Lake) -> None:
    cluster = fresh(plan)
    cluster.state.update({("orders", 0): "target", ("orders", 1): "target"})

    report = run(plan, lake, cluster).execute(trusted)

    assert (report.submitted, report.resumed) == ([1], [0])
    assert [index for index, _ in cluster.writes] == [1]
    assert actions(lake, plan)[0] == (0, "resume", "already_applied")


def test_a_cancel_between_batches_stops_the_run_before_the_next_write(plan: Plan, lake: Lake) -> None:
    """The cancel lands as batch 0 completes: the run stops at its next save, writes no further batch, no
    progress and no throttle change (the cancel owns the plan), and the plan stays cancelled."""
    cluster = fresh(plan)
    cluster.on_complete = cancel_now

    with pytest.raises(PlanCancelled, match=rf"plan {plan.plan_id} was cancelled \(cancelled by pytest-cancel\)"):
        run(plan, lake, cluster).execute(trusted)

    assert [index for index, _ in cluster.writes] == [0]
    after = stored(lake, plan)
    assert (after.status, after.message) == ("cancelled", "cancelled by pytest-cancel")
    assert [s.state for s in after.batches] == ["submitted", "pending"]  # nothing saved after the cancel
    assert actions(lake, plan)[-2:] == [(0, "verify", "ok"), (None, "stop", "cancelled")]
    assert cluster.throttled  # left to the cancel, which removes them


def test_a_cancel_after_the_batch_check_stops_the_run_before_its_write(plan: Plan, lake: Lake) -> None:
    """The race the progress lock closes: the cancel lands after the run checked batch 1 and decided to
    submit it; the check under the lock stops the run before the throttle or the write."""
    cluster = fresh(plan)

    def cancel_at_batch_1(r: FakeRun, step: Step) -> None:
        if step.index == 1:
            cancel_now(r, step)

    cluster.on_decide = cancel_at_batch_1
    with pytest.raises(PlanCancelled, match=rf"plan {plan.plan_id} was cancelled before batch 1 was done"):
        run(plan, lake, cluster).execute(trusted)

    assert [index for index, _ in cluster.writes] == [0]
    assert stored(lake, plan).status == "cancelled"
    assert actions(lake, plan)[-1] == (1, "stop", "cancelled")


def test_a_cancel_while_waiting_is_seen_at_the_next_poll(plan: Plan, lake: Lake) -> None:
    cluster = fresh(plan)
    cluster.polls_to_copy = None
    cluster.on_poll = cancel_now

    with pytest.raises(PlanCancelled, match="before batch 0 was done"):
        run(plan, lake, cluster).execute(trusted)

    assert cluster.polls == 1 and stored(lake, plan).status == "cancelled"


def test_a_cancelled_plan_is_never_resumed(plan: Plan, lake: Lake) -> None:
    """The runner leaves the refusal to the executor's preflight (`check_offline_config`); it stops on
    its own, at its first save, if a preflight lets a cancelled plan through."""
    cluster = fresh(plan)
    cluster.on_complete = cancel_now
    with pytest.raises(PlanCancelled):
        run(plan, lake, cluster).execute(trusted)
    cluster.on_complete = None

    with pytest.raises(PlanCancelled, match=r"was cancelled \(cancelled by pytest-cancel\); this run stopped"):
        run(plan, lake, cluster).execute(trusted)

    assert [index for index, _ in cluster.writes] == [0] and actions(lake, plan)[-1] == (None, "stop", "cancelled")
    assert stored(lake, plan).status == "cancelled" and stored(lake, plan).runs == ["pytest (run-1)"]


def test_a_batch_that_never_verifies_is_stuck_and_a_later_run_keeps_waiting(plan: Plan, lake: Lake) -> None:
    cluster = fresh(plan)
    cluster.polls_to_copy = None
    r = run(plan, lake, cluster)

    with pytest.raises(ReassignmentStuck, match=r"batch 0 stuck \(orders: copying\)"):
        r.execute(trusted)

    assert r.now[0] == 1010.0  # stuck after exactly stuck_after_s without a change, not a poll later
    after = stored(lake, plan)
    assert (after.status, [s.state for s in after.batches]) == ("stuck", ["submitted", "pending"])
    assert after.message == "ReassignmentStuck: batch 0 stuck (orders: copying)"
    assert actions(lake, plan)[-2:] == [(0, "wait", "stuck"), (None, "remove_throttle", "kept")]
    assert after.throttled_brokers == [1] and cluster.throttled

    cluster.polls_to_copy = cluster.polls + 1
    report = run(plan, lake, cluster).execute(trusted)

    assert (report.status, report.submitted, report.resumed) == ("done", [1], [0])
    assert [index for index, _ in cluster.writes] == [0, 1] and not cluster.throttled


def test_a_failed_write_leaves_a_resumable_state(plan: Plan, lake: Lake) -> None:
    cluster = fresh(plan)

    def refuse_batch_1(r: FakeRun, step: Step) -> None:
        if step.index == 1:
            for tp in step.partitions:
                cluster.state[tp] = "base"  # the brokers refused it: nothing moved
            raise RemediationFailed(f"plan {r.plan.plan_id} batch 1: the brokers refused it")

    cluster.on_write = refuse_batch_1
    with pytest.raises(RemediationFailed, match="batch 1: the brokers refused it"):
        run(plan, lake, cluster).execute(trusted)
    failed = stored(lake, plan)
    assert failed.status == "failed" and failed.message is not None and "the brokers refused it" in failed.message
    assert [s.state for s in failed.batches] == ["done", "submitting"] and not cluster.throttled

    cluster.on_write = None
    report = run(plan, lake, cluster).execute(trusted)

    assert (report.status, report.submitted) == ("done", [1])
    assert [index for index, _ in cluster.writes] == [0, 1, 1]  # batch 0 never again; batch 1 once applied
    assert stored(lake, plan).runs == ["pytest (run-1)", "pytest (run-1)"]


def test_a_batch_undone_after_its_submission_is_refused_not_resubmitted(plan: Plan, lake: Lake) -> None:
    cluster = fresh(plan)
    cluster.polls_to_copy = None
    with pytest.raises(ReassignmentStuck):
        run(plan, lake, cluster).execute(trusted)
    cluster.state.update({("orders", 0): "base", ("orders", 1): "base"})  # cancelled by hand meanwhile

    with pytest.raises(RemediationRefused, match="never apply a batch twice"):
        run(plan, lake, cluster).execute(trusted)

    assert [index for index, _ in cluster.writes] == [0] and stored(lake, plan).status == "failed"


def test_a_throttle_removal_failure_never_hides_the_error_that_ended_the_run(plan: Plan, lake: Lake) -> None:
    cluster = fresh(plan)
    cluster.fail_throttle_removal = True

    def fail(r: FakeRun, step: Step) -> None:
        for tp in step.partitions:
            cluster.state[tp] = "base"
        raise RemediationFailed("the write failed")

    cluster.on_write = fail
    with pytest.raises(RemediationFailed, match="the write failed"):
        run(plan, lake, cluster).execute(trusted)
    assert stored(lake, plan).message == "RemediationFailed: the write failed"

    cluster.on_write = None
    with pytest.raises(KafkaOpsError, match="the brokers refused the config change"):
        run(plan, lake, cluster).execute(trusted)  # alone, the cleanup's failure is the run's error


def test_while_a_plan_executes_what_it_causes_on_its_own_partitions_is_silenced_and_nothing_else(
    plan: Plan, lake: Lake, tmp_path: Path
) -> None:
    """The execution holds a silence over its own partitions' under-replication and its brokers' leader
    imbalance (`plan_silence`), ended when it stops, however it stops; a broker down during the plan, and
    under-replication on other partitions, still page."""
    out = tmp_path / "oncall.jsonl"
    seen: list[DispatchReport] = []
    partitions = tuple((m.topic, m.partition) for m in plan.reassignments)

    def page(r: FakeRun, _: Step) -> None:
        urp = broker_down(cluster=plan.cluster, key=UNDER_REPLICATED, topics=("orders",), partitions=partitions)
        elsewhere = broker_down(cluster=plan.cluster, key=UNDER_REPLICATED, topics=("orders", "audit"),
                                partitions=(*partitions, ("audit", 0)))  # fmt: skip
        imbalance = broker_down(cluster=plan.cluster, key=LEADER_IMBALANCE, brokers=(1, 2))
        dead = broker_down(cluster=plan.cluster, key="no_broker_down", brokers=(1,))
        for alerts in ([urp, imbalance, dead], [elsewhere]):
            seen.append(dispatch(plan.cluster, alerts, datetime.now(UTC), lake_root=lake.root,
                                 notifiers=[LogNotifier("log", out)], reminder=timedelta(hours=1)))  # fmt: skip

    cluster = fresh(plan)
    cluster.polls_to_copy, cluster.on_poll = 2, page
    run(plan, lake, cluster).execute(trusted)

    assert (seen[0].silenced, seen[0].opened) == ((LEADER_IMBALANCE, UNDER_REPLICATED), ("no_broker_down",))
    assert seen[1].opened == (UNDER_REPLICATED,)  # a partition outside the plan: pages
    (silence,) = silences_of(lake.root, plan.cluster)
    assert silence.plan_id == plan.plan_id and silence.partitions == tuple(sorted(partitions))
    assert not silence.active(datetime.now(UTC)) and silence.ended_by == f"plan {plan.plan_id}"

    # a run that dies mid-plan ends its silence too; one that resumes sets a new one
    again = dataclasses.replace(rf2_plan(), plan_id="00000000000000aa")
    cluster = fresh(again)

    def crash(r: FakeRun, step: Step) -> None:
        assert [s.active(datetime.now(UTC)) for s in silences_of(lake.root, again.cluster)] == [False, True]
        raise Crash

    cluster.on_write = crash
    with pytest.raises(Crash):
        run(again, lake, cluster).execute(trusted)
    assert not any(s.active(datetime.now(UTC)) for s in silences_of(lake.root, again.cluster))
