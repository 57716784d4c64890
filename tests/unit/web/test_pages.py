"""The pages inside the Airflow UI, from a lake written by the real writers: the published health
report, the plans with their progress and audit, a DAG run's tab, and 404 pages that say what exists."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kafka_ops.lake.store import Lake
from kafka_ops.remediation.progress import Progress
from kafka_ops.remediation.store import AuditLog, save_plan, write_progress
from kafka_ops.report.publish import write_report
from kafka_ops.web.app import build_app
from tests.unit.remediation.clusters import rf2_plan
from tests.unit.report import scenario
from tests.unit.web import lakes

PLAN = rf2_plan()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    root = tmp_path_factory.mktemp("pages") / "lake"
    lake = scenario.build(Lake(root))
    write_report(lake, lakes.CLUSTER, now=lakes.NOW)
    assert PLAN.cluster == lakes.CLUSTER
    save_plan(lake, PLAN, created_by="alice (manual__2026-11-21)")
    write_progress(lake, Progress(PLAN.plan_id, PLAN.cluster, "admin_api", [], [], status="done"))
    AuditLog(lake, PLAN, "admin_api", "alice", "manual__2026-11-22").record("verify", "ok", detail="all at target")
    return TestClient(build_app(lakes.settings(root), clock=lambda: lakes.NOW))


def test_the_index_links_every_cluster_to_its_report_and_plans(client: TestClient) -> None:
    page = client.get("/ui")
    assert page.status_code == 200
    assert '<a href="/ui/reports/c1">latest report</a>' in page.text
    assert '<a href="/ui/plans/c1">1 plan(s)</a>' in page.text


def test_the_latest_report_is_the_page_the_analysis_published(client: TestClient, tmp_path: Path) -> None:
    page = client.get("/ui/reports/c1")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'name="kafka-ops-report"' in page.text  # the report's own marker, as report.publish writes it


def test_a_plan_shows_its_moves_progress_and_audit(client: TestClient) -> None:
    plans = client.get("/ui/plans/c1")
    assert f'<a href="/ui/plans/c1/{PLAN.plan_id}">{PLAN.plan_id}</a>' in plans.text
    assert "<td>done</td>" in plans.text and "alice (manual__2026-11-21)" in plans.text
    page = client.get(f"/ui/plans/c1/{PLAN.plan_id}")
    assert page.status_code == 200
    move = PLAN.reassignments[0]
    current, target = ", ".join(map(str, move.current)), ", ".join(map(str, move.target))
    assert f"<td>{move.topic}</td><td>{move.partition}</td><td>{current}</td><td>{target}</td>" in page.text
    assert f"Reassignments ({len(PLAN.reassignments)})" in page.text
    assert "<td>verify</td>" in page.text and "all at target" in page.text
    lifecycle = page.text.split("<h2>Lifecycle</h2>")[1].split("<h2>")[0]
    assert lifecycle.index("<td>planned</td>") < lifecycle.index("<td>done</td>")
    assert "<td>alice (manual__2026-11-21)</td>" in lifecycle and "<td>alice</td>" in lifecycle
    assert "<td>done since " in plans.text
    assert page.text.count("<svg") == 2 and "Replicas per broker before (grey) and after (blue)" in page.text


def test_a_dag_run_tab_shows_the_plans_it_made_and_the_events_it_wrote(client: TestClient) -> None:
    made = client.get("/ui/runs/kafka_partition_reassignment/manual__2026-11-21")
    assert f"/ui/plans/c1/{PLAN.plan_id}" in made.text and "This run wrote nothing to a cluster" in made.text
    ran = client.get("/ui/runs/kafka_partition_reassignment/manual__2026-11-22")
    assert "Plans this run made</h2><p>none</p>" in ran.text and "<td>verify</td>" in ran.text
    analysis = client.get("/ui/runs/kafka_health_analysis/scheduled__x")
    assert '<a href="/ui/reports/c1">c1: latest health report</a>' in analysis.text


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/ui/reports/nope", "No cluster named &#x27;nope&#x27; in the kafka-ops settings (have: c1)"),
        ("/ui/plans/nope", "No cluster named"),
        ("/ui/reports/c1/s0", "Cluster c1 has no report &#x27;s0&#x27; in the lake"),
        ("/ui/reports/c1/$x", "report id &#x27;$x&#x27; cannot be used in lake paths"),
        ("/ui/plans/c1/p-none", f"Cluster c1 has no plan &#x27;p-none&#x27; (latest: {PLAN.plan_id})"),
    ],
)
def test_what_does_not_exist_is_a_404_page_naming_what_does(client: TestClient, path: str, says: str) -> None:
    page = client.get(path)
    assert page.status_code == 404 and says in page.text, page.text
