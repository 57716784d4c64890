"""The analysis DAG on a warm Spark: a real Spark Connect server (spark-submit's SparkConnectServer, with
Delta's connector) instead of one spark-submit per job.

A Spark Connect session switches pyspark's functions to Connect for the whole process
(`SPARK_CONNECT_MODE_ENABLED`): the DAG's tasks leave it as they found it (`connect_mode_restored`), and
each test here removes it when it ends, so the run's local Spark sessions in this worker keep working."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag
from fastapi.testclient import TestClient

from kafka_ops.airflow.connect_analysis import analyse_on_connect
from kafka_ops.analysis.connect import CONNECT_SWITCHES, connect_session
from kafka_ops.analysis.connect_server import local_server
from kafka_ops.errors import ConfigError
from kafka_ops.lake.open import open_lake
from kafka_ops.report.digest import render_findings
from kafka_ops.settings import load_settings
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.web.app import build_app
from sandbox.cluster import free_port
from tests.unit.snapshots import GROUPS_AT, group_snapshot, small_snapshot

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.slow, pytest.mark.usefixtures("airflow_db")]

DAGS_FOLDER = Path(__file__).resolve().parents[2] / "dags"
CONN_ID = "spark_connect_test"


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Spark Connect server (local[1], 1 GB) for the module, stopped after it."""
    log = tmp_path_factory.mktemp("spark-connect") / "server.log"
    conf = {"spark.driver.memory": "1g", "spark.ui.enabled": "false"}
    with local_server(log, free_port(), master="local[1]", conf=conf, timeout_s=180) as url:
        yield url


@pytest.fixture(autouse=True)
def classic_spark_after() -> Iterator[None]:
    """pyspark's process-wide Connect switches, unset again when the test ends (a session a test opens
    itself sets them)."""
    yield
    for name in CONNECT_SWITCHES:
        os.environ.pop(name, None)


def test_the_analysis_dag_runs_its_jobs_on_the_spark_connect_server(
    connect_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With KAFKA_OPS_SPARK_CONNECT_CONN_ID, both jobs run inside their tasks on the server, while the
    spark-submit connection points at a master that does not exist: a manual run for the one cluster with a
    ZooKeeper snapshot and a group collection, on the default Delta lake, from integrity validation through
    the detectors, the gates and the alerts to the report, then the digest and the web metrics read it.
    The same DAG through spark-submit runs in the stack test (Airflow on Celery, a Spark standalone master:
    tests/stack/test_stack.py); its jobs' arguments are tested in test_analysis_dag_run.py."""
    lake = open_lake(tmp_path / "lake", "delta")
    lake.publish(snapshot_batch(small_snapshot("s1", cluster="default")))
    lake.publish(group_batch(group_snapshot("g1", cluster="default")))
    monkeypatch.delenv("KAFKA_OPS_CONFIG", raising=False)
    monkeypatch.setenv("KAFKA_OPS_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("KAFKA_OPS_LAKE_FORMAT", "delta")
    host, port = connect_url.removeprefix("sc://").split(":")
    monkeypatch.setenv(
        f"AIRFLOW_CONN_{CONN_ID.upper()}",
        json.dumps({"conn_type": "spark_connect", "host": f"sc://{host}", "port": int(port)}),
    )
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "spark://127.0.0.1:9"}))
    monkeypatch.setenv("KAFKA_OPS_SPARK_CONNECT_CONN_ID", CONN_ID)
    dag = DagBag(dag_folder=str(DAGS_FOLDER / "kafka_health_analysis.py")).dags["kafka_health_analysis"]
    assert type(dag.get_task("analyse_cluster")).__name__ != "SparkSubmitOperator"

    run = dag.test()

    assert run.state == "success"
    assert not any(name in os.environ for name in CONNECT_SWITCHES), "the tasks left pyspark switched to Connect"
    runs = lake.read("analysis_runs", "default").to_pylist()
    assert sorted((r["source"], r["snapshot_id"]) for r in runs) == [("group_snapshots", "g1"), ("snapshots", "s1")]
    health = {(r["topic"], r["partition"]): r["status"] for r in lake.read("isr_health", "default").to_pylist()}
    assert health[("orders", 0)] == "under_replicated" and health[("solo", 0)] == "offline"
    groups = {r["group_id"]: r["status"] for r in lake.read("lag_status_groups", "default").to_pylist()}
    assert groups == {"stable": "OK", "committer": "OK"}
    validations = {r["snapshot_id"]: r["trusted"] for r in lake.read("snapshot_validations", "default").to_pylist()}
    assert set(validations) == {"s1", "g1"}
    sink = tmp_path / "lake" / "_alerting" / "default.alerts.jsonl"  # the default log sink
    opened = {(a["key"], a["severity"]) for a in map(json.loads, sink.read_text().splitlines()) if a["event"] == "open"}
    assert ("no_offline_partitions", "critical") in opened
    page = tmp_path / "lake" / "_reports" / "default" / "s1.html"
    assert "solo" in page.read_text() and (page.parent / "latest.html").exists()
    assert (tmp_path / "lake" / "analysis_runs" / "_delta_log").is_dir()  # the jobs wrote through delta-rs
    assert "solo" in render_findings(lake, "default")
    metrics = TestClient(build_app(load_settings(), clock=lambda: GROUPS_AT)).get("/metrics").text.splitlines()
    lags = [m for m in metrics if m.startswith("kafka_consumergroup_group_lag{") and 'group="stable"' in m]
    assert lags and all('cluster_name="default"' in m for m in lags)


def test_a_server_that_is_down_fails_the_analysis_at_once_naming_the_connection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No fallback to spark-submit, no ten minutes of Spark Connect's retries: one line, in seconds."""
    open_lake(tmp_path, "delta").publish(snapshot_batch(small_snapshot("s1", cluster="default")))
    closed = free_port()
    monkeypatch.setenv(
        f"AIRFLOW_CONN_{CONN_ID.upper()}",
        json.dumps({"conn_type": "spark_connect", "host": "sc://127.0.0.1", "port": closed}),
    )
    arguments = ["--lake", str(tmp_path), "--cluster", "default", "--lake-format", "delta"]
    started = time.monotonic()
    with pytest.raises(
        ConfigError,
        match=rf"^the Spark Connect server 127.0.0.1:{closed} \(Airflow connection '{CONN_ID}'\) does not answer",
    ):
        analyse_on_connect(CONN_ID, "cluster_health.py", arguments)
    assert time.monotonic() - started < 15
    with pytest.raises(
        ConfigError, match=r"Airflow connection 'nowhere' \(KAFKA_OPS_SPARK_CONNECT_CONN_ID\) is not defined"
    ):
        analyse_on_connect("nowhere", "cluster_health.py", arguments)


def test_a_session_needs_an_sc_url_and_a_server_that_reads_the_lake(connect_url: str) -> None:
    """The server here has Delta's extension: a session for either lake format opens; a URL that is not
    Spark Connect's is refused before any connection."""
    for lake_format in ("parquet", "delta"):
        connect_session(connect_url, "test", lake_format).stop()
    with pytest.raises(ConfigError, match=r"a Spark Connect URL is sc://host:port, not http://127.0.0.1"):
        connect_session("http://127.0.0.1:1", "test", "delta")
