"""Send a group API to each group's coordinator, as kafka-python sends its own DescribeGroups.

Kafka 4's describe APIs of consumer-protocol, share and streams groups (and
DescribeShareGroupOffsets) go to the group coordinator like DescribeGroups: one FindCoordinator
for the batch (batched, cached), then one request per coordinator for its groups.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import kafka.errors as Errors
from kafka.admin import KafkaAdminClient
from kafka.protocol.metadata import CoordinatorType

from kafka_ops.model.groups import Described, GroupIssue, TopicPartition


def send_per_coordinator(admin: KafkaAdminClient, group_ids: list[str], build: Callable[[list[str]], Any]) -> list[Any]:
    """`build(ids)`'s request sent to each coordinator of `group_ids` with its own groups; the responses."""

    async def send() -> list[Any]:
        by_coordinator: dict[Any, list[str]] = defaultdict(list)
        for group_id, node_id in (await admin._find_coordinator_ids(group_ids)).items():
            by_coordinator[node_id].append(group_id)
        return [await admin._manager.send(build(ids), node_id=node) for node, ids in by_coordinator.items()]

    responses: list[Any] = admin._manager.run(send)
    return responses


def raise_if_retriable(admin: KafkaAdminClient, group_id: str, error_code: int, message: str | None) -> None:
    """Raise a group's retriable error (its coordinator loading or moved) so the collector retries the
    batch; NOT_COORDINATOR also forgets the cached coordinator, so the retry asks FindCoordinator again."""
    error = Errors.for_code(error_code)
    if not error.retriable:
        return
    if error is Errors.NotCoordinatorError:
        admin._manager.cluster._coordinators.pop((CoordinatorType.GROUP, group_id), None)
    raise error(f"group {group_id}: {message or error.message}")


def error_text(error_code: int, message: str | None) -> str:
    """`GroupIdNotFoundError: Group g is not a streams group.`: the error's name and the broker's words."""
    error = Errors.for_code(error_code)
    return f"{error.__name__}: {message or error.message}"


def describe_per_coordinator(
    admin: KafkaAdminClient,
    group_ids: list[str],
    request: Callable[..., Any],
    decode: Callable[[Any, Described], None],
) -> Described:
    """Describe `group_ids` with a Kafka 4 describe API (`request(group_ids=...,
    include_authorized_operations=False)` per coordinator), each answered group through
    `decode(raw, described)`. A group's retriable error is raised first, so the collector retries
    the batch; any other error of its own is `decode`'s to record as an issue."""
    responses = send_per_coordinator(
        admin, group_ids, lambda ids: request(group_ids=ids, include_authorized_operations=False)
    )
    described = Described()
    for response in responses:
        for raw in response.groups:
            raise_if_retriable(admin, raw.group_id, raw.error_code, raw.error_message)
        for raw in response.groups:
            decode(raw, described)
    return described


def named_partitions(
    group_id: str, where: str, what: str, raw: Any, issues: list[GroupIssue]
) -> tuple[TopicPartition, ...]:
    """The (topic, partition)s of a Kafka 4 `Assignment` (`raw`, possibly None), in the broker's order:
    the group coordinator's own map order, in which its uniform assignor reads a member's previous
    assignment (two topic ids in one bucket of that HashMap, about one pair in sixteen, come in the
    order they were put in, and the assignor keeps different partitions for another order). The broker
    names each topic id it knows; a partition of a topic id it could not name (the topic just
    deleted) is left out, as an issue naming `where` (e.g. the member) and `what` (e.g. "assignment")."""
    partitions = []
    for topic in raw.topic_partitions if raw is not None else ():
        if not topic.topic_name:
            problem = (
                f"{where}: {what} holds partitions {list(topic.partitions)} of topic id {topic.topic_id} with no name"
            )
            issues.append(GroupIssue(group_id, "assignment", problem))
            continue
        partitions += [(topic.topic_name, p) for p in topic.partitions]
    return tuple(partitions)
