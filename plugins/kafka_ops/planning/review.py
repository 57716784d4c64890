"""The plan's review text: what a dry run shows the operator before they execute a plan.

`render_plan` lists what moves, the per-broker counts before and after, the load goals and, for a
saved plan, its files and the next step; `lower_bound` and `next_step` are its parts a run summary
also carries. How the executor will pace the plan (batches, election requests, throttle) is the
executor's to say: the caller passes it as a `Pacing` (`kafka_ops.remediation.pacing.pacing_of`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_ops.planning.plan import Plan
from kafka_ops.planning.request import RemediationRequest
from kafka_ops.planning.view import CORDON_FIRST, CORDONED, KAFKA_CORDONED, UNCORDON_FIRST

MAX_LISTED = 20
_LOWER_BOUNDS = ("lower_bound_moves", "lower_bound_changes")


@dataclass(frozen=True)
class Pacing:
    """How the executor will run a plan, as the review shows it."""

    batches: int
    """Reassignment (or log dir move) batches."""
    election_requests: int
    throttle: str
    """The throttle the batches run under, in words (a rate, its time budget, or "none")."""


def lower_bound(plan_: Plan) -> int | float | None:
    for key in _LOWER_BOUNDS:
        if key in plan_.figures:
            return plan_.figures[key]
    return None


def next_step(plan_: Plan, request: RemediationRequest) -> str:
    if plan_.is_empty:
        return "nothing to do: the cluster already is as this action would leave it"
    dag = request.form or "the DAG"
    return (
        f"review the plan, then trigger {dag} again with the same Params, dry_run = false and plan_id = {plan_.plan_id}"
    )


def render_plan(
    plan_: Plan,
    request: RemediationRequest,
    pacing: Pacing,
    *,
    files: Mapping[str, str] | None = None,
    partitions: bool = True,
    validated: bool = True,
) -> str:
    """The dry run's summary: what moves, per-broker counts before and after, the lower bound and,
    given `files`, where the plan files are and what to do next; `pacing` is how the executor will
    run it (`kafka_ops.remediation.pacing.pacing_of`). `partitions` False leaves out the
    per-partition lists; `validated` says whether the base snapshot passed integrity validation."""
    batches = pacing.batches
    throttle = pacing.throttle
    bound = lower_bound(plan_)
    trust = "passed integrity validation" if validated else "NOT validated (a DAG run validates it first)"
    lines = [
        f"plan {plan_.plan_id}: {plan_.kind} on cluster {plan_.cluster}",
        f"  base snapshot    {plan_.snapshot_id} (captured {plan_.captured_at}), {trust}",
        f"  request          {json.dumps(dict(plan_.request), sort_keys=True, default=str)}",
        f"  reassignments    {len(plan_.reassignments)} partition(s), {plan_.moves} replica move(s)"
        + (f" (lower bound {bound})" if bound is not None else "")
        + (f", {batches} batch(es) of at most {request.batch_size} partitions, throttle {throttle}" if batches else ""),
        f"  elections        {len(plan_.elections)}"
        + (f", {pacing.election_requests} request(s) of at most {request.batch_size}" if plan_.elections else ""),
        *_dir_move_lines(plan_, request, batches, throttle),
        *_cordon_lines(plan_),
        *_registration_lines(plan_),
        f"  skipped          {len(plan_.skipped)}",
        "  figures          " + (", ".join(f"{k}={v}" for k, v in plan_.figures.items()) or "none"),
    ]
    if partitions:
        lines += _listed("moves", [f"{m.topic}-{m.partition}: {list(m.current)} -> {list(m.target)}"
                                   for m in plan_.reassignments])  # fmt: skip
        lines += _listed("elections", [f"{e.topic}-{e.partition}: leader {e.leader} -> {e.preferred}"
                                       for e in plan_.elections])  # fmt: skip
        lines += _listed("log dir moves", [f"{d.topic}-{d.partition} @ {d.broker}: {d.source_dir} -> {d.target_dir} "
                                           f"({d.size_bytes:,} B)" for d in plan_.dir_moves])  # fmt: skip
        lines += _listed("skipped", [f"{s.topic}{'' if s.partition is None else f'-{s.partition}'}: {s.reason}"
                                     for s in plan_.skipped])  # fmt: skip
    cordoned = {*plan_.request.get(CORDONED, ()), *plan_.request.get(KAFKA_CORDONED, ())}
    rows = []
    for b in plan_.brokers:
        state = ("" if b.registered else ", NOT registered") + (", cordoned" if b.broker_id in cordoned else "")
        where = f"broker {b.broker_id} ({b.rack or 'no rack'}{state})"
        rows.append((where, f"{b.replicas_before} -> {b.replicas_after}", f"{b.leaders_before} -> {b.leaders_after}",
                     f"{b.preferred_before} -> {b.preferred_after}"))  # fmt: skip
    width = max([28, *(len(r[0]) + 2 for r in rows)])  # a long label never runs into its numbers
    lines.append(f"  {'per broker (before -> after)':<{width + 2}}{'replicas':<16}{'leaders':<16}preferred")
    lines += [
        f"    {where:<{width}}{replicas:<16}{leaders:<16}{preferred}" for where, replicas, leaders, preferred in rows
    ]
    lines += _load_lines(plan_)
    if files is not None:
        lines.append("  files (rollback.json puts every reassigned partition back as it was)")
        lines += [f"    {name:<18} {path}" for name, path in files.items()]
        lines.append(f"  next             {next_step(plan_, request)}")
    return "\n".join(lines)


def _dir_move_lines(plan_: Plan, request: RemediationRequest, batches: int, throttle: str) -> list[str]:
    if not plan_.dir_moves:
        return []
    moved = sum(d.size_bytes for d in plan_.dir_moves)
    return [f"  log dir moves    {len(plan_.dir_moves)} replica(s), {moved:,} bytes, {batches} batch(es) of at most "
            f"{request.batch_size}, throttle {throttle} (replica.alter.log.dirs.io.max.bytes.per.second)"]  # fmt: skip


def _cordon_lines(plan_: Plan) -> list[str]:
    """Kafka's own cordon the execution sets first (a decommission) or lifts first (its rollback)."""
    first, lifted = plan_.request.get(CORDON_FIRST), plan_.request.get(UNCORDON_FIRST)
    lines = []
    if first:
        lines.append(f"  cordon first     brokers {list(first)}: cordoned.log.dirs=* before the first move, so nothing "
                     "new lands there; checked empty at the end and left cordoned; a cancel lifts it")  # fmt: skip
    if lifted:
        lines.append(f"  uncordon first   brokers {list(lifted)}: the cordon plan {plan_.request.get('plan_id')} set "
                     "is lifted before anything moves back")  # fmt: skip
    return lines


