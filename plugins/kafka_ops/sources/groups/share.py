"""Share groups (KIP-932, Kafka's queues) through ShareGroupDescribe (API 77) and
DescribeShareGroupOffsets (API 90).

DescribeGroups cannot describe them (Kafka 4.4 answers GROUP_ID_NOT_FOUND, "Group g is not a
classic group.", and state `Dead`) and OffsetFetch finds no offsets: a share group commits none.
It keeps, per partition, a share-partition start offset (every record below it acknowledged) and,
from DescribeShareGroupOffsets v1 on, the broker's own lag; 4.4 answers v1.
"""

from __future__ import annotations

from typing import Any

from kafka.admin import KafkaAdminClient

from kafka_ops.model.groups import (
    ConsumerGroup,
    Described,
    GroupIssue,
    GroupMember,
    ShareOffset,
    TopicPartition,
)
from kafka_ops.sources.groups.coordinated import (
    describe_per_coordinator,
    error_text,
    named_partitions,
    raise_if_retriable,
    send_per_coordinator,
)
from kafka_ops.sources.messages.groups import DescribeShareGroupOffsetsRequest, ShareGroupDescribeRequest

PROTOCOL_TYPE = "share"  # what ListGroups reports for these groups
_Group = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup


def describe_share(admin: KafkaAdminClient, group_ids: list[str]) -> Described:
    """Describe `group_ids`, all share groups: one ShareGroupDescribe per coordinator. A group answered
    with an error of its own becomes an issue; a retriable one is raised so the collector retries."""
    return describe_per_coordinator(admin, group_ids, ShareGroupDescribeRequest, decode_group)


def decode_group(raw: Any, described: Described) -> None:
    """One `DescribedGroup` of a ShareGroupDescribe response into `described`: the group, or an issue."""
    group_id = raw.group_id
    if raw.error_code:
        described.issues.append(GroupIssue(group_id, "describe", error_text(raw.error_code, raw.error_message)))
        return
    members = [
        GroupMember(
            member_id=m.member_id,
            group_instance_id=None,  # share groups have no static members
            client_id=m.client_id,
            host=m.client_host,
            assignment=named_partitions(
                group_id, f"member {m.member_id}", "assignment", m.assignment, described.issues
            ),
            member_epoch=m.member_epoch,
            rack=m.rack_id,
            subscribed_topics=tuple(sorted(m.subscribed_topic_names or ())),
        )
        for m in raw.members
    ]
    members.sort(key=lambda m: m.member_id)
    described.groups[group_id] = ConsumerGroup(
        group_id=group_id,
        state=raw.group_state,
        protocol_type=PROTOCOL_TYPE,
        assignor=raw.assignor_name,
        members=tuple(members),
        group_type="share",
        group_epoch=raw.group_epoch,
        assignment_epoch=raw.assignment_epoch,
    )


def share_offsets(
    admin: KafkaAdminClient, group_ids: list[str]
) -> tuple[dict[str, dict[TopicPartition, ShareOffset]], list[GroupIssue]]:
    """Every partition's start offset and lag for each of `group_ids` (share groups): one
    DescribeShareGroupOffsets per coordinator, all topics (`topics` null). A group or partition the
    broker answers with an error becomes an issue; a group's retriable error is raised."""
    responses = send_per_coordinator(
        admin,
        group_ids,
        lambda ids: DescribeShareGroupOffsetsRequest(groups=[_Group(group_id=g, topics=None) for g in ids]),
    )
    offsets: dict[str, dict[TopicPartition, ShareOffset]] = {}
    issues: list[GroupIssue] = []
    for response in responses:
        for group in response.groups:
            raise_if_retriable(admin, group.group_id, group.error_code, group.error_message)
        for group in response.groups:
            if group.error_code:
                issues.append(GroupIssue(group.group_id, "offsets", error_text(group.error_code, group.error_message)))
                continue
            offsets[group.group_id] = _group_offsets(group, issues)
    return offsets, issues


def _group_offsets(group: Any, issues: list[GroupIssue]) -> dict[TopicPartition, ShareOffset]:
    found = {}
    for topic in group.topics:
        for p in topic.partitions:
            if p.error_code:
                problem = f"{topic.topic_name}-{p.partition_index}: {error_text(p.error_code, p.error_message)}"
                issues.append(GroupIssue(group.group_id, "offsets", problem))
                continue
            lag = getattr(p, "lag", None)  # v1+
            found[(topic.topic_name, p.partition_index)] = ShareOffset(
                p.start_offset, lag if lag is not None and lag >= 0 else None
            )
    return found
