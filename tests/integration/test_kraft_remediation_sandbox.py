"""Remediation on the real KRaft sandbox (Kafka 4.4): plans made from KRaft snapshots, executed through
the Admin API back end with live state read through the Admin API (no ZooKeeper anywhere)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, NewTopic

from kafka_ops.cli import main as cli_main
from kafka_ops.errors import ConfigError, PlanError, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import Plan, plan_preferred_election, plan_replication_factor
from kafka_ops.planning.plan import FOLLOWER_THROTTLED, LEADER_THROTTLED
from kafka_ops.remediation import AdminApiBackend, ExecutionOptions, ExecutionReport, execute, read_audit
from kafka_ops.remediation.backends import BROKER_THROTTLES, backend_for
from kafka_ops.remediation.live import KRaftLiveReader
from kafka_ops.remediation.progress import Progress
from kafka_ops.remediation.store import save_plan, write_progress
from kafka_ops.settings import ClusterConfig
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.kraft.collector import KRaftCollector
from sandbox import KRaftSandbox
from tests.integration.kafka_data import consume_all, produce, throttles_settled

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CLUSTER = "kraft"
FAST = ExecutionOptions(poll_s=0.3, controller_quiet_s=0, throttle_bytes_per_s=20_000_000, stuck_after_s=60)


def target(cluster: KRaftSandbox) -> KafkaTarget:
    running = [b for b in cluster.broker_ids() if cluster.broker_running(b)]
    bootstrap = ",".join(f"127.0.0.1:{cluster.broker_ports[b]}" for b in running)
    return KafkaTarget(bootstrap, {"request_timeout_ms": 10_000})


def snapshot(cluster: KRaftSandbox) -> ClusterSnapshot:
    return KRaftCollector(CLUSTER, target(cluster)).collect()


def base(cluster: KRaftSandbox, lake: Lake) -> ClusterSnapshot:
    """A snapshot published to the lake, as a plan's base always is (the preflight reads its quorum leader)."""
    snap = snapshot(cluster)
    lake.publish(snapshot_batch(snap))
    return snap


def create(cluster: KRaftSandbox, topic: str, assignment: dict[int, list[int]]) -> None:
    with cluster.admin() as admin:
        admin.create_topics([NewTopic(topic, replica_assignments=assignment)])

    def ready() -> bool:
        states = snapshot(cluster).partition_states
        return all((topic, p) in states and len(states[(topic, p)].isr) == len(r) for p, r in assignment.items())

    cluster.wait_for(ready, 60, f"topic {topic} in sync")


def run(cluster: KRaftSandbox, plan: Plan, lake: Lake, options: ExecutionOptions = FAST) -> ExecutionReport:
    config = ClusterConfig(CLUSTER, writes_enabled=True, metadata_source="kraft")
    backend = AdminApiBackend(target(cluster))
    try:
        return execute(
            plan,
            lake=lake,
            cluster_config=config,
            backend=backend,
            reader=KRaftLiveReader(CLUSTER, target(cluster)),
            actor="pytest",
            run_id="kraft-run",
            trusted=lambda lake, cluster, snapshot_id: None,
            options=options,
        )
    finally:
        backend.close()


def test_tp_re_02_replication_factor_1_to_2_on_kraft(healthy_kraft_sandbox: KRaftSandbox, lake: Lake) -> None:
    """The seed case on Kafka 4: 3 partitions from replication factor 1 to 2, throttled and batched, every
    message still there, the throttles gone."""
    cluster = healthy_kraft_sandbox
    topic = "tp_re_02"
    create(cluster, topic, {0: [1], 1: [2], 2: [3]})
    sent = produce(cluster, topic, 2_000)
    plan = plan_replication_factor(base(cluster, lake), [topic], 2)
    assert plan.moves == 3

    report = run(cluster, plan, lake, replace(FAST, batch_max_partitions=2, batch_max_moves_per_broker=1))

    assert report.status == "done" and report.batches >= 2
    after = snapshot(cluster)
    racks = {b: after.brokers[b].rack for b in after.brokers}
    for m in plan.reassignments:
        assert after.topics[topic].partitions[m.partition] == m.target
        assert sorted(after.partition_states[(topic, m.partition)].isr) == sorted(m.target)
        assert len({racks[b] for b in m.target}) == 2
    assert throttles_settled(cluster, [topic]) == {}
    assert consume_all(cluster, topic, 2_000) == sent
    steps = [(r["batch"], r["action"], r["outcome"]) for r in read_audit(lake, CLUSTER, plan.plan_id)]
    assert steps.count((0, "reassign", "ok")) == 1 and steps[-1] == (None, "remove_throttle", "ok")


