"""The analysis task picks its Spark by the connection's type; a Spark Connect server that is down
fails it at once with one line naming the connection and the endpoint, starting no Spark."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from kafka_ops.airflow.analysis_operator import SparkAnalysisOperator
from kafka_ops.errors import ConfigError
from kafka_ops.lake.spark_connect import SparkConnectUnavailable, connect_session, server_argv

JOB = str(Path(__file__).parents[3] / "spark_jobs" / "cluster_health.py")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nothing listens there


def operator() -> SparkAnalysisOperator:
    return SparkAnalysisOperator(
        task_id="analyse_cluster",
        application=JOB,
        conn_id="spark_default",
        application_args=["--lake", "/nowhere", "--cluster", "c1"],
    )


def test_a_connect_server_that_is_down_fails_the_task_naming_the_connection_and_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = closed_port()
    conn = {"conn_type": "spark_connect", "host": "127.0.0.1", "port": port}
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps(conn))
    started = time.monotonic()
    with pytest.raises(SparkConnectUnavailable) as failed:
        operator().execute({})
    message = str(failed.value)
    assert "\n" not in message
    assert "'spark_default'" in message and f"sc://127.0.0.1:{port}" in message and "is down" in message
    assert time.monotonic() - started < 10  # no wait through the gRPC client's retries


def test_a_connection_of_another_type_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "http", "host": "spark"}))
    with pytest.raises(ConfigError, match=r"connection 'spark_default' is of type 'http'.*'spark_connect'"):
        operator().execute({})


def test_a_session_on_a_closed_port_says_so_without_a_connection_name() -> None:
    port = closed_port()
    with pytest.raises(SparkConnectUnavailable, match=rf"^Spark Connect server sc://127.0.0.1:{port} is down"):
        connect_session(f"sc://127.0.0.1:{port}")


def test_server_argv_binds_loopback_with_delta_and_a_2g_driver() -> None:
    argv = server_argv("spark://master:7077", 15002, ["/jars/delta-spark.jar", "/jars/delta-storage.jar"])
    assert argv[:3] == ["spark-submit", "--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    assert argv[3:5] == ["--master", "spark://master:7077"] and argv[-1] == "spark-internal"
    assert argv[5:7] == ["--driver-memory", "2g"]
    assert argv[7:9] == ["--jars", "/jars/delta-spark.jar,/jars/delta-storage.jar"]
    conf = [argv[i + 1] for i, a in enumerate(argv) if a == "--conf"]
    assert "spark.connect.grpc.binding.host=127.0.0.1" in conf and "spark.connect.grpc.binding.port=15002" in conf
    assert "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension" in conf
    parquet_only = server_argv("local[2]", 15002, [])
    assert "--jars" not in parquet_only and not any(a.startswith("spark.sql.extensions") for a in parquet_only)
    with pytest.raises(ConfigError, match="port 0 is not a TCP port"):
        server_argv("local[2]", 0, [])
