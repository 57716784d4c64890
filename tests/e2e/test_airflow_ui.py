"""The remediation DAG as an operator uses it: Airflow's own UI in headless Chromium, a real Airflow
(api-server, scheduler, dag-processor) and the real sandbox cluster.

The browser opens the trigger form of `kafka_preferred_leader_election`, fills its Params by their
titles, triggers a dry run and watches the run finish; its plan must be in the lake, made by the
user who pressed Trigger, with nothing elected on the cluster. Invalid Params are refused naming
the field: an empty Cluster by the form itself (JSON schema), an unknown cluster by
`validate_params` before anything else runs. Screenshots of the form and the finished run are saved
in `var/e2e-artifacts/`; `KAFKA_OPS_UPDATE_SCREENSHOTS=1` also refreshes docs/airflow-trigger-form.png.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from kafka import TopicPartition as KafkaTP
from kafka.admin import KafkaAdminClient, NewTopic
from playwright.sync_api import Locator, Page, expect

from kafka_ops.lake.open import open_lake
from kafka_ops.planning.request import ELECTION_FORM
from kafka_ops.report.publish import write_report
from kafka_ops.snapshot.tables import snapshot_batch
from sandbox import SandboxCluster
from tests.e2e.airflow_stack import USER, AirflowUI
from tests.e2e.conftest import APPROVED_CLUSTER

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

ELECTION = ELECTION_FORM.dag_id
TOPIC = "e2e_ui_election"
ASSIGNMENT = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}
REORDERED = [2, 1, 3]
"""Partition 0's replicas after a reorder: broker 2 becomes preferred while broker 1 keeps leading."""
RUN_TIMEOUT_S = 240
DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "airflow-trigger-form.png"
MAX_DOCS_BYTES = 300_000


# -- the cluster: one partition whose leader is not its preferred replica -------------------------------


@pytest.fixture
def election_topic(healthy_sandbox: SandboxCluster) -> Iterator[str]:
    """`TOPIC`, fresh, with partition 0 led by broker 1 while broker 2 is preferred (reordered replica
    list; the sandbox never rebalances leaders by itself); deleted afterwards."""
    sandbox = healthy_sandbox
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=10_000)
    try:
        if TOPIC in sandbox.snapshot().topics:
            _delete(admin, sandbox)
        admin.create_topics([NewTopic(TOPIC, replica_assignments=ASSIGNMENT)])
        sandbox.wait_for(
            lambda s: all(
                (TOPIC, p) in s.partition_states and len(s.partition_states[(TOPIC, p)].isr) == 3 for p in ASSIGNMENT
            ),
            60,
            f"{TOPIC} created with its ISR full",
        )
        admin.alter_partition_reassignments({KafkaTP(TOPIC, 0): REORDERED})
        sandbox.wait_for(
            lambda s: list(s.topics[TOPIC].partitions[0]) == REORDERED and not s.topics[TOPIC].adding_replicas,
            60,
            f"{TOPIC}-0 reordered to {REORDERED}",
        )
        yield TOPIC
        sandbox.wait_healthy(120)
        _delete(admin, sandbox)
    finally:
        admin.close()


def _delete(admin: KafkaAdminClient, sandbox: SandboxCluster) -> None:
    admin.delete_topics([TOPIC])
    sandbox.wait_for(lambda s: TOPIC not in s.topics and TOPIC not in s.pending_topic_deletions, 60, f"{TOPIC} deleted")


def leader(sandbox: SandboxCluster, partition: int) -> int | None:
    return sandbox.snapshot().partition_states[(TOPIC, partition)].leader


# -- the trigger form ---------------------------------------------------------------------------------


def open_trigger_form(page: Page) -> Locator:
    """The DAG page's Trigger button; the form's dialog once it shows the Params' sections."""
    page.goto(f"/dags/{ELECTION}")
    page.get_by_role("button", name="Trigger Dag").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"Trigger Dag - {ELECTION}")
    expect(section_button(dialog, "What to plan")).to_be_visible()
    return dialog


def section_button(dialog: Locator, section: str) -> Locator:
    return dialog.get_by_role("button", name=section, exact=True)


def open_section(dialog: Locator, section: str) -> None:
    """Params are grouped by their `section`; the form shows one section at a time."""
    button = section_button(dialog, section)
    if button.get_attribute("aria-expanded") != "true":
        button.click()
    expect(button).to_have_attribute("aria-expanded", "true")


