"""Plans, execution progress and the audit trail, in the lake.

* Plans: one row per plan in `remediation_plans` (its own commit log, batch `<plan_id>`), plus
  Kafka's own files next to it, `<lake>/_plans/<cluster>/<plan_id>/reassignment.json`,
  `rollback.json` and `election.json`, so an operator can run `kafka-reassign-partitions` /
  `kafka-leader-election` by hand. Saving is idempotent: a plan id is a content hash, so a plan
  saved twice is the same plan and is stored once.
* Progress: `<lake>/_executions/<cluster>/<plan_id>.json` (see `progress`), replaced atomically
  (write a temporary file, then rename) through the lake's pyarrow filesystem, so a crash leaves
  the previous or the new document, never half of one. A run that must not write once another
  changed the stored status (an execution, once the plan is cancelled) holds `progress_lock`
  around its read-check-write: an exclusive `fcntl` lock on `<plan_id>.json.lock` next to the
  document, so the check and the write form one compare-and-set against a cancel taking the
  same lock. On local disk it is a POSIX lock; on a lake on S3 the lock is the object
  `<plan_id>.json.lock`, created with `If-None-Match: *` (one taker wins, the others wait and
  retry), deleted with `If-Match` on its ETag, and taken over the same way when its holder died
  (`lake.object_store.held`). On HDFS there is no lock, and the check stays a check before each
  write.
* Audit: `remediation_audit` (its own commit log), one row per event, appended and never
  rewritten. `AuditLog` binds the plan, back end and actor so each call names only what happened.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from kafka_ops.errors import LakeError, PlanFormatError, ProgressFormatError
from kafka_ops.kafka_types import parse_json, shown
from kafka_ops.lake.object_store import exclusive
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.plan_files import (
    ELECTION_FILE,
    REASSIGNMENT_FILE,
    ROLLBACK_FILE,
    plan_dir,
    progress_path,
)
from kafka_ops.lake.schema import REMEDIATION_AUDIT_TABLE, REMEDIATION_PLANS_TABLE, TABLES
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.planning.plan import BrokerLoad, Goal, Plan, dir_move_row
from kafka_ops.planning.plan_json import plan_from_json
from kafka_ops.planning.request import RemediationRequest
from kafka_ops.remediation.progress import Progress

log = logging.getLogger(__name__)

PROGRESS_LOCK_TIMEOUT_S = 300.0
"""How long a run waits for another to release a plan's progress lock (it is held across one write to
the cluster: an Admin API call or a znode write, seconds at most)."""


# -- plans ------------------------------------------------------------------------------------------


def plan_to_json(plan: Plan) -> dict[str, Any]:
    """Every field of a plan, JSON-ready; `plan_from_json` reads it back to an equal `Plan`."""
    return {
        "kind": plan.kind,
        "plan_id": plan.plan_id,
        "cluster": plan.cluster,
        "snapshot_id": plan.snapshot_id,
        "captured_at": plan.captured_at,
        "request": dict(plan.request),
        "reassignments": [
            {"topic": m.topic, "partition": m.partition, "current": list(m.current), "target": list(m.target),
             "size_bytes": m.size_bytes}
            for m in plan.reassignments
        ],
        "elections": [
            {"topic": e.topic, "partition": e.partition, "leader": e.leader, "preferred": e.preferred}
            for e in plan.elections
        ],
        "skipped": [{"topic": s.topic, "partition": s.partition, "reason": s.reason} for s in plan.skipped],
        "brokers": [{name: getattr(b, name) for name in BrokerLoad.__slots__} for b in plan.brokers],
        "figures": dict(plan.figures),
        "goals": [{name: getattr(g, name) for name in Goal.__slots__} for g in plan.goals],
        **({"dir_moves": [dir_move_row(d) for d in plan.dir_moves]} if plan.dir_moves else {}),
    }  # fmt: skip


def plan_from_row(row: Mapping[str, Any], document: str) -> Plan:
    """The plan a `remediation_plans` row holds (its `plan` column, checked against the row's `plan_id`
    and `kind`); `PlanFormatError` naming `document` and the field."""
    text = row.get("plan")
    if not isinstance(text, str | bytes):
        raise PlanFormatError(document, "plan", f"expected the plan's JSON text, got {shown(text)}")
    plan = plan_from_json(parse_json(text, document, PlanFormatError), document)
    for column in ("plan_id", "kind"):
        if row.get(column) != getattr(plan, column):
            raise PlanFormatError(
                document, column, f"the row says {shown(row.get(column))}, its plan {shown(getattr(plan, column))}"
            )
    return plan


@dataclass(frozen=True)
class SavedPlan:
    """Where a plan was saved: its lake row was published (False: it was already there) and its files."""

    plan_id: str
    published: bool
    files: dict[str, str]


def save_plan(lake: Lake, plan: Plan, *, created_by: str, created_at: datetime | None = None) -> SavedPlan:
    """Write the plan's Kafka files, then its `remediation_plans` row unless it is already stored."""
    created_at = created_at or datetime.now(UTC)
    folder = plan_dir(lake, plan.cluster, plan.plan_id)
    lake.fs.create_dir(folder, recursive=True)
    contents = {
        REASSIGNMENT_FILE: plan.to_reassignment_json(),
        ROLLBACK_FILE: plan.rollback_json(),
        ELECTION_FILE: plan.election_json(),
    }
    files = {}
    for name, content in contents.items():
        files[name] = f"{folder}/{name}"
        write_atomically(lake.fs, files[name], (json.dumps(content, indent=1) + "\n").encode())
    if _plan_row(lake, plan.cluster, plan.plan_id) is not None:
        return SavedPlan(plan.plan_id, False, files)
    row = {
        "snapshot_id": plan.snapshot_id,
        "captured_at": datetime.fromisoformat(plan.captured_at),
        "plan_id": plan.plan_id,
        "kind": plan.kind,
        "created_at": created_at,
        "created_by": created_by,
        "partitions": len(plan.reassignments),
        "moves": plan.moves,
        "elections": len(plan.elections),
        "request": json.dumps(dict(plan.request), sort_keys=True, default=str),
        "document": json.dumps(plan.to_document(), sort_keys=True, default=str),
        "plan": json.dumps(plan_to_json(plan), sort_keys=True, default=str),
        "reassignment": json.dumps(contents["reassignment.json"]),
        "rollback": json.dumps(contents["rollback.json"]),
        "election": json.dumps(contents["election.json"]),
    }
    table = pa.Table.from_pylist([row], schema=TABLES[REMEDIATION_PLANS_TABLE])
    lake.publish(
        Batch(plan.plan_id, plan.cluster, created_at, {REMEDIATION_PLANS_TABLE: table}, REMEDIATION_PLANS_TABLE)
    )
    return SavedPlan(plan.plan_id, True, files)


