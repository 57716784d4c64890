"""Damaged and hidden znodes on the real sandbox: one bad znode is a collection issue, never a crash.

Each test copies the sandbox's Kafka metadata into its own chroot (so the session's other tests
see the live chroot untouched), damages the copy with a real ZooKeeper client, snapshots it with
the collector and publishes it to a lake, as the snapshot DAG does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError
from kazoo.client import KazooClient
from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl

from kafka_ops.errors import ZooKeeperAuthFailed
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.snapshot.publish import snapshot_to_lake
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from sandbox import SandboxCluster
from tests.integration.corrupt_chroot import copy_tree

pytestmark = pytest.mark.integration

TOPIC = "it_faults"
ASSIGNMENT = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}
USER, PASSWORD = "ops", "s3cret"


@pytest.fixture
def zk(sandbox: SandboxCluster) -> Iterator[KazooClient]:
    client = KazooClient(hosts=sandbox.zookeeper_hosts)
    client.start()
    client.add_auth("digest", f"{USER}:{PASSWORD}")  # so a copy with a digest ACL can be deleted
    yield client
    client.stop()
    client.close()


def copied(sandbox: SandboxCluster, zk: KazooClient, chroot: str) -> str:
    """A fresh copy of the sandbox's brokers, controller, configs and `TOPIC` under `chroot`."""
    deadline = time.monotonic() + 90
    while TOPIC not in zk.get_children(f"{sandbox.chroot}/brokers/topics"):
        try:  # a broker of a just started sandbox may still refuse connections (seen under CPU load)
            admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=10_000)
            try:
                admin.create_topics([NewTopic(TOPIC, replica_assignments=ASSIGNMENT)])
            finally:
                admin.close()
        except KafkaError:
            if time.monotonic() > deadline:
                raise
            time.sleep(2)
    sandbox.wait_for(lambda s: all((TOPIC, p) in s.partition_states for p in ASSIGNMENT), 120, f"{TOPIC}'s states")
    if zk.exists(chroot):
        zk.delete(chroot, recursive=True)
    # Only `TOPIC`: a topic another test creates meanwhile could be copied without its states.
    for part in ("brokers/ids", f"brokers/topics/{TOPIC}", "controller", "controller_epoch", "config", "cluster"):
        if zk.exists(f"{sandbox.chroot}/{part}"):
            copy_tree(zk, f"{sandbox.chroot}/{part}", f"{chroot}/{part}")
    return chroot


def collect(sandbox: SandboxCluster, chroot: str, **kwargs: object) -> ClusterSnapshot:
    target = ZooKeeperTarget(sandbox.zookeeper_hosts, chroot, **kwargs)  # type: ignore[arg-type]
    return ZooKeeperCollector("faults", target).collect()


def state_path(partition: int) -> str:
    return f"/brokers/topics/{TOPIC}/partitions/{partition}/state"


