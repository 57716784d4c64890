"""Consumer-protocol groups (KIP-848, `group.protocol=consumer`) through ConsumerGroupDescribe (API 69).

DescribeGroups cannot describe them: Kafka 4.4 answers it with GROUP_ID_NOT_FOUND ("Group g is
not a classic group.") and state `Dead`. The request is `kafka_ops.sources.messages.groups`'
(Kafka's own schema on kafka-python's machinery), sent like kafka-python's own DescribeGroups:
FindCoordinator for the batch (batched, cached), then one request per coordinator
(`coordinated.send_per_coordinator`).
"""

from __future__ import annotations

from typing import Any

from kafka.admin import KafkaAdminClient

from kafka_ops.model.groups import ConsumerGroup, Described, GroupIssue, GroupMember
from kafka_ops.sources.groups.coordinated import describe_per_coordinator, error_text, named_partitions
from kafka_ops.sources.messages.groups import ConsumerGroupDescribeRequest

PROTOCOL_TYPE = "consumer"  # what ListGroups reports for these groups


def describe_consumer(admin: KafkaAdminClient, group_ids: list[str]) -> Described:
    """Describe `group_ids`, all consumer-protocol groups. A group answered with an error of its
    own becomes an issue; a retriable one (its coordinator loading or moved) is raised so the
    collector retries the batch."""
    return describe_per_coordinator(admin, group_ids, ConsumerGroupDescribeRequest, decode_group)


def decode_group(raw: Any, described: Described) -> None:
    """One `DescribedGroup` of a ConsumerGroupDescribe response into `described`: the group, or
    an issue when the coordinator answered it with an error."""
    group_id = raw.group_id
    if raw.error_code:
        described.issues.append(GroupIssue(group_id, "describe", error_text(raw.error_code, raw.error_message)))
        return
    members = []
    for m in raw.members:
        where = f"member {m.member_id}"
        members.append(
            GroupMember(
                member_id=m.member_id,
                group_instance_id=m.instance_id,
                client_id=m.client_id,
                host=m.client_host,
                assignment=named_partitions(group_id, where, "assignment", m.assignment, described.issues),
                member_epoch=m.member_epoch,
                rack=m.rack_id,
                subscribed_topics=tuple(sorted(m.subscribed_topic_names or ())),
                # Kafka 4.4 sends "" rather than null when the member subscribed by names
                subscribed_regex=m.subscribed_topic_regex or None,
                target_assignment=named_partitions(
                    group_id, where, "target assignment", m.target_assignment, described.issues
                ),
            )
        )
    members.sort(key=lambda m: m.member_id)
    described.groups[group_id] = ConsumerGroup(
        group_id=group_id,
        state=raw.group_state,
        protocol_type=PROTOCOL_TYPE,
        assignor=raw.assignor_name,
        members=tuple(members),
        group_type="consumer",
        group_epoch=raw.group_epoch,
        assignment_epoch=raw.assignment_epoch,
    )
