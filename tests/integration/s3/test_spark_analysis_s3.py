"""The Spark analysis on a lake in an S3-compatible store (a real moto server): the cluster-health job,
spark-submitted with the jars and arguments the analysis DAG hands it, reads the Delta lake the
product's writer published there through Hadoop's S3A and publishes its findings back to it; an S3A
endpoint that does not answer fails the job in seconds, with one line naming the lake root and the
endpoint."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_ops.airflow.analysis_arguments import Target, spark_arguments, spark_jars
from kafka_ops.lake.open import open_lake
from kafka_ops.settings import Settings
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).parents[3]
JOB = ROOT / "spark_jobs" / "cluster_health.py"
SPARK_SUBMIT = Path(sys.executable).with_name("spark-submit")


def submit(s3_root: str, *conf: str) -> subprocess.CompletedProcess[str]:
    """spark-submit the cluster-health job for cluster `default` as the analysis DAG does (its --jars
    and arguments, from the settings of a Delta lake at `s3_root`), with `conf` added (`--conf k=v`).
    Only its `isr_health` detector runs: reading the lake through S3A is the same for each, and all
    twelve take minutes on a busy machine."""
    settings = Settings(lake_root=s3_root, lake_format="delta")
    target = Target(cluster="default", zookeeper=True, snapshot_id=None, groups=False, group_snapshot_id=None)
    [arguments] = spark_arguments(settings, [target], "snapshots")
    jars = spark_jars(settings)
    assert "hadoop-aws-3.4.2.jar" in jars and "bundle-2." in jars and "delta-spark_4.1" in jars
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "plugins"), str(ROOT)]),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    command = [str(SPARK_SUBMIT), "--master", "local[2]", "--conf", "spark.ui.enabled=false", "--jars", jars]
    for setting in conf:
        command += ["--conf", setting]
    command += [str(JOB), *arguments, "--detectors", "isr_health"]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)


def test_the_analysis_dag_hands_spark_submit_the_s3a_jars_for_an_s3_lake() -> None:
    """Fetched by `make jars` (the runtime image has no Maven); none for a local lake."""
    local = spark_jars(Settings(lake_root="/var/lake", lake_format="delta")).split(",")
    on_s3 = spark_jars(Settings(lake_root="s3://bucket/lake", lake_format="delta")).split(",")
    assert [j for j in on_s3 if j not in local] == [j for j in on_s3 if "/jars-spark-s3/" in j]
    names = {j.rsplit("/", 1)[1] for j in on_s3}
    assert {"hadoop-aws-3.4.2.jar", "bundle-2.29.52.jar"} <= names
    assert not any("hadoop-aws" in j for j in local)
    parquet_on_s3 = spark_jars(Settings(lake_root="s3a://bucket/lake", lake_format="parquet")).split(",")
    assert all("/jars-spark-s3/" in j for j in parquet_on_s3)


def test_the_analysis_job_reads_and_publishes_the_lake_on_s3(s3_root: str) -> None:
    lake = open_lake(s3_root, "delta")
    lake.publish(snapshot_batch(small_snapshot("s1", cluster="default")))

    job = submit(s3_root)

    assert job.returncode == 0, job.stderr[-3000:]
    summary = json.loads(job.stdout.splitlines()[-1])
    assert summary["snapshot_id"] == "s1" and summary["findings"]["isr_health"]["critical"] >= 1
    # how long each findings table took, so a slow analysis names its slow detector
    assert set(summary["seconds"]) == set(summary["findings"]) and all(v >= 0 for v in summary["seconds"].values())
    # the findings are in the bucket, published as the analysis of s1
    runs = open_lake(s3_root, "delta").read("analysis_runs", "default").to_pylist()
    assert [(r["source"], r["snapshot_id"]) for r in runs] == [("snapshots", "s1")]
    health = {(r["topic"], r["partition"]): r["status"] for r in lake.read("isr_health", "default").to_pylist()}
    assert health[("orders", 0)] == "under_replicated"  # read by Spark from the snapshot tables in the bucket
    assert health[("solo", 0)] == "offline"
    assert "moto-test-secret" not in job.stdout + job.stderr


def test_an_s3a_endpoint_that_does_not_answer_fails_the_job_in_one_line(s3_root: str) -> None:
    """The lake is readable (the driver's pyarrow finds the batch) but Spark's S3A is pointed at a port
    where nothing listens (a cluster's own spark.hadoop.fs.s3a.endpoint wins over kafka-ops's): the
    job exits 2 within seconds of its JVM starting, with one line naming the lake root and endpoint."""
    open_lake(s3_root, "delta").publish(snapshot_batch(small_snapshot("s1", cluster="default")))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"

    started = time.monotonic()
    job = submit(s3_root, f"spark.hadoop.fs.s3a.endpoint={dead}")

    assert job.returncode == 2, job.stderr[-3000:]
    # the job's own line (spark-submit passes the Python driver's stderr on to its stdout), and no
    # Java stack trace
    [line] = [x for x in job.stdout.splitlines() if x.startswith("cluster_health.py: ")]
    assert line.startswith(
        f"cluster_health.py: Spark cannot read the lake at {s3_root} through S3A endpoint {dead} "
        "(spark.hadoop.fs.s3a.endpoint): the object store does not answer: is it running, is the endpoint right? "
        "(java.net.ConnectException: getFileStatus on s3://"
    )
    output = job.stdout + job.stderr
    assert "\tat org.apache" not in output and "Traceback" not in output, output[-3000:]
    assert time.monotonic() - started < 240  # S3A's defaults retry for minutes
    assert open_lake(s3_root, "delta").read("analysis_runs", "default").num_rows == 0  # nothing published


def test_a_spark_submit_without_the_s3a_jars_fails_in_one_line_naming_them(tmp_path: Path) -> None:
    """A driver's class path is fixed once spark-submit started it: the job checks that it can load
    S3A and names the jars to pass when it cannot, before reading anything."""
    settings = Settings(lake_root="s3://nowhere/lake", lake_format="delta")
    delta_only = ",".join(j for j in spark_jars(settings).split(",") if "/jars-spark-s3/" not in j)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins"), "PYSPARK_PYTHON": sys.executable}
    job = subprocess.run(
        [str(SPARK_SUBMIT), "--master", "local[1]", "--conf", "spark.ui.enabled=false", "--jars", delta_only,
         str(JOB), "--lake", settings.lake_root, "--cluster", "default", "--lake-format", "delta"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert job.returncode == 2, job.stdout[-3000:] + job.stderr[-3000:]
    [line] = [x for x in job.stdout.splitlines() if x.startswith("cluster_health.py: ")]
    assert line == (
        "cluster_health.py: a delta lake at s3://nowhere/lake needs Hadoop's S3A filesystem on the driver's "
        "class path: run spark-submit with --jars <the jars of kafka_ops.jars.fetch.ensure_spark_s3_jars()> "
        "(the analysis DAG does)"
    )
