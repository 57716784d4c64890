"""The remediation executor against the real sandbox: real brokers, real data, real failures.

Every test calls the executor directly (the DAGs drive the same functions). The base snapshot's
validation is stubbed (`validated`): integrity validation has its own tests. The controller
quiet period is 0 (the session sandbox, and the broker kills here, change the controller all
the time), except in the refusal that tests it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kafka import TopicPartition
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.cli import main as cli_main
from kafka_ops.detectors import idle_throttles
from kafka_ops.errors import PlanCancelled, ReassignmentStuck, RemediationRefused, SnapshotUntrusted
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import Plan, plan_decommission, plan_preferred_election, plan_replication_factor
from kafka_ops.planning.plan_rollback import plan_rollback
from kafka_ops.remediation import (
    AdminApiBackend,
    Backend,
    ExecutionOptions,
    ZooKeeperBackend,
    cancel,
    clear_throttles,
    execute,
    load_plan,
    plan_dir,
    progress_path,
    read_audit,
    read_progress,
    save_plan,
)
from kafka_ops.remediation import reassignment as reassignment_module
from kafka_ops.settings import ClusterConfig, RemediationBackend
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.integrity import validate_snapshot
from sandbox import SandboxCluster
from tests.integration.background import Background
from tests.integration.kafka_data import (
    admin_for,
    consume_all,
    create_topic,
    produce,
    throttle_configs,
    throttles_settled,
)

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CLUSTER = "sandbox"  # the name SandboxCluster.snapshot() gives its snapshots
FAST = ExecutionOptions(poll_s=0.3, controller_quiet_s=0, throttle_bytes_per_s=20_000_000, stuck_after_s=60)


def validated(lake: Lake, cluster: str, snapshot_id: str) -> None:
    """Stands in for `kafka_ops.validation.integrity.require_trusted`: every base is trusted."""


# -- helpers ----------------------------------------------------------------------------------------


def zk_target(sandbox: SandboxCluster) -> ZooKeeperTarget:
    return ZooKeeperTarget(sandbox.zookeeper_hosts, sandbox.chroot, timeout_s=5)


def backend_of(sandbox: SandboxCluster, kind: RemediationBackend) -> Backend:
    if kind == "zookeeper":
        return ZooKeeperBackend(zk_target(sandbox))
    return AdminApiBackend(KafkaTarget(sandbox.bootstrap_servers, {"request_timeout_ms": 10_000}))


def settings(kind: RemediationBackend, writes_enabled: bool = True) -> ClusterConfig:
    return ClusterConfig(CLUSTER, writes_enabled=writes_enabled, remediation_backend=kind)


def run(
    sandbox: SandboxCluster,
    plan: Plan,
    lake: Lake,
    kind: RemediationBackend,
    options: ExecutionOptions = FAST,
    **overrides: Any,
) -> Any:
    backend = backend_of(sandbox, kind)
    arguments: dict[str, Any] = {
        "lake": lake,
        "cluster_config": settings(kind),
        "backend": backend,
        "zookeeper": zk_target(sandbox),
        "actor": "pytest",
        "run_id": "test-run",
        "trusted": validated,
        "options": options,
        **overrides,
    }
    try:
        return execute(plan, **arguments)
    finally:
        backend.close()


def wait(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.1)


def only_topics(snap: ClusterSnapshot, topics: set[str]) -> ClusterSnapshot:
    """The snapshot restricted to `topics` (same id): what a planner scoped to them would see."""
    return replace(
        snap,
        topics={t: a for t, a in snap.topics.items() if t in topics},
        partition_states={tp: s for tp, s in snap.partition_states.items() if tp[0] in topics},
        reassignment_requests=[r for r in snap.reassignment_requests if r.topic in topics],
    )


def actions(lake: Lake, plan: Plan) -> list[tuple[int | None, str, str]]:
    return [(r["batch"], r["action"], r["outcome"]) for r in read_audit(lake, CLUSTER, plan.plan_id)]


@pytest.fixture
def sandbox_ready(healthy_sandbox: SandboxCluster) -> Iterator[SandboxCluster]:
    """The healthy session sandbox; any throttle left on a broker by a failed test is removed after."""
    yield healthy_sandbox
    backend = backend_of(healthy_sandbox, "zookeeper")
    try:
        backend.delete_configs(
            {},
            {
                b: ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
                for b in healthy_sandbox.broker_ids()
            },
        )
    finally:
        backend.close()


# -- the cases ------------------------------------------------------------------------------


def test_tp_re_02_replication_factor_1_to_2(sandbox_ready: SandboxCluster, lake: Lake) -> None:
    """10,000 keyed messages, RF 1 → 2 through the Admin API: assignment, ISR and rack spread as
    planned, throttles set per batch and removed at the end, every message still there."""
    sandbox = sandbox_ready
    topic = "tp_re_02"
    create_topic(sandbox, topic, {0: [1], 1: [2], 2: [3]})
    sent = produce(sandbox, topic, 10_000)
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    assert plan.moves == 3

    options = replace(FAST, batch_max_partitions=2, batch_max_moves_per_broker=1)
    report = run(sandbox, plan, lake, "admin_api", options)

    assert report.status == "done" and report.submitted == list(range(report.batches)) and report.batches >= 2
    snap = sandbox.snapshot()
    racks = {b: snap.brokers[b].rack for b in snap.brokers}
    for m in plan.reassignments:
        assert snap.topics[topic].partitions[m.partition] == m.target
        assert sorted(snap.partition_states[(topic, m.partition)].isr) == sorted(m.target)
        assert len({racks[b] for b in m.target}) == 2, f"{topic}-{m.partition} on one rack: {m.target}"
        assert snap.partition_states[(topic, m.partition)].leader == m.current[0], "the leader did not move"
    assert throttles_settled(sandbox, [topic]) == {}
    assert consume_all(sandbox, topic, 10_000) == sent
    log = actions(lake, plan)
    for batch in range(report.batches):
        assert log.count((batch, "set_throttle", "ok")) == 1
        assert log.count((batch, "reassign", "ok")) == 1
        assert log.count((batch, "verify", "ok")) == 1
    assert log[-2:] == [(None, "verify", "ok"), (None, "remove_throttle", "ok")]
    assert all(r["actor"] == "pytest" and r["run_id"] == "test-run" for r in read_audit(lake, CLUSTER, plan.plan_id))
    files = Path(plan_dir(lake, CLUSTER, plan.plan_id))
    assert json.loads((files / "reassignment.json").read_text()) == plan.to_reassignment_json()
    assert json.loads((files / "rollback.json").read_text()) == plan.rollback_json()
    assert read_progress(lake, CLUSTER, plan.plan_id).status == "done"  # type: ignore[union-attr]
    # a second run finds the plan done and writes nothing
    assert run(sandbox, plan, lake, "admin_api").status == "already_done"
    assert len(actions(lake, plan)) == len(log)


def test_preferred_election_after_a_broker_kill(sandbox_ready: SandboxCluster, lake: Lake) -> None:
    """Kill broker 2, restart it: its leaderships stay elsewhere; the election (ZooKeeper znode)
    gives them back and leader counts are even again."""
    sandbox = sandbox_ready
    topic = "re_election"
    assignment = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 3, 2], 4: [2, 1, 3], 5: [3, 2, 1]}
    create_topic(sandbox, topic, assignment)
    sandbox.kill_broker(2)
    sandbox.wait_for(
        lambda s: 2 not in s.brokers and all(s.partition_states[(topic, p)].leader != 2 for p in assignment),
        60,
        "leaders off broker 2",
    )
    sandbox.start_broker(2)
    snap = sandbox.wait_healthy(120)
    leaders = Counter(snap.partition_states[(topic, p)].leader for p in assignment)
    assert leaders[2] == 0, f"broker 2 should lead nothing after its restart: {leaders}"

    plan = plan_preferred_election(snap, topics=[topic])
    assert {(e.partition, e.preferred) for e in plan.elections} == {(1, 2), (4, 2)}
    report = run(sandbox, plan, lake, "zookeeper", replace(FAST, election_batch_size=1))

    assert report.status == "done" and report.election_chunks_submitted == [0, 1]
    snap = sandbox.snapshot()
    assert {p: snap.partition_states[(topic, p)].leader for p in assignment} == {p: r[0] for p, r in assignment.items()}
    assert Counter(snap.partition_states[(topic, p)].leader for p in assignment) == {1: 2, 2: 2, 3: 2}
    assert [a for a in actions(lake, plan) if a[1] == "elect"] == [(0, "elect", "ok"), (1, "elect", "ok")]


def test_decommission_broker_3(sandbox_ready: SandboxCluster, lake: Lake) -> None:
    """Every replica of the topic leaves broker 3, nothing is under-replicated, and the data is all
    readable with broker 3 stopped. The plan is made on the snapshot restricted to the test's topic:
    the session sandbox also holds RF-3 internal topics that cannot leave a 3-broker cluster."""
    sandbox = sandbox_ready
    topic = "re_decommission"
    assignment = {0: [1, 3], 1: [3, 2], 2: [2, 3], 3: [3, 1], 4: [1, 2], 5: [2, 1]}
    create_topic(sandbox, topic, assignment)
    sent = produce(sandbox, topic, 2_000)
    plan = plan_decommission(only_topics(sandbox.snapshot(), {topic}), [3])
    assert plan.moves == 4

    report = run(sandbox, plan, lake, "admin_api", replace(FAST, batch_max_moves_per_broker=1))

    assert report.status == "done"
    snap = sandbox.snapshot()
    assert not [p for p, r in snap.topics[topic].partitions.items() if 3 in r]
    assert snap.under_replicated() == []
    assert throttles_settled(sandbox, [topic]) == {}
    sandbox.stop_broker(3)
    try:
        sandbox.wait_for(lambda s: 3 not in s.brokers, 60, "broker 3 gone")
        assert consume_all(sandbox, topic, 2_000) == sent
    finally:
        sandbox.start_broker(3)


def test_refusals_write_nothing(sandbox_ready: SandboxCluster, lake: Lake) -> None:
    """Writes disabled, an untrusted base, a recent controller change, a stale base and a
    reassignment already in flight: each refused with a clear message, only an audit row written."""
    sandbox = sandbox_ready
    topic, other = "re_refusals", "re_refusals_other"
    create_topic(sandbox, topic, {0: [1], 1: [2]})
    create_topic(sandbox, other, {0: [1]})
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    zk_before = znode_state(sandbox, [topic, other])

    def refused(match: str, **overrides: Any) -> None:
        rows = len(actions(lake, plan))
        with pytest.raises(RemediationRefused, match=match):
            run(sandbox, plan, lake, "admin_api", **overrides)
        assert actions(lake, plan)[rows:] == [(None, "refuse", "refused")]
        assert znode_state(sandbox, [topic, other]) == zk_before, "the cluster was written to"
        assert not Path(progress_path(lake, CLUSTER, plan.plan_id)).exists()

    refused(
        r"\(writes enabled\): writes are disabled for cluster 'sandbox' \(dry-run\)",
        cluster_config=settings("admin_api", writes_enabled=False),
    )
    assert load_plan(lake, CLUSTER, plan.plan_id) == plan, "the refused plan is stored for the audit to name"

    def untrusted(lake: Lake, cluster: str, snapshot_id: str) -> None:
        raise SnapshotUntrusted(cluster, snapshot_id, ("partition_has_leader",), "failed partition_has_leader")

    refused(
        rf"\(base snapshot trusted\): .*snapshot {plan.snapshot_id} of cluster sandbox is untrusted", trusted=untrusted
    )
    refused(r"\(controller stable\): the controller changed \d+s ago", options=replace(FAST, controller_quiet_s=1e9))

    # a reassignment already in flight elsewhere: `other` moving at 1 byte/s never finishes
    produce(sandbox, other, 300, value_bytes=10_000)
    slow = backend_of(sandbox, "admin_api")
    try:
        slow.set_configs(
            {other: {"follower.replication.throttled.replicas": "*", "leader.replication.throttled.replicas": "*"}},
            {b: {"follower.replication.throttled.rate": "1", "leader.replication.throttled.rate": "1"} for b in (1, 2)},
        )
        slow.reassign({(other, 0): (1, 2)})
        zk_before = znode_state(sandbox, [topic, other])
        refused(
            rf"\(no reassignment in flight\): a reassignment is already in flight: {other}-0 → \[1, 2\]; "
            "wait for it to finish or cancel it"
        )
    finally:
        assert slow.cancel([(other, 0)]) == {}
        wait(lambda: not sandbox.snapshot().topics[other].adding_replicas, 30, "the foreign reassignment cancelled")
        slow.delete_configs(
            {other: ("follower.replication.throttled.replicas", "leader.replication.throttled.replicas")},
            {b: ("follower.replication.throttled.rate", "leader.replication.throttled.rate") for b in (1, 2)},
        )
        slow.close()

    # a stale base: partition 0 moved since the plan's snapshot
    admin = admin_for(sandbox)
    try:
        admin.alter_partition_reassignments({TopicPartition(topic, 0): [2]})
    finally:
        admin.close()
    sandbox.wait_for(
        lambda s: (
            s.topics[topic].partitions[0] == (2,)
            and not s.topics[topic].adding_replicas
            and not s.topics[topic].removing_replicas
        ),
        30,
        "partition 0 moved",
    )
    zk_before = znode_state(sandbox, [topic, other])
    refused(rf"cluster changed since plan {plan.plan_id}: {topic}-0 is now \[2\], the plan was based on \[1\]")


def znode_state(sandbox: SandboxCluster, topics: list[str]) -> dict[str, Any]:
    """What the executor could write: the topics' assignment, every dynamic config, /admin requests."""
    snap = sandbox.snapshot()
    return {
        "assignment": {t: snap.topics[t].partitions for t in topics},
        "configs": sorted((c.entity_type, c.entity_name, sorted(c.config.items())) for c in snap.configs),
        "reassign": snap.reassignment_requests,
        "elections": snap.preferred_election_requests,
    }


