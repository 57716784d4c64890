"""The collector against the real sandbox cluster, including its failures."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from kafka_ops.errors import NotAKafkaChroot, ZooKeeperAuthFailed, ZooKeeperUnreachable
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from sandbox import SandboxCluster

pytestmark = pytest.mark.integration


def collect(sandbox: SandboxCluster, chroot: str | None = None, **kwargs: object) -> ClusterSnapshot:
    target = ZooKeeperTarget(sandbox.zookeeper_hosts, chroot or sandbox.chroot, **kwargs)  # type: ignore[arg-type]
    return ZooKeeperCollector("sandbox", target).collect()


@pytest.fixture
def zk(sandbox: SandboxCluster) -> Iterator[KazooClient]:
    client = KazooClient(hosts=sandbox.zookeeper_hosts)
    client.start()
    yield client
    client.stop()
    client.close()


def create_topic(sandbox: SandboxCluster, name: str, assignment: dict[int, list[int]]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(name, replica_assignments=assignment)])
    finally:
        admin.close()


def test_created_topic_appears_with_its_assignment(healthy_sandbox: SandboxCluster) -> None:
    assignment = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 3, 2]}
    create_topic(healthy_sandbox, "it_assignment", assignment)
    snap = healthy_sandbox.wait_for(
        lambda s: all(("it_assignment", p) in s.partition_states for p in assignment), 30, "topic states"
    )
    topic = snap.topics["it_assignment"]
    assert topic.partitions == {p: tuple(r) for p, r in assignment.items()}
    assert topic.topic_id
    for p, replicas in assignment.items():
        state = snap.partition_states[("it_assignment", p)]
        assert state.leader == replicas[0]
        assert sorted(state.isr) == sorted(replicas)
    assert {b.rack for b in snap.brokers.values()} == {"rack-a", "rack-b", "rack-c"}
    assert snap.cluster_id and snap.controller is not None
    assert 0 < snap.zxid_start <= snap.zxid_end
    assert not snap.issues


def test_killed_broker_shows_in_the_next_snapshot(healthy_sandbox: SandboxCluster) -> None:
    sandbox = healthy_sandbox
    create_topic(sandbox, "it_kill", {p: [1, 2, 3][p % 3 :] + [1, 2, 3][: p % 3] for p in range(6)})
    before = sandbox.wait_for(lambda s: len([k for k in s.partition_states if k[0] == "it_kill"]) == 6, 30, "topic")
    victim = next(b for b in (3, 2, 1) if before.controller and b != before.controller.broker_id)
    led_by_victim = [p for p in range(6) if before.partition_states[("it_kill", p)].leader == victim]
    assert led_by_victim
    sandbox.kill_broker(victim)
    after = sandbox.wait_for(
        lambda s: (
            victim not in s.brokers and all(victim not in s.partition_states[("it_kill", p)].isr for p in range(6))
        ),
        60,
        f"broker {victim} to leave the ISRs",
    )
    assert sorted(after.brokers) == sorted(set(sandbox.broker_ids()) - {victim})
    for p in range(6):
        old, new = before.partition_states[("it_kill", p)], after.partition_states[("it_kill", p)]
        assert len(new.isr) == 2
        assert new.stat.version > old.stat.version  # the partition epoch rose
        if p in led_by_victim:
            assert new.leader != victim and new.leader in new.isr
            assert new.leader_epoch > old.leader_epoch
    assert ("it_kill", led_by_victim[0]) in after.under_replicated()


def test_killed_controller_raises_the_epoch(healthy_sandbox: SandboxCluster) -> None:
    before = healthy_sandbox.snapshot()
    assert before.controller is not None and before.controller_epoch is not None
    old = before.controller.broker_id
    healthy_sandbox.kill_broker(old)
    after = healthy_sandbox.wait_for(
        lambda s: s.controller is not None and s.controller.broker_id != old, 60, "a new controller"
    )
    assert after.controller_epoch is not None and after.controller_epoch > before.controller_epoch
    assert after.controller is not None and after.controller.stat.czxid > before.controller.stat.czxid


def test_reassignment_is_visible_while_in_flight(healthy_sandbox: SandboxCluster, zk: KazooClient) -> None:
    sandbox = healthy_sandbox
    create_topic(sandbox, "it_reassign", {0: [1, 2], 1: [2, 1]})
    sandbox.wait_for(lambda s: ("it_reassign", 1) in s.partition_states, 30, "topic")
    sandbox.stop_broker(3)  # a new replica on a stopped broker cannot catch up: stays in flight
    plan = {"version": 1, "partitions": [{"topic": "it_reassign", "partition": 0, "replicas": [1, 3]}]}
    zk.create(f"{sandbox.chroot}/admin/reassign_partitions", json.dumps(plan).encode())
    snap = sandbox.wait_for(lambda s: bool(s.topics["it_reassign"].adding_replicas), 30, "the reassignment to start")
    topic = snap.topics["it_reassign"]
    assert topic.adding_replicas == {0: (3,)}
    assert topic.removing_replicas == {0: (2,)}
    assert set(topic.partitions[0]) == {1, 2, 3}
    assert [(r.topic, r.partition, r.replicas) for r in snap.reassignment_requests] == [("it_reassign", 0, (1, 3))]
    assert snap.replicas("it_reassign", 0) == (1, 2)  # replicas being added do not count yet
    sandbox.start_broker(3)
    sandbox.wait_for(lambda s: not s.topics["it_reassign"].adding_replicas, 90, "the reassignment to finish")


def test_zookeeper_down_is_a_clear_error_in_bounded_time(sandbox: SandboxCluster) -> None:
    sandbox.stop_zookeeper()
    try:
        start = time.monotonic()
        with pytest.raises(ZooKeeperUnreachable, match=f"no ZooKeeper server answered.*{sandbox.zk_port}"):
            collect(sandbox, timeout_s=3)
        assert time.monotonic() - start < 10
    finally:
        sandbox.start_zookeeper()


def test_wrong_chroot_is_named(sandbox: SandboxCluster) -> None:
    with pytest.raises(NotAKafkaChroot, match=f"no /brokers under 127.0.0.1:{sandbox.zk_port}/wrong"):
        collect(sandbox, "/wrong")


def test_digest_auth(sandbox: SandboxCluster, zk: KazooClient) -> None:
    acl = [make_digest_acl("ops", "s3cret", all=True)]
    zk.add_auth("digest", "ops:s3cret")
    if not zk.exists("/secured"):
        for path in ("/secured", "/secured/brokers", "/secured/brokers/ids", "/secured/brokers/topics"):
            zk.create(path, b"", acl=acl)
    snap = collect(sandbox, "/secured", digest_auth=("ops", "s3cret"))
    assert snap.brokers == {} and snap.topics == {}
    with pytest.raises(ZooKeeperAuthFailed, match="denies reading") as err:
        collect(sandbox, "/secured", digest_auth=("ops", "wrong"))
    assert "wrong" not in str(err.value) and "s3cret" not in str(err.value)


def test_malformed_and_missing_znodes_become_issues(healthy_sandbox: SandboxCluster, zk: KazooClient) -> None:
    """A copy of the sandbox's metadata with damage: the rest of the snapshot still completes."""
    src, dst = healthy_sandbox.chroot, "/mangled"
    if zk.exists(dst):
        zk.delete(dst, recursive=True)
    for path in ("/brokers/ids", "/brokers/topics"):
        zk.ensure_path(dst + path)
    for broker in zk.get_children(f"{src}/brokers/ids"):
        zk.create(f"{dst}/brokers/ids/{broker}", zk.get(f"{src}/brokers/ids/{broker}")[0])
    topics = sorted(t for t in zk.get_children(f"{src}/brokers/topics") if not t.startswith("__"))
    for topic in topics:
        data = zk.get(f"{src}/brokers/topics/{topic}")[0]
        zk.create(f"{dst}/brokers/topics/{topic}", data)
        for p in json.loads(data)["partitions"]:
            state = zk.get(f"{src}/brokers/topics/{topic}/partitions/{p}/state")[0]
            zk.create(f"{dst}/brokers/topics/{topic}/partitions/{p}/state", state, makepath=True)
    zk.set(f"{dst}/brokers/topics/{topics[0]}/partitions/0/state", b'{"version":1,"leader":"x"}')
    zk.create(f"{dst}/brokers/topics/bad_topic", b'{"version":9,"partitions":{}}')
    zk.create(f"{dst}/brokers/topics/no_state", b'{"version":3,"partitions":{"0":[1]}}')
    zk.create(f"{dst}/controller_epoch", b"not-a-number")

    snap = collect(healthy_sandbox, dst)
    problems = {i.path: i.problem for i in snap.issues}
    assert problems == {
        f"/brokers/topics/{topics[0]}/partitions/0/state": "field 'leader': expected an integer, got 'x'",
        "/brokers/topics/bad_topic": "unknown version 9 (this parser knows 1, 2, 3)",
        "/brokers/topics/no_state/partitions/0/state": "partition state znode is missing",
        "/controller_epoch": "expected a plain integer, got 'not-a-number'",
    }
    assert len(snap.brokers) == 3
    assert set(snap.topics) == {*topics, "no_state"}
    expected_states = sum(len(snap.topics[t].partitions) for t in topics) - 1
    assert len(snap.partition_states) == expected_states
    assert snap.controller is None and snap.controller_epoch is None
