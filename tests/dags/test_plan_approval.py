"""Approval in the Airflow UI, in the run that made the plan (`approve_in_ui`): `dag.test()` runs the
reassignment DAG against the real sandbox while another thread answers the run's required action through
Airflow's own REST API (its FastAPI app, in this process, on the same metadata database), as the UI does.

Approved by an approver: the plan it showed is executed. Answered by someone else: Airflow refuses (403) and
the plan waits. Rejected, or not answered in time (the scheduler's own timeout sweep): nothing is written.
Every step is in `remediation_audit`."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from airflow.api_fastapi.app import create_app, get_auth_manager
from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
from airflow.dag_processing.dagbag import DagBag
from airflow.jobs.job import Job
from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
from fastapi.testclient import TestClient

from kafka_ops.airflow.approval import respondents
from kafka_ops.errors import ConfigError
from kafka_ops.lake.open import open_lake
from kafka_ops.planning.request import AUTOMATIC_ACTOR
from kafka_ops.remediation.lifecycle import lifecycles
from kafka_ops.settings import ClusterConfig
from sandbox import SandboxCluster
from tests.dags.conftest import Configure
from tests.dags.test_remediation_dags import REASSIGNMENT, audit, cluster_state, delete_topic, states, trigger, xcom
from tests.integration.kafka_data import create_topic

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.slow, pytest.mark.usefixtures("airflow_db")]

TOPIC = "tp_approval"
APPROVERS = 'approvers = ["ana"]\n'
ANSWER_WAIT_S = 120


@pytest.fixture
def topic(dag_sandbox: SandboxCluster) -> Iterator[str]:
    delete_topic(dag_sandbox, TOPIC)
    create_topic(dag_sandbox, TOPIC, {0: [1], 1: [2], 2: [3]})
    yield TOPIC
    dag_sandbox.wait_healthy(120)
    delete_topic(dag_sandbox, TOPIC)


@pytest.fixture(scope="module")
def api() -> TestClient:
    """Airflow's REST API, as the UI's Required actions view calls it."""
    return TestClient(create_app("core"))


class Answerer(threading.Thread):
    """Waits for the run's approval request, then answers it as each of `answers`' users in turn
    (`(user, option)`), keeping the HTTP status of each answer; `sweep` instead runs the scheduler's
    timeout sweep until the request is resolved."""

    def __init__(self, api: TestClient, answers: list[tuple[str, str]], *, sweep: bool = False) -> None:
        super().__init__(daemon=True)
        self.api, self.answers, self.sweep = api, answers, sweep
        self.statuses: list[int] = []
        self.request: dict[str, Any] | None = None
        self.error: BaseException | None = None

    def headers(self, user: str) -> dict[str, str]:
        token = get_auth_manager().generate_jwt(SimpleAuthManagerUser(username=user, role="admin"))
        return {"Authorization": f"Bearer {token}"}

    def run(self) -> None:
        try:
            self.request = self.pending()
            ti = self.request["task_instance"]
            path = f"/api/v2/dags/{REASSIGNMENT}/dagRuns/{ti['dag_run_id']}/taskInstances/approve/-1/hitlDetails"
            for user, option in self.answers:
                response = self.api.patch(path, json={"chosen_options": [option]}, headers=self.headers(user))
                self.statuses.append(response.status_code)
            if self.sweep:
                runner = SchedulerJobRunner(job=Job())
                deadline = time.monotonic() + ANSWER_WAIT_S
                while time.monotonic() < deadline and not self.answered(path):
                    runner.check_awaiting_input_timeouts()
                    time.sleep(1)
        except BaseException as e:  # reported by the test
            self.error = e

    def pending(self) -> dict[str, Any]:
        deadline = time.monotonic() + ANSWER_WAIT_S
        while time.monotonic() < deadline:
            listed = self.api.get(f"/api/v2/dags/{REASSIGNMENT}/dagRuns/~/hitlDetails", headers=self.headers("ana"))
            waiting = [d for d in listed.json().get("hitl_details", []) if not d["response_received"]]
            if waiting:
                return dict(waiting[-1])
            time.sleep(1)
        raise AssertionError("no approval request appeared")

    def answered(self, path: str) -> bool:
        return bool(self.api.get(path, headers=self.headers("ana")).json().get("response_received"))


def run_with(answerer: Answerer, dag_bag: DagBag, **conf: Any) -> Any:
    answerer.start()
    run = trigger(dag_bag, REASSIGNMENT, action="replication_factor", topics=[TOPIC], replication_factor=2,
                  batch_size=3, approve_in_ui=True, **conf)  # fmt: skip
    answerer.join(10)
    assert answerer.error is None, answerer.error
    return run


def test_an_approved_plan_is_executed_as_shown_and_only_an_approver_may_approve(
    topic: str, configure: Configure, dag_bag: DagBag, dag_sandbox: SandboxCluster, api: TestClient
) -> None:
    lake_root = configure(extra=APPROVERS)
    answerer = Answerer(api, [("bo", "Execute"), ("ana", "Execute")])

    run = run_with(answerer, dag_bag)

    assert answerer.statuses == [403, 200], "Airflow took an answer from a user who is not an approver"
    assert run.state == "success"
    assert states(run) == {"validate_params": "success", "plan": "success", "execute": "skipped",
                           "approve": "success", "execute_approved": "success", "rejected": "skipped"}  # fmt: skip
    request = answerer.request or {}
    plan_id = xcom(run, "plan")["plan_id"]
    assert request["subject"] == f"Execute replication_factor plan {plan_id} on cluster sandbox?"
    shown = request["body"].replace("\\", "")  # the review's Markdown escapes
    assert f"{TOPIC}-0: [1] -> [1, " in shown and "Only ana may answer" in request["body"]
    assert "dry_run = false" not in shown  # the two-trigger flow's next step is not this run's
    assert [u["id"] for u in request["assigned_users"]] == ["ana"]
    assert xcom(run, "execute_approved")["status"] == "done"
    snap = dag_sandbox.snapshot()
    assert all(len(snap.topics[TOPIC].partitions[p]) == 2 for p in range(3))
    steps = [(a, o) for _, a, o in audit(lake_root, plan_id) if a == "approve"]
    assert steps == [("approve", "requested"), ("approve", "approved")]


def test_a_rejected_plan_writes_nothing(
    topic: str, configure: Configure, dag_bag: DagBag, dag_sandbox: SandboxCluster, api: TestClient
) -> None:
    lake_root = configure(extra=APPROVERS)
    before = cluster_state(dag_sandbox, [TOPIC])

    run = run_with(Answerer(api, [("ana", "Reject")]), dag_bag, detected="leader imbalance persisted")

    assert run.state == "success"
    assert states(run)["execute_approved"] == "skipped" and states(run)["rejected"] == "success"
    assert cluster_state(dag_sandbox, [TOPIC]) == before
    plan_id = xcom(run, "plan")["plan_id"]
    assert [o for _, a, o in audit(lake_root, plan_id) if a == "approve"] == ["requested", "rejected"]
    # asked for by the automatic election (`detected`): its lifecycle starts at the detection
    (found,) = [c for c in lifecycles(open_lake(lake_root), "sandbox") if c.plan_id == plan_id]
    assert [(s.state, s.by) for s in found.steps][:2] == [
        ("detected", AUTOMATIC_ACTOR),
        ("planned", f"dag_test ({run.run_id})"),
    ]
    assert found.steps[0].detail == "leader imbalance persisted" and found.state == "rejected"


def test_a_plan_nobody_answers_in_time_is_rejected_and_writes_nothing(
    topic: str, configure: Configure, dag_bag: DagBag, dag_sandbox: SandboxCluster, api: TestClient
) -> None:
    lake_root = configure(extra=APPROVERS + "approval_timeout_minutes = 0.05\n")  # 3 s
    before = cluster_state(dag_sandbox, [TOPIC])

    run = run_with(Answerer(api, [], sweep=True), dag_bag)

    assert run.state == "success"
    assert states(run)["execute_approved"] == "skipped" and states(run)["rejected"] == "success"
    assert xcom(run, "rejected")["outcome"] == "timed_out"
    assert cluster_state(dag_sandbox, [TOPIC]) == before
    plan_id = xcom(run, "plan")["plan_id"]
    assert [o for _, a, o in audit(lake_root, plan_id) if a == "approve"] == ["requested", "timed_out"]


def test_nobody_may_approve_without_approvers_and_roles_take_their_users(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="nobody may approve its plans in the UI: set 'approvers'"):
        respondents(ClusterConfig("c1"))
    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS", "ana:admin,bo:op,cy:user,dee:viewer")
    assert respondents(ClusterConfig("c1", approver_roles=("op",))) == ["ana", "bo"]
    assert respondents(ClusterConfig("c1", approvers=("zed",), approver_roles=("user",))) == ["ana", "bo", "cy", "zed"]
    with pytest.raises(ConfigError, match="'approver_roles' must be among"):
        ClusterConfig("c1", approver_roles=("root",))
    with pytest.raises(ConfigError, match="cluster 'c1': 'approvers' names one twice"):
        ClusterConfig("c1", approvers=("ana", "ana"))
    with pytest.raises(ConfigError, match="cluster 'c1': 'approvers' must be a list of Airflow user names"):
        ClusterConfig("c1", approvers=(" ana",))
