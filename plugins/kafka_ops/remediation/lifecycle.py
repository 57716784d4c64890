"""Where each remediation is in its life, and who moved it there when, read from what the lake already
holds: its plan (`remediation_plans`), its audit (`remediation_audit`) and its progress document.

    detected → planned → awaiting_approval → approved | rejected → executing → done | failed | stuck | cancelled

* `detected`: an automatic remediation's trigger (the analysis DAG's election: an audit `detect` row with
  why); a plan an operator asked for starts at `planned` (the operator detected it);
* `planned`: the plan's row (`created_at`, `created_by`);
* `awaiting_approval`, `approved`, `rejected`: the audit's `approve` rows (`requested`; `approved`;
  `rejected`, `timed_out` or `refused`, which the step's detail says);
* `executing`: the first write (or resume) of each execution run: a run that resumes a stuck or failed
  plan is a new `executing` step;
* the end: the progress document's status once it is not `running` (`done`, `failed`, `stuck`,
  `cancelled`), at its last update, by the last actor the audit names; a refusal before any write (the
  audit's `refuse` row) is `failed`, its detail the refusal.

One lifecycle per plan, derived and never stored twice: the plan, audit and progress are the record, and
`lifecycles` reads them as they are (a table of steps for a notebook: `steps_table`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from kafka_ops.lake.schema import REMEDIATION_PLANS_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.remediation.progress import Progress
from kafka_ops.remediation.store import read_audit, read_progress

STATES = (
    "detected", "planned", "awaiting_approval", "approved", "rejected", "executing",
    "done", "failed", "stuck", "cancelled",
)  # fmt: skip
ENDED = frozenset({"rejected", "done", "failed", "cancelled"})
"""States a remediation does not leave by itself (`stuck` resumes when run again)."""
WRITES = frozenset({"cordon", "set_throttle", "reassign", "elect", "alter_log_dirs", "unregister", "resume"})
"""Audit actions that mean an execution run is under way."""
APPROVAL = {"requested": "awaiting_approval", "approved": "approved"}


@dataclass(frozen=True)
class Step:
    state: str
    at: datetime
    by: str | None
    detail: str = ""


@dataclass(frozen=True)
class Lifecycle:
    """One plan's steps, oldest first; its state is the last one's."""

    cluster: str
    plan_id: str
    kind: str
    steps: tuple[Step, ...]

    @property
    def state(self) -> str:
        return self.steps[-1].state

    @property
    def since(self) -> datetime:
        return self.steps[-1].at


def lifecycle(
    cluster: str, plan: Mapping[str, Any], audit: Sequence[Mapping[str, Any]], progress: Progress | None
) -> Lifecycle:
    """The lifecycle of `plan` (its `remediation_plans` row) from its audit rows (oldest first) and its
    progress document (module docstring)."""
    steps = [Step("planned", _utc(plan["created_at"]), plan.get("created_by"))]
    running = False
    for row in audit:
        at, by, action, outcome = _utc(row["at"]), row.get("actor"), row["action"], row["outcome"]
        detail = row.get("detail") or ""
        if action == "detect":
            steps.insert(0, Step("detected", at, by, detail))
        elif action == "approve":
            steps.append(
                Step(APPROVAL.get(outcome, "rejected"), at, by, outcome if outcome not in APPROVAL else detail)
            )
        elif ended := _ended(action, outcome):
            steps.append(Step(ended, at, by, f"refused: {detail}" if action == "refuse" else detail))
            running = False
        elif action in WRITES and not running:
            running = True
            steps.append(Step("executing", at, by, row.get("run_id") or ""))
    if progress is not None and progress.status != "running" and steps[-1].state != progress.status:
        last_by = next((r.get("actor") for r in reversed(audit)), None)
        at = _utc(progress.updated_at) if progress.updated_at else steps[-1].at
        steps.append(Step(progress.status, max(at, steps[-1].at), last_by, progress.message or ""))
    elif progress is not None and progress.status == "running" and steps[-1].state != "executing":
        steps.append(Step("executing", _utc(progress.updated_at) if progress.updated_at else steps[-1].at, None))
    return Lifecycle(cluster, str(plan["plan_id"]), str(plan["kind"]), tuple(steps))


def _ended(action: str, outcome: str) -> str | None:
    """The state an audit row ends an execution run in, if it does."""
    if action == "refuse":
        return "failed"
    if action in ("stop", "cancel") and outcome in ("cancelled", "ok"):
        return "cancelled"
    if action == "wait" and outcome == "stuck":
        return "stuck"
    if outcome == "failed" and (action in WRITES or action == "verify"):
        return "failed"
    return None


def lifecycles(lake: Lake, cluster: str) -> list[Lifecycle]:
    """Every plan of `cluster`, newest first."""
    plans = lake.commit_log(REMEDIATION_PLANS_TABLE, cluster).select(["plan_id", "kind", "created_at", "created_by"])
    audit: dict[str, list[dict[str, Any]]] = {}
    for row in read_audit(lake, cluster):
        audit.setdefault(row["plan_id"], []).append(row)
    out = [
        lifecycle(cluster, row, audit.get(row["plan_id"], []), read_progress(lake, cluster, row["plan_id"]))
        for row in plans.to_pylist()
    ]
    return sorted(out, key=lambda c: (c.steps[0].at, c.plan_id), reverse=True)


def counts(found: Iterable[Lifecycle]) -> dict[str, int]:
    """Plans per current state (every state named, 0 when none)."""
    out = dict.fromkeys(STATES, 0)
    for c in found:
        out[c.state] += 1
    return out


def oldest_awaiting(found: Iterable[Lifecycle], now: datetime) -> float | None:
    """Seconds the oldest plan awaiting approval has waited; None when none waits."""
    waiting = [now - c.since for c in found if c.state == "awaiting_approval"]
    return max(waiting).total_seconds() if waiting else None


def steps_table(found: Iterable[Lifecycle]) -> pa.Table:
    """Every step of every lifecycle as rows (cluster, plan_id, kind, step, state, at, by, detail)."""
    rows = [
        {"cluster": c.cluster, "plan_id": c.plan_id, "kind": c.kind, "step": i, "state": s.state, "at": s.at,
         "by": s.by, "detail": s.detail}
        for c in found
        for i, s in enumerate(c.steps)
    ]  # fmt: skip
    return pa.Table.from_pylist(rows, schema=STEPS_SCHEMA)


STEPS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("plan_id", pa.string(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("step", pa.int32(), nullable=False),
        pa.field("state", pa.string(), nullable=False),
        pa.field("at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("by", pa.string()),
        pa.field("detail", pa.string()),
    ]
)


def _utc(value: datetime | str) -> datetime:
    at = datetime.fromisoformat(value) if isinstance(value, str) else value
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
