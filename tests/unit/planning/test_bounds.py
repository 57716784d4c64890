from __future__ import annotations

import random

from kafka_ops.planning.bounds import balanced_targets, count_lower_bound, lower_bound_moves, rack_limits, spread_evenly


def test_count_bound_small_cases() -> None:
    # 10 replicas on 3 brokers: finals 4/3/3, the 4 on a broker holding 5 -> 1 + 2 moves
    assert count_lower_bound({1: 5, 2: 5, 3: 0}, [1, 2, 3]) == 3
    assert count_lower_bound({1: 3, 2: 3, 3: 4}, [1, 2, 3]) == 0
    # a drained broker's replicas all move; the other two end at 6 each
    assert count_lower_bound({1: 4, 2: 4, 3: 4}, [1, 2], drained=[3]) == 4
    assert count_lower_bound({1: 9, 2: 0}, [1, 2], drained=[3]) == 0 + 4  # broker 3 holds none


def test_count_bound_equals_the_max_of_the_two_textbook_bounds() -> None:
    # with R = qB + r: Σ max(0, c - ceil) and Σ max(0, floor - c); the exact minimum is their max
    rng = random.Random(3)
    for _ in range(300):
        brokers = list(range(1, rng.randint(2, 9)))
        counts = {b: rng.randint(0, 20) for b in brokers}
        total = sum(counts.values())
        floor, ceil = total // len(brokers), -(-total // len(brokers))
        over = sum(max(0, c - ceil) for c in counts.values())
        under = sum(max(0, floor - c) for c in counts.values())
        assert count_lower_bound(counts, brokers) == max(over, under)


def test_spread_evenly_gives_the_ceil_to_the_fullest() -> None:
    assert spread_evenly(10, [1, 2, 3], {1: 0, 2: 9, 3: 1}) == {2: 4, 3: 3, 1: 3}


def test_rack_limits() -> None:
    # 3 racks: RF 3 -> exactly one per rack; RF 1 -> at most one; RF 4 -> 1..2 per rack
    assert rack_limits([3, 3], 3) == (2, 2)
    assert rack_limits([1, 2], 3) == (0, 2)
    assert rack_limits([4], 3) == (1, 2)


def test_balanced_targets_when_the_rack_cap_binds() -> None:
    # RF 3 on 3 racks, rack a has two brokers: rack a still holds one replica of each partition
    counts = {1: 6, 4: 0, 2: 6, 3: 6}
    rack_of = {1: "a", 4: "a", 2: "b", 3: "c"}
    targets = balanced_targets(counts, [1, 2, 3, 4], rack_of, rack_limits([3] * 6, 3))
    assert targets == {1: 3, 4: 3, 2: 6, 3: 6}
    assert lower_bound_moves(counts, targets) == 3
    # counts alone would ask for 5/5/4/4 (4 moves), which breaks the rack spread: not the goal
    assert count_lower_bound(counts, [1, 2, 3, 4]) == 4


def test_balanced_targets_without_binding_racks_is_floor_ceil() -> None:
    counts = {1: 3, 2: 1, 3: 0}
    targets = balanced_targets(counts, [1, 2, 3], {1: "a", 2: "a", 3: "b"}, rack_limits([1, 1, 1, 1], 2))
    assert sorted(targets.values()) == [1, 1, 2] and sum(targets.values()) == 4
    assert lower_bound_moves(counts, targets) == count_lower_bound(counts, [1, 2, 3]) == 1
