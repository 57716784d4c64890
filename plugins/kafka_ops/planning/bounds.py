"""Balanced targets and lower bounds on the moves needed to reach them.

Counts only. With R replicas to hold on B brokers (R = q·B + r, 0 ≤ r < B), a balanced cluster
has r brokers holding q + 1 = ceil(R/B) replicas and B − r holding q = floor(R/B); a drained
(decommissioned) broker holds 0. A move adds one replica to one broker, and every replica a broker
holds above its final count must leave it, so

    moves ≥ Σ_b max(0, count_b − final_b).

The two textbook bounds are Σ max(0, count_b − ceil) and Σ max(0, floor − count_b) (+ every
replica on a drained broker); the exact minimum over all balanced finals is at least their
maximum and is what `count_lower_bound` returns: give the r "ceil" slots to the brokers that hold
the most now (each such slot saves one move exactly when the broker holds more than q), then sum.

With racks. A partition of RF k on a cluster with n racks must span min(k, n) racks, so one rack
may hold at most one of its replicas when k ≤ n, at most k − n + 1 otherwise, and at least one
when k ≥ n. Summed over partitions that gives every rack a floor and a cap; when racks differ in
size, the cap can bind (RF 3 on 3 racks: each rack holds exactly one replica of every partition,
so a rack with more brokers has fewer replicas per broker). `balanced_targets` water-fills:
the replicas-per-broker level t with Σ_racks clamp(t·brokers_in_rack, floor, cap) = R gives each
rack its share, rounded to integers (the extra units to the racks holding the most now), then each
rack's share is spread floor/ceil over its brokers as above. `lower_bound_moves` sums the excess
over those targets; where no rack constraint binds, it equals `count_lower_bound` up to which
racks get the rounding units.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping

_EPS = 1e-9


def count_lower_bound(counts: Mapping[int, int], brokers: Collection[int], drained: Collection[int] = ()) -> int:
    """The fewest moves that leave `brokers` balanced (floor/ceil) and `drained` empty."""
    targets = spread_evenly(sum(counts.get(b, 0) for b in [*brokers, *drained]), brokers, counts)
    targets.update({b: 0 for b in drained})
    return lower_bound_moves(counts, targets)


def lower_bound_moves(counts: Mapping[int, int], targets: Mapping[int, int]) -> int:
    """Σ over brokers of max(0, count − target): replicas that must leave their broker."""
    return sum(max(0, counts.get(b, 0) - t) for b, t in targets.items())


def spread_evenly(total: int, brokers: Iterable[int], counts: Mapping[int, int]) -> dict[int, int]:
    """`total` over `brokers` as floor/ceil, the ceil going to the brokers holding the most now."""
    ids = sorted(brokers, key=lambda b: (-counts.get(b, 0), b))
    if not ids:
        return {}
    q, r = divmod(total, len(ids))
    return {b: q + (1 if i < r else 0) for i, b in enumerate(ids)}


def rack_limits(replication_factors: Iterable[int], racks: int) -> tuple[int, int]:
    """(floor, cap) on the replicas one rack holds, from each partition's replica count."""
    floor = cap = 0
    for k in replication_factors:
        floor += 1 if k >= racks else 0
        cap += 1 if k <= racks else k - racks + 1
    return floor, cap


def balanced_targets(
    counts: Mapping[int, int],
    brokers: Collection[int],
    rack_of: Mapping[int, str],
    limits: tuple[int, int] | None = None,
    total: int | None = None,
) -> dict[int, int]:
    """Per-broker targets for `brokers` (see the module docstring). `total` defaults to the
    replicas they hold now; `limits` is `rack_limits` (None: no rack constraint)."""
    total = sum(counts.get(b, 0) for b in brokers) if total is None else total
    by_rack: dict[str, list[int]] = {}
    for b in sorted(brokers):
        by_rack.setdefault(rack_of[b], []).append(b)
    floor, cap = limits if limits is not None else (0, total)
    if floor * len(by_rack) > total or cap * len(by_rack) < total:
        floor, cap = 0, total  # the current placement already breaks the rack rule: balance counts only
    shares = _rack_shares(total, {r: len(m) for r, m in by_rack.items()}, floor, cap)
    held = {r: sum(counts.get(b, 0) for b in members) for r, members in by_rack.items()}
    rounded = _round_shares(total, shares, held, cap)
    targets: dict[int, int] = {}
    for rack, members in by_rack.items():
        targets.update(spread_evenly(rounded[rack], members, counts))
    return targets


def _rack_shares(total: int, sizes: Mapping[str, int], floor: int, cap: int) -> dict[str, float]:
    def filled(level: float) -> float:
        return sum(min(max(level * n, floor), cap) for n in sizes.values())

    low, high = 0.0, float(total)
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if filled(mid) < total else (low, mid)
    return {r: min(max(high * n, floor), cap) for r, n in sizes.items()}


def _round_shares(total: int, shares: Mapping[str, float], held: Mapping[str, int], cap: int) -> dict[str, int]:
    rounded = {r: math.floor(s + _EPS) for r, s in shares.items()}
    order = sorted(shares, key=lambda r: (-round(shares[r] - rounded[r], 6), -(held[r] - rounded[r]), r))
    left = total - sum(rounded.values())
    while left > 0:
        grew = False
        for rack in order:
            if left and rounded[rack] < cap:
                rounded[rack] += 1
                left -= 1
                grew = True
        if not grew:
            break
    for rack in reversed(order):  # float error can round a share up past the total
        if left < 0 and rounded[rack] > 0:
            rounded[rack] -= 1
            left += 1
    return rounded