CHILD = textwrap.dedent(
    """
    import json, logging, sys
    from kafka_ops.lake.open import open_lake
    from kafka_ops.remediation import ExecutionOptions, ZooKeeperBackend, execute, load_plan
    from kafka_ops.settings import ClusterConfig
    from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
    args = json.loads(sys.argv[1])
    logging.basicConfig(level=logging.INFO)
    lake = open_lake(args["lake"])
    zk = ZooKeeperTarget(args["hosts"], args["chroot"], timeout_s=5)
    plan = load_plan(lake, "sandbox", args["plan_id"])
    execute(plan, lake=lake, cluster_config=ClusterConfig("sandbox", writes_enabled=True,
            remediation_backend="zookeeper"), backend=ZooKeeperBackend(zk), zookeeper=zk, actor="child",
            run_id="killed-run", trusted=lambda *a: None, options=ExecutionOptions(**args["options"]))
    """
)


def test_a_killed_executor_resumes_without_repeating_a_batch(
    sandbox_ready: SandboxCluster, lake: Lake, tmp_path: Path
) -> None:
    """SIGKILL the executor (ZooKeeper back end) while its first batch is in flight, throttled; the
    next run waits for that batch instead of resubmitting it, applies the rest, removes the
    throttles."""
    sandbox = sandbox_ready
    topic = "re_killed"
    create_topic(sandbox, topic, {0: [1], 1: [2], 2: [3], 3: [1]})
    sent = produce(sandbox, topic, 1_200, value_bytes=10_000)  # ~3 MB per partition
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    save_plan(lake, plan, created_by="pytest")
    options = {"batch_max_partitions": 2, "poll_s": 0.2, "controller_quiet_s": 0, "throttle_bytes_per_s": 400_000}
    args = {
        "lake": lake.root,
        "hosts": sandbox.zookeeper_hosts,
        "chroot": sandbox.chroot,
        "plan_id": plan.plan_id,
        "options": options,
    }
    child_log = tmp_path / "child.log"
    with child_log.open("w") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, json.dumps(args)], cwd=REPO, stdout=out, stderr=subprocess.STDOUT
        )
    try:

        def first_batch_submitted() -> bool:
            if child.poll() is not None:
                raise AssertionError(f"the executor exited early ({child.returncode}): {child_log.read_text()}")
            progress = read_progress(lake, CLUSTER, plan.plan_id)
            return progress is not None and progress.batches[0].state == "submitted"

        wait(first_batch_submitted, 60, "the first batch to be submitted")
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    live = sandbox.snapshot()
    first = read_progress(lake, CLUSTER, plan.plan_id).batches[0]  # type: ignore[union-attr]
    assert any(
        (topic, p) in {(r.topic, r.partition) for r in live.reassignment_requests}
        or live.topics[topic].adding_replicas.get(p)
        for _, p in first.partitions
    ), "killed mid-batch"
    assert throttle_configs(sandbox, [topic]), "the killed run's throttles are in place"

    report = run(sandbox, plan, lake, "zookeeper", replace(FAST, batch_max_partitions=3))

    assert report.status == "done" and report.resumed == [0] and report.submitted == [1]
    log = actions(lake, plan)
    assert log.count((0, "reassign", "ok")) == 1, log
    assert log.count((1, "reassign", "ok")) == 1, log
    # the killed run's batch is waited for, never resubmitted: still copying when the next run looks, or,
    # on a busy machine, already finished by then (its throttled copy takes seconds)
    assert (0, "resume", "in_flight") in log or (0, "resume", "already_applied") in log, log
    snap = sandbox.snapshot()
    assert {p: snap.topics[topic].partitions[p] for p in range(4)} == {
        m.partition: m.target for m in plan.reassignments
    }
    assert throttles_settled(sandbox, [topic]) == {}
    assert consume_all(sandbox, topic, 1_200) == sent