def test_preferred_election_on_kraft(healthy_kraft_sandbox: KRaftSandbox, lake: Lake) -> None:
    """Broker 2 restarted: its leaderships stay away (no auto rebalance); the election gives them back."""
    cluster = healthy_kraft_sandbox
    topic = "kr_election"
    assignment = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 3, 2], 4: [2, 1, 3], 5: [3, 2, 1]}
    create(cluster, topic, assignment)
    cluster.restart_broker(2)
    cluster.wait_healthy(120)
    before = base(cluster, lake)
    leaders = Counter(before.partition_states[(topic, p)].leader for p in assignment)
    assert leaders[2] == 0, f"broker 2 should lead nothing after its restart: {leaders}"

    plan = plan_preferred_election(before, topics=[topic])
    assert {(e.partition, e.preferred) for e in plan.elections} == {(1, 2), (4, 2)}
    report = run(cluster, plan, lake, replace(FAST, election_batch_size=1))

    assert report.status == "done"
    after = snapshot(cluster)
    assert {p: after.partition_states[(topic, p)].leader for p in assignment} == {
        p: r[0] for p, r in assignment.items()
    }


def test_a_quorum_leader_elected_since_the_plan_is_refused(healthy_kraft_sandbox: KRaftSandbox, lake: Lake) -> None:
    """The active controller killed after the plan was made: the preflight names the plan's quorum leader
    and the new one, and nothing is written."""
    cluster = healthy_kraft_sandbox
    topic = "kr_quiet"
    create(cluster, topic, {0: [1], 1: [2]})
    planned = base(cluster, lake)
    plan = plan_replication_factor(planned, [topic], 2)
    old = planned.quorum
    assert old is not None and old.leader_id is not None
    cluster.kill_controller(old.leader_id)
    try:
        cluster.wait_for(lambda: snapshot(cluster).controller_epoch != old.leader_epoch, 60, "a new quorum leader")
        with pytest.raises(RemediationRefused) as refused:
            run(cluster, plan, lake)
    finally:
        cluster.start_controller(old.leader_id)
    assert (
        f"refused (controller stable): the KRaft quorum leader changed since the plan's base snapshot "
        f"{planned.snapshot_id}: it was controller {old.leader_id} at epoch {old.leader_epoch}, it is now controller "
    ) in str(refused.value)
    assert f"it is now controller {old.leader_id} " not in str(refused.value)
    assert snapshot(cluster).topics[topic].partitions == {0: (1,), 1: (2,)}
    assert [(r["action"], r["outcome"]) for r in read_audit(lake, CLUSTER, plan.plan_id)] == [("refuse", "refused")]


