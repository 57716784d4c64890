"""kafka-ops keeps seeing the cluster while reassignments run.

Reassignments submitted through the Admin API (kafka-ops' own default back end, and what Kafka 3.9's
`kafka-reassign-partitions --execute` uses) write no `/admin/reassign_partitions`: they are visible only
in the topic znode's `adding_replicas`/`removing_replicas`, which the snapshot must read, not crash on. Here both
kinds (one through the Admin API, one through the znode) crawl under a 1 B/s throttle while the CLI
snapshot, the scheduled snapshot DAG, the Spark analysis and a remediation dry run all do their work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag
from kafka import TopicPartition
from kazoo.client import KazooClient
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.store import Lake
from kafka_ops.remediation import AdminApiBackend
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.thresholds import Thresholds
from sandbox import SandboxCluster
from tests.dags.conftest import CLUSTER, Configure
from tests.dags.test_remediation_dags import ELECTION, REASSIGNMENT, states, trigger, xcom
from tests.dags.test_snapshot_dag_run import run_snapshot_dag
from tests.integration.kafka_data import admin_for, create_topic, produce

pytestmark = [pytest.mark.dags, pytest.mark.integration, pytest.mark.slow, pytest.mark.usefixtures("airflow_db")]

VIA_ADMIN_API = "inflight_admin_api"  # 2 partitions on broker 1, each moving to [1, 2]
VIA_ZNODE = "inflight_znode"  # 1 partition on broker 2, moving to [2, 3]
BYSTANDER = "inflight_bystander"  # a topic a dry run plans on while the others move
RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def throttle(sandbox: SandboxCluster, *, on: bool) -> None:
    """1 B/s on every broker for every replica of the two moving topics (Kafka's `*`), or none."""
    backend = AdminApiBackend(KafkaTarget(sandbox.bootstrap_servers, {"request_timeout_ms": 10_000}))
    try:
        brokers = dict.fromkeys(sandbox.broker_ids(), RATES)
        topics = dict.fromkeys((VIA_ADMIN_API, VIA_ZNODE), REPLICAS)
        if on:
            backend.set_configs(
                {t: dict.fromkeys(keys, "*") for t, keys in topics.items()},
                {b: dict.fromkeys(keys, "1") for b, keys in brokers.items()},
            )
        else:
            backend.delete_configs(topics, brokers)
    finally:
        backend.close()


def moving(sandbox: SandboxCluster) -> set[tuple[str, int]]:
    snap = sandbox.snapshot()
    return {
        (t, p)
        for t in (VIA_ADMIN_API, VIA_ZNODE)
        if t in snap.topics
        for p in set(snap.topics[t].adding_replicas) | set(snap.topics[t].removing_replicas)
    }


@pytest.fixture
def crawling(dag_sandbox: SandboxCluster) -> Iterator[SandboxCluster]:
    """Three partitions moving at 1 B/s: two through the Admin API, one through the znode. After the
    test the throttle is lifted and the moves finish (a few MB), so the session sandbox is left healthy."""
    sandbox = dag_sandbox
    create_topic(sandbox, VIA_ADMIN_API, {0: [1], 1: [1]})
    create_topic(sandbox, VIA_ZNODE, {0: [2]})
    create_topic(sandbox, BYSTANDER, {0: [1, 2], 1: [2, 3], 2: [3, 1]})
    for topic in (VIA_ADMIN_API, VIA_ZNODE):
        produce(sandbox, topic, 200, value_bytes=10_000)
    throttle(sandbox, on=True)
    admin = admin_for(sandbox)
    zk = KazooClient(hosts=sandbox.zookeeper_connect)
    zk.start(timeout=10)
    try:
        admin.alter_partition_reassignments({TopicPartition(VIA_ADMIN_API, p): [1, 2] for p in (0, 1)})
        request = {"version": 1, "partitions": [{"topic": VIA_ZNODE, "partition": 0, "replicas": [2, 3]}]}
        zk.create("/admin/reassign_partitions", json.dumps(request).encode())
        sandbox.wait_for(lambda _: len(moving(sandbox)) == 3, 60, "three partitions in flight")
        yield sandbox
    finally:
        zk.stop()
        zk.close()
        admin.close()
        throttle(sandbox, on=False)
        sandbox.wait_for(lambda _: not moving(sandbox), 120, "the reassignments to finish once unthrottled")
        admin = admin_for(sandbox)
        try:
            admin.delete_topics([VIA_ADMIN_API, VIA_ZNODE, BYSTANDER])
        finally:
            admin.close()


def test_snapshot_analysis_and_dry_run_while_reassignments_are_in_flight(
    crawling: SandboxCluster,
    configure: Configure,
    dag_bag: DagBag,
    monkeypatch: pytest.MonkeyPatch,
    spark: SparkSession,
    tmp_path: Path,
) -> None:
    sandbox = crawling
    lake_root = tmp_path / "cli-lake"

    # the CLI: exit 0 and the moves counted, not a traceback
    done = subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", "snapshot", "--zookeeper", sandbox.zookeeper_connect,
         "--lake", str(lake_root), "--cluster", CLUSTER],
        capture_output=True, text=True, timeout=120, check=False, env=os.environ.copy(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "reassignments  3 partitions in flight" in done.stdout, done.stdout

    lake = Lake(lake_root)
    snapshot_id = lake.latest_snapshot_id(CLUSTER)
    assert snapshot_id is not None
    rows = {(r["topic"], r["partition"]): r for r in lake.read("reassignments", CLUSTER, [snapshot_id]).to_pylist()}
    ours = {k: v for k, v in rows.items() if k[0] in (VIA_ADMIN_API, VIA_ZNODE)}
    assert set(ours) == {(VIA_ADMIN_API, 0), (VIA_ADMIN_API, 1), (VIA_ZNODE, 0)}
    assert [ours[(VIA_ADMIN_API, p)]["target_replicas"] for p in (0, 1)] == [[1, 2], [1, 2]]
    assert not ours[(VIA_ADMIN_API, 0)]["requested_in_znode"]
    assert ours[(VIA_ZNODE, 0)]["target_replicas"] == [2, 3]

    # the analysis: every detector runs, the moves are findings (in flight, not stuck yet)
    analyse(spark, str(lake_root), CLUSTER, list(DETECTORS.values()), Thresholds())
    found = lake.read("reassignments_in_flight", CLUSTER, [snapshot_id]).to_pylist()
    assert {(r["topic"], r["partition"]) for r in found} >= set(ours)

    # the scheduled snapshot DAG
    connection = {"conn_type": "zookeeper", "host": sandbox.zookeeper_hosts, "extra": {"chroot": sandbox.chroot}}
    dag_run = run_snapshot_dag(monkeypatch, tmp_path / "dag-lake", connection, sandbox.bootstrap_servers)
    assert dag_run.state == "success"

    # remediation dry runs plan on a fresh, validated snapshot taken during the moves
    configure()
    election = trigger(dag_bag, ELECTION, action="preferred_election", topics=[BYSTANDER])
    assert election.state == "success", states(election)
    balance = trigger(dag_bag, REASSIGNMENT, action="replication_factor", topics=[BYSTANDER], replication_factor=3)
    assert balance.state == "success", states(balance)
    assert xcom(balance, "plan")["moves"] == 3
    assert len(moving(sandbox)) == 3, "a dry run or a snapshot changed the moves in flight"
