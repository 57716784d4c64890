"""Share groups (ShareGroupDescribe, DescribeShareGroupOffsets) and streams groups (StreamsGroupDescribe)
decode into the model from responses as a Kafka 4.4 broker encodes them: epochs, members, tasks
current vs target, input partitions, the broker's share lag, and errors per group or partition."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.errors import CoordinatorLoadInProgressError, NotCoordinatorError
from kafka.protocol.metadata import CoordinatorType

from kafka_ops.model.groups import (
    ConsumerGroup,
    Described,
    GroupMember,
    GroupSnapshot,
    ShareOffset,
    StreamsTasks,
    share_offset_rows,
)
from kafka_ops.sources.groups import share, streams
from kafka_ops.sources.groups.coordinated import raise_if_retriable
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.sources.messages.groups import (
    DescribeShareGroupOffsetsResponse,
    ShareGroupDescribeResponse,
    StreamsGroupDescribeResponse,
)

SG = ShareGroupDescribeResponse.DescribedGroup
SO = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup
ST = StreamsGroupDescribeResponse.DescribedGroup
TOPIC_ID = uuid.UUID(int=1)


def wire(cls: Any, version: int, **fields: Any) -> Any:
    """A response as the broker sends it: encoded at `version`, then decoded."""
    return cls.decode(cls(throttle_time_ms=0, **fields).encode(version=version), version=version)


def share_group(group_id: str, error: int = 0, message: str | None = None) -> Any:
    assignment = SG.Member.Assignment(
        topic_partitions=[SG.Member.Assignment.TopicPartitions(topic_id=TOPIC_ID, topic_name="jobs", partitions=[2, 0])]
    )
    member = SG.Member(
        member_id="m1", rack_id="rack-a", member_epoch=3, client_id="worker", client_host="/127.0.0.1",
        subscribed_topic_names=["jobs"], assignment=assignment,
    )  # fmt: skip
    return SG(
        error_code=error, error_message=message, group_id=group_id, group_state="" if error else "Stable",
        group_epoch=3, assignment_epoch=3, assignor_name="simple", members=[] if error else [member],
    )  # fmt: skip


def test_a_share_group_decodes_with_epochs_and_members_and_a_missing_one_is_an_issue() -> None:
    response = wire(
        ShareGroupDescribeResponse, 1, groups=[share_group("queue"), share_group("gone", 69, "Group gone not found.")]
    )
    described = Described()
    for raw in response.groups:
        share.decode_group(raw, described)
    g = described.groups["queue"]
    assert (g.group_type, g.state, g.protocol_type, g.assignor) == ("share", "Stable", "share", "simple")
    assert (g.group_epoch, g.assignment_epoch, g.topology_epoch) == (3, 3, None)
    (m,) = g.members
    # in the broker's order
    assert m.assignment == (("jobs", 2), ("jobs", 0)) and m.target_assignment is None and not m.reconciling
    assert (m.member_epoch, m.rack, m.subscribed_topics, m.host) == (3, "rack-a", ("jobs",), "/127.0.0.1")
    assert [(i.group_id, i.kind, i.problem) for i in described.issues] == [
        ("gone", "describe", "GroupIdNotFoundError: Group gone not found.")
    ]


def share_offsets_response(version: int) -> Any:
    P = SO.DescribeShareGroupOffsetsResponseTopic.DescribeShareGroupOffsetsResponsePartition
    partitions = [
        P(partition_index=0, start_offset=10, leader_epoch=0, lag=5, error_code=0, error_message=None),
        P(partition_index=1, start_offset=-1, leader_epoch=-1, lag=-1, error_code=3, error_message="unknown"),
    ]
    topic = SO.DescribeShareGroupOffsetsResponseTopic(topic_name="jobs", topic_id=TOPIC_ID, partitions=partitions)
    return wire(DescribeShareGroupOffsetsResponse, version, groups=[SO(group_id="queue", topics=[topic], error_code=0)])


def test_share_offsets_keep_the_start_offset_and_the_brokers_lag_from_v1_only() -> None:
    found, issues = {}, []
    for version in (1, 0):
        groups = share_offsets_response(version).groups
        found[version] = share._group_offsets(groups[0], issues)
    assert found[1] == {("jobs", 0): ShareOffset(10, 5)}
    assert found[0] == {("jobs", 0): ShareOffset(10, None)}  # v0 carries no lag
    assert issues[0].problem.startswith("jobs-1: UnknownTopicOrPartitionError")


def test_share_rows_hold_a_start_offset_not_a_commit() -> None:
    offsets = {("jobs", 0): ShareOffset(10, 5), ("gone", 0): ShareOffset(4, 1)}
    rows = share_offset_rows("queue", offsets, frozenset({("jobs", 0)}), {("jobs", 0): 15})
    got = [
        (r.topic, r.committed_offset, r.start_offset, r.end_offset, r.lag, r.no_commit, r.topic_deleted) for r in rows
    ]
    assert got == [("gone", None, 4, None, None, False, True), ("jobs", None, 10, 15, 5, False, False)]


def tasks(*ids: tuple[str, list[int]]) -> list[Any]:
    return [ST.Member.Assignment.TaskIds(subtopology_id=s, partitions=ps) for s, ps in ids]


def streams_member(member_id: str, active: list[Any], target_active: list[Any], standby: list[Any] = ()) -> Any:  # type: ignore[assignment]
    A = ST.Member.Assignment
    return ST.Member(
        member_id=member_id, member_epoch=4, instance_id=None, rack_id=None, client_id=f"{member_id}-consumer",
        client_host="/127.0.0.1", topology_epoch=0, process_id=f"process-{member_id}", user_endpoint=None,
        client_tags=[], task_offsets=[], task_end_offsets=[],
        assignment=A(active_tasks=active, standby_tasks=list(standby), warmup_tasks=[]),
        target_assignment=A(active_tasks=target_active, standby_tasks=[], warmup_tasks=[]), is_classic=False,
    )  # fmt: skip


def test_a_streams_group_maps_tasks_to_input_partitions_and_counts_reconciling_members() -> None:
    S = ST.Topology.Subtopology
    topology = ST.Topology(
        epoch=2,
        subtopologies=[
            S(subtopology_id="0", source_topics=["orders", "refunds"], repartition_sink_topics=["app-rekey"],
              state_changelog_topics=[], repartition_source_topics=[]),
            S(subtopology_id="1", source_topics=[], repartition_sink_topics=[], state_changelog_topics=[],
              repartition_source_topics=[S.TopicInfo(name="app-rekey", partitions=2, replication_factor=3,
                                                     topic_configs=[])]),
        ],
    )  # fmt: skip
    settled = streams_member("a", tasks(("0", [0]), ("1", [1])), tasks(("0", [0]), ("1", [1])))
    moving = streams_member("b", tasks(("0", [1, 0])), tasks(("0", [1])), standby=tasks(("1", [0])))
    group = ST(
        error_code=0, error_message=None, group_id="app", group_state="Reconciling", group_epoch=5,
        assignment_epoch=5, topology=topology, members=[moving, settled], authorized_operations=0,
        assignor_name="sticky",
    )  # fmt: skip
    not_streams = ST(error_code=69, error_message="Group q is not a streams group.", group_id="q", group_state="",
                     group_epoch=0, assignment_epoch=0, topology=None, members=[])  # fmt: skip
    described = Described()
    for raw in wire(StreamsGroupDescribeResponse, 1, groups=[group, not_streams]).groups:
        streams.decode_group(raw, described)
    g = described.groups["app"]
    assert (g.group_type, g.state, g.assignor, g.group_epoch, g.assignment_epoch, g.topology_epoch) == (
        "streams", "Reconciling", "sticky", 5, 5, 2,
    )  # fmt: skip
    a, b = g.members
    assert a.assignment == (("app-rekey", 1), ("orders", 0), ("refunds", 0)) == a.target_assignment
    assert a.tasks == a.target_tasks == StreamsTasks(active=(("0", 0), ("1", 1)))
    assert b.tasks == StreamsTasks(active=(("0", 0), ("0", 1)), standby=(("1", 0),))
    assert b.target_tasks == StreamsTasks(active=(("0", 1),))
    assert (b.process_id, b.member_epoch) == ("process-b", 4)
    assert b.reconciling and not a.reconciling and g.reconciling_members == 1
    assert described.issues[0].problem == "GroupIdNotFoundError: Group q is not a streams group."


def test_a_standby_difference_alone_is_reconciling() -> None:
    member = GroupMember("m", None, "c", "h", tasks=StreamsTasks(standby=(("0", 1),)), target_tasks=StreamsTasks(),
                         target_assignment=())  # fmt: skip
    assert member.reconciling


def test_streams_and_share_columns_reach_the_lake_tables() -> None:
    member = GroupMember(
        "m", None, "c", "h", assignment=(("orders", 0),), member_epoch=4, target_assignment=(),
        process_id="p", tasks=StreamsTasks(active=(("0", 0),)), target_tasks=StreamsTasks(),
    )  # fmt: skip
    group = ConsumerGroup("app", "Reconciling", "streams", "sticky", (member,), "streams", 5, 5, topology_epoch=2)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    rows = share_offset_rows("queue", {("jobs", 0): ShareOffset(10, 5)}, frozenset({("jobs", 0)}), {("jobs", 0): 15})
    snap = GroupSnapshot("c1", "s1", at, "k:9092", (group,), tuple(rows), {("jobs", 0): 15})
    tables = group_batch(snap).tables
    (g,) = tables["consumer_groups"].to_pylist()
    assert (g["group_type"], g["topology_epoch"], g["reconciling_member_count"]) == ("streams", 2, 1)
    (m,) = tables["group_members"].to_pylist()
    assert m["process_id"] == "p" and m["reconciling"] is True
    assert m["tasks"] == [{"kind": "active", "subtopology": "0", "partition": 0}] and m["target_tasks"] == []
    (o,) = tables["group_offsets"].to_pylist()
    assert (o["committed_offset"], o["start_offset"], o["lag"]) == (None, 10, 5)


def test_a_retriable_group_error_is_raised_and_a_moved_coordinator_forgotten() -> None:
    cache = {(CoordinatorType.GROUP, "queue"): 2, (CoordinatorType.GROUP, "other"): 3}
    admin = SimpleNamespace(_manager=SimpleNamespace(cluster=SimpleNamespace(_coordinators=cache)))
    raise_if_retriable(admin, "queue", 0, None)  # type: ignore[arg-type]
    raise_if_retriable(admin, "queue", 69, "Group queue not found.")  # type: ignore[arg-type]  # not retriable
    with pytest.raises(NotCoordinatorError, match="group queue"):
        raise_if_retriable(admin, "queue", 16, None)  # type: ignore[arg-type]
    assert cache == {(CoordinatorType.GROUP, "other"): 3}
    with pytest.raises(CoordinatorLoadInProgressError):
        raise_if_retriable(admin, "other", 14, None)  # type: ignore[arg-type]