def load_plan(lake: Lake, cluster: str, plan_id: str) -> Plan:
    """The stored plan; `LakeError` naming the cluster and plan id when there is none."""
    row = _plan_row(lake, cluster, plan_id)
    if row is None:
        raise LakeError(f"no plan {plan_id!r} for cluster {cluster!r} in {REMEDIATION_PLANS_TABLE} under {lake.root}")
    plan = plan_from_row(
        row, f"stored plan {plan_id!r} of cluster {cluster!r} ({REMEDIATION_PLANS_TABLE} under {lake.root})"
    )
    if plan.plan_id != plan_id or plan.cluster != cluster:
        raise LakeError(
            f"stored plan {plan_id!r} of cluster {cluster!r} holds plan {plan.plan_id!r} of {plan.cluster!r}"
        )
    return plan


def stored_plan(request: RemediationRequest, plan_id: str) -> Plan:
    """The plan `plan_id` of the request's cluster, in the request's lake (`planning.request.StoredPlan`)."""
    return load_plan(open_lake(request.lake_root, request.lake_format), request.cluster.name, plan_id)


def _plan_row(lake: Lake, cluster: str, plan_id: str) -> dict[str, Any] | None:
    rows = lake.commit_log(REMEDIATION_PLANS_TABLE, cluster)
    for row in rows.filter(pc.equal(rows.column("plan_id"), plan_id)).to_pylist():
        return row
    return None


# -- progress ---------------------------------------------------------------------------------------


