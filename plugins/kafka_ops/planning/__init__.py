"""Remediation planners: pure functions from a `ClusterSnapshot` and a request to a `Plan`.

Plan, then apply: nothing here talks to a cluster. Each planner refuses a bad request with a
`PlanError` naming the field, skips (and reports) partitions it must not touch, and returns a
`Plan` that carries its base snapshot id, the exact current assignment of what it touches (the
rollback) and Kafka-format files. One planner per module; `registry.PLANNERS` maps each action of a
remediation request (`request`) to its planner, and `registry.plan_for` runs it. The planners' one
input from the lake, the byte rates the latest analysis measured, is read by `partition_rates`.
"""

from __future__ import annotations

from kafka_ops.planning.decommission import plan_decommission
from kafka_ops.planning.leader_reorder import plan_leader_reorder
from kafka_ops.planning.log_dir_balance import plan_log_dir_balance
from kafka_ops.planning.plan import BrokerLoad, Election, Move, Plan, PlanKind, Skip
from kafka_ops.planning.preferred_election import plan_preferred_election
from kafka_ops.planning.registry import PLANNERS, plan_for
from kafka_ops.planning.replica_balance import plan_replica_balance
from kafka_ops.planning.replication_factor import plan_replication_factor

__all__ = [
    "PLANNERS",
    "BrokerLoad",
    "Election",
    "Move",
    "Plan",
    "PlanKind",
    "Skip",
    "plan_decommission",
    "plan_for",
    "plan_leader_reorder",
    "plan_log_dir_balance",
    "plan_preferred_election",
    "plan_replica_balance",
    "plan_replication_factor",
]
