"""The log dir executor's pure parts: the batches (a partition at most once per batch) and the resume rule
(where a replica stands against its planned move)."""

from __future__ import annotations

from kafka_ops.planning.plan import DirMove
from kafka_ops.remediation.log_dir_moves import LiveDirs, split_dir_moves


def move(topic: str, partition: int, broker: int) -> DirMove:
    return DirMove(topic, partition, broker, "/a", "/b", 1)


def test_batches_hold_a_partition_at_most_once_and_keep_plan_order() -> None:
    moves = [move("t", 0, 1), move("t", 0, 2), move("t", 1, 1), move("u", 0, 1)]
    batches = split_dir_moves(moves, 2)
    assert [[(m.topic, m.partition, m.broker) for m in b] for b in batches] == [
        [("t", 0, 1), ("t", 1, 1)],
        [("t", 0, 2), ("u", 0, 1)],
    ]


def test_each_live_state_of_a_move() -> None:
    m = move("t", 0, 1)
    key = ("t", 0, 1)
    assert LiveDirs({key: "/a"}, {}, set()).state(m) == "base"
    assert LiveDirs({key: "/a"}, {key: ("/b", 10, 5)}, set()).state(m) == "moving"
    assert LiveDirs({key: "/b"}, {}, set()).state(m) == "target"
    assert LiveDirs({key: "/c"}, {}, set()).state(m) == "elsewhere"
    assert LiveDirs({key: "/a"}, {key: ("/c", 10, 5)}, set()).state(m) == "elsewhere"  # moving somewhere else
    assert LiveDirs({}, {}, set()).state(m) == "elsewhere"  # gone
    failed = LiveDirs({key: "/a"}, {}, {(1, "/b")})
    assert failed.state(m) == "elsewhere"
    assert failed.where(m) == "t-0 on broker 1 is in /a (its target dir is in error); planned /a -> /b"
