"""The cancel DAG (`kafka_remediation_cancel`): its form, and its two tasks' bodies.

A plan being executed by `kafka_partition_reassignment` or `kafka_preferred_leader_election` is
stopped from this separate DAG: those run one at a time, so a cancel queued behind the running
execution would start only after it ended. Params: the cluster, the plan id, `dry_run` (on by
default) and how long to wait for the moves to stop.

* `preview(params)`: dry run. Reads the stored progress and ZooKeeper (never writes): which of the
  plan's moves are in flight now, which batches are done (they stay applied), the throttles the
  execution set, and whether a cancel would be refused.
* `cancel(params, actor=..., run_id=...)`: `kafka_ops.remediation.cancel`. Writes disabled for the
  cluster, or a plan already completed, is refused (audited); otherwise the plan's in-flight moves
  are cancelled through the Admin API (ZooKeeper-mode Kafka cannot cancel through ZooKeeper: the
  `zookeeper` back end refuses when there is something to cancel), the plan is marked cancelled
  (a running execution stops before its next write; the plan is never resumed), and its throttles
  are removed.
* `clear_throttles(params, actor=..., run_id=...)` (action `clear_throttles`):
  `kafka_ops.remediation.clear_throttles`. Removes the throttles a finished (or cancelled) plan had
  to keep because another reassignment was in flight when it ended, once nothing of the plan is
  in flight; throttles another move in flight still goes through stay. Its dry run is `preview`
  (what would be removed and kept). Gated by `writes_enabled` and audited like every write.

No heavy imports at module level beyond Airflow's `Param`: the DAG file imports `params()` at parse
time; the task bodies import the executor when they run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.sdk import Param
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from kafka_ops.errors import KafkaOpsError
from kafka_ops.kafka_types import shown
from kafka_ops.lake.names import DEFAULT_LAKE_FORMAT
from kafka_ops.planning.request import ParamError, cluster_param, plan_id_param, reject_unknown
from kafka_ops.settings import ClusterConfig, Settings, load_settings

if TYPE_CHECKING:
    from kafka_ops.planning.plan import Plan

log = logging.getLogger(__name__)

DAG_ID = "kafka_remediation_cancel"
PREVIEW_TASK = "preview"
CANCEL_TASK = "cancel"
CLEAR_TASK = "clear_throttles"
ACTIONS = ("cancel", "clear_throttles")
DEFAULT_WAIT_S = 120
MAX_WAIT_S = 3600
FIELDS = frozenset({"cluster", "plan_id", "action", "dry_run", "wait_seconds"})


def params() -> dict[str, Param]:
    """The DAG's form."""
    return {
        "cluster": Param(
            "default", type="string", minLength=1, title="Cluster",
            description="A cluster name from the kafka-ops settings ($KAFKA_OPS_CONFIG).",
        ),
        "plan_id": Param(
            type="string", pattern="^[0-9a-f]{16}$", title="Plan id",
            description="The plan to cancel: the plan_id its dry run printed (16 hex digits).",
        ),
        "action": Param(
            "cancel", type="string", enum=list(ACTIONS), title="Action",
            description="cancel: stop the plan (moves in flight, a running execution, its throttles). "
            "clear_throttles: remove the throttles a finished or cancelled plan left because another "
            "reassignment was in flight when it ended.",
        ),
        "dry_run": Param(
            True, type="boolean", title="Dry run",
            description="On: show what the action would do; nothing is written. Off: do it.",
        ),
        "wait_seconds": Param(
            DEFAULT_WAIT_S, type="integer", minimum=0, maximum=MAX_WAIT_S, title="Wait (seconds)",
            description="How long to wait for the cancelled moves to stop before the throttles are removed.",
        ),
    }  # fmt: skip


@dataclass(frozen=True)
class CancelRequest:
    cluster: ClusterConfig
    lake_root: str
    plan_id: str
    dry_run: bool
    wait_seconds: int
    action: str = "cancel"
    lake_format: str = DEFAULT_LAKE_FORMAT


def parse_request(values: Mapping[str, Any], settings: Settings) -> CancelRequest:
    """Validate a run's Params; `ParamError` names the first invalid one. The plan must be stored
    for this cluster."""
    reject_unknown(values, FIELDS)
    cluster = cluster_param(values.get("cluster", "default"), settings)
    plan_id = plan_id_param(values.get("plan_id"))
    dry_run = values.get("dry_run", True)
    if not isinstance(dry_run, bool):
        raise ParamError("dry_run", f"must be true or false, got {shown(dry_run)}")
    wait = values.get("wait_seconds", DEFAULT_WAIT_S)
    if isinstance(wait, bool) or not isinstance(wait, int) or not 0 <= wait <= MAX_WAIT_S:
        raise ParamError("wait_seconds", f"must be a whole number of seconds from 0 to {MAX_WAIT_S}, got {shown(wait)}")
    action = values.get("action", "cancel")
    if action not in ACTIONS:
        raise ParamError("action", f"must be one of {list(ACTIONS)}, got {action!r}")
    request = CancelRequest(cluster, settings.lake_root, plan_id, dry_run, wait, action, settings.lake_format)
    _plan(request)
    return request


