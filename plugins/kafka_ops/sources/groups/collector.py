"""Collect every consumer group's description, committed offsets and end offsets (with the
partitions' log start offsets) with the Admin API (kafka-python), in batched requests.

Round trips per collection, whatever the number of groups and partitions: one ListGroups per
broker (v5 on Kafka 4 also says each group's type); per batch of `batch_size` groups, one
FindCoordinator (cached after the first), one describe request per group type present (the
API of that type, `sources.groups.types`: DescribeGroups for classic groups,
ConsumerGroupDescribe for consumer-protocol ones, ShareGroupDescribe and StreamsGroupDescribe)
and one OffsetFetch (v8+: many groups per request; DescribeShareGroupOffsets for share groups,
which commit none) per coordinator; one Metadata for the referenced topics; two ListOffsets per
partition leader (the latest offsets, then the earliest: each partition's log start offset). Then exact
lag and transactions: one small Fetch per leader per round (at most 3) for the first unconsumed record
of every lagging partition (`record_times`); one read_committed ListOffsets per leader, one
ListTransactions per broker, one DescribeTransactions per coordinator with open transactions and one
DescribeProducers per leader (`transactions`). A batch that fails is retried group by group so one bad
group becomes a `GroupIssue`, not a crash.

One broker down is not the cluster down: between a broker's death and its fencing (a session
timeout, longer for a broker that hangs) it is still in the metadata, a coordinator and a leader. Its
ListGroups, its groups' describes and offsets, and its partitions' end and start offsets then become issues
that name it, and the rest of the cluster is collected; only when no broker lists groups, or no listed group
can be described because no coordinator answers, does the collection raise `KafkaUnreachable`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

from kafka.admin import KafkaAdminClient, OffsetSpec
from kafka.errors import KafkaConnectionError, KafkaError, UnknownTopicOrPartitionError
from kafka.protocol.metadata import CoordinatorType
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_ops import redaction
from kafka_ops.errors import CollectionFailed, ConfigError
from kafka_ops.model.cluster import new_snapshot_id
from kafka_ops.model.groups import (
    Commit,
    ConsumerGroup,
    GroupIssue,
    GroupOffset,
    GroupSnapshot,
    ShareOffset,
    TopicPartition,
    offset_rows,
    share_offset_rows,
)
from kafka_ops.sources.admin import UNREACHABLE, AdminClient, AdminFactory, with_admin
from kafka_ops.sources.groups.commit_log import CommitLog
from kafka_ops.sources.groups.record_times import first_record_times
from kafka_ops.sources.groups.selection import GroupSelection
from kafka_ops.sources.groups.share import share_offsets
from kafka_ops.sources.groups.transactions import read_transactions
from kafka_ops.sources.groups.types import DESCRIBERS, group_type_of

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_BATCH_SIZE = 200
RETRIES = 5
RETRY_BACKOFF_S = 0.25  # then 0.5, 1, 2: about 4 s in all
UNKNOWN_TOPIC = UnknownTopicOrPartitionError.errno
SHARE = "share"


def _by_type(batch: list[str], group_types: Mapping[str, str]) -> dict[str, list[str]]:
    by_type: dict[str, list[str]] = {}
    for group_id in batch:
        by_type.setdefault(group_types[group_id], []).append(group_id)
    return by_type


def _retrying(call: Callable[[], T], attempts: int = RETRIES) -> T:
    """`call()`, again after a pause while a coordinator answers a retriable error (its group
    metadata still loading after a restart, or moved): those pass in seconds on a healthy cluster.
    Connection losses are not retried here: they mean the cluster is unreachable."""
    for attempt in range(attempts):
        try:
            return call()
        except UNREACHABLE:
            raise
        except KafkaError as e:
            if not e.retriable or attempt == attempts - 1:
                raise
            log.info("retrying after %r (attempt %s of %s)", e, attempt + 1, attempts)
            time.sleep(RETRY_BACKOFF_S * 2**attempt)
    raise AssertionError("unreachable")


class GroupsAdminClient(AdminClient):
    """`KafkaAdminClient` that also keeps each member's raw subscription bytes.

    kafka-python decodes DescribeGroups' member metadata in place and loses the bytes; the
    what-if needs them exactly as the member sent them (owned partitions, generation, rack and
    the assignor's user data, which kafka-python's decoder does not interpret), so they are
    kept under `member_metadata_bytes` and decoded by `kafka_ops.assignors.protocol`.
    """

    def _describe_groups_process_response(self, response: Any) -> dict[str, Any]:
        raw = {
            (group.group_id, member.member_id): member.member_metadata
            for group in response.groups
            for member in group.members
        }
        results: dict[str, Any] = super()._describe_groups_process_response(response)
        for group_id, result in results.items():
            for member in result.get("members") or ():
                metadata = raw.get((group_id, member["member_id"]))
                member["member_metadata_bytes"] = bytes(metadata) if isinstance(metadata, bytes | bytearray) else None
        return results


@dataclass(frozen=True)
class KafkaTarget:
    """Bootstrap servers plus kafka-python client options (security, timeouts).

    Calling it builds a `KafkaAdminClient`. Its repr shows the servers only, never options
    (they may hold a SASL password).
    """

    bootstrap_servers: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # kafka-python logs a client's whole configuration at DEBUG, SASL password included
        for key, value in self.options.items():
            if isinstance(value, str) and redaction.SECRET_KEY.search(key):
                redaction.register(value)

    def __repr__(self) -> str:
        return f"KafkaTarget({self.bootstrap_servers!r})"

    def __call__(self) -> KafkaAdminClient:
        return GroupsAdminClient(bootstrap_servers=self.bootstrap_servers, **self.options)


class GroupCollector:
    """Builds a `GroupSnapshot` of one cluster's groups.

    `include` / `exclude` select the groups collected (`GroupSelection`). `commit_log`, when given,
    reads the collected groups' logged commits (`commit_log.read_commit_log` bound to a cluster and a
    start time); what it cannot read is an issue of kind `commit_log`.
    """

    def __init__(
        self,
        cluster: str,
        admin_factory: AdminFactory,
        include: str | None = None,
        exclude: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        commit_log: Callable[[list[str]], CommitLog] | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"group batch size must be at least 1, got {batch_size}")
        self.cluster = cluster
        self.admin_factory = admin_factory
        self.selected = GroupSelection(include, exclude)
        self.batch_size = batch_size
        self.commit_log = commit_log

    def collect(self) -> GroupSnapshot:
        """Raises `KafkaUnreachable` when no broker answers, `CollectionFailed` when the groups
        cannot even be listed; any narrower failure is a `GroupIssue` in the snapshot."""
        return with_admin(
            self.admin_factory, "collecting groups", lambda admin, where: _Run(self, admin, where).collect()
        )


class _Run:
    """One collection: state shared by its steps."""

    def __init__(self, collector: GroupCollector, admin: KafkaAdminClient, where: str) -> None:
        self.collector = collector
        self.admin = admin
        self.where = where
        self.issues: list[GroupIssue] = []
        self.brokers: list[int] = []  # in the metadata (a broker dead but not yet fenced is)
        self.lost: set[int] = set()  # brokers that did not answer this collection: asked no more

    def collect(self) -> GroupSnapshot:
        captured_at = datetime.now(UTC)
        group_types = self._list_groups()
        group_ids = sorted(group_types)
        described: dict[str, ConsumerGroup] = {}
        committed: dict[str, dict[TopicPartition, Commit]] = {}
        shared: dict[str, dict[TopicPartition, ShareOffset]] = {}
        size = self.collector.batch_size
        for start in range(0, len(group_ids), size):
            batch = group_ids[start : start + size]
            by_type = _by_type(batch, group_types)
            for group_type, ids in by_type.items():
                described.update(self._batched("describe", ids, self._describer(group_type)))
            # a share group commits no offsets: its start offsets and lag have their own API
            share_ids = by_type.pop(SHARE, [])
            if share_ids:
                shared.update(self._batched("offsets", share_ids, self._share_offsets))
            others = [g for ids in by_type.values() for g in ids]
            if others:
                committed.update(self._batched("offsets", others, self._offsets))
        if group_ids and not described and self.lost:
            raise KafkaConnectionError(f"no coordinator of the {len(group_ids)} listed groups answered")
        groups = tuple(replace(described[g], coordinator_id=self._coordinator(g)) for g in group_ids if g in described)
        referenced = {tp for c in committed.values() for tp in c} | {tp for g in groups for tp in g.assigned}
        referenced |= {tp for s in shared.values() for tp in s}
        existing, end_offsets, start_offsets = self._partition_offsets({t for t, _ in referenced})
        offsets: list[GroupOffset] = []
        for group_id in group_ids:
            if group_id in shared:
                offsets += share_offset_rows(group_id, shared[group_id], existing, end_offsets)
                continue
            group = described.get(group_id)
            assigned = group.assigned if group is not None else set()
            offsets += offset_rows(group_id, committed.get(group_id, {}), assigned, existing, end_offsets)
        lagging = [(o.topic, o.partition, o.position) for o in offsets if o.lag and o.position is not None]
        times = first_record_times(self.admin, lagging)
        transactions = read_transactions(self.admin, end_offsets, [b for b in self.brokers if b not in self.lost])
        logged = self._logged_commits([g for g in group_ids if group_types[g] != SHARE])
        problems = [("record_times", p) for p in times.problems] + [("transactions", p) for p in transactions.problems]
        problems += [("commit_log", p) for p in logged.problems]
        self.issues += [GroupIssue(None, kind, problem) for kind, problem in problems]
        cluster = self.collector.cluster
        return GroupSnapshot(
            cluster=cluster,
            snapshot_id=new_snapshot_id(cluster, captured_at),
            captured_at=captured_at,
            bootstrap_servers=self.where,
            groups=groups,
            offsets=tuple(offsets),
            end_offsets=end_offsets,
            issues=tuple(self.issues),
            completed_at=datetime.now(UTC),
            record_times=times.times,
            stable_offsets=transactions.stable_offsets,
            start_offsets=start_offsets,
            transactions=tuple(transactions.open),
            commits=tuple(logged.commits),
        )

    def _logged_commits(self, group_ids: list[str]) -> CommitLog:
        read = self.collector.commit_log
        return read(group_ids) if read is not None and group_ids else CommitLog()

    # -- groups -----------------------------------------------------------------------------

    def _list_groups(self) -> dict[str, str]:
        """Each selected group's type (`classic` on brokers without ListGroups v5), every broker asked
        on its own: one that does not answer is an issue naming it, unless none answers."""
        self.brokers = brokers = sorted(b.node_id for b in self.admin._manager.cluster.brokers())
        listed: list[dict[str, Any]] = []
        failed: dict[int, Exception] = {}
        for broker in brokers:
            try:
                listed += _retrying(partial(self.admin.list_groups, broker_ids=[broker]))
            except (KafkaError, *UNREACHABLE) as e:
                failed[broker] = e
        if brokers and len(failed) == len(brokers):
            error = next(iter(failed.values()))
            if isinstance(error, UNREACHABLE):
                raise error
            raise CollectionFailed(f"cannot list the consumer groups of Kafka at {self.where}: {error!r}") from error
        for broker, error in failed.items():
            self._lose(broker, error)
            problem = f"broker {broker} did not list its groups ({type(error).__name__}: {error})"
            self.issues.append(GroupIssue(None, "list_groups", f"{problem}: the groups it coordinates are missing"))
        return {g["group_id"]: group_type_of(g) for g in listed if self.collector.selected(g["group_id"])}

    def _lose(self, broker: int | None, error: Exception) -> None:
        if broker is not None and isinstance(error, UNREACHABLE):
            self.lost.add(broker)
            log.warning("broker %s of %s did not answer (%r): collecting without it", broker, self.where, error)

    def _coordinator(self, group_id: str) -> int | None:
        """The broker the client found coordinating `group_id` (FindCoordinator, cached), if asked yet."""
        node: int | None = self.admin._manager.cluster.get_coordinator(group_id, CoordinatorType.GROUP)
        return node

    def _describer(self, group_type: str) -> Callable[[list[str]], dict[str, ConsumerGroup]]:
        """The batch describer of `group_type`'s own API, its issues recorded; for a type without
        one, a describer that describes nothing and says so for each group."""
        describe = DESCRIBERS.get(group_type)  # type: ignore[call-overload]

        def fetch(batch: list[str]) -> dict[str, ConsumerGroup]:
            if describe is None:
                problem = f"{group_type} groups are not described yet (their committed offsets are collected)"
                self.issues += [GroupIssue(g, "type_not_collected", problem) for g in batch]
                return {}
            described = describe(self.admin, batch)
            self.issues += described.issues
            return described.groups

        return fetch

    def _batched(
        self, kind: str, batch: list[str], fetch: Callable[[list[str]], dict[str, T]]
    ) -> Iterator[tuple[str, T]]:
        """`fetch(batch)`; if the batch fails, each group alone, failures becoming issues (a group whose
        coordinator did not answer is not asked again)."""
        coordinator = self._coordinator(batch[0]) if len(batch) == 1 else None
        if coordinator in self.lost:
            self.issues.append(GroupIssue(batch[0], kind, f"its coordinator, broker {coordinator}, did not answer"))
            return
        try:
            yield from _retrying(lambda: fetch(batch)).items()
            return
        except (KafkaError, *UNREACHABLE) as e:
            if len(batch) == 1:
                self._lose(coordinator, e)
                self.issues.append(GroupIssue(batch[0], kind, f"{type(e).__name__}: {e}"))
                return
            log.warning("%s of %s groups failed (%r); retrying them one by one", kind, len(batch), e)
        for group_id in batch:
            yield from self._batched(kind, [group_id], fetch)

    def _share_offsets(self, batch: list[str]) -> dict[str, dict[TopicPartition, ShareOffset]]:
        found, issues = share_offsets(self.admin, batch)
        self.issues += issues
        return found

    def _offsets(self, batch: list[str]) -> dict[str, dict[TopicPartition, Commit]]:
        fetched = self.admin.list_group_offsets({g: None for g in batch})
        return {
            group_id: {(tp.topic, tp.partition): Commit(om.offset, om.metadata) for tp, om in offsets.items()}
            for group_id, offsets in fetched.items()
        }

    # -- end and start offsets --------------------------------------------------------------

    def _partition_offsets(
        self, topics: set[str]
    ) -> tuple[frozenset[TopicPartition], dict[TopicPartition, int], dict[TopicPartition, int]]:
        """Partitions that still exist among `topics`, the end offsets of those with a leader (one
        ListOffsets per leader; a leader that does not answer leaves its partitions without one), and
        the log start offsets of those with an end offset (`_starts`)."""
        problem = ""
        for _ in range(2):  # a topic deleted between the Metadata and ListOffsets reads: read both again
            existing, leaders = self._partitions(topics)
            by_leader: dict[int, list[TopicPartition]] = {}
            for tp, leader in sorted(leaders.items()):
                by_leader.setdefault(leader, []).append(tp)
            try:
                ends = {tp: o for leader, tps in by_leader.items() for tp, o in self._ends(leader, tps)}
            except UnknownTopicOrPartitionError as e:
                problem = f"{type(e).__name__}: {e}"
                continue
            except KafkaError as e:
                problem = f"{type(e).__name__}: {e}"
                break
            return existing, ends, self._starts({b: [tp for tp in tps if tp in ends] for b, tps in by_leader.items()})
        self.issues.append(GroupIssue(None, "end_offsets", f"no end offsets this time: {problem}"))
        return existing, {}, {}

    def _ends(self, leader: int, partitions: list[TopicPartition]) -> list[tuple[TopicPartition, int]]:
        """The end offsets of `partitions`, all led by `leader`; none when it does not answer (an issue)."""
        if leader not in self.lost:
            specs = {KafkaTopicPartition(t, p): OffsetSpec.LATEST for t, p in partitions}
            try:
                answered = self.admin.list_partition_offsets(specs)
            except UNREACHABLE as e:
                self._lose(leader, e)
            else:
                return [((tp.topic, tp.partition), o.offset) for tp, o in answered.items()]
        problem = f"leader {leader} did not answer: no end offset for its {len(partitions)} partitions this time"
        self.issues.append(GroupIssue(None, "end_offsets", problem))
        return []

    def _starts(self, by_leader: Mapping[int, list[TopicPartition]]) -> dict[TopicPartition, int]:
        """The log start offsets of the partitions in `by_leader`, one ListOffsets (earliest) per leader as
        for the end offsets. A leader that refuses (a log dir failing since, say) or does not answer
        leaves its partitions without one: an issue, and their end offsets and lag stand."""
        starts: dict[TopicPartition, int] = {}
        for leader, partitions in by_leader.items():
            if not partitions:
                continue
            specs = {KafkaTopicPartition(t, p): OffsetSpec.EARLIEST for t, p in partitions}
            try:
                answered = self.admin.list_partition_offsets(specs)
            except (KafkaError, *UNREACHABLE) as e:
                self._lose(leader, e)
                problem = (
                    f"leader {leader} gave no log start offset for its {len(partitions)} partitions this time "
                    f"({type(e).__name__}: {e})"
                )
                self.issues.append(GroupIssue(None, "start_offsets", problem))
                continue
            starts.update(((tp.topic, tp.partition), o.offset) for tp, o in answered.items())
        return starts

    def _partitions(self, topics: set[str]) -> tuple[frozenset[TopicPartition], dict[TopicPartition, int]]:
        """(every existing partition of `topics`, the leader of each that has one)."""
        if not topics:
            return frozenset(), {}
        existing, leaders = set(), {}
        for topic in self.admin.describe_topics(sorted(topics)):
            name, error = topic["name"], topic["error_code"]
            if error == UNKNOWN_TOPIC:
                continue  # deleted: its rows are flagged topic_deleted
            if error:
                self.issues.append(GroupIssue(None, "metadata", f"topic {name}: error code {error}"))
            for p in topic["partitions"]:
                tp = (name, p["partition_index"])
                existing.add(tp)
                if p["leader_id"] >= 0:
                    leaders[tp] = p["leader_id"]
                else:
                    problem = f"{name}-{tp[1]}: no leader, end offset unknown"
                    self.issues.append(GroupIssue(None, "end_offsets", problem))
        return frozenset(existing), leaders
