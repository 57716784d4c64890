"""Alerts end to end on a real cluster: snapshot → validate → Spark detectors → gates → alerts.

A sandbox of its own (the shared one carries other tests' topics, some with one replica, whose
partitions would go offline too): a healthy cluster raises nothing; a killed broker opens exactly
one critical incident, which stays silent on the next run and resolves when the broker returns;
a collection that cannot reach ZooKeeper says "cannot see cluster"; what an executing plan causes on its own
brokers is silenced while an unrelated broker's death still pages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from pyspark.sql import SparkSession

from kafka_ops.alerting.alert import Links
from kafka_ops.alerting.dispatch import DispatchReport, dispatch
from kafka_ops.alerting.firing import firing_alerts
from kafka_ops.alerting.log_sink import LogNotifier
from kafka_ops.alerting.pipeline_status import PipelineStatus
from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.errors import PlanCancelled, ZooKeeperUnreachable
from kafka_ops.lake.open import open_lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning.plan import build_plan
from kafka_ops.planning.view import ClusterView
from kafka_ops.remediation import AdminApiBackend, ExecutionOptions, cancel, execute
from kafka_ops.settings import ClusterConfig
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.pipeline import health_gates, validate_batches
from sandbox import SandboxCluster
from sandbox.cluster import attach
from tests.integration.background import Background
from tests.integration.kafka_data import create_topic, produce

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "payments"  # every partition on every broker, min ISR 3: losing any broker is critical
CLUSTER = "sandbox"


@pytest.fixture(scope="module")
def cluster() -> Iterator[SandboxCluster]:
    with SandboxCluster() as sandbox:
        admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=30_000)
        try:
            admin.create_topics([NewTopic(TOPIC, 6, 3, topic_configs={"min.insync.replicas": "3"})])
        finally:
            admin.close()
        sandbox.wait_for(lambda s: len([p for p in s.partition_states if p[0] == TOPIC]) == 6, 30, "topic")
        sandbox.wait_healthy()
        yield sandbox


class OnCall:
    """The analysis DAG's steps for one cluster, and the log sink the on-call engineer reads."""

    def __init__(self, sandbox: SandboxCluster, root: Path, spark: SparkSession) -> None:
        self.sandbox, self.lake, self.spark = sandbox, open_lake(root / "lake"), spark
        self.sink = root / "alerts.jsonl"
        self.notifier = LogNotifier("log", self.sink)
        self.now = datetime.now(UTC)

    def run(self) -> DispatchReport:
        snap = self.sandbox.snapshot()  # cluster "sandbox"
        self.lake.publish(snapshot_batch(snap))
        self.now = max(self.now + timedelta(minutes=5), datetime.now(UTC))  # one DAG run every 5 minutes
        validate_batches(self.lake, CLUSTER, self.now, snapshot_id=snap.snapshot_id)
        analyse(self.spark, self.lake.root, CLUSTER, list(DETECTORS.values()), Thresholds())
        gates = health_gates(self.lake, CLUSTER, Thresholds(), self.now)
        links = Links(airflow_run="http://airflow.test/dags/kafka_health_analysis/runs/r1")
        alerts = firing_alerts(self.lake, CLUSTER, gates, links)
        return dispatch(
            CLUSTER, alerts, self.now, lake_root=self.lake.root, notifiers=[self.notifier],
            reminder=timedelta(hours=1), run_links=links,
        )  # fmt: skip

    def sent(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.sink.read_text().splitlines()] if self.sink.exists() else []


def test_a_killed_broker_is_one_critical_incident_until_it_returns(
    cluster: SandboxCluster, spark: SparkSession, tmp_path: Path
) -> None:
    oncall = OnCall(cluster, tmp_path, spark)
    healthy = oncall.run()
    assert (healthy.opened, oncall.sent()) == ((), [])

    victim = next(b for b in (2, 3, 1) if b != cluster.controller_id())
    cluster.kill_broker(victim)
    ours = {(TOPIC, p) for p in range(6)}
    cluster.wait_for(lambda s: victim not in s.brokers and ours <= set(s.under_replicated()), 60, "ISR shrink")
    down = oncall.run()
    critical = [n for n in oncall.sent() if n["severity"] == "critical"]
    assert [n["key"] for n in critical] == ["no_under_min_isr_partitions"]
    assert "no_under_min_isr_partitions" in down.opened
    (opened,) = critical
    assert opened["event"] == "open" and opened["cluster"] == CLUSTER
    assert opened["title"] == "6 partitions under min ISR: producers with acks=all are refused"
    assert f"broker {victim} is down" in opened["cause"]
    assert {a["text"].split(":")[0] for a in opened["affected"]} == {f"{TOPIC}-{p}" for p in range(6)}
    assert opened["links"]["Airflow run"].endswith("/runs/r1") and opened["links"]["Data Docs"].endswith(".html")
    assert datetime.fromisoformat(opened["since"]) <= oncall.now

    again = oncall.run()  # still down, five minutes later: no repeat
    assert "no_under_min_isr_partitions" in again.silent
    assert [n for n in oncall.sent() if n["severity"] == "critical"] == critical

    cluster.start_broker(victim)
    assert cluster.root is not None and attach(cluster.root).broker_running(victim), "state.json names the new pid"
    cluster.wait_healthy(120)
    back = oncall.run()
    assert "no_under_min_isr_partitions" in back.resolved
    resolves = [n for n in oncall.sent() if n["event"] == "resolve" and n["key"] == "no_under_min_isr_partitions"]
    assert len(resolves) == 1