def _plan(request: CancelRequest) -> Plan:
    from kafka_ops.lake.open import open_lake  # noqa: PLC0415 - pyarrow: run time only
    from kafka_ops.remediation import load_plan  # noqa: PLC0415

    try:
        return load_plan(open_lake(request.lake_root, request.lake_format), request.cluster.name, request.plan_id)
    except KafkaOpsError as e:
        raise ParamError(
            "plan_id", f"no stored plan {request.plan_id} for cluster {request.cluster.name!r} ({e})"
        ) from None


def preview(request: CancelRequest) -> dict[str, Any]:
    """What the action would do now; writes nothing. Logged, and returned for XCom."""
    if request.action == "clear_throttles":
        summary = clear_throttles(request, actor="preview", run_id=None)
        log.info("%s", render_clear(summary))
        return summary
    from kafka_ops.airflow.remediation_tasks import live_reader  # noqa: PLC0415
    from kafka_ops.lake.open import open_lake  # noqa: PLC0415
    from kafka_ops.remediation import plan_dir, read_progress  # noqa: PLC0415
    from kafka_ops.remediation.cancellation import cancel_refusal  # noqa: PLC0415
    from kafka_ops.remediation.live import in_flight, moving_as_planned  # noqa: PLC0415

    lake = open_lake(request.lake_root, request.lake_format)
    plan = _plan(request)
    progress = read_progress(lake, plan.cluster, plan.plan_id)
    ours: list[tuple[str, int]] = []
    if plan.reassignments:
        reader = live_reader(request.cluster)
        ours = moving_as_planned(plan.reassignments, in_flight(reader.topics({m.topic for m in plan.reassignments})))
    status = "not started" if progress is None else progress.status
    done = [] if progress is None else [s.index for s in progress.batches if s.state == "done"]
    refused = cancel_refusal(plan.plan_id, progress, request.cluster)
    if refused is not None:
        refusal: str | None = refused.problem
    elif ours and request.cluster.remediation_backend == "zookeeper":
        refusal = "ZooKeeper-mode Kafka cannot cancel a reassignment through ZooKeeper: use the admin_api back end"
    else:
        refusal = None
    summary = {
        "plan_id": plan.plan_id,
        "kind": plan.kind,
        "cluster": plan.cluster,
        "status": status,
        "in_flight": [f"{t}-{p}" for t, p in ours],
        "batches_done": done,
        "batches": 0 if progress is None else len(progress.batches),
        "throttled_brokers": [] if progress is None else progress.throttled_brokers,
        "throttled_topics": [] if progress is None else progress.throttled_topics,
        "rollback": f"{plan_dir(lake, plan.cluster, plan.plan_id)}/rollback.json",
        "would_refuse": refusal,
    }
    log.info("%s", render_preview(summary))
    return summary


def render_preview(summary: Mapping[str, Any]) -> str:
    moving = summary["in_flight"]
    lines = [
        f"cancel preview: plan {summary['plan_id']} ({summary['kind']}) on cluster {summary['cluster']}",
        f"  status           {summary['status']}",
        f"  in flight now    {len(moving)} partition(s)" + (f": {', '.join(moving[:20])}" if moving else ""),
        f"  batches done     {summary['batches_done']} of {summary['batches']} (they stay applied; "
        f"{summary['rollback']} puts them back)",
        f"  throttles set    brokers {summary['throttled_brokers']}, topics {summary['throttled_topics']}",
    ]
    if summary["would_refuse"]:
        lines.append(f"  a cancel would be REFUSED: {summary['would_refuse']}")
    else:
        lines.append(
            "  next             trigger again with dry_run = false to cancel: the moves in flight stop, an "
            "execution of the plan stops before its next write, the throttles are removed"
        )
    return "\n".join(lines)


