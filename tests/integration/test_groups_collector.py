"""Group collection against the real sandbox: real producers, real consumer groups, real truncation."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

from kafka_ops.errors import KafkaUnreachable
from kafka_ops.lake.store import Lake
from kafka_ops.model.groups import GroupOffset, GroupSnapshot
from kafka_ops.snapshot.publish import groups_to_lake
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from sandbox import SandboxCluster
from sandbox.cluster import free_port

pytestmark = pytest.mark.integration

FAST = {"request_timeout_ms": 10_000}
PRODUCED = {0: 10, 1: 20, 2: 30, 3: 40}  # messages per partition of the 4-partition topic


def wait(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def admin_for(sandbox: SandboxCluster) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, **FAST)


def make_topics(sandbox: SandboxCluster, partitions: dict[str, int]) -> None:
    admin = admin_for(sandbox)
    try:
        admin.create_topics([NewTopic(t, num_partitions=n, replication_factor=1) for t, n in partitions.items()])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=sandbox.bootstrap_servers)
    try:
        for topic, count in partitions.items():
            for p in range(count):
                for _ in range(PRODUCED.get(p, 1) if count == 4 else 5):
                    producer.send(topic, b"m", partition=p)
        producer.flush(30)
    finally:
        producer.close()


def commit(sandbox: SandboxCluster, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit `offsets` for `group` from a consumer using assign(), then leave: the group is Empty."""
    consumer = KafkaConsumer(bootstrap_servers=sandbox.bootstrap_servers, group_id=group, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(t, p) for t, p in offsets])
        consumer.commit({TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()})
    finally:
        consumer.close()


