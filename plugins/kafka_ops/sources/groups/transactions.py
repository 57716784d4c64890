"""What transactions do to the groups' partitions: last stable offsets, and the open transactions
that hold them back.

A `read_committed` consumer reads only up to a partition's last stable offset (LSO): the first
offset of the oldest transaction still open on it. An open transaction, whether its producer is
slow, dead (until its coordinator aborts it after `transaction.timeout.ms`) or hanging (the
partition's leader holds it open but no coordinator does, so nothing will ever end it), pins the
LSO and silently stalls every read_committed consumer behind it.

Round trips: one ListOffsets (read_committed) per leader; one ListTransactions per broker, one
DescribeTransactions per coordinator with open transactions, one DescribeProducers per leader of
the groups' partitions an open transaction pins (LSO below the high watermark) and of those
transactions' partitions. A failure is a `problem`, never the snapshot's end.

The leaders are asked before the coordinators, so a transaction that starts meanwhile is not taken for
a hanging one, but one that completes between the two reads (its markers not yet written) is, for that
collection only: `detectors.transactions` calls a transaction hanging only when two collections in a
row see it so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kafka.admin import KafkaAdminClient, OffsetSpec, TransactionDescription, TransactionState
from kafka.errors import KafkaError
from kafka.protocol.consumer.offsets import IsolationLevel
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_ops.model.groups import OpenTransaction, TopicPartition
from kafka_ops.sources.admin import UNREACHABLE

CLOSED = frozenset(
    {TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT, TransactionState.DEAD}
)


@dataclass
class Transactions:
    """Last stable offsets of the partitions asked for, the open transactions, and what could not
    be read, in words."""

    stable_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    open: list[OpenTransaction] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_transactions(
    admin: KafkaAdminClient, end_offsets: Mapping[TopicPartition, int], brokers: list[int] | None = None
) -> Transactions:
    """The LSO of each partition of `end_offsets` (partition -> high watermark; each must have a
    leader) and every open transaction `brokers` (default: all) coordinate, with its start offset on each of its
    partitions. The leaders of the partitions an open transaction pins (LSO below the high
    watermark, or LSO unknown) are also asked for transactions no coordinator knows (hanging): a
    partition whose LSO is its high watermark has no transaction with records open on it."""
    found = Transactions()
    asked = sorted(end_offsets)
    if asked:
        found.stable_offsets = _stable_offsets(admin, asked, found.problems)
    pinned = [tp for tp in asked if found.stable_offsets.get(tp, -1) < end_offsets[tp]]
    # the leaders first: a transaction they hold open began before the coordinators are asked, so a
    # coordinator that does not list it as ongoing is not merely late to hear of a new one
    producers = _producers(admin, pinned, found.problems)
    described, listed = _open_transactions(admin, brokers, found.problems)
    in_transactions = {(tp.topic, tp.partition) for d in described.values() for tp in d.topic_partitions}
    producers |= _producers(admin, sorted(in_transactions - set(pinned)), found.problems)
    covered: set[tuple[int, TopicPartition]] = set()
    pinned_set = set(pinned)
    for txn_id, d in sorted(described.items()):
        start = (
            datetime.fromtimestamp(d.transaction_start_time_ms / 1000, UTC)
            if d.transaction_start_time_ms >= 0
            else None
        )
        for tp in sorted((tp.topic, tp.partition) for tp in d.topic_partitions):
            covered.add((d.producer_id, tp))
            found.open.append(
                OpenTransaction(
                    txn_id, d.producer_id, d.producer_epoch, str(d.state.value), d.coordinator_id, *tp,
                    start, d.transaction_timeout_ms, producers.get(tp, {}).get(d.producer_id, (0, None))[1],
                )
            )  # fmt: skip
    for tp, open_here in sorted(producers.items()):
        for producer_id, (epoch, start_offset) in sorted(open_here.items()):
            if (producer_id, tp) in covered or tp not in pinned_set:
                continue
            known: tuple[str | None, str | None] = listed.get(producer_id, (None, None))
            known_id, state = known
            found.open.append(
                OpenTransaction(known_id, producer_id, epoch, state, None, *tp, None, None, start_offset, hanging=True)
            )
    return found


def _stable_offsets(
    admin: KafkaAdminClient, asked: list[TopicPartition], problems: list[str]
) -> dict[TopicPartition, int]:
    specs = {KafkaTopicPartition(t, p): OffsetSpec.LATEST for t, p in asked}
    try:
        answered = admin.list_partition_offsets(specs, isolation_level=IsolationLevel.READ_COMMITTED)
    except (KafkaError, *UNREACHABLE) as e:
        problems.append(f"no last stable offsets this time: {type(e).__name__}: {e}")
        return {}
    return {(tp.topic, tp.partition): o.offset for tp, o in answered.items()}


def _open_transactions(
    admin: KafkaAdminClient, brokers: list[int] | None, problems: list[str]
) -> tuple[dict[str, TransactionDescription], dict[int, tuple[str, str]]]:
    """(open transactions by id, as their coordinators describe them; every listed transaction
    by producer id: (transactional id, state))."""
    try:
        by_broker = admin.list_transactions(broker_ids=brokers)
    except (KafkaError, *UNREACHABLE) as e:
        problems.append(f"cannot list transactions: {type(e).__name__}: {e}")
        return {}, {}
    listings = [t for listed in by_broker.values() for t in listed]
    listed = {t.producer_id: (t.transactional_id, str(t.state.value)) for t in listings}
    open_ids = sorted({t.transactional_id for t in listings if t.state not in CLOSED})
    described: dict[str, TransactionDescription] = {}
    if open_ids:
        try:
            described.update(admin.describe_transactions(open_ids))
        except UNREACHABLE as e:  # its coordinator is down: the ids stay listed, not described
            problems.append(f"cannot describe {len(open_ids)} open transactions: {type(e).__name__}: {e}")
        except KafkaError:  # one id gone since the listing fails the request: ask one by one
            for txn_id in open_ids:
                try:
                    described.update(admin.describe_transactions([txn_id]))
                except KafkaError as e:
                    problems.append(f"transaction {txn_id}: cannot describe: {type(e).__name__}: {e}")
    return {i: d for i, d in described.items() if d.state not in CLOSED}, listed


def _producers(
    admin: KafkaAdminClient, partitions: list[TopicPartition], problems: list[str]
) -> dict[TopicPartition, dict[int, tuple[int, int | None]]]:
    """Per partition, its producers with an open transaction: producer id → (epoch, start offset)."""
    if not partitions:
        return {}
    try:
        states = admin.describe_producers([KafkaTopicPartition(t, p) for t, p in partitions])
    except (KafkaError, *UNREACHABLE) as e:
        problems.append(f"cannot describe the producers of {len(partitions)} partitions: {type(e).__name__}: {e}")
        return {}
    return {
        (tp.topic, tp.partition): {
            p.producer_id: (p.producer_epoch, p.current_transaction_start_offset)
            for p in state.active_producers
            if p.current_transaction_start_offset >= 0
        }
        for tp, state in states.items()
    }
