"""The analysis over a warm Spark Connect server publishes the same findings as spark-submit's.

One lake (a ZooKeeper snapshot and a group collection, Delta, as the analysis DAG's tests write
it), copied twice: both analysis jobs run over a local Connect server on one copy, through
spark-submit on the other, and every findings table must hold the same rows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_ops.airflow.analysis_operator import run_job_file
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE
from kafka_ops.lake.spark_connect import classic_environment
from kafka_ops.sandbox.connect_server import LocalConnectServer
from kafka_ops.sandbox.jars import ensure_delta_spark_jars
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from tests.unit.snapshots import group_snapshot, small_snapshot

pytestmark = [pytest.mark.integration, pytest.mark.slow]

JOBS = Path(__file__).parents[2] / "spark_jobs"


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalConnectServer]:
    with LocalConnectServer(tmp_path_factory.mktemp("connect") / "server.log") as server:
        yield server


def findings(root: Path) -> dict[str, list[tuple[str, ...]]]:
    """Every findings table's rows (sorted), and the commit log's counts, of cluster `default`."""
    lake = open_lake(root, "delta")
    runs = lake.read(ANALYSIS_COMMIT_TABLE, "default").to_pylist()
    tables = sorted({t for r in runs for t in json.loads(r["findings"])})
    rows = {t: sorted(tuple(map(repr, r.values())) for r in lake.read(t, "default").to_pylist()) for t in tables}
    rows[ANALYSIS_COMMIT_TABLE] = sorted((r["source"], r["snapshot_id"], r["findings"]) for r in runs)
    return rows


def test_connect_and_spark_submit_publish_the_same_findings(connect_server: LocalConnectServer, tmp_path: Path) -> None:
    lake = open_lake(tmp_path / "connect", "delta")
    lake.publish(snapshot_batch(small_snapshot("s1", cluster="default")))
    lake.publish(group_batch(group_snapshot("g1", cluster="default")))
    shutil.copytree(tmp_path / "connect", tmp_path / "submit")
    spark_submit = os.path.join(os.path.dirname(sys.executable), "spark-submit")
    jars = ",".join(str(j) for j in ensure_delta_spark_jars())
    for job in ("cluster_health.py", "consumer_groups.py"):
        args = ["--cluster", "default", "--lake-format", "delta"]
        code = run_job_file(str(JOBS / job), ["--lake", str(tmp_path / "connect"), *args], connect_server.url, "test")
        assert code == 0, job
        submitted = subprocess.run(
            [spark_submit, "--master", "local[2]", "--driver-memory", "1g", "--jars", jars, str(JOBS / job),
             "--lake", str(tmp_path / "submit"), *args],
            capture_output=True, text=True, check=False, timeout=600, env=classic_environment(os.environ),
        )  # fmt: skip
        assert submitted.returncode == 0, f"{job}: {submitted.stdout[-2000:]}\n{submitted.stderr[-3000:]}"

    over_connect = findings(tmp_path / "connect")
    assert over_connect == findings(tmp_path / "submit")
    assert {s for s, _, _ in over_connect[ANALYSIS_COMMIT_TABLE]} == {"snapshots", "group_snapshots"}
    assert any("'offline'" in row for row in over_connect["isr_health"])  # solo-0 has no live replica
