"""Classic groups (the JoinGroup/SyncGroup protocol) through DescribeGroups, as kafka-python sends it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka.admin import KafkaAdminClient

from kafka_ops.model.groups import STABLE, ConsumerGroup, Described, GroupIssue, GroupMember, TopicPartition

CONSUMER_PROTOCOL = "consumer"


def describe_classic(admin: KafkaAdminClient, group_ids: list[str]) -> Described:
    """One DescribeGroups per coordinator for `group_ids`; a group the coordinator answers with an
    error (GROUP_ID_NOT_FOUND for a group deleted since it was listed, ...) becomes an issue."""
    described = Described()
    for group_id, raw in admin.describe_groups(group_ids).items():
        if raw.get("error"):
            described.issues.append(GroupIssue(group_id, "describe", str(raw["error"])))
            continue
        described.groups[group_id] = _group(group_id, raw, described.issues)
    return described


def _group(group_id: str, raw: Mapping[str, Any], issues: list[GroupIssue]) -> ConsumerGroup:
    state, protocol_type = raw["group_state"], raw["protocol_type"]
    # only a Stable group's members hold an assignment, and only the consumer protocol's
    # bytes decode as (topic, partitions) (Kafka Connect's, for one, do not)
    decode = state == STABLE and protocol_type == CONSUMER_PROTOCOL
    members = []
    for m in raw["members"]:
        assignment = _assignment(group_id, m["member_id"], m["member_assignment"], issues) if decode else ()
        members.append(
            GroupMember(
                member_id=m["member_id"],
                group_instance_id=m["group_instance_id"],
                client_id=m["client_id"],
                host=m["client_host"],
                assignment=assignment,
                subscription=m.get("member_metadata_bytes") if protocol_type == CONSUMER_PROTOCOL else None,
            )
        )
    members.sort(key=lambda m: m.member_id)
    return ConsumerGroup(group_id, state, protocol_type, raw["protocol_data"], tuple(members))


def _assignment(group_id: str, member_id: str, raw: Any, issues: list[GroupIssue]) -> tuple[TopicPartition, ...]:
    if isinstance(raw, dict):
        parts = raw.get("assigned_partitions") or []
        return tuple(sorted((a["topic"], p) for a in parts for p in a["partitions"]))
    if raw:  # kafka-python leaves bytes it could not decode as they were
        problem = f"member {member_id}: assignment is not in the consumer protocol format"
        issues.append(GroupIssue(group_id, "assignment", problem))
    return ()
