"""Real Java consumers of Kafka 4.4 in the consumer protocol of KIP-848 (`group.protocol=consumer`) on
the KRaft sandbox: what the collector records (through ConsumerGroupDescribe) is what each consumer
holds and what Kafka's own `kafka-consumer-groups` says, for both of the broker's assignors."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from kafka_ops.model.groups import ConsumerGroup, GroupSnapshot
from kafka_ops.sources.groups.tables import group_summary
from sandbox import KRaftSandbox, ensure_kafka4_jars
from sandbox.java_consumer import JavaConsumer
from tests.integration.java_groups import collect, java_group, make_topics, produce
from tests.integration.kafka_tools import group_lags, group_members, group_state

pytestmark = pytest.mark.integration


@pytest.fixture
def run_id() -> str:
    return uuid.uuid4().hex[:8]


def consumer_protocol(assignor: str) -> dict[str, object]:
    return {"protocol": "consumer", "remote_assignor": assignor, "jars": ensure_kafka4_jars()}


def only(snap: GroupSnapshot) -> ConsumerGroup:
    (group,) = snap.groups
    return group


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_a_consumer_protocol_group_is_what_its_java_consumers_hold_and_what_kafka_says(
    healthy_kraft_sandbox: KRaftSandbox, run_id: str, tmp_path: Path, assignor: str
) -> None:
    sandbox = healthy_kraft_sandbox
    topics = [f"kip848-{run_id}-a", f"kip848-{run_id}-b"]
    make_topics(sandbox, {topics[0]: 4, topics[1]: 3})
    group = f"kip848-{run_id}-{assignor}"
    with java_group(sandbox, group, [topics] * 3, "range", tmp_path, **consumer_protocol(assignor)) as consumers:
        snap = collect(sandbox, group)
        held = {c.name: c.assignment for c in consumers}
        kafka_members = group_members(sandbox.bootstrap_servers, group)
        kafka_state = group_state(sandbox.bootstrap_servers, group)
    g = only(snap)
    assert snap.issues == ()
    assert (g.group_type, g.state, g.assignor, g.protocol_type) == ("consumer", "Stable", assignor, "consumer")
    assert (g.group_epoch, g.assignment_epoch) == (kafka_state["group_epoch"], kafka_state["assignment_epoch"])
    assert g.group_epoch is not None and g.group_epoch >= 3  # one bump per joining member at least
    assert kafka_state == {"assignor": assignor, "state": "Stable", "group_epoch": g.group_epoch,
                           "assignment_epoch": g.assignment_epoch, "members": 3}  # fmt: skip
    assert {m.client_id: tuple(sorted(m.assignment)) for m in g.members} == held  # the broker's order, theirs sorted
    assert {m.client_id: (m.member_id, m.member_epoch, sorted(m.assignment), sorted(m.target_assignment or ()))
            for m in g.members} == {
        client: (k["member_id"], k["epoch"], sorted(k["assignment"]), sorted(k["target"] or ()))
        for client, k in kafka_members.items()
    }  # fmt: skip
    assert all(m.subscribed_topics == tuple(sorted(topics)) and m.subscribed_regex is None for m in g.members)
    assert g.reconciling_members == 0 and all(m.subscription is None for m in g.members)
    every = sorted(tp for part in held.values() for tp in part)
    assert every == sorted([(topics[0], p) for p in range(4)] + [(topics[1], p) for p in range(3)])
    if assignor == "range":  # per topic, co-partitioned: each member's share of a is its share of b, plus the rest
        assert sorted(len([tp for tp in part if tp[0] == topics[0]]) for part in held.values()) == [1, 1, 2]
    else:  # uniform balances the 7 partitions over all topics
        assert sorted(len(part) for part in held.values()) == [2, 2, 3]


def test_lag_of_a_consumer_protocol_group_is_kafkas(healthy_kraft_sandbox: KRaftSandbox, run_id: str,
                                                    tmp_path: Path) -> None:  # fmt: skip
    sandbox = healthy_kraft_sandbox
    topic, group = f"kip848-lag-{run_id}", f"kip848-lag-{run_id}-g"
    make_topics(sandbox, {topic: 3}, messages=20)
    with java_group(sandbox, group, [[topic]], "range", tmp_path, **consumer_protocol("uniform")) as (consumer,):
        consumer.wait_committed({(topic, p): 20 for p in range(3)})
        consumer.pause()
        produce(sandbox, {(topic, 0): 7, (topic, 2): 30})
        snap = collect(sandbox, group)
        kafka = group_lags(sandbox.bootstrap_servers, group)
    assert only(snap).state == "Stable"
    recorded = {(o.topic, o.partition): {"committed": o.committed_offset, "end": o.end_offset, "lag": o.lag}
                for o in snap.offsets}  # fmt: skip
    assert recorded == kafka
    assert [recorded[(topic, p)]["lag"] for p in range(3)] == [7, 0, 30]


def test_classic_and_consumer_groups_side_by_side(healthy_kraft_sandbox: KRaftSandbox, run_id: str,
                                                  tmp_path: Path) -> None:  # fmt: skip
    sandbox = healthy_kraft_sandbox
    topic = f"mixed-{run_id}"
    make_topics(sandbox, {topic: 2}, messages=5)
    jars = ensure_kafka4_jars()
    with (
        java_group(sandbox, f"mixed-{run_id}-classic", [[topic]], "roundrobin", tmp_path, jars=jars) as (old,),
        java_group(sandbox, f"mixed-{run_id}-new", [[topic]], "range", tmp_path, **consumer_protocol("range")) as (
            new,
        ),
    ):
        snap = collect(sandbox, f"mixed-{run_id}-.*")
    assert snap.issues == ()
    classic, consumer = snap.groups  # sorted by group id
    assert (classic.group_type, classic.state, classic.assignor) == ("classic", "Stable", "roundrobin")
    assert (classic.group_epoch, classic.assignment_epoch) == (None, None)
    (member,) = classic.members
    assert member.assignment == old.assignment and member.subscription  # DescribeGroups' JoinGroup metadata
    assert (member.member_epoch, member.target_assignment, member.reconciling) == (None, None, False)
    assert (consumer.group_type, consumer.state, consumer.assignor) == ("consumer", "Stable", "range")
    assert tuple(sorted(consumer.members[0].assignment)) == new.assignment == ((topic, 0), (topic, 1))
    assert group_summary(snap)["types"] == {"classic": 1, "consumer": 1}


def test_a_member_still_reconciling_is_seen_and_counted(healthy_kraft_sandbox: KRaftSandbox, run_id: str,
                                                        tmp_path: Path) -> None:  # fmt: skip
    """A slow consumer (2 records a second, 50 a poll) holds every partition for up to 25 s after the
    broker wants some for a newcomer: it gives them up only at its next poll."""
    sandbox = healthy_kraft_sandbox
    topic, group = f"kip848-rec-{run_id}", f"kip848-rec-{run_id}-g"
    make_topics(sandbox, {topic: 4}, messages=100)
    options = {**consumer_protocol("uniform"), "log_dir": tmp_path}
    slow = JavaConsumer(sandbox.bootstrap_servers, group, [topic], client_id="slow", rate=2, **options)  # type: ignore[arg-type]
    newcomer = None
    try:
        slow.wait_until(lambda c: c.assignment is not None and len(c.assignment) == 4, 60, "all 4 partitions")
        newcomer = JavaConsumer(sandbox.bootstrap_servers, group, [topic], client_id="new", **options)  # type: ignore[arg-type]
        deadline = time.monotonic() + 20
        while True:
            snap = collect(sandbox, group)
            g = only(snap)
            if g.reconciling_members and len(g.members) == 2:
                break
            assert time.monotonic() < deadline, f"never saw a reconciling member: {g}"
            time.sleep(0.3)
        held = slow.assignment
    finally:
        for consumer in (newcomer, slow):
            if consumer is not None:
                consumer.kill()
    members = {m.client_id: m for m in g.members}
    assert g.state == "Reconciling"
    assert tuple(sorted(members["slow"].assignment)) == held == tuple((topic, p) for p in range(4))  # not released
    assert members["slow"].reconciling and len(members["slow"].target_assignment or ()) == 2
    assert group_summary(snap)["reconciling_members"] == g.reconciling_members >= 1