def param_field(dialog: Locator, title: str) -> Locator:
    """The form row of the Param whose `title` is `title` (its label; required ones end with *)."""
    label = dialog.page.locator("label", has_text=re.compile(rf"^{re.escape(title)}\b"))
    row = dialog.locator("[data-scope=field][data-part=root]").filter(has=label)
    expect(row, f"no Param titled {title!r} in the form").to_have_count(1)
    return row


def choose(dialog: Locator, title: str, option: str) -> None:
    """Pick `option` (its display text starts so) in the select of Param `title`."""
    param_field(dialog, title).get_by_role("combobox").click()
    dialog.page.get_by_role("option", name=re.compile(rf"^{re.escape(option)}")).click()
    expect(param_field(dialog, title)).to_contain_text(option)


def submit(dialog: Locator) -> str:
    """Press Trigger; the new run's id, from the run page the UI opens."""
    page = dialog.page
    dialog.get_by_test_id("trigger-dag-submit").click()
    page.wait_for_url(re.compile(rf"/dags/{ELECTION}/runs/[^/?]+$"))
    return unquote(page.url.rsplit("/runs/", 1)[1])


def screenshot(target: Page | Locator, airflow: AirflowUI, name: str) -> None:
    target.screenshot(path=airflow.artifacts / f"{name}.png")


# -- the REST API: a run's end, its tasks, the plan task's XCom -----------------------------------------


def finished_run(airflow: AirflowUI, run_id: str) -> dict[str, Any]:
    path = f"dags/{ELECTION}/dagRuns/{quote(run_id, safe='')}"

    def done() -> dict[str, Any] | None:
        run: dict[str, Any] = airflow.stack.get_json(path)
        return run if run["state"] in ("success", "failed") else None

    return airflow.stack.wait_for(f"run {run_id} to finish", done, RUN_TIMEOUT_S)


def task_states(airflow: AirflowUI, run_id: str) -> dict[str, str | None]:
    path = f"dags/{ELECTION}/dagRuns/{quote(run_id, safe='')}/taskInstances"
    return {ti["task_id"]: ti["state"] for ti in airflow.stack.get_json(path)["task_instances"]}


def plan_summary(airflow: AirflowUI, run_id: str) -> dict[str, Any]:
    path = f"dags/{ELECTION}/dagRuns/{quote(run_id, safe='')}/taskInstances/plan/xcomEntries/return_value"
    value: dict[str, Any] = airflow.stack.get_json(path)["value"]
    return value


def stored_plans(airflow: AirflowUI) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = open_lake(airflow.lake_root).read("remediation_plans", airflow.cluster).to_pylist()
    return rows


# -- the cases ----------------------------------------------------------------------------------