class StableGroup:
    """Two subscribed consumers polling in their own threads; `held` is what each one holds."""

    ATTEMPTS = 3

    def __init__(self, sandbox: SandboxCluster, group: str, topic: str) -> None:
        self.sandbox, self.group, self.topic = sandbox, group, topic
        self.stop = threading.Event()
        self.held: dict[str, set[tuple[str, int]]] = {}
        self.errors: list[BaseException] = []
        self.threads: list[threading.Thread] = []

    def _run(self, client_id: str) -> None:
        try:
            consumer = KafkaConsumer(
                bootstrap_servers=self.sandbox.bootstrap_servers, group_id=self.group, client_id=client_id,
                enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=500,
            )  # fmt: skip
            try:
                consumer.subscribe([self.topic])
                while not self.stop.is_set():
                    consumer.poll(100)
                    self.held[client_id] = {(tp.topic, tp.partition) for tp in consumer.assignment()}
            finally:
                consumer.close()
        except BaseException as e:  # surfaced by the test
            self.errors.append(e)

    def _start(self) -> None:
        self.stop.clear()
        self.held.clear()
        # daemons: a consumer that never stops must not keep pytest alive after the run
        self.threads = [threading.Thread(target=self._run, args=(f"{self.group}-c{i}",), daemon=True) for i in (1, 2)]
        for t in self.threads:
            t.start()

    def _stop(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(30)

    def __enter__(self) -> StableGroup:
        admin = admin_for(self.sandbox)
        try:
            # kafka-python's group leader assigns nothing when its metadata lacks a just-created topic, and
            # does not rebalance again when the topic shows up: start the consumers once brokers serve it
            wait(lambda: self._served(admin), 30, f"brokers to serve the metadata of {self.topic}")

            def stable() -> bool:
                d = admin.describe_groups([self.group])[self.group]
                return (
                    d["group_state"] == "Stable"
                    and len(d["members"]) == 2
                    and len(self.held) == 2
                    and all(self.held.values())
                )

            # on a loaded machine a kafka-python leader was seen to stop heartbeating after its assignment
            # (the broker then evicts it): the test needs a stable group, so it starts the pair again
            for attempt in range(1, self.ATTEMPTS + 1):
                self._start()
                try:
                    wait(stable, 40, f"group {self.group} to be Stable with 2 members (attempt {attempt})")
                    return self
                except AssertionError:
                    self._stop()
                    if attempt == self.ATTEMPTS:
                        raise
        finally:
            admin.close()
        raise AssertionError("unreachable")

    def _served(self, admin: KafkaAdminClient) -> bool:
        (described,) = admin.describe_topics([self.topic])
        partitions = described.get("partitions") or []
        return described.get("error_code") == 0 and bool(partitions) and all(p["leader_id"] >= 0 for p in partitions)

    def __exit__(self, *exc: object) -> None:
        self._stop()
        assert not self.errors, self.errors


@pytest.fixture
def run_id() -> str:
    return uuid.uuid4().hex[:8]


def offsets_of(snap: GroupSnapshot, group: str) -> dict[tuple[str, int], GroupOffset]:
    return {(o.topic, o.partition): o for o in snap.offsets if o.group_id == group}


def test_stable_empty_and_commit_only_groups(healthy_sandbox: SandboxCluster, run_id: str, lake: Lake) -> None:
    sandbox = healthy_sandbox
    topic, other = f"it-{run_id}-orders", f"it-{run_id}-audit"
    make_topics(sandbox, {topic: 4, other: 1})
    stable, committer = f"it-{run_id}-stable", f"it-{run_id}-committer"
    # the stable group's commits are made while it is still empty (members would fence them)
    commit(sandbox, stable, {(topic, 0): 4, (topic, 1): 25})  # 25 is above the end offset (20)
    commit(sandbox, committer, {(topic, 1): 7, (topic, 3): 40, (other, 0): 2})
    with StableGroup(sandbox, stable, topic) as group:
        target = KafkaTarget(sandbox.bootstrap_servers, FAST)
        snap, info = groups_to_lake("sandbox", target, lake, include=f"it-{run_id}-.*")
        held = dict(group.held)

    groups = {g.group_id: g for g in snap.groups}
    assert sorted(groups) == [committer, stable]  # the include pattern keeps other tests' groups out
    s = groups[stable]
    assert (s.state, s.protocol_type, s.assignor) == ("Stable", "consumer", "range")  # kafka-python's default
    assert sorted(m.client_id for m in s.members) == [f"{stable}-c1", f"{stable}-c2"]
    assert {m.client_id: set(m.assignment) for m in s.members} == held  # what the consumers really hold
    assert sorted(tp for m in s.members for tp in m.assignment) == [(topic, p) for p in range(4)]
    assert sorted(len(m.assignment) for m in s.members) == [2, 2]
    assert all(m.host.endswith("127.0.0.1") and m.group_instance_id is None for m in s.members)

    c = groups[committer]
    assert (c.state, c.protocol_type, c.assignor, c.members) == ("Empty", "", "", ())

    rows = offsets_of(snap, stable)
    assert sorted(rows) == [(topic, p) for p in range(4)]
    assert (rows[(topic, 0)].committed_offset, rows[(topic, 0)].end_offset, rows[(topic, 0)].lag) == (4, 10, 6)
    above = rows[(topic, 1)]
    assert (above.committed_offset, above.end_offset, above.lag, above.committed_above_end) == (25, 20, 0, True)
    for p in (2, 3):
        assert rows[(topic, p)].no_commit and rows[(topic, p)].lag is None
        assert rows[(topic, p)].end_offset == PRODUCED[p]
    committed = offsets_of(snap, committer)
    assert {k: (o.committed_offset, o.end_offset, o.lag) for k, o in committed.items()} == {
        (topic, 1): (7, 20, 13),
        (topic, 3): (40, 40, 0),
        (other, 0): (2, 5, 3),
    }
    assert not any(o.topic_deleted for o in snap.offsets)
    assert {tp: e for tp, e in snap.end_offsets.items() if tp[0] == topic} == {
        (topic, p): n for p, n in PRODUCED.items()
    }
    assert snap.issues == ()
    assert info["groups"] == 2 and info["no_commit"] == 2 and info["committed_above_end"] == 1

    # published as its own batch: readable through its commit log, the ZooKeeper log untouched
    published = lake.read("group_offsets", "sandbox", [snap.snapshot_id])
    assert published.num_rows == len(snap.offsets) == 7
    assert lake.read("group_snapshots", "sandbox").column("group_count").to_pylist() == [2]
    assert lake.read("partition_end_offsets", "sandbox").num_rows == 5
    assert lake.snapshots("sandbox").num_rows == 0

    # the log start offsets: 0 on topics never truncated; DeleteRecords (kafka-delete-records) moves one
    assert snap.start_offsets == dict.fromkeys(snap.end_offsets, 0)
    admin = admin_for(sandbox)
    try:
        admin.delete_records({TopicPartition(other, 0): 3})
    finally:
        admin.close()
    truncated = GroupCollector("sandbox", target, include=f"it-{run_id}-.*").collect()
    assert truncated.start_offsets == {**dict.fromkeys(snap.end_offsets, 0), (other, 0): 3}


class DeleteTopicAfterOffsetFetch:
    """A real admin client; right after the committed offsets are read, `topic` is really
    deleted (and gone from metadata): a topic deleted during a collection, staged on time.
    Kafka purges a deleted topic's committed offsets at once, so this race is how a
    collection meets offsets of a topic that no longer exists."""

    def __init__(self, sandbox: SandboxCluster, topic: str) -> None:
        self.bootstrap_servers = sandbox.bootstrap_servers
        self.topic = topic
        self.deleted = False

    def __call__(self) -> KafkaAdminClient:
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers, **FAST)
        fetch = admin.list_group_offsets

        def fetch_then_delete(specs: Any) -> Any:
            result = fetch(specs)
            if not self.deleted:
                self.deleted = True
                admin.delete_topics([self.topic])
                wait(lambda: admin.describe_topics([self.topic])[0]["error_code"] == 3, 30, "the topic to go")
            return result

        admin.list_group_offsets = fetch_then_delete  # type: ignore[method-assign]
        return admin


def test_topic_deleted_during_collection_is_flagged(healthy_sandbox: SandboxCluster, run_id: str) -> None:
    sandbox = healthy_sandbox
    doomed, kept = f"it-{run_id}-doomed", f"it-{run_id}-kept"
    make_topics(sandbox, {doomed: 2, kept: 1})
    group = f"it-{run_id}-deleted"
    commit(sandbox, group, {(doomed, 0): 3, (doomed, 1): 1, (kept, 0): 4})
    factory = DeleteTopicAfterOffsetFetch(sandbox, doomed)
    snap = GroupCollector("sandbox", factory, include=f"it-{run_id}-.*").collect()
    assert factory.deleted
    rows = offsets_of(snap, group)
    for p, offset in ((0, 3), (1, 1)):
        row = rows[(doomed, p)]
        assert row.topic_deleted and row.committed_offset == offset
        assert (row.end_offset, row.lag) == (None, None)
    assert (rows[(kept, 0)].topic_deleted, rows[(kept, 0)].lag) == (False, 1)
    assert all(tp[0] != doomed for tp in snap.end_offsets)
    assert snap.issues == ()


def test_unreachable_brokers_are_named_in_bounded_time() -> None:
    servers = f"127.0.0.1:{free_port()}"
    start = time.monotonic()
    with pytest.raises(KafkaUnreachable, match=f"cannot reach Kafka at {servers}"):
        GroupCollector(
            "down", KafkaTarget(servers, {"request_timeout_ms": 1000, "bootstrap_timeout_ms": 1000})
        ).collect()
    assert time.monotonic() - start < 10
