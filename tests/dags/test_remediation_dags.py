"""The remediation DAGs end to end with `dag.test(run_conf=...)` against the real sandbox cluster.

Settings come from a TOML file (`KAFKA_OPS_CONFIG`) naming cluster `sandbox`, its connections
(`AIRFLOW_CONN_*`) and a lake under tmp_path. Its controller quiet period is 0: the session sandbox
was started moments ago and the broker kill below may move the controller; the check itself has its
own test in tests/integration/test_remediation_sandbox.py.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from airflow.dag_processing.dagbag import DagBag
from airflow.models.dagrun import DagRun
from airflow.sdk.exceptions import ParamValidationError
from kafka import TopicPartition as KafkaTP

from kafka_ops.airflow.remediation_params import form_params
from kafka_ops.errors import PlanCancelled
from kafka_ops.lake.open import open_lake
from kafka_ops.planning import plan_replication_factor
from kafka_ops.planning.request import FORMS
from kafka_ops.remediation import (
    AdminApiBackend,
    ExecutionOptions,
    Progress,
    Step,
    cancel,
    execute,
    load_plan,
    read_audit,
    save_plan,
)
from kafka_ops.remediation import reassignment as reassignment_module
from kafka_ops.remediation.backends import BROKER_THROTTLES
from kafka_ops.remediation.store import write_progress
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from kafka_ops.validation.integrity import is_trusted
from sandbox import SandboxCluster
from tests.dags.conftest import CLUSTER, Configure
from tests.integration.background import Background
from tests.integration.kafka_data import (
    admin_for,
    consume_all,
    create_topic,
    produce,
    throttle_configs,
    throttles_settled,
)

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.slow, pytest.mark.usefixtures("airflow_db")]

ELECTION = "kafka_preferred_leader_election"
REASSIGNMENT = "kafka_partition_reassignment"
CANCEL = "kafka_remediation_cancel"


# -- fixtures and helpers ---------------------------------------------------------------------------


def delete_topic(sandbox: SandboxCluster, name: str) -> None:
    if name not in sandbox.snapshot().topics:
        return
    admin = admin_for(sandbox)
    try:
        admin.delete_topics([name])
    finally:
        admin.close()
    sandbox.wait_for(lambda s: name not in s.topics and name not in s.pending_topic_deletions, 60, f"{name} deleted")


def cluster_state(sandbox: SandboxCluster, topics: list[str]) -> dict[str, Any]:
    """What a remediation could write: the topics' assignment and leaders, dynamic configs, /admin requests."""
    snap = sandbox.snapshot()
    return {
        "assignment": {t: snap.topics[t].partitions for t in topics},
        "leaders": {tp: s.leader for tp, s in snap.partition_states.items() if tp[0] in topics},
        "configs": sorted((c.entity_type, c.entity_name, sorted(c.config.items())) for c in snap.configs),
        "reassign": snap.reassignment_requests,
        "elections": snap.preferred_election_requests,
    }


def trigger(dag_bag: DagBag, dag_id: str, **conf: Any) -> DagRun:
    """A run with the form's defaults overridden by `conf`, as the UI submits it. Every Param is given:
    runs in one process share the DAG object, whose Params keep the previous run's conf otherwise."""
    defaults = {name: param.value for name, param in form_params(FORMS[dag_id]).items()}
    return dag_bag.dags[dag_id].test(run_conf={**defaults, "cluster": CLUSTER, **conf})


def trigger_cancel(dag_bag: DagBag, **conf: Any) -> DagRun:
    defaults = {"cluster": CLUSTER, "dry_run": True, "wait_seconds": 120}
    return dag_bag.dags[CANCEL].test(run_conf={**defaults, **conf})


NO_APPROVAL = {"approve": "skipped", "execute_approved": "skipped", "rejected": "skipped"}
"""The approval's tasks in a run without `approve_in_ui`."""


def states(run: DagRun) -> dict[str, str | None]:
    return {ti.task_id: ti.state for ti in run.get_task_instances()}


def xcom(run: DagRun, task_id: str) -> Any:
    (ti,) = [ti for ti in run.get_task_instances() if ti.task_id == task_id]
    return ti.xcom_pull(task_ids=task_id)