def test_malformed_znodes_are_issues_naming_path_and_field_and_the_rest_is_published(
    healthy_sandbox: SandboxCluster, zk: KazooClient, lake: Lake
) -> None:
    chroot = copied(healthy_sandbox, zk, "/faults_malformed")
    clean = collect(healthy_sandbox, chroot)
    assert not clean.issues
    victim_broker = min(clean.brokers)

    def rewrite(path: str, **fields: object) -> None:
        document = json.loads(zk.get(chroot + path)[0])
        zk.set(chroot + path, json.dumps({**document, **fields}).encode())

    # What fault injection found: each of these made the snapshot exit 1 with a traceback.
    rewrite(state_path(0), leader_epoch=1 << 40)  # beyond int32: ArrowInvalid in the tables
    rewrite(state_path(1), isr=[True])
    rewrite(f"/brokers/ids/{victim_broker}", timestamp="--5")
    zk.set(f"{chroot}/controller_epoch", str(1 << 40).encode())
    zk.set(f"{chroot}/cluster/id", b'{"version":"1","id":"\\ud800"}')  # a lone surrogate

    snap, info = snapshot_to_lake("faults", ZooKeeperTarget(healthy_sandbox.zookeeper_hosts, chroot), lake)

    problems = {i.path: i.problem for i in snap.issues}
    assert problems == {
        state_path(0): "field 'leader_epoch': 1099511627776 is out of int32 range (-2147483648 to 2147483647)",
        state_path(1): "field 'isr[0]': expected an integer, got True",
        f"/brokers/ids/{victim_broker}": "field 'timestamp': expected a timestamp in ms (decimal digits), got '--5'",
        "/controller_epoch": "'1099511627776' is out of int32 range (0 to 2147483647)",
        "/cluster/id": "field 'id': not valid UTF-8 text: '\\ud800'",
    }
    assert info["issues"] == 5
    # Published, with the issues as rows, and everything else as in the undamaged copy.
    assert lake.latest_snapshot_id("faults") == snap.snapshot_id
    rows = lake.read("collection_issues", "faults", [snap.snapshot_id]).to_pylist()
    assert {r["path"]: r["problem"] for r in rows} == problems
    assert {r["kind"] for r in rows} == {"parse"}
    assert snap.cluster_id is None and snap.controller_epoch is None
    assert snap.controller == clean.controller
    assert snap.brokers == {b: broker for b, broker in clean.brokers.items() if b != victim_broker}
    assert snap.topics == clean.topics
    damaged = {(TOPIC, 0), (TOPIC, 1)}
    assert set(snap.partition_states) == set(clean.partition_states) - damaged
    assert all(snap.partition_states[tp] == clean.partition_states[tp] for tp in snap.partition_states)
    partitions = lake.read("partitions", "faults", [snap.snapshot_id]).to_pylist()
    ours = {r["partition"]: r for r in partitions if r["topic"] == TOPIC}
    assert [ours[p]["has_state"] for p in sorted(ours)] == [False, False, True]
    assert ours[2]["isr"] == list(clean.partition_states[(TOPIC, 2)].isr)
    assert len(partitions) == clean.partition_count


def test_a_partition_state_its_acl_hides_is_an_issue_naming_the_znode(
    healthy_sandbox: SandboxCluster, zk: KazooClient, lake: Lake
) -> None:
    chroot = copied(healthy_sandbox, zk, "/faults_acl")
    clean = collect(healthy_sandbox, chroot)
    hidden = state_path(1)
    zk.set_acls(chroot + hidden, [make_digest_acl(USER, PASSWORD, read=True)])

    snap, _ = snapshot_to_lake("faults", ZooKeeperTarget(healthy_sandbox.zookeeper_hosts, chroot), lake)

    assert [(i.path, i.kind, i.problem) for i in snap.issues] == [(hidden, "denied", "NoAuth: ACL denies read")]
    assert set(snap.partition_states) == set(clean.partition_states) - {(TOPIC, 1)}
    assert snap.topics == clean.topics and snap.brokers == clean.brokers
    rows = lake.read("collection_issues", "faults", [snap.snapshot_id]).to_pylist()
    assert [(r["path"], r["kind"], r["problem"]) for r in rows] == [(hidden, "denied", "NoAuth: ACL denies read")]
    # With the credentials the ACL names, the znode reads and nothing is missing.
    authorised = collect(healthy_sandbox, chroot, digest_auth=(USER, PASSWORD))
    assert not authorised.issues
    assert authorised.partition_states[(TOPIC, 1)] == clean.partition_states[(TOPIC, 1)]


def test_credentials_denied_at_the_root_still_fail_the_snapshot_naming_the_znode(
    healthy_sandbox: SandboxCluster, zk: KazooClient, lake: Lake
) -> None:
    chroot = copied(healthy_sandbox, zk, "/faults_acl_root")
    zk.set_acls(f"{chroot}/brokers/topics", [make_digest_acl(USER, PASSWORD, all=True)])
    try:
        with pytest.raises(ZooKeeperAuthFailed, match=r"denies reading Kafka's metadata \(/brokers/topics: NoAuth"):
            snapshot_to_lake("faults", ZooKeeperTarget(healthy_sandbox.zookeeper_hosts, chroot), lake)
        with pytest.raises(ZooKeeperAuthFailed, match="/brokers/topics: NoAuth") as err:
            collect(healthy_sandbox, chroot, digest_auth=(USER, "wrong"))
        assert "wrong" not in str(err.value) and PASSWORD not in str(err.value)
        assert lake.latest_snapshot_id("faults") is None  # nothing published
    finally:
        zk.set_acls(f"{chroot}/brokers/topics", OPEN_ACL_UNSAFE)