def test_stuck_batch_keeps_its_throttles_then_cancel(sandbox_ready: SandboxCluster, lake: Lake) -> None:
    """A batch throttled to a crawl is declared stuck (throttles kept: it is still in flight); the
    ZooKeeper back end cannot cancel and says so; the Admin API cancels it, removes the throttles,
    and the plan is never resumed."""
    sandbox = sandbox_ready
    topic = "re_stuck"
    create_topic(sandbox, topic, {0: [1]})
    produce(sandbox, topic, 300, value_bytes=10_000)
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    with pytest.raises(ReassignmentStuck, match=rf"plan {plan.plan_id} batch 0: no progress for 3s"):
        run(sandbox, plan, lake, "admin_api", replace(FAST, throttle_bytes_per_s=1, stuck_after_s=3))
    assert read_progress(lake, CLUSTER, plan.plan_id).status == "stuck"  # type: ignore[union-attr]
    assert actions(lake, plan)[-2:] == [(0, "wait", "stuck"), (None, "remove_throttle", "kept")]
    assert throttle_configs(sandbox, [topic])

    common = {"lake": lake, "zookeeper": zk_target(sandbox), "actor": "pytest", "poll_s": 0.3}
    zookeeper, admin_api = backend_of(sandbox, "zookeeper"), backend_of(sandbox, "admin_api")
    try:
        with pytest.raises(RemediationRefused, match="cannot cancel a reassignment through ZooKeeper"):
            cancel(plan.plan_id, cluster_config=settings("zookeeper"), backend=zookeeper, **common)
        report = cancel(plan.plan_id, cluster_config=settings("admin_api"), backend=admin_api, **common)
    finally:
        zookeeper.close()
        admin_api.close()

    assert report.cancelled == [f"{topic}-0"] and report.still_in_flight == [] and report.throttles_removed
    snap = sandbox.snapshot()
    assert snap.topics[topic].partitions[0] == (1,) and not snap.topics[topic].adding_replicas
    assert throttles_settled(sandbox, [topic]) == {}
    with pytest.raises(RemediationRefused, match=rf"plan {plan.plan_id} was cancelled"):
        run(sandbox, plan, lake, "admin_api")


