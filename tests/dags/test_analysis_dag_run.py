"""Run the analysis DAG with `dag.test()`: real spark-submits of both analysis jobs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag
from fastapi.testclient import TestClient

from kafka_ops.lake.open import open_lake
from kafka_ops.report.digest import render_findings
from kafka_ops.settings import load_settings
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.web.app import build_app
from tests.unit.snapshots import GROUPS_AT, group_snapshot, small_snapshot

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.slow, pytest.mark.usefixtures("airflow_db")]


def test_analysis_dag_publishes_findings(dag_bag: DagBag, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A manual run: both jobs, for the one cluster with a ZooKeeper snapshot and a group collection, on
    the default Delta lake (`$KAFKA_OPS_LAKE_FORMAT`), then the digest and the web metrics read it. One
    spark-submit run (minutes here): a Parquet lake's analysis is the same job with fewer jars
    (`spark_jars`, tests/integration/s3/test_spark_analysis_s3.py), and runs in-process in the
    detectors' tests and the benchmarks' toys."""
    lake_format = "delta"
    lake = open_lake(tmp_path / "lake", lake_format)
    lake.publish(snapshot_batch(small_snapshot("s1", cluster="default")))
    lake.publish(group_batch(group_snapshot("g1", cluster="default")))
    monkeypatch.delenv("KAFKA_OPS_CONFIG", raising=False)
    monkeypatch.setenv("KAFKA_OPS_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("KAFKA_OPS_LAKE_FORMAT", lake_format)
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[2]"}))

    run = dag_bag.dags["kafka_health_analysis"].test()

    assert run.state == "success"
    runs = lake.read("analysis_runs", "default").to_pylist()
    assert sorted((r["source"], r["snapshot_id"]) for r in runs) == [("group_snapshots", "g1"), ("snapshots", "s1")]
    groups = {r["group_id"]: r["status"] for r in lake.read("lag_status_groups", "default").to_pylist()}
    assert groups == {"stable": "OK", "committer": "OK"}  # one collection: nothing to compare yet
    # integrity validation → detectors → gates → alerts → report
    validations = {r["snapshot_id"]: r["trusted"] for r in lake.read("snapshot_validations", "default").to_pylist()}
    assert set(validations) == {"s1", "g1"}
    sink = tmp_path / "lake" / "_alerting" / "default.alerts.jsonl"  # the default log sink
    opened = {(a["key"], a["severity"]) for a in map(json.loads, sink.read_text().splitlines()) if a["event"] == "open"}
    assert ("no_offline_partitions", "critical") in opened
    page = tmp_path / "lake" / "_reports" / "default" / "s1.html"
    assert "solo" in page.read_text() and (page.parent / "latest.html").exists()
    health = {(r["topic"], r["partition"]): r["status"] for r in lake.read("isr_health", "default").to_pylist()}
    assert health[("orders", 0)] == "under_replicated"
    assert health[("solo", 0)] == "offline"
    assert (tmp_path / "lake" / "analysis_runs" / "_delta_log").is_dir()  # the jobs wrote through delta-rs
    assert "solo" in render_findings(lake, "default")
    metrics = TestClient(build_app(load_settings(), clock=lambda: GROUPS_AT)).get("/metrics").text.splitlines()
    lags = [m for m in metrics if m.startswith("kafka_consumergroup_group_lag{") and 'group="stable"' in m]
    assert lags and all('cluster_name="default"' in m for m in lags)


def test_analysis_job_help_and_bad_arguments(tmp_path: Path) -> None:
    job = Path(__file__).parents[2] / "spark_jobs" / "cluster_health.py"
    shown = subprocess.run([sys.executable, str(job), "--help"], capture_output=True, text=True, check=True)
    assert "--lake" in shown.stdout and "--detectors" in shown.stdout
    bad = subprocess.run(
        [sys.executable, str(job), "--lake", str(tmp_path), "--cluster", "x", "--detectors", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "unknown detector(s) ['nope']" in bad.stderr


def test_consumer_groups_job_names_a_missing_collection(tmp_path: Path) -> None:
    job = Path(__file__).parents[2] / "spark_jobs" / "consumer_groups.py"
    shown = subprocess.run([sys.executable, str(job), "--help"], capture_output=True, text=True, check=True)
    assert "assignor_whatif" in shown.stdout and "lag_status" in shown.stdout
    open_lake(tmp_path).publish(snapshot_batch(small_snapshot("s1", cluster="x")))  # ZooKeeper only, no groups
    missing = subprocess.run(
        [sys.executable, str(job), "--lake", str(tmp_path), "--cluster", "x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2
    assert "no committed batch of cluster 'x' in commit log 'group_snapshots'" in missing.stderr
