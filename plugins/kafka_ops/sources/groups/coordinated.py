"""Send a group API to each group's coordinator, as kafka-python sends its own DescribeGroups.

Kafka 4's describe APIs of share and streams groups (and DescribeShareGroupOffsets) go to the
group coordinator like DescribeGroups: one FindCoordinator for the batch (batched, cached), then
one request per coordinator for its groups.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import kafka.errors as Errors
from kafka.admin import KafkaAdminClient
from kafka.protocol.metadata import CoordinatorType


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
