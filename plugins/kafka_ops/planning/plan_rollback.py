"""Roll back, or finish, a plan a cancel (or a failure) left half applied, as a new plan.

A plan cancelled mid-way leaves some partitions at their planned replicas and the rest at the
plan's base: a topic with two replication factors, say. Both ways out are plans like any other
(reviewed by a dry run, executed by plan id, batched, throttled, audited):

* `plan_rollback(snapshot, plan)` (kind `rollback`): every partition of `plan` not at its base
  moves back to it (what the plan's `rollback.json` does, but only for what moved, and from the
  live assignment);
* `plan_rollback(snapshot, plan, finish=True)` (kind `finish`): every partition still at its base
  moves to the plan's target.

Only partitions at the plan's base or target are moved; one that is elsewhere (changed since by
someone else), being reassigned, missing, or in a topic being deleted is skipped with the reason.
The request records the source plan id (`{"plan_id": ...}`). A rollback of a plan that cordoned
its brokers first (`view.CORDON_FIRST`) uncordons them before it moves anything back
(`view.UNCORDON_FIRST`); a finish keeps them cordoned.
"""

from __future__ import annotations

from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition
from kafka_ops.planning.plan import Plan, PlanKind, Skip, build_plan
from kafka_ops.planning.view import CORDON_FIRST, UNCORDON_FIRST, ClusterView


def plan_rollback(snapshot: ClusterSnapshot, plan: Plan, *, finish: bool = False) -> Plan:
    """The moves that put `plan`'s partitions back to its base (or, `finish`, on to its target)."""
    view = ClusterView(snapshot)
    targets: dict[TopicPartition, tuple[int, ...]] = {}
    skipped: list[Skip] = []
    for move in plan.reassignments:
        tp = (move.topic, move.partition)
        wanted, other = (move.target, move.current) if finish else (move.current, move.target)
        now = view.assignment.get(tp)
        if move.topic in view.deleting:
            skipped.append(Skip(move.topic, move.partition, "its topic is being deleted"))
        elif now is None:
            skipped.append(Skip(move.topic, move.partition, "the partition no longer exists"))
        elif tp in view.reassigning:
            skipped.append(Skip(move.topic, move.partition, "being reassigned: wait for it, or cancel it"))
        elif now == other:
            targets[tp] = wanted
        elif now != wanted:
            skipped.append(
                Skip(
                    move.topic,
                    move.partition,
                    f"now {list(now)}, neither the plan's base {list(move.current)} nor its target "
                    f"{list(move.target)}: changed since by someone else",
                )
            )
    kind: PlanKind = "finish" if finish else "rollback"
    request: dict[str, object] = {"plan_id": plan.plan_id}
    if not finish and plan.request.get(CORDON_FIRST):
        request[UNCORDON_FIRST] = list(plan.request[CORDON_FIRST])
    return build_plan(kind, view, request, targets, skipped=skipped)