def test_the_cli_clears_leftover_throttles_through_the_brokers_alone(
    healthy_kraft_sandbox: KRaftSandbox, lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kafka-ops remediation clear-throttles --bootstrap-servers` (no ZooKeeper): the throttles a plan
    recorded and left behind are removed, read and written through the Admin API."""
    cluster = healthy_kraft_sandbox
    topic = "kr_leftover"
    create(cluster, topic, {0: [1]})
    plan = plan_replication_factor(base(cluster, lake), [topic], 2)
    save_plan(lake, plan, created_by="pytest")
    (move,) = plan.reassignments
    brokers = sorted({*move.current, *move.added})
    backend = AdminApiBackend(target(cluster))
    try:
        throttled = plan.throttles()["topics"][topic]
        backend.set_configs({topic: throttled}, {b: dict.fromkeys(BROKER_THROTTLES, "100000") for b in brokers})
    finally:
        backend.close()
    assert set(throttled) == {LEADER_THROTTLED, FOLLOWER_THROTTLED}
    left = Progress(plan.plan_id, CLUSTER, "admin_api", [], [], status="failed", throttled_topics=[topic],
                    throttled_brokers=brokers)  # fmt: skip
    write_progress(lake, left)
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(f'[[clusters]]\nname = "{CLUSTER}"\nwrites_enabled = true\nmetadata_source = "kraft"\n')
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))
    command = ["remediation", "clear-throttles", "--cluster", CLUSTER, "--plan-id", plan.plan_id, "--lake", lake.root,
               "--bootstrap-servers", cluster.bootstrap_servers]  # fmt: skip

    assert cli_main(command) == 0

    assert throttles_settled(cluster, [topic]) == {}
    assert [(r["action"], r["outcome"]) for r in read_audit(lake, CLUSTER, plan.plan_id)][-1] == (
        "remove_throttle",
        "ok",
    )


def test_the_zookeeper_back_end_is_refused_for_a_kraft_cluster() -> None:
    config = ClusterConfig(CLUSTER, writes_enabled=True, remediation_backend="zookeeper", metadata_source="kraft")
    with pytest.raises(ConfigError, match="set remediation_backend = 'admin_api'"):
        backend_for(config, zookeeper=None, admin_factory=None)


def test_a_broker_kafka_cordons_gets_no_new_replica(healthy_kraft_sandbox: KRaftSandbox, lake: Lake) -> None:
    """`cordoned.log.dirs=*` set on broker 3 through the Admin API (IncrementalAlterConfigs; dynamic on 4.4):
    the snapshot records broker 3 as cordoned, Kafka itself places a new topic around it, and a
    replication-factor plan adds no replica to it while its own replica stays where it is. A plan made
    before the cordon is refused at run time, and nothing is written."""
    cluster = healthy_kraft_sandbox
    topic = "kr_cordon"
    assignment = {0: [1], 1: [2], 2: [3], 3: [1], 4: [2], 5: [3]}
    create(cluster, topic, assignment)
    cordon = ConfigResource(ConfigResourceType.BROKER, "3", {"cordoned.log.dirs": "*"})
    uncordon = ConfigResource(ConfigResourceType.BROKER, "3", {"cordoned.log.dirs": (AlterConfigOp.DELETE, None)})
    with cluster.admin() as admin:
        assert admin.alter_configs([cordon], incremental=True) == {"broker": {"3": "OK"}}
    try:
        cluster.wait_for(lambda: snapshot(cluster).brokers[3].cordoned is True, 30, "broker 3 cordoned")
        with cluster.admin() as admin:  # Kafka agrees: its own placement leaves broker 3 out
            admin.create_topics([NewTopic("kr_cordon_new", 6, 1)])
        cluster.wait_for(lambda: len(snapshot(cluster).topics["kr_cordon_new"].partitions) == 6, 30, "topic created")
        snap = snapshot(cluster)
        assert {b: x.cordoned for b, x in snap.brokers.items()} == {1: False, 2: False, 3: True}
        assert 3 not in {b for r in snap.topics["kr_cordon_new"].partitions.values() for b in r}

        plan = plan_replication_factor(snap, [topic], 2)
        assert plan.moves == 6 and plan.request["kafka_cordoned_brokers"] == [3]
        assert all(3 not in m.added for m in plan.reassignments)
        assert {m.partition: m.target[0] for m in plan.reassignments if 3 in m.target} == {2: 3, 5: 3}
        # the same snapshot without Kafka's cordon puts two new replicas on broker 3
        uncordoned = replace(snap, brokers={b: replace(x, cordoned=False) for b, x in snap.brokers.items()})
        before = plan_replication_factor(uncordoned, [topic], 2)
        assert sum(3 in m.added for m in before.reassignments) == 2
        lake.publish(snapshot_batch(uncordoned))  # the plan's base: a snapshot from before the cordon
        with pytest.raises(
            RemediationRefused, match=r"refused \(target brokers not cordoned\): .*broker\(s\) \[3\] by Kafka"
        ):
            run(cluster, before, lake)
        assert snapshot(cluster).topics[topic].partitions == {p: tuple(r) for p, r in assignment.items()}
        with pytest.raises(PlanError, match=r"^cordoned_brokers: kr_cordon-0 holds \[1, 2\] and needs another"):
            plan_replication_factor(snap, [topic], 3)
    finally:
        with cluster.admin() as admin:
            admin.alter_configs([uncordon], incremental=True)
        cluster.wait_for(lambda: snapshot(cluster).brokers[3].cordoned is False, 30, "broker 3 uncordoned")
