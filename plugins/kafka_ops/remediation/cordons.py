"""Kafka's own cordon around a decommission (KIP-1066, metadata.version 4.3-IV0 and later).

A decommission planned on such a cluster lists the brokers it drains under `view.CORDON_FIRST`. Its
execution cordons them (`cordoned.log.dirs=*`, a per-broker dynamic config) before its first move,
so that no partition created or reassigned by anyone else lands on them while they drain, and, once
every batch is done, verifies that none of them holds a replica any more. They stay cordoned: the
broker is on its way out. A cancel uncordons what the execution cordoned; a rollback's request
lists its source plan's cordons under `view.UNCORDON_FIRST`, lifted before it moves anything back.

Each broker is recorded in the progress document before its cordon is written, as throttles are,
so a crash never leaves a cordon nobody knows about; a cordon the operator had set before the plan
is not the plan's (the planner leaves such brokers out), and is never lifted here.
"""

from __future__ import annotations

from collections.abc import Collection

from kafka_ops.errors import KafkaOpsError, RemediationFailed
from kafka_ops.model.cluster import ClusterSnapshot, tp_text
from kafka_ops.planning.view import CORDON_FIRST, UNCORDON_FIRST
from kafka_ops.remediation.batch_runner import PlanRun
from kafka_ops.remediation.run_context import RunContext

CORDON_KEY = "cordoned.log.dirs"
"""The broker config that cordons log dirs; "*" cordons every log dir of the broker."""
ALL_DIRS = "*"


def cordon_first(run: PlanRun, ctx: RunContext) -> list[int]:
    """Cordon the brokers the plan's request lists, before its first move; the brokers cordoned."""
    brokers = sorted(int(b) for b in ctx.plan.request.get(CORDON_FIRST) or ())
    if not brokers:
        return []
    with run.writing():
        run.progress.cordoned_brokers = sorted(set(run.progress.cordoned_brokers) | set(brokers))
        run.save()
        detail = f"{CORDON_KEY}={ALL_DIRS} on brokers {brokers}: nothing new lands there while they drain"
        try:
            ctx.backend.set_configs({}, {b: {CORDON_KEY: ALL_DIRS} for b in brokers})
        except KafkaOpsError as e:
            run.audit.record("cordon", "failed", detail=f"{e}; {detail}")
            raise
        run.audit.record("cordon", "ok", detail=detail)
    return brokers


def uncordon_first(run: PlanRun, ctx: RunContext) -> list[int]:
    """A rollback's first write: lift the cordons its source plan set (`UNCORDON_FIRST`)."""
    brokers = sorted(int(b) for b in ctx.plan.request.get(UNCORDON_FIRST) or ())
    if brokers:
        with run.writing():
            lift(run, ctx, brokers, f"rolling back plan {ctx.plan.request.get('plan_id')}")
    return brokers


def uncordon_recorded(run: PlanRun, ctx: RunContext) -> list[int]:
    """Lift every cordon `run`'s progress records (a cancel); call under `run.writing()`."""
    brokers = sorted(run.progress.cordoned_brokers)
    if brokers:
        lift(run, ctx, brokers, "the plan is cancelled")
    return brokers


def lift(run: PlanRun, ctx: RunContext, brokers: Collection[int], why: str) -> None:
    """Delete `cordoned.log.dirs` on `brokers`, then forget them in the progress document."""
    detail = f"{CORDON_KEY} removed on brokers {sorted(brokers)}: {why}"
    try:
        ctx.backend.delete_configs({}, {b: (CORDON_KEY,) for b in brokers})
    except KafkaOpsError as e:
        run.audit.record("uncordon", "failed", detail=f"{e}; {detail}")
        raise
    run.progress.cordoned_brokers = sorted(set(run.progress.cordoned_brokers) - set(brokers))
    run.save()
    run.audit.record("uncordon", "ok", detail=detail)


def check_drained(run: PlanRun, brokers: Collection[int], live: ClusterSnapshot) -> None:
    """After the last batch: none of the cordoned `brokers` holds a replica (`RemediationFailed` naming
    what is left, else an audit row)."""
    if not brokers:
        return
    holding = {b: tps for b in sorted(brokers) if (tps := live.held_by(b))}
    if holding:
        shown = "; ".join(f"broker {b}: {tp_text(tps, 5)}" for b, tps in holding.items())
        run.audit.record("verify_drained", "failed", detail=shown)
        raise RemediationFailed(f"plan {run.plan.plan_id}: cordoned brokers still hold replicas: {shown}")
    run.audit.record("verify_drained", "ok", detail=f"brokers {sorted(brokers)} are cordoned and hold no replica; "
                     "once stopped for good, remove each one's registration: kafka-ops broker unregister")  # fmt: skip
