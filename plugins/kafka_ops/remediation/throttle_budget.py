"""The replication throttle from a plan's bytes and the operator's time budget.

Per broker, the bytes the plan makes it send and receive: every move copies the partition's size
(`Move.size_bytes`) from the partition's first current replica (the preferred leader, the leader
of a healthy partition: followers fetch from the leader) to each new replica. A broker that must
move B bytes within T seconds needs B / T bytes/s, capped by its network capacity where the
cluster's `[clusters.capacity]` sets one (`network_out_bytes_per_s` for what it sends,
`network_in_bytes_per_s` for what it receives). Kafka throttles per broker, and the executor
writes one rate to every broker that sends or receives, so the throttle is the busiest broker's
need (every other broker then finishes early), never below `minimum` (Kafka's tools, and the
Params, refuse less than 1 MB/s). When a capacity caps the busiest broker below its need, the
budget cannot be met: `BudgetThrottle.seconds` says how long the plan then takes.

A log dir balance (`Plan.dir_moves`) copies within each broker, from one of its dirs to another,
under `replica.alter.log.dirs.io.max.bytes.per.second`: a broker's need is the bytes of its own
moves over the budget, and no network capacity caps it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kafka_ops.capacities import Capacities
from kafka_ops.errors import PlanError
from kafka_ops.planning.plan import Plan


@dataclass(frozen=True)
class BudgetThrottle:
    """The throttle for a plan and a budget, and why."""

    rate: int
    """Bytes/s to set on every broker that sends or receives."""
    per_broker: dict[int, int]
    """Each broker's own need within the budget (capped by its capacity)."""
    busiest: int
    """The broker whose need sets the rate."""
    capped: tuple[int, ...]
    """Brokers whose network capacity is below their need: the budget cannot be met on them."""
    seconds: float
    """How long the busiest broker's bytes take at `rate`."""


def throttle_for_budget(plan: Plan, minutes: float, capacities: Capacities, *, minimum: int) -> BudgetThrottle:
    """The throttle that moves `plan`'s bytes within `minutes` (see the module docstring)."""
    if not math.isfinite(minutes) or minutes <= 0:
        raise PlanError("time_budget_minutes", f"must be a number of minutes > 0, got {minutes!r}")
    unsized = [f"{m.topic}-{m.partition}" for m in plan.reassignments if m.moves and m.size_bytes is None]
    if unsized:
        raise PlanError(
            "time_budget_minutes",
            f"plan {plan.plan_id} does not know the size of {len(unsized)} moved partition(s) (e.g. {unsized[0]}): "
            "the snapshot had no replica sizes; set throttle_bytes_per_s instead",
        )
    if plan.dir_moves:
        return _within_brokers(plan, minutes * 60, minimum)
    sent: dict[int, int] = {}
    received: dict[int, int] = {}
    for m in plan.reassignments:
        if not m.moves or not m.current:
            continue
        size = m.size_bytes or 0
        sent[m.current[0]] = sent.get(m.current[0], 0) + size * m.moves
        for b in m.added:
            received[b] = received.get(b, 0) + size
    if not sent:
        return BudgetThrottle(minimum, {}, -1, (), 0.0)
    seconds = minutes * 60
    per_broker: dict[int, int] = {}
    capped: list[int] = []
    for b in sorted(sent.keys() | received.keys()):
        need = max(sent.get(b, 0), received.get(b, 0)) / seconds
        cap = _cap(capacities, b, sends=sent.get(b, 0) >= received.get(b, 0))
        if cap is not None and cap < need:
            capped.append(b)
            need = cap
        per_broker[b] = max(minimum, math.ceil(need))
    busiest = max(per_broker, key=lambda b: (per_broker[b], -b))
    rate = per_broker[busiest]
    longest = 0.0
    for b in per_broker:
        cap = _cap(capacities, b, sends=sent.get(b, 0) >= received.get(b, 0))
        longest = max(longest, max(sent.get(b, 0), received.get(b, 0)) / min(rate, cap or rate))
    return BudgetThrottle(rate, per_broker, busiest, tuple(capped), longest)


def _within_brokers(plan: Plan, seconds: float, minimum: int) -> BudgetThrottle:
    copied: dict[int, int] = {}
    for d in plan.dir_moves:
        copied[d.broker] = copied.get(d.broker, 0) + d.size_bytes
    per_broker = {b: max(minimum, math.ceil(n / seconds)) for b, n in sorted(copied.items())}
    busiest = max(per_broker, key=lambda b: (per_broker[b], -b))
    rate = per_broker[busiest]
    return BudgetThrottle(rate, per_broker, busiest, (), max(copied.values()) / rate)


def _cap(capacities: Capacities, broker: int, *, sends: bool) -> float | None:
    own = capacities.of(broker)
    return own.network_out_bytes_per_s if sends else own.network_in_bytes_per_s
