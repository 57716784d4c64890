"""An analysis DAG run as of a past time (the `as_of` Param) is forensic, task by task: it judges the
batches current then and changes nothing the present is judged by (verdicts, incidents, latest
findings, `latest.html`); on a Parquet lake it fails at once, naming the Param."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kafka_ops.airflow import health_tasks
from kafka_ops.airflow.analysis_arguments import analysis_targets, spark_arguments
from kafka_ops.airflow.assets import GROUP_SNAPSHOT_ASSET, SNAPSHOT_ASSET
from kafka_ops.errors import ConfigError
from kafka_ops.lake.open import open_lake
from kafka_ops.report.digest import render_findings
from kafka_ops.report.publish import read_report
from kafka_ops.settings import load_settings
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.validation.pipeline import latest_analysed, validate_batches
from kafka_ops.web.app import build_app
from tests.unit.snapshots import AT, small_snapshot
from tests.unit.validation.findings import healthy_zk, isr, publish_analysis

RUN = datetime(2026, 11, 21, 7, 0, tzinfo=UTC)


def configure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lake_format: str) -> Path:
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(
        f'lake_root = "{tmp_path / "lake"}"\nlake_format = "{lake_format}"\n'
        '[[clusters]]\nname = "c1"\nwrites_enabled = true\nauto_remediation = true\nauto_election_after_runs = 1\n'
    )
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    monkeypatch.delenv("KAFKA_OPS_LAKE_FORMAT", raising=False)
    return tmp_path / "lake"


def analysed_snapshot(root: Path, snapshot_id: str, captured_at: datetime, *, offline: bool) -> None:
    """A snapshot, its validation and its analysis, as a normal run leaves them."""
    lake = open_lake(root, "delta")
    snap = small_snapshot(snapshot_id)
    snap.captured_at = captured_at
    lake.publish(snapshot_batch(snap))
    validate_batches(lake, "c1", captured_at, snapshot_id=snapshot_id)
    findings = healthy_zk()
    if offline:
        findings["isr_health"] = [*findings["isr_health"], isr("solo", 0, [3], [], -1)]
    publish_analysis(lake, snapshot_id, findings, captured_at=captured_at)


def moment() -> str:
    """A time strictly between the Delta commits before and after it (their times are in ms)."""
    time.sleep(0.02)
    at = datetime.now(UTC)
    time.sleep(0.02)
    return at.isoformat()


def test_an_as_of_run_judges_the_past_and_leaves_the_present_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = configure(tmp_path, monkeypatch, "delta")
    analysed_snapshot(root, "s1", AT - timedelta(minutes=10), offline=False)
    then = moment()
    analysed_snapshot(root, "s2", AT, offline=True)  # now: a partition offline
    lake = open_lake(root, "delta")
    current = health_tasks.gates(
        {"cluster": "c1", "zookeeper": True, "snapshot_id": None, "groups": False, "group_snapshot_id": None}, RUN
    )
    health_tasks.alerts(current, RUN, "kafka_health_analysis", "now")
    health_tasks.report(current, RUN, "kafka_health_analysis", "now")
    verdicts = {r["snapshot_id"]: r for r in lake.read("snapshot_validations", "c1").to_pylist()}
    incidents = {p.name: p.read_bytes() for p in (root / "_alerting").iterdir()}
    latest_page = read_report(lake, "c1")
    client = TestClient(build_app(load_settings(), clock=lambda: AT))
    shown = (render_findings(lake, "c1"), client.get("/metrics").text)
    assert "solo" in shown[0] and "no_offline_partitions" in str(incidents)

    (target,) = analysis_targets(load_settings(), None, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET, then)
    assert target == {"cluster": "c1", "zookeeper": True, "snapshot_id": "s1", "groups": False,
                      "group_snapshot_id": None, "as_of": then}  # fmt: skip
    (args,) = spark_arguments(load_settings(), [target], "snapshots", then)
    assert args[-4:] == ["--as-of", then, "--snapshot-id", "s1"]

    validated = health_tasks.validate(target, RUN + timedelta(hours=1))
    assert validated["snapshots"]["snapshot_id"] == "s1"
    assert validated["snapshots"]["recorded_at"] == verdicts["s1"]["validated_at"].isoformat()  # kept, not redone
    # the as-of job re-publishes the analysis of s1 (a later analysed_at), as analysis.runner does
    publish_analysis(lake, "s1", healthy_zk(), captured_at=AT - timedelta(minutes=10))
    gated = health_tasks.gates(target, RUN)
    assert gated["as_of"] == then and gated["report"]["snapshot_id"] == "s1"
    assert all(g["passed"] for g in gated["report"]["results"])  # s1 was healthy; s2 is not
    assert health_tasks.alerts(gated, RUN, "kafka_health_analysis", "past")["skipped"] is True
    assert health_tasks.auto_election(gated, "past") == {
        "cluster": "c1",
        "skipped": True,
        "elected": False,
        "reason": f"an analysis as of {then} is forensic: nothing is written to the cluster because of the past",
    }
    page = health_tasks.report(gated, RUN, "kafka_health_analysis", "past")
    assert page is not None and page.endswith("s1.html")
    assert f"as of {datetime.fromisoformat(then):%Y-%m-%d %H:%M:%S} UTC: snapshot s1 captured 2026-11-21 05:50:00" in (
        Path(page).read_text()
    )

    assert {r["snapshot_id"]: r for r in lake.read("snapshot_validations", "c1").to_pylist()} == verdicts
    assert {p.name: p.read_bytes() for p in (root / "_alerting").iterdir()} == incidents
    assert read_report(lake, "c1") == latest_page
    assert latest_analysed(lake, "c1", "snapshots") == ("s2", AT)
    assert (render_findings(lake, "c1"), client.get("/metrics").text) == shown


def test_an_as_of_run_validates_a_batch_never_validated_under_its_own_id_and_refuses_a_time_before_the_lake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = configure(tmp_path, monkeypatch, "delta")
    lake = open_lake(root, "delta")
    too_early = moment()
    lake.publish(snapshot_batch(small_snapshot("s1")))
    then = moment()
    analysed_snapshot(root, "s2", AT + timedelta(minutes=5), offline=False)
    before = lake.read("snapshot_validations", "c1").to_pylist()
    (target,) = analysis_targets(load_settings(), None, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET, then)
    with pytest.raises(ConfigError, match=r"Param 'as_of' \(.*\): no configured cluster \(c1\) had a snapshot"):
        analysis_targets(load_settings(), None, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET, too_early)

    validated = health_tasks.validate(target, RUN)
    assert validated["snapshots"]["snapshot_id"] == "s1" and "recorded_at" not in validated["snapshots"]
    after = {r["snapshot_id"]: r for r in lake.read("snapshot_validations", "c1").to_pylist()}
    assert set(after) == {"s1", "s2"} and after["s2"] == before[0]


def test_an_as_of_run_on_a_parquet_lake_fails_at_once_naming_the_param(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = configure(tmp_path, monkeypatch, "parquet")
    open_lake(root).publish(snapshot_batch(small_snapshot("s1")))
    with pytest.raises(ConfigError, match=r"Param 'as_of' \(2026-11-21T06:00:00\+00:00\): .* Parquet lake"):
        analysis_targets(load_settings(), None, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET, AT.isoformat())
    with pytest.raises(ConfigError, match=r"Param 'as_of': .* has no time zone"):
        analysis_targets(load_settings(), None, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET, "2026-11-21T06:00:00")
