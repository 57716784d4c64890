"""The remediation executor: the only part of kafka-ops that writes to a Kafka cluster.

A plan (`kafka_ops.planning`) is applied by `execute` (`reassignment`, then `elections`), after
every safety check in `preflight` passed, in batches (`batching`), with replication throttles,
through one of two back ends (`backends`: the Admin API, or ZooKeeper znodes), waiting on and
verifying each batch against fresh ZooKeeper reads (`live`). Progress survives crashes (`progress`,
stored by `store`) so a later run resumes without applying a batch twice; every write is audited in
the lake (`store`).
`cancel` stops a plan (`cancellation`); `clear_throttles` removes the throttles a finished plan had
to leave (`throttle_removal`, `throttles`). Every run on a plan shares one `run_context.RunContext`
and the progress lock and cancel mark of `batch_runner.PlanRun`.

Wiring, e.g. in a task::

    backend = backend_for(cluster_config, zookeeper=zk_hook.target(), admin_factory=kafka_hook.target())
    try:
        report = execute(plan, lake=lake, cluster_config=cluster_config, backend=backend,
                         zookeeper=zk_hook.target(), actor=user, run_id=run_id,
                         trusted=kafka_ops.validation.integrity.require_trusted,
                         options=ExecutionOptions(...))
    finally:
        backend.close()
"""

from __future__ import annotations

from kafka_ops.remediation.backends import AdminApiBackend, Backend, ZooKeeperBackend, backend_for
from kafka_ops.remediation.batch_runner import ExecutionOptions, ExecutionReport
from kafka_ops.remediation.batching import chunk_elections, split_moves
from kafka_ops.remediation.cancellation import CancelReport, cancel
from kafka_ops.remediation.live import LiveReader
from kafka_ops.remediation.preflight import TrustCheck
from kafka_ops.remediation.progress import Progress, Step, decide
from kafka_ops.remediation.reassignment import execute
from kafka_ops.remediation.store import (
    AuditLog,
    SavedPlan,
    load_plan,
    plan_dir,
    progress_path,
    read_audit,
    read_progress,
    save_plan,
    stored_plan,
)
from kafka_ops.remediation.throttle_removal import ThrottleReport, clear_throttles

__all__ = [
    "AdminApiBackend",
    "AuditLog",
    "Backend",
    "CancelReport",
    "ExecutionOptions",
    "ExecutionReport",
    "LiveReader",
    "Progress",
    "SavedPlan",
    "Step",
    "ThrottleReport",
    "TrustCheck",
    "ZooKeeperBackend",
    "backend_for",
    "cancel",
    "chunk_elections",
    "clear_throttles",
    "decide",
    "execute",
    "load_plan",
    "plan_dir",
    "progress_path",
    "read_audit",
    "read_progress",
    "save_plan",
    "split_moves",
    "stored_plan",
]
