"""The goals of a load-aware plan, judged from the plan itself (its moves and per-broker rows), not
from the planner's working state: what a reviewer reads, and what refuses a plan that breaks one.

Hard goals (`load.HARD_GOALS`; network inbound capacity, `network_in_bytes_per_s`, where rates are
known): held, unchecked (naming the brokers or setting it lacks), or
violated per broker. A violation the plan causes or worsens (a broker that ends above its limit and
above where it started, a new replica on a cordoned or unregistered broker, a partition losing rack
spread) refuses the plan with a `PlanError` naming the goal and the broker. A violation that was
there before and that the plan does not worsen (a broker already over its disk limit that no move
could relieve) is reported, per broker, in the plan: a plan that says so, never a silent one.

Soft goals (`load.SOFT_GOALS`, in priority order): the spread (max − min) over the participating
brokers before and after, as disk share (bytes when a capacity is missing), inbound and leader
bytes-in per second, replica and leader counts; unchecked when the data is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace

from kafka_ops.errors import PlanError
from kafka_ops.planning.load import (
    DISK_CAPACITY,
    DISK_SPREAD,
    LEADER_BYTES_IN_SPREAD,
    LEADER_SPREAD,
    NETWORK_IN_CAPACITY,
    NETWORK_IN_SPREAD,
    NO_NEW_ON_CORDONED,
    RACK_AWARE,
    REPLICA_CAPACITY,
    REPLICA_SPREAD,
    ClusterLoad,
)
from kafka_ops.planning.placement import spread, spread_kept
from kafka_ops.planning.plan import BrokerLoad, Goal, GoalStatus, Plan
from kafka_ops.planning.view import ClusterView


def with_goals(plan: Plan, view: ClusterView, load: ClusterLoad, participants: Collection[int]) -> Plan:
    """`plan` with its goals; `PlanError` when the plan itself breaks a hard goal."""
    hard = [*_rack(plan, view), *_disk(plan, load), *_network_in(plan, load), *_replicas(plan, load),
            *_cordons(plan, view)]  # fmt: skip
    caused = [g for g in hard if g.status == "violated" and not _standing(g)]
    if caused:
        first = caused[0]
        where = "" if first.broker is None else f"broker {first.broker}: "
        raise PlanError(first.goal, f"{where}{first.detail} (refused: a plan may not break a hard goal)")
    rows = [b for b in plan.brokers if b.broker_id in set(participants)]
    soft = [
        _spread(DISK_SPREAD, rows, _disk_of, load),
        _spread(NETWORK_IN_SPREAD, rows, lambda b, after: _in_share(b, after, load), load),
        _spread(LEADER_BYTES_IN_SPREAD, rows, lambda b, after: b.leader_bytes_in_after if after
                else b.leader_bytes_in_before, load),
        _spread(REPLICA_SPREAD, rows, lambda b, after: b.replicas_after if after else b.replicas_before, load),
        _spread(LEADER_SPREAD, rows, lambda b, after: b.leaders_after if after else b.leaders_before, load),
    ]  # fmt: skip
    violated = sum(1 for g in hard if g.status == "violated")
    return replace(plan, goals=(*hard, *soft), figures={**plan.figures, "hard_goals_violated": violated})


def _standing(goal: Goal) -> bool:
    """A violation there before the plan that the plan does not worsen."""
    return goal.before is not None and goal.after is not None and goal.after <= goal.before


def _rack(plan: Plan, view: ClusterView) -> list[Goal]:
    out = []
    for m in plan.reassignments:
        before, after = spread(m.current, view.rack_of), spread(m.target, view.rack_of)
        if not spread_kept(before, after, len(m.target), view.racks_available):
            out.append(Goal(RACK_AWARE, True, "violated", f"{m.topic}-{m.partition} spans {after} rack(s), "
                            f"{before} before: {list(m.current)} -> {list(m.target)}"))  # fmt: skip
    return out or [Goal(RACK_AWARE, True, "held")]


def _disk(plan: Plan, load: ClusterLoad) -> list[Goal]:
    out: list[Goal] = []
    unknown = [b.broker_id for b in plan.brokers if b.registered and b.disk_capacity_bytes is None]
    for b in plan.brokers:
        limit = load.disk_limit(b.broker_id)
        if limit is None or b.disk_bytes_after is None or b.disk_bytes_after <= limit:
            continue
        before = b.disk_bytes_before or 0
        was = "" if before <= limit else f"; it held {before:,} before the plan"
        if before > limit and b.disk_bytes_after <= before:
            was += " and the plan does not add to it: move data off it or raise its capacity"
        share = b.disk_share_after
        out.append(Goal(DISK_CAPACITY, True, "violated", f"holds {b.disk_bytes_after:,} bytes after the plan "
                        f"({share:.1%} of {b.disk_capacity_bytes:,}), above max_disk_share "
                        f"{load.max_disk_share:.0%}{was}", broker=b.broker_id, before=before,
                        after=b.disk_bytes_after))  # fmt: skip
    if unknown:
        out.append(Goal(DISK_CAPACITY, True, "unchecked", f"no disk capacity for broker(s) {unknown}"))
    return out or [Goal(DISK_CAPACITY, True, "held")]


def _network_in(plan: Plan, load: ClusterLoad) -> list[Goal]:
    if not load.has_rates:
        return [Goal(NETWORK_IN_CAPACITY, True, "unchecked", "no partition byte rates")]
    out: list[Goal] = []
    for b in plan.brokers:
        cap = load.network_in_capacity.get(b.broker_id)
        after, before = b.bytes_in_after or 0.0, b.bytes_in_before or 0.0
        if not cap or after <= cap:
            continue
        was = "" if before <= cap else f"; it took {before:,.0f} before the plan"
        out.append(Goal(NETWORK_IN_CAPACITY, True, "violated", f"takes {after:,.0f} bytes/s in after the plan, "
                        f"above its network_in_bytes_per_s {cap:,.0f}{was}", broker=b.broker_id, before=before,
                        after=after))  # fmt: skip
    unknown = [b.broker_id for b in plan.brokers if b.registered and not load.network_in_capacity.get(b.broker_id)]
    if unknown:
        out.append(Goal(NETWORK_IN_CAPACITY, True, "unchecked", f"no network_in_bytes_per_s for broker(s) {unknown}"))
    return out or [Goal(NETWORK_IN_CAPACITY, True, "held")]


def _replicas(plan: Plan, load: ClusterLoad) -> list[Goal]:
    most = load.max_replicas_per_broker
    if most is None:
        return [Goal(REPLICA_CAPACITY, True, "unchecked", "max_replicas_per_broker is not set")]
    out = []
    for b in plan.brokers:
        if b.replicas_after > most:
            was = f"; it held {b.replicas_before} before the plan" if b.replicas_before > most else ""
            if b.replicas_before > most and b.replicas_after <= b.replicas_before:
                was += " and the plan does not add to it"
            out.append(Goal(REPLICA_CAPACITY, True, "violated", f"holds {b.replicas_after} replicas after the "
                            f"plan, above max_replicas_per_broker {most}{was}", broker=b.broker_id,
                            before=b.replicas_before, after=b.replicas_after))  # fmt: skip
    return out or [Goal(REPLICA_CAPACITY, True, "held")]


def _cordons(plan: Plan, view: ClusterView) -> list[Goal]:
    receivers = sorted({b for m in plan.reassignments for b in m.added} - view.placeable)
    return [
        Goal(NO_NEW_ON_CORDONED, True, "violated", "receives a new replica but is cordoned or not registered",
             broker=b)
        for b in receivers
    ] or [Goal(NO_NEW_ON_CORDONED, True, "held")]  # fmt: skip


def _disk_of(b: BrokerLoad, after: bool) -> float | None:
    share = b.disk_share_after if after else b.disk_share_before
    return share if share is not None else (b.disk_bytes_after if after else b.disk_bytes_before)


def _in_share(b: BrokerLoad, after: bool, load: ClusterLoad) -> float | None:
    rate = b.bytes_in_after if after else b.bytes_in_before
    cap = load.network_in_capacity.get(b.broker_id)
    return None if rate is None else rate / cap if cap else rate


def _spread(
    goal: str, rows: list[BrokerLoad], value: Callable[[BrokerLoad, bool], float | int | None], load: ClusterLoad
) -> Goal:
    if goal in load.missing:
        return Goal(goal, False, "unchecked", load.missing[goal])
    figures: list[float] = []
    for when in (False, True):
        values = [v for b in rows if (v := value(b, when)) is not None]
        figures.append(max(values) - min(values) if values else 0.0)
    before, after = figures
    status: GoalStatus = "improved" if after < before - 1e-12 else "unchanged" if after <= before + 1e-12 else "worse"
    return Goal(goal, False, status, "max - min over the participating brokers", before=before, after=after)
