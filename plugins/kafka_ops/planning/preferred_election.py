"""Preferred-leader election: give leadership back to each partition's first replica.

A partition is a candidate when it has a state znode and is led by someone other than its
preferred replica (the first replica; `leader_balance` calls this "led by another"). It is
elected when all of these hold, else it is skipped with the first failing reason:

* the topic is not being deleted, the partition is not being reassigned, it is online;
* its preferred replica is live (registered) and in the ISR: the controller refuses anything
  else (`PREFERRED_LEADER_NOT_AVAILABLE`), so planning it would only produce an error;
* no election is already requested for it in `/admin/preferred_replica_election`;
* the caps allow it: at most `max_elections` per run, and at most `max_per_broker` partitions
  moving their leadership *to* any one broker (a burst of leadership on one broker is what
  hurts its clients and request handlers).

Order (what the caps cut off last): the most imbalanced broker first, by the ZooKeeper
controller's ratio (partitions whose preferred leader it is but which another broker leads, over
partitions whose preferred leader it is), recomputed after every election so that the caps are
shared out across brokers rather than spent on the worst one alone; ties go to the broker with
more such partitions, then the lower id; within a broker, partitions in (topic, partition) order.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.model.leadership import PREFERRED_DOWN, PREFERRED_NOT_IN_ISR
from kafka_ops.planning.plan import Election, Plan, Skip, build_plan
from kafka_ops.planning.requests import check_cap, scope
from kafka_ops.planning.view import (
    CAP_BROKER,
    CAP_RUN,
    ELECTION_REQUESTED,
    ClusterView,
)

DEFAULT_MAX_ELECTIONS = 1000
DEFAULT_MAX_PER_BROKER = 100


def plan_preferred_election(
    snapshot: ClusterSnapshot,
    *,
    topics: Sequence[str] | None = None,
    max_elections: int = DEFAULT_MAX_ELECTIONS,
    max_per_broker: int = DEFAULT_MAX_PER_BROKER,
) -> Plan:
    """Plan preferred-leader elections over `topics` (every topic when None)."""
    view = ClusterView(snapshot)
    check_cap("max_elections", max_elections)
    check_cap("max_per_broker", max_per_broker)
    partitions = scope(view, topics)
    skipped: list[Skip] = []
    fixable: dict[int, list[TopicPartition]] = {}
    requested = set(snapshot.preferred_election_requests)
    for tp in partitions:
        replicas = view.assignment[tp]
        if not replicas or (tp in snapshot.partition_states and view.leader(tp) == replicas[0]):
            continue
        reason = _blocking_reason(view, tp, requested)
        if reason is not None:
            skipped.append(Skip(tp[0], tp[1], reason))
        else:
            fixable.setdefault(replicas[0], []).append(tp)

    elections = _choose(view, fixable, max_elections, max_per_broker, skipped)
    preferred, led_by_other = _imbalance(view)
    after = Counter(led_by_other)
    after.subtract(e.preferred for e in elections)
    figures = {
        "non_preferred_before": sum(led_by_other.values()),
        "non_preferred_after": sum(after.values()),
        "fixable": sum(len(v) for v in fixable.values()),
        "max_imbalance_before": _max_ratio(preferred, led_by_other),
        "max_imbalance_after": _max_ratio(preferred, after),
    }
    request = {"topics": None if topics is None else sorted(topics), "max_elections": max_elections,
               "max_per_broker": max_per_broker}  # fmt: skip
    return build_plan("preferred_election", view, request, {}, elections=elections, skipped=skipped, figures=figures)


def _blocking_reason(view: ClusterView, tp: TopicPartition, requested: set[TopicPartition]) -> str | None:
    reason = view.blocking_reason(tp)
    if reason is not None:
        return reason
    preferred = view.assignment[tp][0]
    if preferred not in view.live:
        return PREFERRED_DOWN
    if preferred not in view.isr(tp):
        return PREFERRED_NOT_IN_ISR
    if tp in requested:
        return ELECTION_REQUESTED
    return None


def _imbalance(view: ClusterView) -> tuple[Counter[int], Counter[int]]:
    """Per preferred leader: partitions (with state) it is preferred for, and those led by another."""
    preferred: Counter[int] = Counter()
    led_by_other: Counter[int] = Counter()
    for tp, replicas in view.assignment.items():
        if not replicas or tp not in view.snapshot.partition_states:
            continue
        preferred[replicas[0]] += 1
        if view.leader(tp) != replicas[0]:
            led_by_other[replicas[0]] += 1
    return preferred, led_by_other


def _max_ratio(preferred: Counter[int], led_by_other: Counter[int]) -> float:
    return max((led_by_other[b] / n for b, n in preferred.items() if n), default=0.0)


def _choose(
    view: ClusterView,
    fixable: dict[int, list[TopicPartition]],
    max_elections: int,
    max_per_broker: int,
    skipped: list[Skip],
) -> list[Election]:
    """Greedy: always the broker whose remaining imbalance ratio is highest (see module doc)."""
    preferred, led_by_other = _imbalance(view)
    heap = [(-Fraction(led_by_other[b], preferred[b]), -led_by_other[b], b) for b in fixable]
    heapq.heapify(heap)
    chosen: list[Election] = []
    taken: Counter[int] = Counter()
    while heap:
        _, _, broker = heapq.heappop(heap)
        queue = fixable[broker]
        index = taken[broker]
        if len(chosen) >= max_elections or taken[broker] >= max_per_broker:
            reason = CAP_RUN if len(chosen) >= max_elections else CAP_BROKER
            skipped.extend(Skip(t, p, reason) for t, p in queue[index:])
            continue
        tp = queue[index]
        chosen.append(Election(tp[0], tp[1], view.leader(tp), broker))
        taken[broker] += 1
        led_by_other[broker] -= 1
        if taken[broker] < len(queue):
            heapq.heappush(heap, (-Fraction(led_by_other[broker], preferred[broker]), -led_by_other[broker], broker))
    return chosen
