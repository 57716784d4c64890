"""What the lake keeps beside its tables, on S3 (a real moto server): the incident state under
racing dispatchers (conditional writes: a lost race is merged, never overwritten), and the health
report, plans, progress and audit, written by the real writers and served by the UI pages."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from kafka_ops.alerting.incidents import ClusterState, Incident
from kafka_ops.alerting.state_store import IncidentStore
from kafka_ops.errors import AlertError
from kafka_ops.lake.open import open_lake
from kafka_ops.remediation.progress import Progress
from kafka_ops.remediation.store import AuditLog, load_plan, save_plan, write_progress
from kafka_ops.report.publish import read_report, write_report
from kafka_ops.web.app import build_app
from tests.unit.remediation.clusters import rf2_plan
from tests.unit.report import scenario
from tests.unit.web import lakes

pytestmark = pytest.mark.integration

AT = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def incident(key: str) -> Incident:
    return Incident(key=key, severity="critical", title=f"{key} is down", since=AT, opened_at=AT)


def with_incident(state: ClusterState, key: str) -> ClusterState:
    return replace(state, incidents={**state.incidents, key: incident(key)})


def test_a_save_racing_another_never_overwrites_it(s3_root: str) -> None:
    first, second = IncidentStore(s3_root), IncidentStore(s3_root)
    a, _ = first.load("c1")
    b, _ = second.load("c1")
    first.save(with_incident(a, "broker-1"))
    with pytest.raises(AlertError, match="another run saved it since this one read it"):
        second.save(with_incident(b, "broker-2"))
    assert set(IncidentStore(s3_root).load("c1")[0].incidents) == {"broker-1"}  # not overwritten
    second.save(with_incident(b, "broker-2"), merge=lambda latest: with_incident(latest, "broker-2"))
    assert set(IncidentStore(s3_root).load("c1")[0].incidents) == {"broker-1", "broker-2"}


def test_racing_dispatchers_keep_every_incident(s3_root: str) -> None:
    """Six runs load, change and save one cluster's state at once: the losers re-read and merge, so
    every run's incident is kept (an overwrite would drop one, and page for it again next run)."""
    keys = [f"broker-{i}" for i in range(6)]
    barrier = threading.Barrier(len(keys))
    errors: list[BaseException] = []

    def dispatch(key: str) -> None:
        try:
            store = IncidentStore(s3_root)
            state, _ = store.load("c1")
            barrier.wait()
            store.save(with_incident(state, key), merge=lambda latest: with_incident(latest, key))
        except BaseException as e:  # reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=dispatch, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    assert set(IncidentStore(s3_root).load("c1")[0].incidents) == set(keys)


def test_reports_and_plans_on_s3_are_served_by_the_ui(s3_root: str) -> None:
    lake = scenario.build(open_lake(s3_root, "delta"), groups=False)
    url = write_report(lake, "c1", now=lakes.NOW)
    assert url == f"{s3_root}/_reports/c1/s4.html"
    latest = read_report(lake, "c1")
    assert latest is not None and latest == read_report(lake, "c1", "s4")
    plan = rf2_plan()
    save_plan(lake, plan, created_by="alice")
    assert load_plan(open_lake(s3_root, "delta"), plan.cluster, plan.plan_id) == plan
    write_progress(lake, Progress(plan.plan_id, plan.cluster, "admin_api", [], [], status="done"))
    AuditLog(lake, plan, "admin_api", "alice", "manual__1").record("verify", "ok", detail="all at target")

    client = TestClient(build_app(lakes.settings(s3_root, lake_format="delta"), clock=lambda: lakes.NOW))
    page = client.get("/ui/reports/c1")
    assert page.status_code == 200 and page.text == latest
    assert "<td>done</td>" in client.get("/ui/plans/c1").text  # the progress document
    page = client.get(f"/ui/plans/c1/{plan.plan_id}")
    assert page.status_code == 200 and "all at target" in page.text  # the audit table
