"""The analysis' check that its standalone Spark master answers before any job is submitted."""

from __future__ import annotations

import json
import socket
import time

import pytest

from kafka_ops.airflow.spark_master import check_connection, check_master, master_endpoints
from kafka_ops.errors import ConfigError, SparkUnreachable
from sandbox.cluster import free_port


def test_a_standalone_url_gives_its_masters_and_others_are_not_checked() -> None:
    assert master_endpoints("spark://10.0.0.1", 7078) == [("10.0.0.1", 7078)]
    assert master_endpoints("spark://a:7077,b:7079", 1) == [("a", 7077), ("b", 7079)]
    assert master_endpoints("spark://a", None) == [("a", 7077)]
    assert master_endpoints("local[2]", None) is None and master_endpoints("yarn", None) is None
    with pytest.raises(ConfigError, match=r"'a:x' is not host\[:port\]"):
        master_endpoints("spark://a:x", None)


def test_a_master_that_does_not_answer_fails_at_once_naming_the_connection_and_the_endpoint() -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(SparkUnreachable, match=rf"connection 'spark_default'.*127\.0\.0\.1:{port} \(Connection"):
        check_master("spark_default", "spark://127.0.0.1", port)
    assert time.monotonic() - started < 5


def test_one_answering_master_of_several_is_enough() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        live = server.getsockname()[1]
        check_master("spark_default", f"spark://127.0.0.1:{free_port()},127.0.0.1:{live}", None)


def test_the_connection_is_read_from_airflow(monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    conn = {"conn_type": "spark", "host": "spark://127.0.0.1", "port": port}
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DOWN", json.dumps(conn))
    with pytest.raises(SparkUnreachable, match="spark_down"):
        check_connection("spark_down")
    check_connection("spark_not_defined")  # spark-submit's own default applies