def read_progress(lake: Lake, cluster: str, plan_id: str) -> Progress | None:
    """The plan's progress document, None when there is none; `ProgressFormatError` naming the file
    and the field when it is not one the executor wrote for this plan."""
    path = progress_path(lake, cluster, plan_id)
    if lake.fs.get_file_info(path).type != pafs.FileType.File:
        return None
    with lake.fs.open_input_stream(path) as f:
        raw = f.read()
    progress = Progress.from_json(parse_json(raw, path, ProgressFormatError), path)
    if (progress.cluster, progress.plan_id) != (cluster, plan_id):
        raise ProgressFormatError(
            path,
            "plan_id",
            f"holds plan {progress.plan_id!r} of cluster {progress.cluster!r}, not {plan_id!r} of {cluster!r}",
        )
    return progress


def write_progress(lake: Lake, progress: Progress) -> None:
    """Replace the progress document atomically, stamping `updated_at`."""
    progress.updated_at = datetime.now(UTC).isoformat()
    path = progress_path(lake, progress.cluster, progress.plan_id)
    lake.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    write_atomically(lake.fs, path, json.dumps(progress.to_json(), indent=1).encode())


@contextmanager
def progress_lock(lake: Lake, cluster: str, plan_id: str, timeout_s: float = PROGRESS_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the plan's progress lock (module docstring): no other holder reads-checks-writes the
    progress document meanwhile. `LakeError` naming the lock file after `timeout_s`. On a lake on S3 the
    lock is an object taken with conditional writes (`lake.object_store.held`); on another filesystem
    that is not local disk (HDFS) it holds nothing."""
    path = progress_path(lake, cluster, plan_id) + ".lock"
    stuck = "is an execution stuck in a write to the cluster?"
    with exclusive(lake.fs, lake.root, path, f"plan {plan_id} of cluster {cluster}", timeout_s, hint=stuck):
        yield


def write_atomically(fs: pafs.FileSystem, path: str, content: bytes) -> None:
    """Temporary file, then rename: readers see the old or the new content, never a mix."""
    tmp = f"{path}.{secrets.token_hex(4)}.tmp"
    with fs.open_output_stream(tmp) as f:
        f.write(content)
    fs.move(tmp, path)


# -- audit ------------------------------------------------------------------------------------------


class AuditLog:
    """Appends `remediation_audit` rows for one plan, back end and actor."""

    def __init__(self, lake: Lake, plan: Plan, backend: str, actor: str, run_id: str | None = None) -> None:
        self.lake = lake
        self.plan = plan
        self.backend = backend
        self.actor = actor
        self.run_id = run_id

    def record(
        self,
        action: str,
        outcome: str,
        *,
        batch: int | None = None,
        partitions: int | None = None,
        detail: str = "",
        at: datetime | None = None,
    ) -> None:
        """Append one row; `at`: when it happened (default now), for a step known before its plan was."""
        at = at or datetime.now(UTC)
        event_id = f"{self.plan.plan_id}-{at:%Y%m%dT%H%M%S%f}-{secrets.token_hex(3)}"
        row = {
            "snapshot_id": self.plan.snapshot_id,
            "captured_at": datetime.fromisoformat(self.plan.captured_at),
            "event_id": event_id,
            "at": at,
            "plan_id": self.plan.plan_id,
            "kind": self.plan.kind,
            "batch": batch,
            "action": action,
            "backend": self.backend,
            "actor": self.actor,
            "run_id": self.run_id,
            "outcome": outcome,
            "partitions": partitions,
            "detail": detail,
        }
        log.info("audit %s plan %s batch %s: %s %s %s", self.plan.cluster, self.plan.plan_id, batch, action, outcome,
                 detail)  # fmt: skip
        table = pa.Table.from_pylist([row], schema=TABLES[REMEDIATION_AUDIT_TABLE])
        self.lake.publish(
            Batch(event_id, self.plan.cluster, at, {REMEDIATION_AUDIT_TABLE: table}, REMEDIATION_AUDIT_TABLE)
        )


def read_audit(lake: Lake, cluster: str, plan_id: str | None = None) -> list[dict[str, Any]]:
    """Audit rows of `cluster` (optionally one plan), oldest first."""
    rows = lake.commit_log(REMEDIATION_AUDIT_TABLE, cluster)
    if plan_id is not None:
        rows = rows.filter(pc.equal(rows.column("plan_id"), plan_id))
    return sorted(rows.to_pylist(), key=lambda r: (r["at"], r["event_id"]))