def test_dry_run_from_the_trigger_form(
    page: Page, airflow: AirflowUI, election_topic: str, healthy_sandbox: SandboxCluster
) -> None:
    """Fill cluster, action, topic, batch size; Dry run stays on; Trigger. The run succeeds through
    `plan` (`execute` skipped), its plan (one election: partition 0 back to broker 2) is in the lake,
    created by the admin who pressed Trigger, and nothing was elected on the cluster."""
    assert leader(healthy_sandbox, 0) == 1
    dialog = open_trigger_form(page)
    open_section(dialog, "Pace of the execution")
    param_field(dialog, "Batch size").get_by_role("spinbutton").fill("5")
    open_section(dialog, "Dry run or execute")
    expect(param_field(dialog, "Dry run").get_by_role("checkbox")).to_be_checked()
    expect(param_field(dialog, "Plan id").locator("input")).to_have_value("")
    open_section(dialog, "What to plan")
    param_field(dialog, "Cluster").locator("input").fill(airflow.cluster)
    choose(dialog, "Action", "Preferred-leader election")
    param_field(dialog, "Topics").locator("textarea").fill(election_topic)
    screenshot(dialog, airflow, "trigger-form")
    if os.environ.get("KAFKA_OPS_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(airflow.artifacts / "trigger-form.png", DOCS_SCREENSHOT)

    run_id = submit(dialog)
    run = finished_run(airflow, run_id)

    states = task_states(airflow, run_id)
    assert run["state"] == "success", f"run {run_id} {run['state']}: {states}"
    assert states == {"validate_params": "success", "plan": "success", "execute": "skipped", "approve": "skipped",
                      "execute_approved": "skipped", "rejected": "skipped"}  # fmt: skip
    assert run["conf"] == {
        "cluster": airflow.cluster, "action": "preferred_election", "topics": [election_topic], "topic_pattern": "",
        "batch_size": 5, "dry_run": True, "approve_in_ui": False, "detected": "", "plan_id": "",
    }  # fmt: skip
    page.reload()
    tasks = page.get_by_role("table")
    for task_id, state in (("validate_params", "Success"), ("plan", "Success"), ("execute", "Skipped")):
        expect(tasks.get_by_role("row", name=re.compile(rf"^{task_id} "))).to_contain_text(state)
    screenshot(page, airflow, "run-finished")

    summary = plan_summary(airflow, run_id)
    (stored,) = [row for row in stored_plans(airflow) if row["plan_id"] == summary["plan_id"]]
    assert (stored["kind"], stored["elections"], stored["moves"]) == ("preferred_election", 1, 0)
    assert stored["created_by"] == f"{USER} ({run_id})", "the plan does not name who triggered it"
    assert json.loads(stored["request"])["topics"] == [election_topic]
    assert leader(healthy_sandbox, 0) == 1, "a dry run elected a leader"
    assert (airflow.artifacts / "trigger-form.png").stat().st_size < MAX_DOCS_BYTES

    # the run's "kafka-ops" tab (the plugin's dag_run external view) shows the plan it made
    page.goto(f"/dags/{ELECTION}/runs/{quote(run_id, safe='')}/plugin/kafka-ops-run")
    tab = page.frame_locator("iframe")
    expect(tab.get_by_role("heading", name="Plans this run made")).to_be_visible()
    tab.get_by_role("link", name=summary["plan_id"]).click()
    expect(tab.get_by_role("heading", name=f"{airflow.cluster}: plan {summary['plan_id']}")).to_be_visible()
    expect(tab.get_by_text("Elections (1)")).to_be_visible()
    screenshot(page, airflow, "run-kafka-ops-tab")


def test_the_health_report_inside_the_airflow_ui(
    page: Page, airflow: AirflowUI, healthy_sandbox: SandboxCluster
) -> None:
    """The navigation's "Kafka health" (the plugin's nav external view) is the fleet page: a row per cluster
    with its tier, owner and kind, sortable by a heading; the cluster's link opens the health report the
    analysis published, inside the Airflow UI, with the Airflow session's auth."""
    lake = open_lake(airflow.lake_root)
    lake.publish(snapshot_batch(healthy_sandbox.snapshot()))
    write_report(lake, airflow.cluster)
    page.goto("/plugin/kafka-ops")
    view = page.frame_locator("iframe")
    expect(view.get_by_role("heading", name="kafka-ops")).to_be_visible()
    sandbox = view.get_by_role("row", name=re.compile(rf"^{airflow.cluster} "))
    expect(sandbox).to_contain_text("1platform-teamZooKeeper")  # tier, owner, kind: adjacent cells
    expect(sandbox).to_contain_text("metadata: ")  # the snapshot just published, its age
    approved = view.get_by_role("row", name=re.compile(rf"^{APPROVED_CLUSTER} "))
    expect(approved).to_contain_text("2payments-team")
    expect(approved.get_by_role("link", name="latest report")).to_have_count(1)
    view.get_by_role("link", name="tier", exact=True).click()
    expect(view.locator("td:first-child")).to_have_text([airflow.cluster, APPROVED_CLUSTER])
    view.get_by_role("link", name="tier", exact=True).click()  # again: the reverse order
    expect(view.locator("td:first-child")).to_have_text([APPROVED_CLUSTER, airflow.cluster])
    screenshot(page, airflow, "kafka-fleet")
    view.get_by_role("row", name=re.compile(rf"^{airflow.cluster} ")).get_by_role("link", name="latest report").click()
    expect(view.locator("meta[name=kafka-ops-report]")).to_have_count(1)
    expect(view.get_by_text(airflow.cluster).first).to_be_visible()
    screenshot(page, airflow, "kafka-health-report")


def test_invalid_params_are_refused_naming_the_field(
    page: Page, airflow: AirflowUI, healthy_sandbox: SandboxCluster
) -> None:
    """An empty Cluster: the form (the Param's JSON schema) marks the field and will not trigger.
    A cluster the settings do not name: `validate_params` fails the run naming Param 'cluster',
    in the task log (API and UI); nothing after it runs and no plan is made."""
    plans_before = len(stored_plans(airflow))
    dialog = open_trigger_form(page)
    open_section(dialog, "What to plan")
    cluster = param_field(dialog, "Cluster")
    cluster.locator("input").fill("")
    param_field(dialog, "Topic pattern").locator("input").click()  # leave the field: the form validates it
    expect(cluster).to_contain_text("This field is required")
    expect(dialog.get_by_test_id("trigger-dag-submit")).to_be_disabled()
    screenshot(dialog, airflow, "invalid-empty-cluster")

    cluster.locator("input").fill("nope")
    expect(dialog.get_by_test_id("trigger-dag-submit")).to_be_enabled()
    run_id = submit(dialog)
    run = finished_run(airflow, run_id)

    assert run["state"] == "failed"
    assert task_states(airflow, run_id) == {
        "validate_params": "failed", "plan": "upstream_failed", "execute": "upstream_failed",
        "approve": "upstream_failed", "execute_approved": "upstream_failed", "rejected": "upstream_failed",
    }  # fmt: skip
    message = "Param 'cluster': no cluster named 'nope' in the settings"
    log = airflow.stack.task_log(ELECTION, run_id, "validate_params")
    assert message in log, f"the validate_params log does not name the field:\n{log[-3000:]}"
    page.goto(f"/dags/{ELECTION}/runs/{quote(run_id, safe='')}/tasks/validate_params")
    expect(page.get_by_text(message).first).to_be_visible()
    screenshot(page, airflow, "invalid-cluster-log")
    assert len(stored_plans(airflow)) == plans_before, "a plan was made from an invalid Param"


def test_a_plan_approved_in_the_required_actions_view_is_executed(
    page: Page, airflow: AirflowUI, election_topic: str, healthy_sandbox: SandboxCluster
) -> None:
    """A run with Approve in the UI plans, then waits under Required actions with the plan's review; the
    admin (the cluster's approver) presses Execute in the browser and the run executes exactly that plan:
    partition 0's leader is back on its preferred broker. The audit names who approved it."""
    assert leader(healthy_sandbox, 0) == 1
    conf = {"cluster": APPROVED_CLUSTER, "action": "preferred_election", "topics": [election_topic],
            "topic_pattern": "", "batch_size": 5, "dry_run": True, "approve_in_ui": True, "plan_id": ""}  # fmt: skip
    created = airflow.stack.api("POST", f"dags/{ELECTION}/dagRuns", json={"logical_date": None, "conf": conf})
    assert created.status_code == 200, created.text[:500]
    run_id = created.json()["dag_run_id"]
    airflow.stack.wait_for(
        "the run to wait for an approval", lambda: task_states(airflow, run_id).get("approve") == "awaiting_input",
        RUN_TIMEOUT_S,
    )  # fmt: skip
    plan_id = plan_summary(airflow, run_id)["plan_id"]

    page.goto(f"/dags/{ELECTION}/runs/{quote(run_id, safe='')}/tasks/approve/required_actions")
    expect(
        page.get_by_text(f"Execute preferred_election plan {plan_id} on cluster {APPROVED_CLUSTER}?")
    ).to_be_visible()
    expect(page.get_by_text(f"Only {USER} may answer").first).to_be_visible()
    screenshot(page, airflow, "approval-required-action")
    page.get_by_role("button", name="Execute", exact=True).click()

    run = finished_run(airflow, run_id)
    states = task_states(airflow, run_id)
    assert run["state"] == "success", f"run {run_id} {run['state']}: {states}"
    assert (states["approve"], states["execute_approved"], states["rejected"]) == ("success", "success", "skipped")
    assert leader(healthy_sandbox, 0) == 2, "the approved election did not run"
    rows = open_lake(airflow.lake_root).read("remediation_audit", APPROVED_CLUSTER).to_pylist()
    approvals = [(r["outcome"], r["actor"]) for r in rows if r["plan_id"] == plan_id and r["action"] == "approve"]
    assert ("approved", USER) in approvals and ("requested", USER) in approvals
    page.goto(f"/dags/{ELECTION}/runs/{quote(run_id, safe='')}")
    screenshot(page, airflow, "approval-executed")