def cancel(request: CancelRequest, *, actor: str, run_id: str | None) -> dict[str, Any]:
    """Cancel the plan (see the module docstring); returns the cancel report's summary."""
    from kafka_ops.airflow.remediation_tasks import cluster_writer  # noqa: PLC0415
    from kafka_ops.lake.open import open_lake  # noqa: PLC0415
    from kafka_ops.remediation import AuditLog, read_progress  # noqa: PLC0415
    from kafka_ops.remediation import cancel as cancel_plan  # noqa: PLC0415
    from kafka_ops.remediation.cancellation import cancel_refusal  # noqa: PLC0415

    config = request.cluster
    lake = open_lake(request.lake_root, request.lake_format)
    # the executor's own check, before any connection is resolved: a read-only cluster may have no Kafka one
    refusal = cancel_refusal(request.plan_id, read_progress(lake, config.name, request.plan_id), config)
    if refusal is not None:
        AuditLog(lake, _plan(request), config.remediation_backend, actor, run_id).record(
            "refuse", "refused", detail=str(refusal)
        )
        raise refusal
    reader, backend = cluster_writer(config)
    try:
        report = cancel_plan(
            request.plan_id,
            lake=lake,
            cluster_config=config,
            backend=backend,
            reader=reader,
            actor=actor,
            run_id=run_id,
            wait_s=request.wait_seconds,
        )
    finally:
        backend.close()
    summary = report.summary()
    log.info("plan %s cancelled: %s", request.plan_id, json.dumps(summary, sort_keys=True))
    return summary


def clear_throttles(request: CancelRequest, *, actor: str, run_id: str | None) -> dict[str, Any]:
    """Remove (or, dry run, say which) throttles the plan left; the report's summary."""
    from kafka_ops.airflow.remediation_tasks import cluster_writer  # noqa: PLC0415
    from kafka_ops.lake.open import open_lake  # noqa: PLC0415
    from kafka_ops.remediation import clear_throttles as clear_plan_throttles  # noqa: PLC0415

    config = request.cluster
    reader, backend = cluster_writer(config)
    try:
        report = clear_plan_throttles(
            request.plan_id,
            lake=open_lake(request.lake_root, request.lake_format),
            cluster_config=config,
            backend=backend,
            reader=reader,
            actor=actor,
            run_id=run_id,
            dry_run=request.dry_run,
        )
    finally:
        backend.close()
    summary = report.summary()
    log.info("plan %s throttles: %s", request.plan_id, json.dumps(summary, sort_keys=True))
    return summary


def render_clear(summary: Mapping[str, Any]) -> str:
    return "\n".join(
        [
            f"clear_throttles preview: plan {summary['plan_id']} on cluster {summary['cluster']} ({summary['status']})",
            f"  would remove     broker rates on {summary['brokers_cleared']}, "
            f"replica lists of {summary['topics_cleared']}",
            f"  would keep       {summary['kept'] or 'nothing'}",
            "  next             trigger again with dry_run = false to remove them",
        ]
    )


# -- the tasks: Airflow's exceptions around the work above -----------------------------------------


def next_task(values: Mapping[str, Any], settings: Settings | None = None) -> str:
    """`validate_params`: fails the run at once on an invalid Param; else `preview` or `cancel`."""
    request = _request(values, settings)
    if request.dry_run:
        return PREVIEW_TASK
    return CLEAR_TASK if request.action == "clear_throttles" else CANCEL_TASK


def preview_task(values: Mapping[str, Any], settings: Settings | None = None) -> dict[str, Any]:
    request = _request(values, settings)
    if not request.dry_run:
        raise AirflowSkipException("not a dry run")
    try:
        return preview(request)
    except KafkaOpsError as e:
        raise AirflowFailException(f"{type(e).__name__}: {e}") from e


def cancel_task(
    values: Mapping[str, Any], *, actor: str, run_id: str | None, settings: Settings | None = None
) -> dict[str, Any]:
    request = _request(values, settings)
    if request.dry_run or request.action != "cancel":
        raise AirflowSkipException("dry run, or not the cancel action: nothing is cancelled")
    try:
        return cancel(request, actor=actor, run_id=run_id)
    except KafkaOpsError as e:  # never retried: a refusal stays a refusal; run the DAG again to retry
        raise AirflowFailException(f"{type(e).__name__}: {e}") from e


def clear_task(
    values: Mapping[str, Any], *, actor: str, run_id: str | None, settings: Settings | None = None
) -> dict[str, Any]:
    request = _request(values, settings)
    if request.dry_run or request.action != "clear_throttles":
        raise AirflowSkipException("dry run, or not the clear_throttles action: nothing is removed")
    try:
        return clear_throttles(request, actor=actor, run_id=run_id)
    except KafkaOpsError as e:  # never retried, like every write
        raise AirflowFailException(f"{type(e).__name__}: {e}") from e


def _request(values: Mapping[str, Any], settings: Settings | None) -> CancelRequest:
    try:
        return parse_request(dict(values), settings or load_settings())
    except KafkaOpsError as e:
        raise AirflowFailException(str(e)) from e
