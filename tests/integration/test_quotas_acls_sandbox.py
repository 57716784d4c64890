"""Client quotas and ACLs in the snapshot, and a consumer quota told apart from a slow consumer in the lag
findings. Everything is set with Kafka's own tools (ConfigCommand, AclCommand from the
sandbox's jars), read back by the ZooKeeper collector, and a real Java consumer is throttled by the broker."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from kafka import KafkaProducer
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import GROUP_DETECTORS
from kafka_ops.jars.fetch import ensure_jars
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.publish import groups_to_lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation import group_checks
from sandbox import SandboxCluster
from sandbox.java_consumer import JavaConsumer
from tests.integration.java_groups import FAST, make_topics
from tests.integration.kafka_tools import kafka_tool as run_kafka_tool

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRAM_PASSWORD = "scram-Pa55-never-in-the-lake"
QUOTA = 2_000  # bytes/s: far below what the producer writes each step
BACKLOG_RECORDS = 7_000  # of 200 bytes: 1.4 MB, more than one fetch returns


def kafka_tool(main_class: str, *args: str) -> str:
    return run_kafka_tool(ensure_jars(), main_class, *args)


def configs(sandbox: SandboxCluster, action: str, entity: list[str], config: str) -> None:
    """`kafka-configs --alter --add-config|--delete-config CONFIG` on an entity (`--entity-type T --entity-name N`)."""
    kafka_tool("kafka.admin.ConfigCommand", "--bootstrap-server", sandbox.bootstrap_servers, "--alter",
               f"--{action}-config", config, *entity)  # fmt: skip


def acls(sandbox: SandboxCluster, *args: str) -> None:
    """`kafka-acls` writing the authorizer's znodes in the sandbox's chroot (Kafka's own format)."""
    authorizer = ["--authorizer-properties", f"zookeeper.connect={sandbox.zookeeper_connect}"]
    kafka_tool("kafka.admin.AclCommand", *authorizer, *args)


@pytest.fixture
def run_id() -> str:
    return uuid.uuid4().hex[:6]


@pytest.fixture
def quotas_and_acls(healthy_sandbox: SandboxCluster, run_id: str) -> Iterator[dict[str, list[str]]]:
    """Quotas on a client, a user's client and an IP, a SCRAM credential, three ACLs; all removed after."""
    sandbox = healthy_sandbox
    entities = {
        "app": ["--entity-type", "clients", "--entity-name", f"q-{run_id}-app"],
        "user_client": ["--entity-type", "users", "--entity-name", f"alice-{run_id}",
                        "--entity-type", "clients", "--entity-name", "app 2*"],
        "ip": ["--entity-type", "ips", "--entity-name", "127.0.0.9"],
        "scram": ["--entity-type", "users", "--entity-name", f"bob-{run_id}"],
    }  # fmt: skip
    settings = {
        "app": f"consumer_byte_rate={QUOTA},producer_byte_rate=1048576",
        "user_client": "consumer_byte_rate=4096",
        "ip": "connection_creation_rate=10",
        "scram": f"SCRAM-SHA-256=[iterations=4096,password={SCRAM_PASSWORD}]",
    }
    acl_specs = [
        ["--allow-principal", "User:alice", "--operation", "Read", "--topic", f"q-{run_id}-orders"],
        ["--allow-principal", "User:bob", "--operation", "Write", "--topic", f"q-{run_id}-orders"],
        ["--deny-principal", "User:eve", "--operation", "Write", "--topic", f"q-{run_id}-pay",
         "--resource-pattern-type", "prefixed"],
    ]  # fmt: skip
    for name, entity in entities.items():
        configs(sandbox, "add", entity, settings[name])
    for spec in acl_specs:
        acls(sandbox, "--add", *spec)
    try:
        yield entities
    finally:
        for spec in acl_specs:
            acls(sandbox, "--remove", "--force", *spec)
        deleted = {"app": "consumer_byte_rate,producer_byte_rate", "user_client": "consumer_byte_rate",
                   "ip": "connection_creation_rate", "scram": "SCRAM-SHA-256"}  # fmt: skip
        for name, entity in entities.items():
            configs(sandbox, "delete", entity, deleted[name])


def test_snapshot_reads_quotas_and_acl_counts_never_credentials(
    healthy_sandbox: SandboxCluster, quotas_and_acls: dict[str, list[str]], run_id: str, tmp_path: Path
) -> None:
    sandbox = healthy_sandbox
    snap = sandbox.wait_for(lambda s: any(q.user == f"bob-{run_id}" for q in s.quotas), 30, "the SCRAM user")
    lake = open_lake(tmp_path / "lake")
    lake.publish(snapshot_batch(snap))

    quotas = {(r["entity_path"], r["quota_key"]): r for r in lake.read("quotas", "sandbox").to_pylist()}
    app = quotas[(f"clients/q-{run_id}-app", "consumer_byte_rate")]
    assert (app["client_id"], app["user"], app["quota_value"]) == (f"q-{run_id}-app", None, QUOTA)
    assert quotas[(f"clients/q-{run_id}-app", "producer_byte_rate")]["quota_value"] == 1048576
    user_client = quotas[(f"users/alice-{run_id}/clients/app%202%2A", "consumer_byte_rate")]
    assert (user_client["user"], user_client["client_id"]) == (f"alice-{run_id}", "app 2*")  # desanitized
    assert quotas[("ips/127.0.0.9", "connection_creation_rate")]["ip"] == "127.0.0.9"
    assert not any(path.startswith(f"users/bob-{run_id}") for path, _ in quotas), "a SCRAM user is no quota"

    counted = {(r["resource_type"], r["pattern_type"], r["resource_name"]): r for r in lake.read("acls").to_pylist()}
    orders = counted[("Topic", "LITERAL", f"q-{run_id}-orders")]
    assert (orders["allow_count"], orders["deny_count"], orders["principal_count"]) == (2, 0, 2)
    assert counted[("Topic", "PREFIXED", f"q-{run_id}-pay")]["deny_count"] == 1
    assert lake.read("features").to_pylist()[0]["status"] == 1

    # the credential itself never reaches the lake: no file holds its salt, keys or password
    scram = [q for q in snap.quotas if q.user == f"bob-{run_id}"]
    assert scram and scram[0].scram_mechanisms == ("SCRAM-SHA-256",)
    stored = b"".join(p.read_bytes() for p in Path(lake.root).rglob("*") if p.is_file())
    for secret in (b"salt=", b"stored_key", b"server_key", SCRAM_PASSWORD.encode()):
        assert secret not in stored


def test_a_consumer_quota_is_told_apart_from_a_slow_consumer(
    healthy_sandbox: SandboxCluster,
    quotas_and_acls: dict[str, list[str]],
    run_id: str,
    spark: SparkSession,
    tmp_path: Path,
) -> None:
    """Two groups fall behind the same producer: one because the broker throttles its client id (a consumer
    quota), one because its own code is slow. The lag findings name the quota for the first only."""
    sandbox = healthy_sandbox
    topic = f"q-{run_id}-load"
    make_topics(sandbox, {topic: 1})
    lake = open_lake(tmp_path / "lake")
    lake.publish(snapshot_batch(sandbox.snapshot()))  # the quotas, as the snapshot DAG records them
    target = KafkaTarget(sandbox.bootstrap_servers, FAST)
    producer = KafkaProducer(bootstrap_servers=sandbox.bootstrap_servers, linger_ms=5)
    # a backlog larger than one fetch (max.partition.fetch.bytes, 1 MiB) before either consumer joins:
    # a throttled consumer catches up in bursts, and one burst that reached the head would make its
    # window OK (a lag of 0 in the window, as Burrow rates it); from behind that backlog it never does
    for _ in range(BACKLOG_RECORDS):
        producer.send(topic, b"x" * 200)
    producer.flush()
    with ExitStack() as stack:
        stack.callback(producer.close)
        consumers = {
            role: stack.enter_context(
                JavaConsumer(sandbox.bootstrap_servers, f"q-{run_id}-{role}", [topic], "range",
                             client_id=client, rate=rate, log_dir=tmp_path)
            )
            for role, client, rate in (("throttled", f"q-{run_id}-app", 0.0), ("slow", f"q-{run_id}-slow", 40.0))
        }  # fmt: skip
        for c in consumers.values():
            c.wait_until(lambda c: bool(c.assignment), 60, "its partition")
        # a steady 100 records/s (20 kB/s), not bursts: between bursts both consumers caught up a little,
        # and a lag that falls between two commits is a consumer keeping up (OK), as Burrow rates it
        stop = threading.Event()
        steady = threading.Thread(target=produce_steadily, args=(producer, topic, stop), daemon=True)
        steady.start()
        stack.callback(steady.join, 30)
        stack.callback(stop.set)
        for _ in range(6):
            time.sleep(2)
            groups_to_lake("sandbox", target, lake, include=f"q-{run_id}-.*")

    analyse(spark, lake.root, "sandbox", list(GROUP_DETECTORS.values()), Thresholds())
    latest = lake.latest_snapshot_id("sandbox", "group_snapshots")
    rows = {r["group_id"]: r for r in lake.read("lag_status_groups", "sandbox", [latest]).to_pylist()}
    throttled, slow = rows[f"q-{run_id}-throttled"], rows[f"q-{run_id}-slow"]
    assert throttled["status"] != "OK" and slow["status"] != "OK", (throttled, slow)
    assert (throttled["consumer_quota_bytes_per_s"], throttled["consumer_quota_entity"]) == (
        QUOTA, f"clients/q-{run_id}-app",
    )  # fmt: skip
    assert f"a consumer quota of 2,000 B/s applies to its members (clients/q-{run_id}-app)" in throttled["cause"]
    assert slow["consumer_quota_bytes_per_s"] is None and "quota" not in slow["cause"]
    # the paging path rates the same collections the same way, without Spark
    paged = group_checks.look(lake, "sandbox", latest, Thresholds()).findings
    for table in ("lag_status_partitions", "lag_status_groups"):
        published = [{k: v for k, v in r.items() if k not in ("cluster", "dt")}
                     for r in lake.read(table, "sandbox", [latest]).to_pylist()]  # fmt: skip
        assert sorted(paged.rows(table) or [], key=repr) == sorted(published, key=repr), table


def produce_steadily(producer: KafkaProducer, topic: str, stop: threading.Event) -> None:
    """10 records of 200 bytes every 0.1 s until `stop`."""
    while not stop.wait(0.1):
        for _ in range(10):
            producer.send(topic, b"x" * 200)
