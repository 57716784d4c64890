"""The stack package's pieces that need no running stack: the fleet's settings for both lakes, the
webhook receiver on a real socket, Prometheus' and Alertmanager's configs derived from docker/'s, and
how a process is recognised (pid and start time) and its state kept. `tests/stack` runs the whole."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from kafka_ops.settings import load_settings
from stack import fleet, monitoring
from stack.processes import launch, ours, stack_pids, start_time, stop, wait_until
from stack.state import Sandbox, State
from stack.webhook import handler_for, read_received


@pytest.mark.parametrize("lake", ["local", "s3"])
def test_the_fleets_settings_name_both_clusters_and_the_lake(lake: str, tmp_path: Path) -> None:
    root = fleet.lake_root(lake, tmp_path / "lake")
    (tmp_path / "kafka-ops.toml").write_text(fleet.settings_toml(root))
    settings = load_settings(tmp_path / "kafka-ops.toml")
    assert settings.lake_root == ("s3://kafka-ops-lake/lake" if lake == "s3" else str(tmp_path / "lake"))
    by_name = {c.name: c for c in settings.clusters}
    assert by_name["sandbox-zk"].metadata_source == "zookeeper"
    assert by_name["sandbox-kraft"].metadata_source == "kraft"
    assert all(c.alert_conn_ids == (fleet.ALERT_CONN,) and not c.writes_enabled for c in settings.clusters)


def test_the_connections_reach_the_sandboxes_the_receiver_and_the_master() -> None:
    sandboxes = {
        "zk": Sandbox("zk", "", False, {"zookeeper": "127.0.0.1:2181/kafka", "bootstrap_servers": "127.0.0.1:9092"}),
        "kraft": Sandbox("kraft", "", False, {"bootstrap_servers": "127.0.0.1:9192"}),
    }
    conns = fleet.connections(sandboxes, webhook_port=8090, spark_master_port=7077, spark_connect_port=15002)
    assert conns["AIRFLOW_CONN_ZOOKEEPER_SANDBOX_ZK"] == (
        '{"conn_type": "zookeeper", "host": "127.0.0.1:2181", "extra": {"timeout_s": 10, "chroot": "/kafka"}}'
    )
    assert '"host": "127.0.0.1:9192"' in conns["AIRFLOW_CONN_KAFKA_SANDBOX_KRAFT"]
    assert '"host": "http://127.0.0.1:8090/chat"' in conns["AIRFLOW_CONN_ALERTS_WEBHOOK"]
    assert '"host": "spark://127.0.0.1", "port": 7077' in conns["AIRFLOW_CONN_SPARK_DEFAULT"]
    assert (
        '"conn_type": "spark_connect", "host": "sc://127.0.0.1", "port": 15002'
        in conns["AIRFLOW_CONN_SPARK_CONNECT_DEFAULT"]
    )


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    out = tmp_path / "received.jsonl"
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(out))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", out
    server.shutdown()
    server.server_close()


def test_the_webhook_receiver_records_what_it_receives_and_answers_like_the_services(
    receiver: tuple[str, Path],
) -> None:
    url, out = receiver
    assert httpx.get(f"{url}/health").status_code == 200
    chat = httpx.post(f"{url}/chat", json={"text": "offline partitions"})
    assert (chat.status_code, chat.text) == (200, "ok")
    pager = httpx.post(f"{url}/v2/enqueue", json={"event_action": "resolve", "dedup_key": "k1"})
    assert pager.status_code == 202 and pager.json()["dedup_key"] == "k1"
    httpx.post(f"{url}/alertmanager/oncall-chat", content=b"not json")
    received = read_received(out)
    assert [r["path"] for r in received] == ["/chat", "/v2/enqueue", "/alertmanager/oncall-chat"]
    assert received[0]["body"] == {"text": "offline partitions"} and received[2]["body"] == "not json"
    assert all(r["received_at"].endswith("+00:00") for r in received)


def test_monitoring_configs_are_dockers_pointed_at_the_stack(tmp_path: Path) -> None:
    prometheus = monitoring.prometheus_config(8080, 9090, 9093, tmp_path / "token")
    (job,) = [j for j in prometheus["scrape_configs"] if j["job_name"] == "kafka-ops"]
    assert job["static_configs"] == [{"targets": ["127.0.0.1:8080"]}]
    assert job["authorization"]["credentials_file"] == str(tmp_path / "token")
    assert job["metrics_path"] == "/kafka-ops/metrics"
    assert prometheus["alerting"]["alertmanagers"] == [{"static_configs": [{"targets": ["127.0.0.1:9093"]}]}]
    assert Path(prometheus["rule_files"][0]).parent.is_dir()
    alertmanager = monitoring.alertmanager_config(8090)
    urls = [c["url"] for r in alertmanager["receivers"] for c in r["webhook_configs"]]
    assert urls == [f"http://127.0.0.1:8090/alertmanager/{r['name']}" for r in alertmanager["receivers"]]


def test_a_service_is_known_by_pid_and_start_time_and_stopped_with_its_group(tmp_path: Path) -> None:
    env = {**os.environ, "KAFKA_OPS_STACK": str(tmp_path)}
    child = (  # a service that starts a child of its own, as Celery and Spark workers do
        "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "time.sleep(60)"
    )
    pid, started = launch([sys.executable, "-c", child], env, tmp_path / "logs" / "sleeper.log", tmp_path)
    try:
        assert ours(pid, started) and not ours(pid, started + 1) and not ours(pid, None)
        wait_until(lambda: len(stack_pids(tmp_path)) == 2, 30, "the service and its child")
    finally:
        stop(pid, grace_s=10)
    os.waitpid(pid, 0)
    assert start_time(pid) is None and stack_pids(tmp_path) == []


def test_the_state_survives_a_round_trip(tmp_path: Path) -> None:
    state = State(str(tmp_path), "s3", "s3://kafka-ops-lake/lake", ports={"redis": 1}, pids={"redis": os.getpid()},
                  started={"redis": start_time(os.getpid()) or 0},
                  sandboxes={"zk": Sandbox("zk", "/x", True, {"bootstrap_servers": "b:1"})})  # fmt: skip
    state.save()
    loaded = State.load(tmp_path)
    assert loaded == state and loaded.running("redis") and not loaded.running("postgres")
    assert State.load(tmp_path / "nowhere") is None
