"""The planners by action: how each plans from a request (`planning.request`) and a snapshot.

`PLANNERS` maps each action of the remediation forms to a function of the request and the
`PlanInputs` (the snapshot, the topics the request covers, the snapshot's load, the plan a rollback
or finish starts from); `plan_for` picks the entry, runs it and names the Param to change when the
planner refuses. Adding a planner is its module (a pure function from a snapshot to a `Plan`) and
one entry here (plus its action in `planning.request`'s forms, which the operator picks from).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning.decommission import plan_decommission
from kafka_ops.planning.leader_reorder import plan_leader_reorder
from kafka_ops.planning.load import HARD_GOALS, ClusterLoad, PartitionRateMap, cluster_load
from kafka_ops.planning.log_dir_balance import plan_log_dir_balance
from kafka_ops.planning.plan import Plan
from kafka_ops.planning.plan_rollback import plan_rollback
from kafka_ops.planning.preferred_election import plan_preferred_election
from kafka_ops.planning.replica_balance import plan_replica_balance
from kafka_ops.planning.replication_factor import plan_replication_factor
from kafka_ops.planning.request import Action, ParamError, RemediationRequest
from kafka_ops.planning.unregister import plan_unregister
from kafka_ops.planning.view import CORDONED

INTERNAL_TOPIC_PREFIX = "__"
_PLANNER_FIELDS = {"exclude_brokers": "brokers"}
"""A planner's field name → the Param that sets it, where they differ."""


@dataclass(frozen=True)
class PlanInputs:
    """What a planner plans on, besides the request."""

    snapshot: ClusterSnapshot
    topics: list[str] | None
    """The topics the request names or its pattern matches; None: every topic."""
    load: ClusterLoad
    """The snapshot's load (replica sizes, capacities, the latest analysis' byte rates)."""
    source: Plan | None = None
    """rollback / finish: the cancelled or failed plan to roll back or finish."""


Planner = Callable[[RemediationRequest, PlanInputs], Plan]


def _preferred_election(request: RemediationRequest, given: PlanInputs) -> Plan:
    return plan_preferred_election(given.snapshot, topics=given.topics)


def _leader_reorder(request: RemediationRequest, given: PlanInputs) -> Plan:
    return plan_leader_reorder(given.snapshot, topics=given.topics)


def _replication_factor(request: RemediationRequest, given: PlanInputs) -> Plan:
    if given.topics is None or request.replication_factor is None:  # parse_request guarantees both
        raise ParamError("topics", "name the topics whose replication factor to change")
    return plan_replication_factor(given.snapshot, given.topics, request.replication_factor,
                                   cordoned_brokers=request.cluster.cordoned_brokers, load=given.load)  # fmt: skip


def _decommission(request: RemediationRequest, given: PlanInputs) -> Plan:
    return plan_decommission(given.snapshot, request.brokers, cordoned_brokers=request.cluster.cordoned_brokers,
                             load=given.load)  # fmt: skip


def _replica_balance(request: RemediationRequest, given: PlanInputs) -> Plan:
    return plan_replica_balance(given.snapshot, exclude_brokers=request.brokers,
                                cordoned_brokers=request.cluster.cordoned_brokers, load=given.load)  # fmt: skip


def _log_dir_balance(request: RemediationRequest, given: PlanInputs) -> Plan:
    share = request.cluster.capacity.max_disk_share
    return plan_log_dir_balance(given.snapshot, brokers=request.brokers, max_disk_share=share)


def _rollback(request: RemediationRequest, given: PlanInputs) -> Plan:
    if given.source is None:  # parse_request guarantees a stored source plan on a dry run
        raise ParamError(
            "source_plan_id", f"required for action {request.action}: the plan_id of the plan to {request.action}"
        )
    return plan_rollback(given.snapshot, given.source, finish=request.action == "finish")


def _unregister(request: RemediationRequest, given: PlanInputs) -> Plan:
    (broker,) = request.brokers  # parse_request guarantees exactly one on a dry run
    return plan_unregister(given.snapshot, broker)


PLANNERS: dict[Action, Planner] = {
    "preferred_election": _preferred_election,
    "leader_reorder": _leader_reorder,
    "replication_factor": _replication_factor,
    "decommission": _decommission,
    "replica_balance": _replica_balance,
    "log_dir_balance": _log_dir_balance,
    "rollback": _rollback,
    "finish": _rollback,
    "unregister_broker": _unregister,
}


def plan_for(
    request: RemediationRequest,
    snapshot: ClusterSnapshot,
    rates: PartitionRateMap | None = None,
    source: Plan | None = None,
) -> Plan:
    """The planner of `request.action` on `snapshot`; a refusal names the Param to change, or the
    cluster's `cordoned_brokers` (a setting, and Kafka's own cordons: no Param can change them) or
    the hard goal of the load-aware planners that the cluster's capacities make unreachable. The
    data-moving planners take the snapshot's load (replica sizes, capacities): with sizes they plan
    by bytes, without they plan by counts; `rates` (the latest analysis' byte rates) feed the inbound
    and leader bytes-in goals. `source` is the stored plan a rollback or finish starts from."""
    pattern_used = request.topic_pattern is not None
    load = cluster_load(snapshot, request.cluster.capacity, rates)
    try:
        given = PlanInputs(snapshot, topic_scope(request, snapshot), load, source)
        return PLANNERS[request.action](request, given)
    except PlanError as e:
        if e.field == CORDONED or e.field in HARD_GOALS:
            raise PlanError(CORDONED, f"{e.problem} (cluster {request.cluster.name!r})") from e
        param = _PLANNER_FIELDS.get(e.field, e.field)
        if param == "topics" and pattern_used:
            param = "topic_pattern"
        raise ParamError(param, e.problem) from e


def topic_scope(request: RemediationRequest, snapshot: ClusterSnapshot) -> list[str] | None:
    """The topics a request names, or those its pattern fully matches (never internal `__` topics);
    None when it names none (every topic)."""
    if request.topics:
        return list(request.topics)
    if request.topic_pattern is None:
        return None
    regex = re.compile(request.topic_pattern)
    matched = sorted(t for t in snapshot.topics if regex.fullmatch(t) and not t.startswith(INTERNAL_TOPIC_PREFIX))
    if not matched:
        shown = ", ".join(sorted(snapshot.topics)[:10]) or "none"
        raise ParamError(
            "topic_pattern",
            f"{request.topic_pattern!r} matches no topic in snapshot {snapshot.snapshot_id} (topics: {shown})",
        )
    return matched
