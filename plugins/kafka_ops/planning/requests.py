"""Validation of planner requests: each refusal names the field and says what to change."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import TopicPartition
from kafka_ops.planning.view import CORDONED, ClusterView


def check_cap(name: str, value: int | None) -> None:
    """A cap is a positive integer (None = no cap, where the planner allows it)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise PlanError(name, f"must be a positive integer, got {value!r}")


def check_topics(view: ClusterView, topics: Sequence[str], *, field: str = "topics") -> list[str]:
    """Topics named by the user: non-empty, no duplicates, each in the snapshot and not being deleted."""
    if isinstance(topics, str):
        raise PlanError(field, f"must be a list of topic names, got the string {topics!r}")
    if not topics:
        raise PlanError(field, "is empty: name at least one topic")
    duplicates = sorted(t for t, n in Counter(topics).items() if n > 1)
    if duplicates:
        raise PlanError(field, f"lists {', '.join(duplicates)} more than once")
    unknown = sorted(t for t in topics if t not in view.snapshot.topics)
    if unknown:
        names = ", ".join(map(repr, unknown))
        raise PlanError(
            field, f"unknown topic(s) {names}: not in snapshot {view.snapshot_id} of cluster {view.cluster}"
        )
    deleting = sorted(t for t in topics if t in view.deleting)
    if deleting:
        raise PlanError(field, f"topic(s) {', '.join(map(repr, deleting))} are being deleted")
    return sorted(topics)


def scope(view: ClusterView, topics: Sequence[str] | None) -> list[TopicPartition]:
    """The partitions a request covers: of `topics`, or every partition when None."""
    if topics is None:
        return list(view.assignment)
    return [tp for topic in check_topics(view, topics) for tp in view.partitions_of(topic)]


def check_broker_ids(field: str, brokers: Sequence[int]) -> list[int]:
    """A non-empty list of distinct integer broker ids."""
    if isinstance(brokers, (str, bytes)) or not brokers:
        raise PlanError(field, "is empty: name at least one broker id")
    bad = [b for b in brokers if isinstance(b, bool) or not isinstance(b, int)]
    if bad:
        raise PlanError(field, f"broker ids are integers, got {bad!r}")
    duplicates = sorted(b for b, n in Counter(brokers).items() if n > 1)
    if duplicates:
        raise PlanError(field, f"lists broker(s) {duplicates} more than once")
    return sorted(brokers)


def check_cordoned(brokers: Sequence[int]) -> frozenset[int]:
    """The operator's cordons: distinct integer broker ids, possibly none (a broker that is not
    registered may be listed: a cordon outlives a restart)."""
    if isinstance(brokers, (str, bytes)):
        raise PlanError(CORDONED, f"must be a list of broker ids, got the string {brokers!r}")
    return frozenset(check_broker_ids(CORDONED, brokers)) if brokers else frozenset()
