"""Unregistering a decommissioned broker from a KRaft cluster, as its own reviewed step.

A broker that was decommissioned and then stopped stays registered: the controller fences it and keeps
its registration, which DescribeCluster lists among the fenced brokers (KIP-1073) and which a broker
started later with the same id takes back. Once the broker is gone for good, its registration is
removed with UnregisterBroker (what `kafka-cluster unregister --id N` sends). The plan is a step of its
own, reviewed like any plan, with nothing to move: kind `unregister_broker`, request `{"brokers": [N]}`.

Refused, naming `brokers`: a ZooKeeper cluster (a stopped broker's registration goes with its session),
a broker that is not registered, one that still serves (stop it first: a running broker registers
again), and one that still holds replicas (decommission it first: their data would be gone with it).
The executor (`remediation.unregister`) checks all of it again on a fresh read before it writes.
"""

from __future__ import annotations

from kafka_ops.errors import PlanError
from kafka_ops.model.cluster import ClusterSnapshot, tp_text
from kafka_ops.planning.plan import Plan, build_plan
from kafka_ops.planning.view import ClusterView


def unregister_problem(snapshot: ClusterSnapshot, broker: int) -> str | None:
    """Why `broker` cannot be unregistered from the cluster `snapshot` shows, or None."""
    if snapshot.source != "kraft":
        return f"cluster {snapshot.cluster} runs on ZooKeeper: a stopped broker's registration ends with its session"
    if broker in snapshot.brokers:
        return f"broker {broker} is serving (registered and not fenced): stop it first, or it registers again"
    if broker not in snapshot.fenced_brokers:
        return f"broker {broker} is not registered (fenced brokers: {sorted(snapshot.fenced_brokers)})"
    held = snapshot.held_by(broker)
    if held:
        return f"broker {broker} still holds replicas of {tp_text(held, 5)}: decommission it first"
    return None


def plan_unregister(snapshot: ClusterSnapshot, broker: int) -> Plan:
    """The step that unregisters fenced, empty `broker` (module docstring); `PlanError` naming `brokers`."""
    problem = unregister_problem(snapshot, broker)
    if problem is not None:
        raise PlanError("brokers", problem)
    return build_plan("unregister_broker", ClusterView(snapshot), {"brokers": [broker]}, {})