def _registration_lines(plan_: Plan) -> list[str]:
    """An `unregister_broker` step's one write (`planning.unregister`)."""
    if plan_.kind != "unregister_broker":
        return []
    return [
        f"  unregister       broker {b}: fenced and holding no replica in the base snapshot (checked again on a fresh "
        "read before the write); UnregisterBroker removes its registration"
        for b in plan_.request["brokers"]
    ]


def _load_lines(plan_: Plan) -> list[str]:
    """A load-aware plan's per-broker disk and inbound bytes, and its goals; nothing for count-based plans."""
    if not plan_.goals:
        return []
    lines = ["  per broker disk (before -> after)"] if not plan_.dir_moves else []
    for b in plan_.brokers if not plan_.dir_moves else ():
        share = (f" ({b.disk_share_before:.1%} -> {b.disk_share_after:.1%} of {b.disk_capacity_bytes:,})"
                 if b.disk_share_before is not None and b.disk_share_after is not None else "")  # fmt: skip
        rate = f", in {b.bytes_in_before or 0:,.0f} -> {b.bytes_in_after or 0:,.0f} B/s" if b.bytes_in_before else ""
        lines.append(f"    broker {b.broker_id:<8} {b.disk_bytes_before or 0:,} -> {b.disk_bytes_after or 0:,} bytes"
                     f"{share}{rate}")  # fmt: skip
    lines.append("  goals")
    for g in plan_.goals:
        on = f" broker {g.broker}" if g.broker is not None else ""
        spread = f" {g.before:.4g} -> {g.after:.4g}" if g.before is not None and g.after is not None else ""
        lines.append(f"    {'hard' if g.hard else 'soft'} {g.goal}: {g.status}{on}{spread}"
                     + (f" ({g.detail})" if g.detail and g.status != "improved" else ""))  # fmt: skip
    return lines


def _listed(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    more = [f"    ... and {len(items) - MAX_LISTED} more (see the plan files)"] if len(items) > MAX_LISTED else []
    return [f"  {title}", *(f"    {item}" for item in items[:MAX_LISTED]), *more]
