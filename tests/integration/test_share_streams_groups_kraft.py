"""Share groups (KIP-932) and streams groups (KIP-1071) on the Kafka 4.4 KRaft sandbox, formed by
real Java clients (KafkaShareConsumer; Kafka Streams with group.protocol=streams), collected by the
group collector and compared with Kafka's own `kafka-share-groups --describe` (ShareGroupCommand)
and `kafka-streams-groups --describe` (StreamsGroupCommand) on the same cluster."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer
from kafka.admin import NewTopic

from kafka_ops.model.groups import ConsumerGroup, GroupSnapshot
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from kafka_ops.sources.groups.tables import group_batch
from sandbox import KRaftSandbox
from sandbox.share_consumer import JavaShareConsumer
from sandbox.streams_app import JavaStreamsApp
from tests.integration.kafka_tools import kafka4_tool

pytestmark = pytest.mark.integration

SHARE_GROUP, SHARE_TOPIC = "share-jobs", "share-jobs-in"
APP, STREAMS_IN, STREAMS_OUT = "streams-app", "streams-app-in", "streams-app-out"
PARTITIONS, FIRST, MORE = 3, 10, 5  # records per partition, before and after the clients stop
SHARE_CLI = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
STREAMS_CLI = "org.apache.kafka.tools.streams.StreamsGroupCommand"


def produce(cluster: KRaftSandbox, topics: list[str], per_partition: int) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=5)
    try:
        for topic in topics:
            for p in range(PARTITIONS):
                for _ in range(per_partition):
                    producer.send(topic, b"m", partition=p)
        producer.flush(30)
    finally:
        producer.close()


def collect(cluster: KRaftSandbox) -> GroupSnapshot:
    """A collection of the two groups; its lake tables are built too (they must take what 4.4 answered)."""
    target = KafkaTarget(cluster.bootstrap_servers, {"request_timeout_ms": 10_000})
    snap = GroupCollector("sandbox-kraft", target, include=f"{SHARE_GROUP}|{APP}").collect()
    rows = group_batch(snap).tables["consumer_groups"].to_pylist()
    assert {r["group_id"]: r["group_type"] for r in rows} == {g.group_id: g.group_type for g in snap.groups}
    return snap


def group(snap: GroupSnapshot, group_id: str) -> ConsumerGroup:
    found = {g.group_id: g for g in snap.groups}
    assert group_id in found, f"{group_id} not described; issues: {snap.issues}"
    return found[group_id]


def rows(out: str) -> list[list[str]]:
    """A CLI table's data rows, split on whitespace (the header and blank lines dropped)."""
    lines = [line.split() for line in out.splitlines() if line.strip()]
    return [r for r in lines if r[0] != "GROUP"]


def cli(main_class: str, cluster: KRaftSandbox, group_id: str, *options: str) -> list[list[str]]:
    return rows(kafka4_tool(main_class, "--bootstrap-server", cluster.bootstrap_servers, "--describe",
                            "--group", group_id, *options))  # fmt: skip


def agreed(ours: Callable[[], Any], theirs: Callable[[], Any], attempts: int = 4) -> tuple[Any, Any]:
    """(ours, theirs) read between two equal readings of ours: the state did not move meanwhile."""
    for _ in range(attempts):
        before, answer, after = ours(), theirs(), ours()
        if before == after:
            return before, answer
    raise AssertionError(f"the group kept changing: {before} then {after}")