def test_cancel_stops_a_running_execution(sandbox_ready: SandboxCluster, lake: Lake) -> None:
    """An execution crawling through a throttled batch is cancelled from elsewhere (as the cancel
    DAG does, from another process): the moves stop, the executing run stops before its next write
    with `PlanCancelled`, the throttles go, later batches never start, and the plan stays cancelled."""
    sandbox = sandbox_ready
    topic = "re_cancel_running"
    create_topic(sandbox, topic, {0: [1], 1: [1], 2: [2]})
    produce(sandbox, topic, 300, value_bytes=10_000)
    before = sandbox.snapshot().topics[topic].partitions
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    crawl = replace(FAST, throttle_bytes_per_s=1, stuck_after_s=120, batch_max_partitions=1)
    execution = Background(lambda: run(sandbox, plan, lake, "admin_api", crawl))
    wait(lambda: bool(sandbox.snapshot().topics[topic].adding_replicas), 30, "batch 0 in flight")
    backend = backend_of(sandbox, "admin_api")
    try:
        report = cancel(
            plan.plan_id,
            lake=lake,
            cluster_config=settings("admin_api"),
            backend=backend,
            zookeeper=zk_target(sandbox),
            actor="pytest-cancel",
            poll_s=0.3,
        )
    finally:
        backend.close()

    error = execution.error(30)
    assert isinstance(error, PlanCancelled), error
    assert f"plan {plan.plan_id} was cancelled before batch 0 was done (cancelled by pytest-cancel" in str(error)
    stored = read_progress(lake, CLUSTER, plan.plan_id)
    assert stored is not None and stored.status == "cancelled" and stored.message is not None
    assert report.cancelled == [f"{t}-{p}" for t, p in stored.batches[0].partitions]
    assert report.still_in_flight == [] and report.throttles_removed and report.batches_applied == []
    snap = sandbox.snapshot()
    assert snap.topics[topic].partitions == before and not snap.topics[topic].adding_replicas
    assert throttles_settled(sandbox, [topic]) == {}
    assert [s.state for s in stored.batches][1:] == ["pending"] * (len(stored.batches) - 1)
    log = actions(lake, plan)
    assert (None, "cancel", "ok") in log and (0, "stop", "cancelled") in log
    assert log.count((0, "reassign", "ok")) == 1 and not any(b == 1 and a == "reassign" for b, a, _ in log), log
    with pytest.raises(RemediationRefused, match=rf"plan {plan.plan_id} was cancelled"):
        run(sandbox, plan, lake, "admin_api")


