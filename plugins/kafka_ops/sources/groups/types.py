"""Which API describes each group type: the one dispatch point by type.

Each group type has its own describe API, and asking the wrong one gets an error that reads
like a dead group (Kafka 4.4 answers DescribeGroups for a consumer-protocol group with
GROUP_ID_NOT_FOUND and state `Dead`). A type is collected once its describer is registered here,
one line per type; until then its groups are listed with an issue and keep their committed offsets.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka.admin import KafkaAdminClient

from kafka_ops.model.groups import GROUP_TYPES, Described, GroupType
from kafka_ops.sources.groups.classic import describe_classic
from kafka_ops.sources.groups.consumer import describe_consumer
from kafka_ops.sources.groups.share import describe_share
from kafka_ops.sources.groups.streams import describe_streams

Describer = Callable[[KafkaAdminClient, list[str]], Described]
"""Describes a batch of groups of its type: `(admin, group ids) -> Described`. May raise a
kafka-python error (the collector retries the batch, then each group alone)."""

DESCRIBERS: dict[GroupType, Describer] = {
    "classic": describe_classic,
    "consumer": describe_consumer,
    "share": describe_share,
    "streams": describe_streams,
}

CLASSIC: GroupType = "classic"


def group_type_of(listed: dict[str, object]) -> GroupType | str:
    """A ListGroups entry's type. Before ListGroups v5 (Kafka before 4, ZooKeeper clusters) there
    are only classic groups and no `group_type`; a type this code does not know is returned as
    the broker spelled it (it is then reported, never described with a wrong API)."""
    value = listed.get("group_type")
    if not value:
        return CLASSIC
    text = str(value)
    lowered = text.lower()
    return next((t for t in GROUP_TYPES if t == lowered), text)
