"""Streams groups (KIP-1071, Kafka Streams with `group.protocol=streams`) through StreamsGroupDescribe (API 89).

DescribeGroups cannot describe them (Kafka 4.4 answers GROUP_ID_NOT_FOUND and state `Dead`).
The broker assigns tasks, not partitions: a task `subtopology_partition` reads that partition of
each of its subtopology's source topics (input and repartition topics). A member's `assignment`
(and `target_assignment`) are the input partitions of its active tasks (its current, and target,
ones), so lag is measured as for any group: a streams group commits its input offsets with
OffsetCommit, and OffsetFetch reads them (checked against Kafka 4.4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka.admin import KafkaAdminClient

from kafka_ops.model.groups import (
    ConsumerGroup,
    Described,
    GroupIssue,
    GroupMember,
    StreamsTasks,
    Task,
    TopicPartition,
)
from kafka_ops.sources.groups.coordinated import describe_per_coordinator, error_text
from kafka_ops.sources.messages.groups import StreamsGroupDescribeRequest

PROTOCOL_TYPE = "streams"  # what ListGroups reports for these groups


def describe_streams(admin: KafkaAdminClient, group_ids: list[str]) -> Described:
    """Describe `group_ids`, all streams groups: one StreamsGroupDescribe per coordinator. A group
    answered with an error of its own becomes an issue; a retriable one is raised so the collector retries."""
    return describe_per_coordinator(admin, group_ids, StreamsGroupDescribeRequest, decode_group)


def decode_group(raw: Any, described: Described) -> None:
    """One `DescribedGroup` of a StreamsGroupDescribe response into `described`: the group, or an issue."""
    group_id = raw.group_id
    if raw.error_code:
        described.issues.append(GroupIssue(group_id, "describe", error_text(raw.error_code, raw.error_message)))
        return
    topology = raw.topology
    sources = {
        s.subtopology_id: tuple(sorted({*s.source_topics, *(t.name for t in s.repartition_source_topics)}))
        for s in (topology.subtopologies if topology is not None else ())
    }
    members = []
    for m in raw.members:
        tasks, target = _tasks(m.assignment), _tasks(m.target_assignment)
        members.append(
            GroupMember(
                member_id=m.member_id,
                group_instance_id=m.instance_id,
                client_id=m.client_id,
                host=m.client_host,
                assignment=input_partitions(tasks.active, sources),
                member_epoch=m.member_epoch,
                rack=m.rack_id,
                target_assignment=input_partitions(target.active, sources),
                process_id=m.process_id,
                tasks=tasks,
                target_tasks=target,
            )
        )
    members.sort(key=lambda m: m.member_id)
    described.groups[group_id] = ConsumerGroup(
        group_id=group_id,
        state=raw.group_state,
        protocol_type=PROTOCOL_TYPE,
        assignor=raw.assignor_name or "",  # v1+
        members=tuple(members),
        group_type="streams",
        group_epoch=raw.group_epoch,
        assignment_epoch=raw.assignment_epoch,
        topology_epoch=topology.epoch if topology is not None else None,
    )


def _tasks(raw: Any) -> StreamsTasks:
    if raw is None:
        return StreamsTasks()

    def ids(task_ids: Any) -> tuple[Task, ...]:
        return tuple(sorted((t.subtopology_id, p) for t in task_ids or () for p in t.partitions))

    return StreamsTasks(ids(raw.active_tasks), ids(raw.standby_tasks), ids(raw.warmup_tasks))


def input_partitions(tasks: tuple[Task, ...], sources: Mapping[str, tuple[str, ...]]) -> tuple[TopicPartition, ...]:
    """The partitions active `tasks` read: task (s, p) reads partition p of every source topic of subtopology s."""
    return tuple(sorted({(topic, p) for s, p in tasks for topic in sources.get(s, ())}))
