"""The analysis jobs as spark-submit starts them: their arguments, and the one line a bad one gets. The DAG
that submits them runs in tests/dags/test_analysis_dag_on_spark_connect.py (its jobs on a Spark Connect
server) and in tests/stack/test_stack.py (spark-submit to a standalone master, from Celery workers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.slow]


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