def logged(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> str:
    """What the runs logged since the last call: `dag.test()` runs tasks in this process."""
    text = caplog.text + "".join(capfd.readouterr())
    caplog.clear()
    return text


def audit(lake_root: Path, plan_id: str) -> list[tuple[int | None, str, str]]:
    return [(r["batch"], r["action"], r["outcome"]) for r in read_audit(open_lake(lake_root), CLUSTER, plan_id)]


@pytest.fixture
def tp_re_02(dag_sandbox: SandboxCluster) -> Iterator[str]:
    """tp_re_02 at replication factor 1 (one partition per broker), fresh; deleted afterwards, so the
    executor's own sandbox test can create it again in the same session."""
    delete_topic(dag_sandbox, "tp_re_02")
    create_topic(dag_sandbox, "tp_re_02", {0: [1], 1: [2], 2: [3]})
    yield "tp_re_02"
    dag_sandbox.wait_healthy(120)
    delete_topic(dag_sandbox, "tp_re_02")


# -- the cases ------------------------------------------------------------------------------


@pytest.mark.parametrize("remediation_dag", [ELECTION, REASSIGNMENT])
def test_dag_shape(dag_bag: DagBag, remediation_dag: str) -> None:
    """Triggered by hand, one run at a time; the task that writes to a cluster is never retried."""
    dag = dag_bag.dags[remediation_dag]
    assert dag.schedule is None and dag.max_active_runs == 1
    assert set(dag.tags) == {"kafka-ops", "remediation"}
    assert set(dag.params) == FORMS[remediation_dag].fields
    validate, plan, execute = (dag.get_task(t) for t in ("validate_params", "plan", "execute"))
    assert validate.downstream_task_ids == {"plan", "execute"}
    assert plan.upstream_task_ids == execute.upstream_task_ids == {"validate_params"}
    assert execute.retries == 0, "a write must never be repeated by an automatic retry"
    approve, approved = dag.get_task("approve"), dag.get_task("execute_approved")
    assert plan.downstream_task_ids == {"approve"} and approve.downstream_task_ids == {"execute_approved", "rejected"}
    assert approved.retries == 0, "a write must never be repeated by an automatic retry"
    assert "dry_run" in (dag.doc_md or "").lower().replace(" ", "_") and "plan id" in (dag.doc_md or "").lower()


def test_tp_re_02_replication_factor_dry_run_then_execute(
    tp_re_02: str,
    configure: Configure,
    dag_bag: DagBag,
    dag_sandbox: SandboxCluster,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """10,000 keyed messages; a dry run plans RF 1 → 2 and writes nothing to the cluster; executing
    the reviewed plan by id leaves assignment, ISR and rack spread as planned, no throttle, and
    every message readable."""
    sandbox, topic = dag_sandbox, tp_re_02
    lake_root = configure()
    sent = produce(sandbox, topic, 10_000)
    before = cluster_state(sandbox, [topic])
    form = {"action": "replication_factor", "throttle_bytes_per_s": 20_000_000, "batch_size": 2}

    run = trigger(dag_bag, REASSIGNMENT, **form, topics=[topic], replication_factor=2)

    assert run.state == "success"
    assert states(run) == {"validate_params": "success", "plan": "success", "execute": "skipped", **NO_APPROVAL}
    summary = xcom(run, "plan")
    plan_id = summary["plan_id"]
    assert (summary["kind"], summary["moves"], summary["lower_bound"], summary["batches"]) == (
        "replication_factor", 3, 3, 2,
    )  # fmt: skip
    assert summary["next"].endswith(f"dry_run = false and plan_id = {plan_id}")
    assert len(json.dumps(summary)) < 2000  # a summary, not data
    log = logged(caplog, capfd)
    assert f"plan {plan_id}: replication_factor on cluster sandbox" in log
    assert "3 replica move(s) (lower bound 3), 2 batch(es) of at most 2 partitions, throttle 20000000 B/s" in log
    assert f"{topic}-0: [1] -> [1, " in log and "per broker" in log and "rollback.json" in log
    assert cluster_state(sandbox, [topic]) == before, "a dry run wrote to the cluster"
    lake = open_lake(lake_root)
    plan = load_plan(lake, CLUSTER, plan_id)
    assert is_trusted(lake, CLUSTER, plan.snapshot_id), "planned on a snapshot that was not validated"
    assert plan.snapshot_id == lake.latest_snapshot_id(CLUSTER), "planned on an old snapshot"
    assert audit(lake_root, plan_id) == []
    (stored,) = [r for r in lake.commit_log("remediation_plans", CLUSTER).to_pylist() if r["plan_id"] == plan_id]
    assert stored["created_by"] == f"dag_test ({run.run_id})"
    assert json.loads(Path(summary["files"]["rollback.json"]).read_text()) == plan.rollback_json()

    run = trigger(dag_bag, REASSIGNMENT, **form, dry_run=False, plan_id=plan_id)

    assert run.state == "success"
    assert states(run) == {"validate_params": "success", "plan": "skipped", "execute": "success", **NO_APPROVAL}
    report = xcom(run, "execute")
    assert (report["status"], report["batches"], report["submitted"], report["throttles_removed"]) == (
        "done", 2, [0, 1], True,
    )  # fmt: skip
    snap = sandbox.snapshot()
    racks = {b: snap.brokers[b].rack for b in snap.brokers}
    for m in plan.reassignments:
        assert snap.topics[topic].partitions[m.partition] == m.target
        assert sorted(snap.partition_states[(topic, m.partition)].isr) == sorted(m.target)
        assert len({racks[b] for b in m.target}) == 2, f"{topic}-{m.partition} on one rack: {m.target}"
    assert throttles_settled(sandbox, [topic]) == {}
    assert consume_all(sandbox, topic, 10_000) == sent
    rows = read_audit(lake, CLUSTER, plan_id)
    assert {(r["actor"], r["run_id"]) for r in rows} == {("dag_test", run.run_id)}
    steps = audit(lake_root, plan_id)
    assert [s for s in steps if s[1] == "reassign"] == [(0, "reassign", "ok"), (1, "reassign", "ok")]
    assert steps[-1] == (None, "remove_throttle", "ok")


def test_election_restores_preferred_leaders_after_a_broker_restart(
    configure: Configure, dag_bag: DagBag, dag_sandbox: SandboxCluster
) -> None:
    """Kill broker 2 and restart it: its leaderships stay elsewhere; the election DAG (dry run, then
    the reviewed plan) gives them back."""
    sandbox = dag_sandbox
    topic = "re_dag_election"
    assignment = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 3, 2], 4: [2, 1, 3], 5: [3, 2, 1]}
    if topic not in sandbox.snapshot().topics:
        create_topic(sandbox, topic, assignment)
    configure()
    sandbox.kill_broker(2)
    sandbox.wait_for(
        lambda s: 2 not in s.brokers and all(s.partition_states[(topic, p)].leader != 2 for p in assignment),
        60,
        "leaders off broker 2",
    )
    sandbox.start_broker(2)
    snap = sandbox.wait_healthy(120)
    assert Counter(snap.partition_states[(topic, p)].leader for p in assignment)[2] == 0

    run = trigger(dag_bag, ELECTION, action="preferred_election", topic_pattern="re_dag_elect.*", batch_size=1)

    assert run.state == "success" and states(run)["execute"] == "skipped"
    summary = xcom(run, "plan")
    assert (summary["elections"], summary["moves"]) == (2, 0)
    assert sandbox.snapshot().partition_states[(topic, 1)].leader != 2, "a dry run elected"

    run = trigger(dag_bag, ELECTION, action="preferred_election", dry_run=False, plan_id=summary["plan_id"])

    assert run.state == "success" and states(run)["execute"] == "success"
    report = xcom(run, "execute")
    assert report["status"] == "done" and report["elections_refused"] == {}
    snap = sandbox.snapshot()
    assert {p: snap.partition_states[(topic, p)].leader for p in assignment} == {p: r[0] for p, r in assignment.items()}


