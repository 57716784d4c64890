"""Split a plan's work into batches the executor applies one at a time.

Reassignments: a batch holds at most `max_partitions` partitions, and at most
`max_moves_per_broker` new replicas land on any one broker (a move is one replica copied to a
broker; see `planning.plan`). The destination is what a reassignment loads: the new replica
fetches the whole log from the leader while serving nothing, so the per-broker cap bounds the
copy traffic and disk writes each broker takes at once. A partition that gains no replica (a
reorder, or a replication-factor decrease) counts toward `max_partitions` only.

Moves are placed first-fit, in plan order (topic, partition), into the first batch with room,
so the split is deterministic for a given plan and limits, and the number of batches stays
small. A single move always fits an empty batch (a move adds at most one replica per broker).
The executor stores the split in the progress document on its first run and keeps it on
resume, even if a later run passes other limits: batch numbers in the audit table stay
meaningful for the whole execution.

Elections are cut into chunks of `size` partitions, in plan order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from kafka_ops.errors import ConfigError
from kafka_ops.planning.plan import Election, Move


@dataclass
class _Open:
    moves: list[Move] = field(default_factory=list)
    received: Counter[int] = field(default_factory=Counter)

    def fits(self, move: Move, max_partitions: int, max_moves_per_broker: int) -> bool:
        if len(self.moves) >= max_partitions:
            return False
        return all(self.received[b] < max_moves_per_broker for b in move.added)

    def add(self, move: Move) -> None:
        self.moves.append(move)
        self.received.update(move.added)


def split_moves(moves: Sequence[Move], max_partitions: int, max_moves_per_broker: int) -> list[tuple[Move, ...]]:
    """The batches, each in plan order (see the module docstring for the rules)."""
    _check_positive("batch_max_partitions", max_partitions)
    _check_positive("batch_max_moves_per_broker", max_moves_per_broker)
    batches: list[_Open] = []
    for move in moves:
        target = next((b for b in batches if b.fits(move, max_partitions, max_moves_per_broker)), None)
        if target is None:
            target = _Open()
            batches.append(target)
        target.add(move)
    return [tuple(b.moves) for b in batches]


def chunk_elections(elections: Sequence[Election], size: int) -> list[tuple[Election, ...]]:
    """Consecutive chunks of at most `size` elections."""
    _check_positive("election_batch_size", size)
    return [tuple(elections[i : i + size]) for i in range(0, len(elections), size)]


def _check_positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