@pytest.fixture(scope="module")
def clients(kraft_sandbox: KRaftSandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One share consumer and one streams app, each having read the FIRST records of every partition."""
    cluster = kraft_sandbox
    cluster.wait_healthy(180)
    with cluster.admin() as admin:
        admin.create_topics([NewTopic(t, PARTITIONS, 3) for t in (SHARE_TOPIC, STREAMS_IN, STREAMS_OUT)])
    produce(cluster, [SHARE_TOPIC, STREAMS_IN], FIRST)
    logs: Path = tmp_path_factory.mktemp("clients")
    share = JavaShareConsumer(cluster.bootstrap_servers, SHARE_GROUP, [SHARE_TOPIC], client_id="worker", log_dir=logs)
    app = JavaStreamsApp(cluster.bootstrap_servers, APP, [STREAMS_IN], STREAMS_OUT, log_dir=logs)
    try:
        share.wait_consumed({(SHARE_TOPIC, p): FIRST for p in range(PARTITIONS)}, 90)
        app.wait_running(PARTITIONS, 90)
        yield {"share": share, "app": app}
    finally:
        share.close()
        app.close()


def test_a_share_group_is_described_as_kafka_share_groups_describes_it(
    healthy_kraft_sandbox: KRaftSandbox, clients: dict[str, Any]
) -> None:
    cluster = healthy_kraft_sandbox

    def share_view() -> tuple[Any, ...]:
        snap = collect(cluster)
        g = group(snap, SHARE_GROUP)
        offsets = {o.partition: (o.start_offset, o.lag) for o in snap.offsets if o.group_id == SHARE_GROUP}
        return g, offsets, [i for i in snap.issues if i.group_id == SHARE_GROUP]

    (g, offsets, issues), state = agreed(
        share_view, lambda: cli(SHARE_CLI, cluster, SHARE_GROUP, "--state", "--verbose")
    )
    assert issues == []
    assert (g.group_type, g.protocol_type, g.state, g.assignor) == ("share", "share", "Stable", "simple")
    # GROUP COORDINATOR (ID) STATE GROUP-EPOCH ASSIGNMENT-EPOCH #MEMBERS
    assert state[0][-4:] == [g.state, str(g.group_epoch), str(g.assignment_epoch), str(len(g.members))]
    (m,) = g.members
    (member,) = cli(SHARE_CLI, cluster, SHARE_GROUP, "--members", "--verbose")
    # GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS MEMBER-EPOCH ASSIGNMENT
    assert member[1:6] == [m.member_id, m.host, m.client_id, str(len(m.assignment)), str(m.member_epoch)]
    assert sorted(m.assignment) == [(SHARE_TOPIC, p) for p in range(PARTITIONS)] and m.client_id == "worker"
    assert m.subscribed_topics == (SHARE_TOPIC,) and m.target_assignment is None and not m.reconciling
    assert all(lag == 0 for _, lag in offsets.values()), offsets  # everything read was acknowledged

    # the consumer leaves (releasing nothing: it holds no records) and MORE records arrive
    clients["share"].close()
    produce(cluster, [SHARE_TOPIC], MORE)
    (g, offsets, issues), table = agreed(share_view, lambda: cli(SHARE_CLI, cluster, SHARE_GROUP))
    assert (g.state, g.members, issues) == ("Empty", (), [])  # an empty share group, not a Dead one
    # GROUP TOPIC PARTITION START-OFFSET LAG
    assert {int(r[2]): (int(r[3]), int(r[4])) for r in table} == offsets
    assert {p: lag for p, (_, lag) in offsets.items()} == {p: MORE for p in range(PARTITIONS)}
    # Kafka 4.4 may leave the start offset behind the acknowledged records (0, with records 0-9
    # acknowledged and 10-14 not: lag 5 < end 15 - start 0, seen on every run so far): then the record at
    # the start offset is not the oldest unacknowledged one and the collection claims no exact lag in
    # seconds; once the start offset has caught up (lag = end - start), its record's time is exact
    snap = collect(cluster)
    for o in (o for o in snap.offsets if o.group_id == SHARE_GROUP):
        assert o.start_offset is not None and o.end_offset is not None and o.lag is not None
        time = snap.record_times.get((SHARE_TOPIC, o.partition, o.start_offset))
        if o.lag < o.end_offset - o.start_offset:
            assert (o.position, time) == (None, None), o
        else:
            assert o.position == o.start_offset == FIRST and time is not None and time.offset == FIRST, o


def test_a_streams_group_is_described_as_kafka_streams_groups_describes_it(
    healthy_kraft_sandbox: KRaftSandbox, clients: dict[str, Any]
) -> None:
    cluster = healthy_kraft_sandbox
    app: JavaStreamsApp = clients["app"]

    def streams_view() -> tuple[Any, ...]:
        snap = collect(cluster)
        lags = {o.partition: o.lag for o in snap.offsets if o.group_id == APP and o.topic == STREAMS_IN}
        return group(snap, APP), lags, [i for i in snap.issues if i.group_id == APP]

    (g, lags, issues), state = agreed(streams_view, lambda: cli(STREAMS_CLI, cluster, APP, "--state", "--verbose"))
    assert issues == []
    assert (g.group_type, g.protocol_type, g.state) == ("streams", "streams", "Stable")
    # GROUP COORDINATOR (ID) ASSIGNOR STATE GROUP-EPOCH TARGET-ASSIGNMENT-EPOCH #MEMBERS
    assert state[0][-5:] == [g.assignor, g.state, str(g.group_epoch), str(g.assignment_epoch), str(len(g.members))]
    (m,) = g.members
    assert m.tasks is not None
    (member,) = cli(STREAMS_CLI, cluster, APP, "--members", "--verbose")
    # GROUP TARGET-ASSIGNMENT-EPOCH TOPOLOGY-EPOCH MEMBER MEMBER-PROTOCOL MEMBER-EPOCH PROCESS CLIENT-ID ASSIGNMENTS
    assert member[1:8] == [str(g.assignment_epoch), str(g.topology_epoch), m.member_id, "streams",
                           str(m.member_epoch), m.process_id, m.client_id]  # fmt: skip
    tasks = ",".join(str(p) for _, p in m.tasks.active)
    assert member[8:] == ["ACTIVE:", f"0:[{tasks}];", "TARGET-ACTIVE:", f"0:[{tasks}];"]
    # what the app itself says it runs
    assert tuple(f"{s}_{p}" for s, p in m.tasks.active) == app.active
    assert m.assignment == m.target_assignment == tuple((STREAMS_IN, p) for p in range(PARTITIONS))
    assert not m.reconciling and g.reconciling_members == 0
    assert lags == {p: 0 for p in range(PARTITIONS)}

    # paused, the app stays in the group and commits nothing while MORE records arrive
    app.pause()
    produce(cluster, [STREAMS_IN], MORE)
    (g, lags, _), table = agreed(streams_view, lambda: cli(STREAMS_CLI, cluster, APP))
    assert g.state == "Stable" and len(g.members) == 1
    # GROUP TOPIC PARTITION OFFSET-LAG
    assert {int(r[2]): int(r[3]) for r in table if r[1] == STREAMS_IN} == lags == {p: MORE for p in range(PARTITIONS)}


def test_a_joining_streams_instance_is_seen_reconciling_until_the_tasks_are_handed_over(
    healthy_kraft_sandbox: KRaftSandbox, clients: dict[str, Any], tmp_path: Path
) -> None:
    cluster = healthy_kraft_sandbox
    clients["app"].resume()
    seen: list[ConsumerGroup] = []

    def settled() -> bool:
        g = group(collect(cluster), APP)
        seen.append(g)
        return len(g.members) == 2 and g.reconciling_members == 0 and all(m.tasks and m.tasks.active for m in g.members)

    with JavaStreamsApp(
        cluster.bootstrap_servers, APP, [STREAMS_IN], STREAMS_OUT, client_id="second", log_dir=tmp_path
    ):
        cluster.wait_for(settled, 90, f"{APP} settled on two instances")
    # the first instance holds every task until its next heartbeat tells it to give some up: meanwhile
    # the newcomer's target holds tasks it does not have yet
    moving = [g for g in seen if g.reconciling_members]
    assert moving, [(g.state, [(m.tasks, m.target_tasks) for m in g.members]) for g in seen]
    assert all(g.state == "Reconciling" for g in moving)
    m = next(m for m in moving[0].members if m.reconciling)
    assert m.tasks != m.target_tasks
    final = seen[-1]
    held = sorted(t for m in final.members if m.tasks for t in m.tasks.active)
    assert held == [("0", p) for p in range(PARTITIONS)]  # each task on exactly one instance
    assert final.state == "Stable" and all(m.assignment == m.target_assignment for m in final.members)