def test_invalid_params_are_refused_before_anything_runs(
    configure: Configure, dag_bag: DagBag, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    lake_root = configure()
    # the JSON schema: Airflow refuses to create the run at all
    with pytest.raises(ParamValidationError, match="Invalid input for param replication_factor: 0 is less than"):
        trigger(dag_bag, REASSIGNMENT, action="replication_factor", topics=["t"], replication_factor=0)

    # what only kafka-ops can check: the first task fails, nothing after it runs
    for conf, message in [
        ({"cluster": "nope"}, "Param 'cluster': no cluster named 'nope' in the settings (have: ['sandbox'])"),
        ({"dry_run": False}, "Param 'plan_id': required when dry_run is false"),
    ]:
        run = trigger(dag_bag, ELECTION, **conf)
        assert run.state == "failed"
        assert states(run) == {"validate_params": "failed", "plan": "upstream_failed", "execute": "upstream_failed",
                               **dict.fromkeys(NO_APPROVAL, "upstream_failed")}  # fmt: skip
        (ti,) = [ti for ti in run.get_task_instances() if ti.task_id == "validate_params"]
        assert ti.try_number == 1, "an invalid Param was retried"
        assert message in logged(caplog, capfd)
    assert open_lake(lake_root).snapshots().num_rows == 0, "something ran after an invalid Param"


def test_refusals_write_nothing(
    configure: Configure,
    dag_bag: DagBag,
    dag_sandbox: SandboxCluster,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Writes disabled, then a stale base (the assignment changed between plan and execute): each
    refused with a clear message, an audit row, and nothing written to the cluster."""
    sandbox = dag_sandbox
    topic = "re_dag_refusals"
    create_topic(sandbox, topic, {0: [1], 1: [2]})
    lake_root = configure(writes_enabled=False)
    run = trigger(dag_bag, REASSIGNMENT, action="replication_factor", topics=[topic], replication_factor=2)
    assert run.state == "success", "a dry run needs no writes"
    plan_id = xcom(run, "plan")["plan_id"]
    execute = {"action": "replication_factor", "dry_run": False, "plan_id": plan_id}

    def refused(message: str) -> None:
        before = cluster_state(sandbox, [topic])
        rows = len(audit(lake_root, plan_id))
        logged(caplog, capfd)
        run = trigger(dag_bag, REASSIGNMENT, **execute)
        assert run.state == "failed" and states(run)["execute"] == "failed"
        (ti,) = [ti for ti in run.get_task_instances() if ti.task_id == "execute"]
        assert ti.try_number == 1, "a refused write was retried"
        assert message in logged(caplog, capfd)
        assert audit(lake_root, plan_id)[rows:] == [(None, "refuse", "refused")]
        assert cluster_state(sandbox, [topic]) == before, "a refused plan wrote to the cluster"

    refused(f"plan {plan_id}: refused (writes enabled): writes are disabled for cluster 'sandbox' (dry-run)")

    configure(writes_enabled=True)
    admin = admin_for(sandbox)
    try:
        admin.alter_partition_reassignments({KafkaTP(topic, 0): [2]})
    finally:
        admin.close()
    sandbox.wait_for(
        lambda s: s.topics[topic].partitions[0] == (2,) and not s.topics[topic].adding_replicas,
        30,
        "partition 0 moved to broker 2",
    )
    refused(f"cluster changed since plan {plan_id}: {topic}-0 is now [2], the plan was based on [1]")


def test_cancel_dag_stops_a_running_execution(
    configure: Configure,
    dag_bag: DagBag,
    dag_sandbox: SandboxCluster,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A reassignment crawling at 1 B/s in another thread (as an `execute` task in another DAG run):
    the cancel DAG's preview shows it and writes nothing; with writes disabled the cancel is refused;
    then it is cancelled, the execution stops, and the cluster is as before the plan."""
    sandbox = dag_sandbox
    topic = "re_dag_cancel"
    create_topic(sandbox, topic, {0: [1], 1: [2]})
    produce(sandbox, topic, 300, value_bytes=10_000)
    lake_root = configure()
    before = sandbox.snapshot().topics[topic].partitions
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    admin = AdminApiBackend(KafkaTarget(sandbox.bootstrap_servers, {"request_timeout_ms": 10_000}))
    crawl = ExecutionOptions(poll_s=0.3, controller_quiet_s=0, throttle_bytes_per_s=1, stuck_after_s=120)
    execution = Background(
        lambda: execute(
            plan,
            lake=open_lake(lake_root),
            cluster_config=ClusterConfig(CLUSTER, writes_enabled=True),
            backend=admin,
            zookeeper=ZooKeeperTarget(sandbox.zookeeper_hosts, sandbox.chroot, timeout_s=5),
            actor="pytest-executor",
            trusted=lambda lake, cluster, snapshot_id: None,
            options=crawl,
        )
    )
    try:
        # the controller starts a batch's moves one partition at a time: wait for the whole batch (both
        # partitions hold data, so at 1 B/s neither finishes)
        moving = sorted(f"{topic}-{m.partition}" for m in plan.reassignments)
        sandbox.wait_for(
            lambda s: sorted(f"{topic}-{p}" for p in s.topics[topic].adding_replicas) == moving,
            30,
            "the whole first batch in flight",
        )

        preview = trigger_cancel(dag_bag, plan_id=plan.plan_id)
        assert states(preview) == {
            "validate_params": "success", "preview": "success", "cancel": "skipped", "clear_throttles": "skipped"
        }  # fmt: skip
        shown = xcom(preview, "preview")
        assert (shown["status"], shown["in_flight"], shown["would_refuse"]) == ("running", moving, None)
        assert "trigger again with dry_run = false to cancel" in logged(caplog, capfd)

        configure(writes_enabled=False)
        refused = trigger_cancel(dag_bag, plan_id=plan.plan_id, dry_run=False)
        assert refused.state == "failed" and states(refused)["cancel"] == "failed"
        assert "refused (writes enabled): writes are disabled for cluster 'sandbox'" in logged(caplog, capfd)
        assert audit(lake_root, plan.plan_id)[-1] == (None, "refuse", "refused")
        assert sandbox.snapshot().topics[topic].adding_replicas, "a refused cancel stopped the move"

        configure(writes_enabled=True)
        cancelled = trigger_cancel(dag_bag, plan_id=plan.plan_id, dry_run=False, wait_seconds=60)
        assert states(cancelled) == {
            "validate_params": "success", "preview": "skipped", "cancel": "success", "clear_throttles": "skipped"
        }  # fmt: skip
        report = xcom(cancelled, "cancel")
        assert (report["cancelled"], report["still_in_flight"], report["throttles_removed"]) == (moving, [], True)
        error = execution.error(30)
    except BaseException:
        # a crawl left in flight would refuse every later plan on this shared sandbox
        config = ClusterConfig(CLUSTER, writes_enabled=True)
        zookeeper = ZooKeeperTarget(sandbox.zookeeper_hosts, sandbox.chroot, timeout_s=5)
        cancel(plan.plan_id, lake=open_lake(lake_root), cluster_config=config, backend=admin, zookeeper=zookeeper,
               actor="pytest-cleanup", poll_s=0.3)  # fmt: skip
        execution.error(30)
        delete_topic(sandbox, topic)
        raise
    finally:
        admin.close()
    assert isinstance(error, PlanCancelled), error
    snap = sandbox.snapshot()
    assert snap.topics[topic].partitions == before and not snap.topics[topic].adding_replicas
    assert throttles_settled(sandbox, [topic]) == {}
    assert (None, "cancel", "ok") in audit(lake_root, plan.plan_id)
    delete_topic(sandbox, topic)


def test_cancel_dag_clears_the_throttles_a_finished_plan_left(
    configure: Configure, dag_bag: DagBag, dag_sandbox: SandboxCluster
) -> None:
    """Action clear_throttles: the dry run lists what would go and writes nothing; with writes
    disabled it is refused (audited); then the broker rates and the topic's replica lists go, read
    back from Kafka. The leftover state is the one the executor records when a foreign reassignment
    outlives its last batch (that path itself runs for real in tests/integration/test_remediation_sandbox.py)."""
    sandbox = dag_sandbox
    topic = "re_dag_leftover"
    create_topic(sandbox, topic, {0: [1]})
    lake_root = configure()
    lake = open_lake(lake_root)
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    (move,) = plan.reassignments
    save_plan(lake, plan, created_by="pytest")
    progress = Progress(plan.plan_id, CLUSTER, "admin_api", [Step(0, ((topic, 0),), state="done")], [], status="done")
    progress.throttled_topics, progress.throttled_brokers = [topic], sorted(move.target)
    write_progress(lake, progress)
    admin = AdminApiBackend(KafkaTarget(sandbox.bootstrap_servers, {"request_timeout_ms": 10_000}))
    try:
        admin.set_configs(
            {topic: {"leader.replication.throttled.replicas": "0:1", "follower.replication.throttled.replicas": "0:2"}},
            {b: dict.fromkeys(BROKER_THROTTLES, "20000") for b in move.target},
        )
        left = throttle_configs(sandbox, [topic])
        assert len(left) == 3, left

        preview = trigger_cancel(dag_bag, plan_id=plan.plan_id, action="clear_throttles")
        assert states(preview)["preview"] == "success" and states(preview)["clear_throttles"] == "skipped"
        shown = xcom(preview, "preview")
        assert (shown["brokers_cleared"], shown["topics_cleared"], shown["kept"]) == (sorted(move.target), [topic], {})
        assert throttle_configs(sandbox, [topic]) == left

        configure(writes_enabled=False)
        refused = trigger_cancel(dag_bag, plan_id=plan.plan_id, action="clear_throttles", dry_run=False)
        assert states(refused)["clear_throttles"] == "failed" and audit(lake_root, plan.plan_id)[-1][1:] == (
            "refuse", "refused"
        )  # fmt: skip
        assert throttle_configs(sandbox, [topic]) == left

        configure(writes_enabled=True)
        cleared = trigger_cancel(dag_bag, plan_id=plan.plan_id, action="clear_throttles", dry_run=False)
        assert states(cleared) == {
            "validate_params": "success", "preview": "skipped", "cancel": "skipped", "clear_throttles": "success"
        }  # fmt: skip
        assert throttles_settled(sandbox, [topic]) == {}
        assert audit(lake_root, plan.plan_id)[-1] == (None, "remove_throttle", "ok")
    finally:
        admin.delete_configs({}, {b: BROKER_THROTTLES for b in move.target})
        admin.close()
    delete_topic(sandbox, topic)


def test_a_plan_cancelled_half_way_is_rolled_back_from_the_dag(
    configure: Configure, dag_bag: DagBag, dag_sandbox: SandboxCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An RF 1 → 2 plan cancelled once batch 0 is applied (the cancel forced in as batch 1 starts)
    leaves the topic with two replication factors. The reassignment DAG still plans (the fresh
    snapshot is trusted: validation names the plan instead of failing), action rollback with
    source_plan_id reviews the moves back by dry run, and executing that plan by id restores the
    assignment."""
    sandbox = dag_sandbox
    topic = "re_dag_half"
    create_topic(sandbox, topic, {0: [1], 1: [2], 2: [3], 3: [1]})
    lake_root = configure()
    before = sandbox.snapshot().topics[topic].partitions
    plan = plan_replication_factor(sandbox.snapshot(), [topic], 2)
    zookeeper = ZooKeeperTarget(sandbox.zookeeper_hosts, sandbox.chroot, timeout_s=5)
    admin = AdminApiBackend(KafkaTarget(sandbox.bootstrap_servers, {"request_timeout_ms": 10_000}))
    config = ClusterConfig(CLUSTER, writes_enabled=True)
    real_decide = reassignment_module.decide

    def cancel_at_batch_1(plan_id: str, step: Any, *args: Any) -> Any:
        if step.index == 1:
            cancel(plan.plan_id, lake=open_lake(lake_root), cluster_config=config, backend=admin, zookeeper=zookeeper,
                   actor="pytest-cancel", poll_s=0.3)  # fmt: skip
        return real_decide(plan_id, step, *args)

    monkeypatch.setattr(reassignment_module, "decide", cancel_at_batch_1)
    try:
        with pytest.raises(PlanCancelled):
            execute(plan, lake=open_lake(lake_root), cluster_config=config, backend=admin, zookeeper=zookeeper,
                    actor="pytest-executor", trusted=lambda lake, cluster, snapshot_id: None,
                    options=ExecutionOptions(poll_s=0.3, controller_quiet_s=0, batch_max_partitions=2))  # fmt: skip
    finally:
        admin.close()
    monkeypatch.setattr(reassignment_module, "decide", real_decide)
    half = sandbox.snapshot().topics[topic].partitions
    assert sorted(len(r) for r in half.values()) == [1, 1, 2, 2], half
    form = {"action": "rollback", "topics": [], "replication_factor": None}

    planned = trigger(dag_bag, REASSIGNMENT, **form, source_plan_id=plan.plan_id)

    assert states(planned) == {"validate_params": "success", "plan": "success", "execute": "skipped", **NO_APPROVAL}
    summary = xcom(planned, "plan")
    assert (summary["kind"], summary["partitions"], summary["skipped"]) == ("rollback", 2, 0)
    assert sandbox.snapshot().topics[topic].partitions == half, "a dry run wrote to the cluster"

    executed = trigger(dag_bag, REASSIGNMENT, **form, dry_run=False, plan_id=summary["plan_id"])

    assert states(executed) == {"validate_params": "success", "plan": "skipped", "execute": "success", **NO_APPROVAL}
    assert sandbox.snapshot().topics[topic].partitions == before
    delete_topic(sandbox, topic)
