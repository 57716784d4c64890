"""End to end on the sandbox: real failures, real snapshots, the Spark detectors' findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from kazoo.client import KazooClient
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.thresholds import Thresholds
from sandbox import SandboxCluster
from sandbox.metrics_agent import URP_GAUGE
from tests.integration.kafka_tools import jmx_gauge_total

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "e2e_health"
ASSIGNMENT = {p: [[1, 2, 3], [2, 3, 1], [3, 1, 2]][p % 3] for p in range(9)}


class Lab:
    """The sandbox, a lake, and an analysis after every snapshot by `detectors` (default: every one)."""

    def __init__(
        self, sandbox: SandboxCluster, lake_root: Path, spark: SparkSession, detectors: tuple[str, ...] = ()
    ) -> None:
        self.sandbox, self.lake, self.spark = sandbox, open_lake(lake_root), spark
        self.detectors = [d for name, d in DETECTORS.items() if name in detectors or not detectors]

    def snapshot_and_analyse(self) -> dict[str, list[dict[str, object]]]:
        snap = self.sandbox.snapshot()
        self.lake.publish(snapshot_batch(snap))
        analyse(self.spark, self.lake.root, "sandbox", self.detectors, Thresholds())
        return {t: self.lake.read(t, "sandbox", [snap.snapshot_id]).to_pylist() for t in self.findings_tables()}

    def findings_tables(self) -> list[str]:
        return sorted({o for d in self.detectors for o in d.outputs})


def ensure_topic(sandbox: SandboxCluster) -> None:
    if TOPIC in sandbox.snapshot().topics:
        return
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(TOPIC, replica_assignments=ASSIGNMENT)])
    finally:
        admin.close()
    sandbox.wait_for(lambda s: all((TOPIC, p) in s.partition_states for p in ASSIGNMENT), 30, "topic")


def ours(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return [r for r in rows if r.get("topic") == TOPIC]


def test_broker_failure_recovery_and_controller_change(
    healthy_sandbox: SandboxCluster, spark: SparkSession, tmp_path: Path
) -> None:
    sandbox = healthy_sandbox
    ensure_topic(sandbox)
    sandbox.wait_healthy()
    # four analyses on the shared Spark: only the detectors this story is about
    story = ("isr_health", "isr_events", "broker_attribution", "leader_balance", "controller_health")
    lab = Lab(sandbox, tmp_path / "lake", spark, story)
    first = lab.snapshot_and_analyse()
    assert not [r for r in ours(first["isr_health"]) if r["status"] != "ok"]
    controller = sandbox.controller_id()
    victim = next(b for b in (2, 3, 1) if b != controller)

    # kill a broker: ISR shrink events attributed to it, under-replicated partitions listed
    sandbox.kill_broker(victim)
    # every partition of ours must have shrunk (other topics' shrinks, e.g. __consumer_offsets, don't count)
    everything = {(TOPIC, p) for p in ASSIGNMENT}
    sandbox.wait_for(
        lambda s: victim not in s.brokers and everything <= set(s.under_replicated()), 60, f"ISR shrink of {TOPIC}"
    )
    # what an exporter-based setup pages on: the brokers' own gauge, through their JMX exporter agents
    survivors = [sandbox.metrics_ports[b] for b in sandbox.broker_ids() if b != victim]
    under = jmx_gauge_total(survivors, URP_GAUGE, lambda n: n >= len(everything))
    assert under >= len(everything), under
    down = lab.snapshot_and_analyse()
    shrinks = [e for e in ours(down["isr_events"]) if e["event"] == "shrink"]
    assert {e["replica"] for e in shrinks} == {victim}
    assert len(shrinks) == 9
    under = {(r["topic"], r["partition"]) for r in ours(down["isr_health"]) if r["under_replicated"]}
    assert under == everything
    (blamed,) = [b for b in down["broker_attribution"] if b["broker_id"] == victim]
    assert blamed["registered"] is False and blamed["severity"] == "critical"
    assert blamed["missing_broker_down"] >= 9 and blamed["missing_alive_lagging"] == 0
    assert f"broker {victim} is down" in str(blamed["cause"])

    # restart it: expand events, and leaderships left elsewhere reported as fixable imbalance
    sandbox.start_broker(victim)
    sandbox.wait_healthy(120)
    assert jmx_gauge_total(list(sandbox.metrics_ports.values()), URP_GAUGE, lambda n: n == 0) == 0
    back = lab.snapshot_and_analyse()
    expands = [e for e in ours(back["isr_events"]) if e["event"] == "expand"]
    assert {e["replica"] for e in expands} == {victim} and len(expands) == 9
    moved = [r for r in ours(back["leader_balance_partitions"]) if r["preferred_leader"] == victim]
    assert len(moved) == 3
    assert all(r["fixable"] and r["action"] == "run kafka_preferred_leader_election" for r in moved)
    (cluster,) = back["leader_balance_cluster"]
    assert cluster["kraft_rule_triggered"] is True and cluster["fixable"] >= 3

    # kill the controller: a controller change with a higher epoch
    old = sandbox.controller_id()
    sandbox.kill_broker(old)  # type: ignore[arg-type]
    sandbox.wait_for(lambda s: s.controller is not None and s.controller.broker_id != old, 60, "new controller")
    changed = lab.snapshot_and_analyse()
    (change,) = [c for c in changed["controller_changes"] if c["from_controller"] == old]
    assert change["to_controller"] != old and change["epoch_after"] > change["epoch_before"]
    (health,) = changed["controller_health"]
    assert health["elections_in_window"] >= 1 and health["no_controller"] is False


def test_large_reassignment_in_flight(healthy_sandbox: SandboxCluster, spark: SparkSession, tmp_path: Path) -> None:
    sandbox = healthy_sandbox
    ensure_topic(sandbox)
    lab = Lab(sandbox, tmp_path / "lake", spark)
    lab.snapshot_and_analyse()
    sandbox.stop_broker(3)  # new replicas on a stopped broker cannot catch up: stays in flight
    sandbox.wait_for(lambda s: 3 not in s.brokers, 60, "broker 3 gone")
    # every partition shrinks to [a live replica, 3]: complete only once broker 3 is back in the ISR
    moves = [
        {"topic": TOPIC, "partition": p, "replicas": [next(r for r in ASSIGNMENT[p] if r != 3), 3]} for p in ASSIGNMENT
    ]
    zk = KazooClient(hosts=sandbox.zookeeper_hosts)
    zk.start()
    try:
        zk.create(
            f"{sandbox.chroot}/admin/reassign_partitions", json.dumps({"version": 1, "partitions": moves}).encode()
        )
    finally:
        zk.stop()
        zk.close()
    sandbox.wait_for(
        lambda s: len(s.topics[TOPIC].adding_replicas) + len(s.topics[TOPIC].removing_replicas) > 0, 30, "in flight"
    )
    found = lab.snapshot_and_analyse()
    flying = ours(found["reassignments_in_flight"])
    assert {r["partition"] for r in flying} == {m["partition"] for m in moves}
    assert all(r["stuck"] is False and r["severity"] == "info" for r in flying)
    sandbox.start_broker(3)
    sandbox.wait_for(
        lambda s: not s.topics[TOPIC].adding_replicas and not s.topics[TOPIC].removing_replicas, 120, "done"
    )
