from __future__ import annotations

import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.planning.plan import Election, Move
from kafka_ops.remediation.batching import chunk_elections, split_moves


def move(partition: int, current: tuple[int, ...], target: tuple[int, ...], topic: str = "t") -> Move:
    return Move(topic, partition, current, target)


def layout(batches: list[tuple[Move, ...]]) -> list[list[int]]:
    return [[m.partition for m in b] for b in batches]


def test_partition_cap_cuts_in_plan_order() -> None:
    moves = [move(p, (1,), (1, 2 + p % 2)) for p in range(5)]
    assert layout(split_moves(moves, max_partitions=2, max_moves_per_broker=10)) == [[0, 1], [2, 3], [4]]


def test_per_broker_cap_counts_replicas_received_first_fit() -> None:
    # partitions 0, 1, 2 each add a replica on broker 4; 3 adds one on broker 5
    moves = [move(0, (1,), (1, 4)), move(1, (2,), (2, 4)), move(2, (3,), (3, 4)), move(3, (1,), (1, 5))]
    batches = split_moves(moves, max_partitions=10, max_moves_per_broker=1)
    assert layout(batches) == [[0, 3], [1], [2]]  # 3 fits the first batch: broker 5 has room there
    for batch in batches:
        received = [b for m in batch for b in m.added]
        assert len(received) == len(set(received))


def test_moves_that_add_nothing_count_only_toward_partitions() -> None:
    reorders = [move(p, (1, 2), (2, 1)) for p in range(3)]
    assert layout(split_moves(reorders, max_partitions=2, max_moves_per_broker=1)) == [[0, 1], [2]]


def test_split_is_deterministic_and_complete() -> None:
    moves = [move(p, (p % 3 + 1,), (p % 3 + 1, (p + 1) % 3 + 1), topic=f"t{p % 2}") for p in range(20)]
    first = split_moves(moves, 3, 2)
    assert first == split_moves(moves, 3, 2)
    assert sorted((m.topic, m.partition) for b in first for m in b) == sorted((m.topic, m.partition) for m in moves)
    assert all(len(b) <= 3 for b in first)


def test_empty_plan_has_no_batch() -> None:
    assert split_moves([], 1, 1) == []
    assert chunk_elections([], 5) == []


def test_election_chunks() -> None:
    elections = [Election("t", p, 2, 1) for p in range(5)]
    assert [[e.partition for e in c] for c in chunk_elections(elections, 2)] == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize(("partitions", "per_broker", "message"), [
    (0, 1, "batch_max_partitions must be a positive integer, got 0"),
    (1, True, "batch_max_moves_per_broker must be a positive integer, got True"),
    (1.5, 1, "batch_max_partitions must be a positive integer, got 1.5"),
])  # fmt: skip
def test_limits_are_checked(partitions: int, per_broker: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        split_moves([move(0, (1,), (1, 2))], partitions, per_broker)
