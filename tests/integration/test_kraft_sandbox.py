"""The KRaft sandbox (3 controllers + 3 Kafka 4 brokers) against kafka-python 3.0.12: real failures, real clients."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from sandbox import KRaftSandbox
from sandbox.kraft import KAFKA_VERSION, attach_kraft
from sandbox.metrics_agent import URP_GAUGE
from tests.integration.kafka_tools import jmx_gauge_total

pytestmark = pytest.mark.integration


def create_topic(cluster: KRaftSandbox, name: str, partitions: int = 3) -> list[dict[str, Any]]:
    """Create `name` with replication factor 3 and return its partitions once each has a leader and a full ISR."""
    with cluster.admin() as admin:
        admin.create_topics([NewTopic(name, partitions, 3)])
    found: list[list[dict[str, Any]]] = []

    def ready() -> bool:
        with cluster.admin() as admin:
            described = admin.describe_topics([name])[0]["partitions"]
        if len(described) == partitions and all(p["leader_id"] >= 0 and len(p["isr_nodes"]) == 3 for p in described):
            found.append(described)
            return True
        return False

    cluster.wait_for(ready, 60, f"topic {name} with {partitions} fully replicated partitions")
    return found[0]


def partitions_of(cluster: KRaftSandbox, topic: str) -> list[dict[str, Any]]:
    with cluster.admin() as admin:
        return list(admin.describe_topics([topic])[0]["partitions"])


def test_up_three_voters_three_brokers_with_racks(healthy_kraft_sandbox: KRaftSandbox) -> None:
    cluster = healthy_kraft_sandbox
    quorum = cluster.quorum()
    assert set(quorum.voters) == {101, 102, 103}
    assert quorum.leader_id in quorum.voters
    assert set(quorum.observers) == {1, 2, 3}  # brokers replicate the metadata log without voting
    with cluster.admin() as admin:
        described = admin.describe_cluster()
        features = admin.describe_features()
    assert described["cluster_id"] == cluster.cluster_id
    assert {(b["broker_id"], b["rack"], b["is_fenced"]) for b in described["brokers"]} == {
        (1, "rack-a", False),
        (2, "rack-b", False),
        (3, "rack-c", False),
    }
    # metadata.version is finalized by the format: a KRaft cluster, at the 4.x line's level
    assert features["metadata.version"]["finalized"][1] > 0
    assert f"Kafka version: {KAFKA_VERSION}" in (Path(cluster.root or "") / "broker-1" / "server.log").read_text()


def test_rf3_topic_and_a_producer_consumer_round_trip(healthy_kraft_sandbox: KRaftSandbox) -> None:
    cluster = healthy_kraft_sandbox
    partitions = create_topic(cluster, "kraft_round_trip")
    assert all(set(p["replica_nodes"]) == {1, 2, 3} for p in partitions)  # one replica per rack
    sent = [f"m{i}".encode() for i in range(30)]
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    try:
        for value in sent:
            producer.send("kraft_round_trip", value)
        producer.flush(30)
    finally:
        producer.close()
    consumer = KafkaConsumer(
        "kraft_round_trip",
        bootstrap_servers=cluster.bootstrap_servers,
        group_id="kraft-round-trip",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=20000,
    )
    received: list[bytes] = []
    try:
        for message in consumer:
            received.append(message.value)
            if len(received) == len(sent):
                break
        consumer.commit()
    finally:
        consumer.close()
    assert sorted(received) == sorted(sent)
    with cluster.admin() as admin:
        groups = {g["group_id"] for g in admin.list_groups()}
    assert "kraft-round-trip" in groups


def test_killing_the_active_controller_elects_another_at_a_higher_epoch(healthy_kraft_sandbox: KRaftSandbox) -> None:
    cluster = healthy_kraft_sandbox
    before = cluster.quorum()
    assert before.leader_id is not None
    cluster.kill_controller(before.leader_id)
    assert not cluster.controller_running(before.leader_id)
    cluster.wait_for(
        lambda: cluster.active_controller_id() not in (None, before.leader_id),
        60,
        f"a controller other than {before.leader_id} to lead the quorum",
    )
    after = cluster.quorum()
    assert after.leader_id in set(cluster.controller_ids()) - {before.leader_id}
    assert after.leader_epoch > before.leader_epoch
    # the brokers keep serving metadata through the new leader: a topic can still be created
    create_topic(cluster, "kraft_after_failover", partitions=1)
    cluster.start_controller(before.leader_id)
    healthy = cluster.wait_healthy(120)
    assert before.leader_id in healthy.voters and healthy.voters[before.leader_id] >= 0


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_a_down_broker_is_fenced_and_its_partitions_under_replicated(
    healthy_kraft_sandbox: KRaftSandbox, how: str
) -> None:
    cluster = healthy_kraft_sandbox
    topic = f"kraft_fenced_{how}"
    create_topic(cluster, topic)
    if how == "stop":
        cluster.stop_broker(2)  # controlled shutdown: the controller fences it at once
    else:
        cluster.kill_broker(2)  # kill -9: fenced when its heartbeats stop for broker.session.timeout.ms
    cluster.wait_for(lambda: cluster.fenced_brokers() == {2}, 60, "broker 2 fenced")

    def shrunk() -> bool:
        return all(2 not in p["isr_nodes"] and p["leader_id"] != 2 for p in partitions_of(cluster, topic))

    cluster.wait_for(shrunk, 60, f"broker 2 out of every ISR of {topic}")
    partitions = partitions_of(cluster, topic)
    assert all(len(p["isr_nodes"]) < len(p["replica_nodes"]) == 3 for p in partitions)  # under-replicated
    assert all(p["offline_replicas"] == [2] for p in partitions)
    survivors = [cluster.metrics_ports[b] for b in (1, 3)]
    under = jmx_gauge_total(survivors, URP_GAUGE, lambda n: n >= len(partitions))  # the brokers' own count
    assert under >= len(partitions), under
    cluster.start_broker(2)
    assert cluster.root is not None and attach_kraft(cluster.root).broker_running(2), "state.json names the new pid"
    cluster.wait_healthy(120)
    assert cluster.fenced_brokers() == set()
    assert all(set(p["isr_nodes"]) == {1, 2, 3} for p in partitions_of(cluster, topic))


def alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text().lower()


def test_cli_up_status_down_in_kraft_mode(tmp_path: Path) -> None:
    root = tmp_path / "cli-kraft"

    def cli(verb: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "sandbox", verb, "--mode", "kraft", "--root", str(root)]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)

    started = time.monotonic()
    up = cli("up")
    try:
        assert up.returncode == 0, up.stderr[-2000:]
        print(f"KRaft sandbox up in {time.monotonic() - started:.1f}s")
        summary = json.loads(up.stdout.strip().splitlines()[-1])
        assert summary["mode"] == "kraft" and summary["active_controller"] in (101, 102, 103)
        status = cli("status")
        assert status.returncode == 0, status.stderr[-2000:]
        running = json.loads(status.stdout.strip().splitlines()[-1])
        assert set(running["brokers_running"].values()) == {True}
        assert set(running["controllers_running"].values()) == {True}
        assert cli("up").returncode == 1  # one KRaft sandbox per folder
        pids = json.loads((root / "state.json").read_text())["pids"]
    finally:
        down = cli("down")
    assert down.returncode == 0, down.stderr[-2000:]
    assert not root.exists()
    assert not [pid for pid in pids.values() if alive(pid)]


def test_kraft_jvms_die_with_a_killed_owner(tmp_path: Path) -> None:
    """A test run killed with -9 (no fixture teardown) leaves no controller or broker JVM behind (one of each:
    the smallest cluster that has both, quick to start on a loaded machine)."""
    script = (
        "import json, time\n"
        "from pathlib import Path\n"
        "from sandbox import KRaftSandbox\n"
        f"cluster = KRaftSandbox(root=Path({str(tmp_path)!r}), brokers=1, controllers=1).start()\n"
        "nodes = [*cluster._controller_nodes.values(), *cluster._nodes.values()]\n"
        "print(json.dumps([n.pid for n in nodes]), flush=True)\n"
        "time.sleep(600)\n"
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        pids = json.loads(owner.stdout.readline())
        assert len(pids) == 2 and all(alive(pid) for pid in pids)
    finally:
        owner.kill()
        owner.wait()
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in pids if alive(pid)]