def test_a_snapshot_that_cannot_reach_zookeeper_says_cannot_see(cluster: SandboxCluster, tmp_path: Path) -> None:
    lake, now = open_lake(tmp_path / "lake"), datetime.now(UTC)
    cluster.stop_zookeeper()
    try:
        with pytest.raises(ZooKeeperUnreachable) as failed:
            cluster.snapshot()
    finally:
        cluster.start_zookeeper()
    status = PipelineStatus(lake.root)
    status.record(CLUSTER, "ZooKeeper", now, failed.value, conn_id="zookeeper_default")
    notifier = LogNotifier("log", tmp_path / "alerts.jsonl")
    report = dispatch(
        CLUSTER, firing_alerts(lake, CLUSTER, None, Links()), now, lake_root=lake.root, notifiers=[notifier],
        reminder=timedelta(hours=1),
    )  # fmt: skip
    assert report.opened == ("cannot_see:zookeeper",)
    (sent,) = [json.loads(line) for line in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    assert sent["title"] == f"cannot see cluster {CLUSTER}: the ZooKeeper snapshot failed"
    assert sent["severity"] == "critical" and "ZooKeeperUnreachable" in sent["cause"]

    status.record(CLUSTER, "ZooKeeper", now + timedelta(minutes=5))  # the next snapshot works
    report = dispatch(
        CLUSTER, firing_alerts(lake, CLUSTER, None, Links()), now + timedelta(minutes=5), lake_root=lake.root,
        notifiers=[notifier], reminder=timedelta(hours=1),
    )  # fmt: skip
    assert report.resolved == ("cannot_see:zookeeper",)
    cluster.wait_healthy(120)


def test_a_plans_own_leader_moves_are_silenced_while_an_unrelated_broker_kill_pages(
    cluster: SandboxCluster, spark: SparkSession, tmp_path: Path
) -> None:
    """A plan executing on two brokers holds a silence over what it causes there: its reorders leave their new
    preferred leader off the lead, a leader imbalance the analysis finds and does not page. Its in-flight copy
    is not under-replicated at all (adding replicas do not count, as for `kafka-topics
    --under-replicated-partitions`). The third broker killed during the plan pages."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=30_000)
    try:  # a broker the earlier tests restarted leads none of its partitions: every leader back to its preferred
        admin.elect_leaders(0, None, raise_errors=False)
    finally:
        admin.close()

    def preferred(snap: ClusterSnapshot) -> bool:
        return all(
            st.leader == snap.topics[t].partitions[p][0]
            for (t, p), st in snap.partition_states.items()
            if t in snap.topics
        )

    cluster.wait_for(preferred, 60, "every partition led by its preferred leader")
    oncall = OnCall(cluster, tmp_path, spark)
    assert oncall.run().opened == ()
    victim = next(b for b in (3, 2, 1) if b != cluster.controller_id())
    first, second = (b for b in (1, 2, 3) if b != victim)
    create_topic(cluster, "moves_a", {p: [first, second] for p in range(8)})
    create_topic(cluster, "moves_z", {0: [first]})
    produce(cluster, "moves_z", 300, value_bytes=10_000)
    snap = cluster.snapshot()
    targets = {("moves_a", p): (second, first) for p in range(8)} | {("moves_z", 0): (first, second)}
    plan = build_plan("replica_balance", ClusterView(snap), {}, targets)
    crawl = ExecutionOptions(poll_s=0.3, controller_quiet_s=0, throttle_bytes_per_s=1, stuck_after_s=600,
                             batch_max_partitions=8)  # fmt: skip
    config = ClusterConfig(CLUSTER, writes_enabled=True, remediation_backend="admin_api")
    zookeeper = ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot, timeout_s=5)

    def admin_api() -> AdminApiBackend:
        return AdminApiBackend(KafkaTarget(cluster.bootstrap_servers, {"request_timeout_ms": 10_000}))

    def execution() -> None:
        backend = admin_api()
        try:
            execute(plan, lake=oncall.lake, cluster_config=config, backend=backend, zookeeper=zookeeper,
                    actor="pytest", run_id="r1", trusted=lambda *_: None, options=crawl)  # fmt: skip
        finally:
            backend.close()

    running = Background(execution)
    try:
        cluster.wait_for(lambda s: bool(s.topics["moves_z"].adding_replicas), 60, "the crawl in flight")
        assert {tp for tp in cluster.snapshot().under_replicated() if tp[0].startswith("moves_")} == set()
        during = oncall.run()
        assert "leader_imbalance_within_threshold" in during.silenced and during.opened == ()
        assert oncall.sent() == []

        cluster.kill_broker(victim)
        cluster.wait_for(lambda s: victim not in s.brokers, 60, "the victim unregistered")
        killed = oncall.run()
        assert "no_under_min_isr_partitions" in killed.opened
        paged = {n["key"]: n for n in oncall.sent() if n["event"] == "open"}
        assert f"broker {victim} is down" in paged["no_under_min_isr_partitions"]["cause"]
        if "leader_imbalance_within_threshold" in paged:  # the victim's own partitions lost their leader
            assert f"broker {victim} leads" in paged["leader_imbalance_within_threshold"]["cause"]
    finally:
        backend = admin_api()
        try:
            cancel(plan.plan_id, lake=oncall.lake, cluster_config=config, backend=backend, zookeeper=zookeeper,
                   actor="pytest", poll_s=0.3)  # fmt: skip
        finally:
            backend.close()
        assert isinstance(running.error(120), PlanCancelled)
        cluster.start_broker(victim)
        cluster.wait_healthy(120)