def test_a_cancel_between_check_and_save_is_never_overwritten(
    sandbox_ready: SandboxCluster, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's lost cancel, with the interleaving forced (the sandbox cannot schedule it): the
    cancel lands after the executing run checked "cancelled?" for batch 0 and before its next save.
    The run stops with `PlanCancelled` and writes nothing after the cancel: the status stays
    cancelled, no throttle, no reassignment, no progress save."""
    sandbox = sandbox_ready
    topic = "re_cancel_race"
    create_topic(sandbox, topic, {0: [1], 1: [2]})
    before = sandbox.snapshot().topics[topic].partitions
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    cancelled_at: list[int] = []
    real_decide = reassignment_module.decide

    def decide_then_cancel(*args: Any, **kwargs: Any) -> Any:
        """Runs right after the batch's "cancelled?" check, before anything of it is saved or written."""
        decision = real_decide(*args, **kwargs)
        if not cancelled_at:
            backend = backend_of(sandbox, "admin_api")
            try:
                cancel(plan.plan_id, lake=lake, cluster_config=settings("admin_api"), backend=backend,
                       zookeeper=zk_target(sandbox), actor="pytest-cancel", poll_s=0.3)  # fmt: skip
            finally:
                backend.close()
            cancelled_at.append(len(actions(lake, plan)))
        return decision

    monkeypatch.setattr(reassignment_module, "decide", decide_then_cancel)
    with pytest.raises(PlanCancelled, match=rf"plan {plan.plan_id} was cancelled before batch 0 was done"):
        run(sandbox, plan, lake, "admin_api")

    assert cancelled_at, "the cancel was not forced in"
    stored = read_progress(lake, CLUSTER, plan.plan_id)
    assert stored is not None and stored.status == "cancelled" and "pytest-cancel" in (stored.message or "")
    assert [s.state for s in stored.batches] == ["pending"] * len(stored.batches)
    assert stored.throttled_brokers == [] and stored.throttled_topics == []
    after_cancel = actions(lake, plan)[cancelled_at[0] :]
    assert after_cancel == [(0, "stop", "cancelled")], after_cancel
    snap = sandbox.snapshot()
    assert snap.topics[topic].partitions == before and not snap.topics[topic].adding_replicas
    assert throttles_settled(sandbox, [topic]) == {}
    with pytest.raises(RemediationRefused, match=rf"plan {plan.plan_id} was cancelled"):
        run(sandbox, plan, lake, "admin_api")


def delete_topic(sandbox: SandboxCluster, topic: str) -> None:
    admin = admin_for(sandbox)
    try:
        admin.delete_topics([topic])
    finally:
        admin.close()
    sandbox.wait_for(lambda s: topic not in s.topics and topic not in s.pending_topic_deletions, 60, f"{topic} deleted")


def idle_throttle_findings(sandbox: SandboxCluster, spark: SparkSession, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The `idle_throttles` findings of a fresh snapshot, by "<entity type> <name>"."""
    health = open_lake(tmp_path / "health")
    snap = sandbox.snapshot()
    health.publish(snapshot_batch(snap))
    analyse(spark, health.root, CLUSTER, [idle_throttles.DETECTOR], Thresholds())
    rows = health.read("idle_throttles", CLUSTER, [snap.snapshot_id]).to_pylist()
    return {f"{r['entity_type']} {r['entity_name']}": r for r in rows}


def clear(sandbox: SandboxCluster, lake: Lake, plan: Plan, **overrides: Any) -> Any:
    backend = backend_of(sandbox, "admin_api")
    arguments: dict[str, Any] = {
        "lake": lake,
        "cluster_config": settings("admin_api"),
        "backend": backend,
        "zookeeper": zk_target(sandbox),
        "actor": "pytest-clear",
        **overrides,
    }
    try:
        return clear_throttles(plan.plan_id, **arguments)
    finally:
        backend.close()


def test_throttles_left_by_a_foreign_reassignment_are_cleared_once_it_is_over(
    sandbox_ready: SandboxCluster,
    lake: Lake,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    spark: SparkSession,
) -> None:
    """Issue point 5: the plan's last batch finishes while another tool's reassignment still moves
    (throttled to 1 B/s by that tool): the executor keeps its throttles and names the command that
    clears them; re-running answers already_done, cancel is refused. The clear action (dry run, then
    for real) removes the plan's topic throttles and the broker rates the foreign move does not go
    through, read back from Kafka; the rate on the broker the foreign move is throttled on stays
    until that move is over, and a second clear removes it. The health finding "throttle set with
    nothing moving" names each leftover before, and none after, each clear."""
    sandbox = sandbox_ready
    topic, foreign = "re_leftover", "re_leftover_foreign"
    create_topic(sandbox, topic, {0: [1]})
    create_topic(sandbox, foreign, {0: [1]})
    produce(sandbox, topic, 1_000, value_bytes=1_000)  # ~1 MB: several seconds at 100 kB/s
    produce(sandbox, foreign, 600, value_bytes=10_000)
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    (move,) = plan.reassignments
    (other,) = set(sandbox.broker_ids()) - set(move.target)
    execution = Background(lambda: run(sandbox, plan, lake, "admin_api", replace(FAST, throttle_bytes_per_s=100_000)))
    tool = backend_of(sandbox, "admin_api")  # "another tool": kafka-reassign-partitions --throttle 1
    try:
        wait(lambda: bool(sandbox.snapshot().topics[topic].adding_replicas), 30, "the plan's batch in flight")
        tool.set_configs(
            {
                foreign: {
                    "leader.replication.throttled.replicas": "0:1",
                    "follower.replication.throttled.replicas": f"0:{other}",
                }
            },
            {other: {"follower.replication.throttled.rate": "1"}},
        )
        tool.reassign({(foreign, 0): (1, other)})
        assert execution.error(120) is None
        # a follower throttle lets ~1 MB through per quota window: stop the receiving broker, so the
        # foreign move stays in flight however long the checks below take
        sandbox.stop_broker(other)
        sandbox.wait_for(lambda s: other not in s.brokers, 60, f"broker {other} stopped")
        up = [b for b in sandbox.broker_ids() if b != other]

        def read_back() -> dict[str, dict[str, str]]:
            return throttle_configs(sandbox, [topic], brokers=up)

        snap = sandbox.snapshot()
        assert snap.topics[topic].partitions[0] == move.target
        assert snap.topics[foreign].adding_replicas.get(0) == (other,), "the foreign move is over"
        kept = read_back()
        assert kept[f"topic {topic}"] and kept["broker 1"]["leader.replication.throttled.rate"] == "100000", kept
        log = read_audit(lake, CLUSTER, plan.plan_id)
        assert (log[-1]["action"], log[-1]["outcome"]) == ("remove_throttle", "kept")
        (second,) = [b for b in move.target if b != 1]
        findings = idle_throttle_findings(sandbox, spark, tmp_path)
        assert {f"topic {topic}", f"broker {second}"} <= set(findings) and "broker 1" not in findings, findings
        assert findings[f"topic {topic}"]["command"].startswith(
            f"kafka-configs --bootstrap-server <brokers> --alter --entity-type topics --entity-name {topic} "
        )
        command = f"kafka-ops remediation clear-throttles --cluster {CLUSTER} --plan-id {plan.plan_id}"
        assert command in log[-1]["detail"]
        assert run(sandbox, plan, lake, "admin_api").status == "already_done"
        with pytest.raises(RemediationRefused, match="the plan already completed"):
            cancel(plan.plan_id, lake=lake, cluster_config=settings("admin_api"), backend=tool,
                   zookeeper=zk_target(sandbox), actor="pytest")  # fmt: skip

        with pytest.raises(RemediationRefused, match=r"\(writes enabled\)"):
            clear(sandbox, lake, plan, cluster_config=settings("admin_api", writes_enabled=False))
        preview = clear(sandbox, lake, plan, dry_run=True)
        assert preview.dry_run and preview.status == "done"
        assert (preview.topics_cleared, preview.brokers_cleared) == ([topic], [b for b in move.target if b != 1])
        assert list(preview.kept) == ["broker 1"] and f"{foreign}-0" in preview.kept["broker 1"]
        assert read_back() == kept, "the dry run wrote"

        report = clear(sandbox, lake, plan)

        assert (report.topics_cleared, report.brokers_cleared) == (preview.topics_cleared, preview.brokers_cleared)
        # a broker applies its dynamic config change when ZooKeeper notifies it: read back until it has
        wait(lambda: read_back() == {"broker 1": kept["broker 1"]}, 30, "the cleared throttles gone")
        stored = read_progress(lake, CLUSTER, plan.plan_id)
        assert stored is not None and stored.status == "done"
        assert (stored.throttled_brokers, stored.throttled_topics) == ([1], [])
        findings = idle_throttle_findings(sandbox, spark, tmp_path)
        assert not {f"topic {topic}", f"broker {second}", "broker 1"} & set(findings), findings

        tool.close()  # it may hold on to the stopped broker: a fresh client for the rest
        tool = backend_of(sandbox, "admin_api")
        assert tool.cancel([(foreign, 0)]) == {}  # the other tool's move is over
        wait(lambda: not sandbox.snapshot().topics[foreign].adding_replicas, 30, "the foreign move cancelled")
        findings = idle_throttle_findings(sandbox, spark, tmp_path)
        assert {"broker 1", f"broker {other}", f"topic {foreign}"} <= set(findings), findings  # all idle now
        config = tmp_path / "kafka-ops.toml"
        config.write_text(f'[[clusters]]\nname = "{CLUSTER}"\nwrites_enabled = true\n')
        monkeypatch.setenv("KAFKA_OPS_CONFIG", str(config))
        cli = ["remediation", "clear-throttles", "--cluster", CLUSTER, "--plan-id", plan.plan_id, "--lake", lake.root,
               "--zookeeper", sandbox.zookeeper_connect, "--bootstrap-servers", sandbox.bootstrap_servers]  # fmt: skip
        capsys.readouterr()
        assert cli_main(cli) == 0
        assert json.loads(capsys.readouterr().out)["brokers_cleared"] == [1]
        wait(lambda: read_back() == {}, 30, "broker 1's rates gone")
        assert "broker 1" not in idle_throttle_findings(sandbox, spark, tmp_path)
        stored = read_progress(lake, CLUSTER, plan.plan_id)
        assert stored is not None and stored.throttled_brokers == []
        assert [(a, o) for _, a, o in actions(lake, plan)][-3:] == [
            ("refuse", "refused"), ("remove_throttle", "ok"), ("remove_throttle", "ok")
        ]  # fmt: skip
    finally:
        tool.close()
        if not sandbox.broker_running(other):
            sandbox.start_broker(other)
        # unthrottled (through ZooKeeper: no Admin API client to point at a restarted broker), a foreign
        # move still in flight finishes on its own
        cleanup = backend_of(sandbox, "zookeeper")
        try:
            cleanup.delete_configs(
                {foreign: ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")},
                {other: ("follower.replication.throttled.rate",)},
            )
        finally:
            cleanup.close()
        sandbox.wait_for(lambda s: not s.topics[foreign].adding_replicas, 120, "the foreign move over")
        sandbox.wait_healthy(120)


def test_cancel_reports_batches_completed_after_the_executor_died(
    sandbox_ready: SandboxCluster, lake: Lake, tmp_path: Path
) -> None:
    """SIGKILL the executor while batch 0 is in flight; the batch completes on its own afterwards. The
    progress document still says `submitted`, yet the cancel report reads the cluster: batch 0 applied,
    its partitions at their target, the rest not started, and the note points at rollback.json."""
    sandbox = sandbox_ready
    topic = "re_killed_cancel"
    create_topic(sandbox, topic, {0: [1], 1: [2], 2: [3], 3: [1]})
    produce(sandbox, topic, 400, value_bytes=10_000)  # ~1 MB per partition: seconds at 400 kB/s
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    save_plan(lake, plan, created_by="pytest")
    options = {"batch_max_partitions": 2, "poll_s": 0.2, "controller_quiet_s": 0, "throttle_bytes_per_s": 400_000}
    args = {"lake": lake.root, "hosts": sandbox.zookeeper_hosts, "chroot": sandbox.chroot, "plan_id": plan.plan_id,
            "options": options}  # fmt: skip
    child_log = tmp_path / "child.log"
    with child_log.open("w") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, json.dumps(args)], cwd=REPO, stdout=out, stderr=subprocess.STDOUT
        )
    try:

        def first_batch_submitted() -> bool:
            if child.poll() is not None:
                raise AssertionError(f"the executor exited early ({child.returncode}): {child_log.read_text()}")
            progress = read_progress(lake, CLUSTER, plan.plan_id)
            return progress is not None and progress.batches[0].state == "submitted"

        wait(first_batch_submitted, 60, "the first batch to be submitted")
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    first = read_progress(lake, CLUSTER, plan.plan_id).batches[0]  # type: ignore[union-attr]
    targets = {m.partition: m.target for m in plan.reassignments}
    sandbox.wait_for(
        lambda s: (
            not s.reassignment_requests
            and not s.topics[topic].adding_replicas
            and all(s.topics[topic].partitions[p] == targets[p] for _, p in first.partitions)
        ),
        120,
        "batch 0 completed after its executor died",
    )
    assert read_progress(lake, CLUSTER, plan.plan_id).batches[0].state == "submitted"  # type: ignore[union-attr]

    backend = backend_of(sandbox, "admin_api")
    try:
        report = cancel(plan.plan_id, lake=lake, cluster_config=settings("admin_api"), backend=backend,
                        zookeeper=zk_target(sandbox), actor="pytest-cancel", poll_s=0.3)  # fmt: skip
    finally:
        backend.close()

    done = sorted(f"{topic}-{p}" for _, p in first.partitions)
    assert report.cancelled == [] and report.still_in_flight == []
    assert report.batches_applied == [0] and report.at_target == done
    assert report.not_started == sorted(f"{topic}-{p}" for p in targets if f"{topic}-{p}" not in done)
    assert "no partition" not in report.note and "rollback.json" in report.note and done[0] in report.note
    assert report.throttles_removed and throttles_settled(sandbox, [topic]) == {}
    delete_topic(sandbox, topic)  # half applied: the session sandbox's later snapshots must stay trusted


def test_a_plan_cancelled_half_way_is_trusted_then_rolled_back(
    sandbox_ready: SandboxCluster, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue: after a cancel mid-plan, nothing could be planned. An RF 1 → 2 plan is cancelled once
    batch 0 is applied (the cancel forced in as batch 1 starts): the topic has two replication
    factors. The next snapshot is still trusted: integrity validation names the plan and the way
    out instead of failing one_replication_factor_per_topic; the rollback plan (made from the live
    snapshot and the stored plan) puts batch 0 back, and the topic has one factor again."""
    sandbox = sandbox_ready
    topic = "re_half_cancelled"
    create_topic(sandbox, topic, {0: [1], 1: [2], 2: [3], 3: [1]})
    before = sandbox.snapshot().topics[topic].partitions
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    real_decide = reassignment_module.decide

    def cancel_at_batch_1(plan_id: str, step: Any, *args: Any) -> Any:
        if step.index == 1:
            backend = backend_of(sandbox, "admin_api")
            try:
                cancel(plan.plan_id, lake=lake, cluster_config=settings("admin_api"), backend=backend,
                       zookeeper=zk_target(sandbox), actor="pytest-cancel", poll_s=0.3)  # fmt: skip
            finally:
                backend.close()
        return real_decide(plan_id, step, *args)

    monkeypatch.setattr(reassignment_module, "decide", cancel_at_batch_1)
    with pytest.raises(PlanCancelled):
        run(sandbox, plan, lake, "admin_api", replace(FAST, batch_max_partitions=2))
    monkeypatch.setattr(reassignment_module, "decide", real_decide)
    snap = sandbox.snapshot()
    factors = {p: len(r) for p, r in snap.topics[topic].partitions.items()}
    assert sorted(factors.values()) == [1, 1, 2, 2], factors

    lake.publish(snapshot_batch(snap))
    validation = validate_snapshot(lake, CLUSTER, snap.snapshot_id, data_docs=False)
    assert validation.trusted, validation.message()
    note = validation.observed["left_by_plans"][topic]
    assert f"left by plan {plan.plan_id} (cancelled)" in note and f"source_plan_id {plan.plan_id}" in note

    rollback = plan_rollback(snap, load_plan(lake, CLUSTER, plan.plan_id))
    assert rollback.kind == "rollback" and rollback.request == {"plan_id": plan.plan_id}
    assert sorted((m.partition, m.target) for m in rollback.reassignments) == sorted(
        (p, before[p]) for p, f in factors.items() if f == 2
    )
    assert run(sandbox, rollback, lake, "admin_api").status == "done"
    after = sandbox.snapshot()
    assert after.topics[topic].partitions == before
    lake.publish(snapshot_batch(after))
    again = validate_snapshot(lake, CLUSTER, after.snapshot_id, data_docs=False)
    assert again.trusted and topic not in again.observed["left_by_plans"]
