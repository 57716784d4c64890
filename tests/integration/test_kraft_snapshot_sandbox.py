"""The KRaft source on the real KRaft sandbox (3 controllers + 3 Kafka 4.4 brokers), checked against
Kafka 4's own tools: the snapshot, down and fenced brokers with ELR, a killed active controller."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kafka.admin import NewTopic
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.errors import KafkaUnreachable, NotAKRaftCluster
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.remediation import AdminApiBackend
from kafka_ops.remediation.backends import BROKER_THROTTLES
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.kraft.collector import KRaftCollector
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation.gates import run_gates
from kafka_ops.validation.integrity import validate_snapshot
from sandbox import KRaftSandbox, SandboxCluster
from tests.integration.kafka_data import produce
from tests.integration.kafka_tools import kafka4_tool, quorum_replication, quorum_status, topics_described

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CLUSTER = "kraft"


def snapshot(cluster: KRaftSandbox) -> ClusterSnapshot:
    running = [b for b in cluster.broker_ids() if cluster.broker_running(b)]
    bootstrap = ",".join(f"127.0.0.1:{cluster.broker_ports[b]}" for b in running)
    return KRaftCollector(CLUSTER, KafkaTarget(bootstrap)).collect()


def make_topic(cluster: KRaftSandbox, name: str, assignment: dict[int, list[int]], configs: dict[str, str]) -> None:
    with cluster.admin() as admin:
        if name not in admin.list_topics():
            admin.create_topics([NewTopic(name, replica_assignments=assignment, topic_configs=configs)])

    def ready() -> bool:
        states = snapshot(cluster).partition_states
        return all((name, p) in states and len(states[(name, p)].isr) == len(r) for p, r in assignment.items())

    cluster.wait_for(ready, 60, f"topic {name} fully in sync")


def assert_partitions_match_kafka(snap: ClusterSnapshot, bootstrap: str, *topics: str) -> int:
    """Every partition of `topics` as `kafka-topics --describe` shows it; returns how many."""
    truth = topics_described(bootstrap, *topics)
    assert truth, f"kafka-topics described none of {topics}"
    for (topic, partition), kafka in truth.items():
        state = snap.partition_states[(topic, partition)]
        ours = {
            "leader": state.leader,
            "replicas": snap.topics[topic].partitions[partition],
            "isr": state.isr,
            "elr": state.elr,
            "last_known_elr": state.last_known_elr,
        }
        assert ours == kafka, f"{topic}-{partition}: kafka-ops {ours}, kafka-topics {kafka}"
    return len(truth)


def test_a_kraft_snapshot_agrees_with_kafkas_own_tools(
    healthy_kraft_sandbox: KRaftSandbox, lake: Lake, tmp_path: Path
) -> None:
    cluster = healthy_kraft_sandbox
    bootstrap = cluster.bootstrap_servers
    make_topic(cluster, "kr_orders", {p: [1 + (p + i) % 3 for i in range(3)] for p in range(6)},
               {"min.insync.replicas": "2"})  # fmt: skip
    make_topic(cluster, "kr_small", {0: [1, 2], 1: [2, 3]}, {"retention.ms": "3600000"})
    snap = snapshot(cluster)

    assert (snap.source, snap.zookeeper, snap.cluster_id) == ("kraft", None, cluster.cluster_id)
    assert {b.broker_id: b.rack for b in snap.brokers.values()} == {1: "rack-a", 2: "rack-b", 3: "rack-c"}
    assert snap.fenced_brokers == {} and snap.issues == []
    listed = set(kafka4_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap, "--list").split())
    assert set(snap.topics) == listed  # internal topics included, as /brokers/topics lists them
    assert assert_partitions_match_kafka(snap, bootstrap, "kr_orders", "kr_small") == 8
    assert snap.under_replicated() == [] and snap.offline() == []

    # the quorum as kafka-metadata-quorum shows it; the controller is its leader, never DescribeCluster's id
    status = quorum_status(bootstrap)
    quorum = snap.quorum
    assert quorum is not None and snap.controller is not None
    assert (quorum.leader_id, quorum.leader_epoch) == (int(status["LeaderId"]), int(status["LeaderEpoch"]))
    assert (snap.controller.broker_id, snap.controller_epoch) == (quorum.leader_id, quorum.leader_epoch)
    assert set(quorum.voters) == {v["id"] for v in json.loads(status["CurrentVoters"])} == {101, 102, 103}
    assert set(quorum.observers) == {o["id"] for o in json.loads(status["CurrentObservers"])} == {1, 2, 3}
    replication = quorum_replication(bootstrap)
    for replica in quorum.replicas:
        kafka = replication[replica.replica_id]
        assert (replica.directory_id or "AAAAAAAAAAAAAAAAAAAAAA") == kafka["DirectoryId"]
        assert kafka["Status"] == ("Leader" if replica.replica_id == quorum.leader_id else
                                   "Follower" if replica.role == "voter" else "Observer")  # fmt: skip

    overrides = {(c.entity_type, c.entity_name): c.config for c in snap.configs}
    assert overrides[("topic", "kr_orders")] == {"min.insync.replicas": "2"}
    assert overrides[("topic", "kr_small")] == {"retention.ms": "3600000"}
    assert snap.metadata_version is not None and snap.metadata_version >= 1
    # a fixed handful plus two per broker (its dynamic configs, its log dirs), whatever the number of topics
    assert snap.requests is not None and snap.requests <= 10 + 2 * len(snap.brokers)
    assert {d.broker_id for d in snap.log_dirs} == {1, 2, 3}

    lake.publish(snapshot_batch(snap))
    result = validate_snapshot(lake, CLUSTER, snap.snapshot_id)
    assert result.failures == (), result.failures
    partitions = lake.read("partitions", CLUSTER, [snap.snapshot_id]).to_pylist()
    orders = [p for p in partitions if p["topic"] == "kr_orders"]
    assert all(p["elr"] == [] and p["state_version"] is None and p["controller_epoch"] is None for p in orders)
    commit = lake.read("snapshots", CLUSTER, [snap.snapshot_id]).to_pylist()[0]
    assert (commit["source"], commit["zookeeper"], commit["bootstrap_servers"]) == ("kraft", None, bootstrap)

    # the CLI a new user runs
    done = subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", "snapshot", "--bootstrap-servers", bootstrap,
         "--lake", str(tmp_path / "cli-lake"), "--cluster", CLUSTER, "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    info = json.loads(done.stdout.strip().splitlines()[-1])
    assert (info["source"], info["brokers"], info["controller"]) == ("kraft", [1, 2, 3], quorum.leader_id)


def test_down_brokers_are_fenced_and_elr_is_what_kafka_reports(
    healthy_kraft_sandbox: KRaftSandbox, spark: SparkSession, lake: Lake
) -> None:
    """Broker 3 stopped, then broker 2 killed, under a topic with min ISR 2: the ISR cannot shrink below
    min ISR, so Kafka keeps broker 2 in the ELR (KIP-966): both fenced, the partitions under min ISR."""
    cluster = healthy_kraft_sandbox
    topic = "kr_elr"
    make_topic(cluster, topic, {p: [1, 2, 3] for p in range(3)}, {"min.insync.replicas": "2"})
    make_topic(cluster, "kr_elr_pref", {0: [3, 1]}, {})  # preferred 3: led by 1 once 3 is down
    try:
        cluster.stop_broker(3)
        cluster.wait_for(lambda: set(snapshot(cluster).fenced_brokers) == {3}, 60, "broker 3 fenced")
        cluster.kill_broker(2)

        def settled() -> bool:
            snap = snapshot(cluster)
            return set(snap.fenced_brokers) == {2, 3} and all(
                snap.partition_states[(topic, p)].isr == (1,) for p in range(3)
            )

        cluster.wait_for(settled, 90, "brokers 2 and 3 fenced and out of every ISR")
        snap = snapshot(cluster)
        assert set(snap.brokers) == {1}
        assert assert_partitions_match_kafka(snap, f"127.0.0.1:{cluster.broker_ports[1]}", topic) == 3
        states = [snap.partition_states[(topic, p)] for p in range(3)]
        assert all(s.leader == 1 and s.elr == (2,) for s in states), states  # 2 left last: eligible, 3 not
        assert {(topic, p) for p in range(3)} <= set(snap.under_replicated())
        assert all(set(s.offline_replicas or ()) == {2, 3} for s in states)  # replicas on brokers that are down

        lake.publish(snapshot_batch(snap))
        result = validate_snapshot(lake, CLUSTER, snap.snapshot_id)
        assert result.failures == (), result.failures  # unregistered replicas, but out of the ISR: reported
        assert lake.read("fenced_brokers", CLUSTER, [snap.snapshot_id]).column("broker_id").to_pylist() == [2, 3]

        # the analysis and its gates: the fenced brokers, and every partition under min ISR
        analyse(spark, lake.root, CLUSTER, list(DETECTORS.values()), Thresholds())
        report = run_gates(lake, CLUSTER, snap.snapshot_id, data_docs=False)
        failed = {r.name: r for r in report.failed()}
        assert {"no_fenced_brokers", "no_under_min_isr_partitions"} <= set(failed)
        assert "quorum_has_a_majority" not in failed
        assert [r["replica_id"] for r in failed["no_fenced_brokers"].rows] == [2, 3]
        # leader balance by the KRaft controller's rule, the kind read from the snapshot's commit
        assert report.source == "kraft"
        leaders = failed["leader_imbalance_within_threshold"]
        assert 3 in [r["broker_id"] for r in leaders.rows]
        assert "not led by their preferred replica" in str(leaders.cause), leaders.cause
        off = [r for r in lake.read("leader_balance_partitions", CLUSTER, [snap.snapshot_id]).to_pylist()
               if r["topic"] == "kr_elr_pref"]  # fmt: skip
        assert [(r["leader"], r["blocked_reason"]) for r in off] == [(1, "preferred replica is down")]
        isr_rows = lake.read("isr_health", CLUSTER, [snap.snapshot_id]).to_pylist()
        ours = [r for r in isr_rows if r["topic"] == topic]
        assert all(r["under_min_isr"] and r["min_isr"] == 2 and r["min_isr_source"] == "topic" for r in ours)
    finally:
        for broker_id in (2, 3):
            if not cluster.broker_running(broker_id):
                cluster.start_broker(broker_id)
        cluster.wait_healthy(180)


def test_a_killed_active_controller_is_one_leader_change(
    healthy_kraft_sandbox: KRaftSandbox, spark: SparkSession, lake: Lake
) -> None:
    cluster = healthy_kraft_sandbox
    snaps = [snapshot(cluster)]
    before = snaps[0].quorum
    assert before is not None and before.leader_id is not None
    cluster.kill_controller(before.leader_id)
    try:
        # a broker answers DescribeQuorum once the active controller has: until one is elected the snapshot
        # holds no quorum, only an issue saying so
        cluster.wait_for(lambda: led_anew(snapshot(cluster), before.leader_epoch), 60, "a new quorum leader")
        snaps += [snapshot(cluster), snapshot(cluster)]
    finally:
        cluster.start_controller(before.leader_id)
    after = snaps[-1].quorum
    assert after is not None and after.leader_id not in (None, before.leader_id)
    for s in snaps:
        lake.publish(snapshot_batch(s))
    analyse(spark, lake.root, CLUSTER, [DETECTORS["controller_health"], DETECTORS["quorum_health"]], Thresholds())
    quorum = {r["replica_id"]: r for r in lake.read("quorum_health", CLUSTER, [snaps[-1].snapshot_id]).to_pylist()}
    assert quorum[after.leader_id]["status"] == "leader"
    gone = quorum[before.leader_id]  # killed: the new leader has no fetch from it
    assert (gone["status"], gone["severity"], gone["lag"]) == ("not_fetching", "warning", None)
    assert gone["problem"] == (
        f"controller {before.leader_id} has not fetched the metadata log since the quorum leader was elected: "
        "a voter down or cut off (2 of 3 voters fetching, 2 needed for a majority)"
    )
    changes = lake.read("controller_changes", CLUSTER).to_pylist()
    assert [(c["from_controller"], c["to_controller"]) for c in changes] == [(before.leader_id, after.leader_id)]
    (health,) = lake.read("controller_health", CLUSTER, [snaps[-1].snapshot_id]).to_pylist()
    # elections are counted from the quorum's leader epoch, once: not again by the later snapshot
    assert health["controller_id"] == after.leader_id
    assert health["elections_in_window"] == after.leader_epoch - before.leader_epoch >= 1
    cluster.wait_healthy(120)


def test_the_kraft_source_refuses_zookeeper_brokers_naming_the_setting(healthy_sandbox: SandboxCluster) -> None:
    with pytest.raises(NotAKRaftCluster, match="set metadata_source = zookeeper"):
        KRaftCollector(CLUSTER, KafkaTarget(healthy_sandbox.bootstrap_servers)).collect()


def test_no_broker_answering_is_cannot_see_the_cluster() -> None:
    target = KafkaTarget("127.0.0.1:1", {"request_timeout_ms": 2000, "bootstrap_timeout_ms": 2000})
    with pytest.raises(KafkaUnreachable, match=r"127\.0\.0\.1:1"):
        KRaftCollector(CLUSTER, target).collect()


def led_anew(snap: ClusterSnapshot, epoch: int) -> bool:
    return snap.quorum is not None and snap.quorum.leader_id is not None and snap.controller_epoch != epoch


def test_a_throttled_reassignment_in_flight_is_seen_not_a_crash(
    healthy_kraft_sandbox: KRaftSandbox, spark: SparkSession, lake: Lake
) -> None:
    """A move crawling at 1 B/s: the snapshot holds it (adding / removing replicas, the target), the
    snapshot is trusted, and reassignments_in_flight reports it; then it is cancelled."""
    cluster = healthy_kraft_sandbox
    topic = "kr_moving"
    make_topic(cluster, topic, {0: [1]}, {})
    # ~3 MB: a throttle is enforced after the fact, so the first fetch still copies up to 1 MB
    # (replica.fetch.max.bytes); the rest, at 1 B/s, moves for days
    produce(cluster, topic, 300, value_bytes=10_000)
    backend = AdminApiBackend(KafkaTarget(cluster.bootstrap_servers, {"request_timeout_ms": 10_000}))
    tp = (topic, 0)
    rates = {k: "1" for k in BROKER_THROTTLES}
    try:
        backend.set_configs(
            {topic: {"leader.replication.throttled.replicas": "0:1", "follower.replication.throttled.replicas": "0:2"}},
            {b: rates for b in cluster.broker_ids()},
        )
        backend.reassign({tp: (2,)})
        # the brokers' metadata follows the controller's a moment later
        cluster.wait_for(lambda: bool(snapshot(cluster).topics[topic].adding_replicas), 30, "the move in flight")
        snaps = [snapshot(cluster), snapshot(cluster)]
        snap = snaps[-1]
        assert (snap.topics[topic].adding_replicas, snap.topics[topic].removing_replicas) == ({0: (2,)}, {0: (1,)})
        assert set(snap.topics[topic].partitions[0]) == {1, 2}
        for s in snaps:
            lake.publish(snapshot_batch(s))
        assert validate_snapshot(lake, CLUSTER, snap.snapshot_id).failures == ()
        (moving,) = [
            r for r in lake.read("reassignments", CLUSTER, [snap.snapshot_id]).to_pylist() if r["topic"] == topic
        ]
        assert (moving["target_replicas"], moving["adding_replicas"], moving["removing_replicas"]) == ([2], [2], [1])
        analyse(spark, lake.root, CLUSTER, [DETECTORS["reassignments"]], Thresholds())
        found = lake.read("reassignments_in_flight", CLUSTER, [snap.snapshot_id]).to_pylist()
        assert [(r["topic"], r["partition"], r["target_replicas"]) for r in found] == [(topic, 0, [2])]
    finally:
        backend.cancel([tp])
        backend.delete_configs(
            {topic: ["leader.replication.throttled.replicas", "follower.replication.throttled.replicas"]},
            dict.fromkeys(cluster.broker_ids(), BROKER_THROTTLES),
        )
        backend.close()
    cluster.wait_for(lambda: not snapshot(cluster).topics[topic].adding_replicas, 60, "the move cancelled")
