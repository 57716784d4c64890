"""Task bodies of the remediation DAGs (`kafka_preferred_leader_election`, `kafka_partition_reassignment`).

Each DAG is `validate_params` → `plan` (dry run) or `execute` (a reviewed plan):

* `validate_params(params, form)`: `planning.request.parse_request`; an invalid Param fails the
  run at once (`AirflowFailException`: a retry cannot fix a Param); returns the task to run next.
* `plan(params, form, actor=...)`: a FRESH snapshot of the cluster (ZooKeeper, or KRaft's Admin API) into the lake,
  its integrity validation (an untrusted snapshot is never planned on), the action's planner
  (`planning.registry`), the plan saved in the lake with Kafka's files beside it, and its review
  (`planning.review`) in the task log. Writes nothing to the
  cluster.
* `execute(params, form, actor=..., run_id=...)`: loads the reviewed plan by id (never re-plans),
  refuses at once when writes are disabled for the cluster (recorded in the audit table, before any
  connection is opened), then `kafka_ops.remediation.execute`, whose preflight checks that the base
  snapshot was trusted and that the live cluster still matches the plan's base.

The functions take the run's Params as a plain mapping and raise Airflow's exceptions, so they run
in a task or in a test alike; `make_plan` and `execute_plan` are the same work without Airflow's
exceptions (for callers outside a DAG, such as the auto-remediation task).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from kafka_ops.airflow.kafka_hook import KafkaAdminHook
from kafka_ops.airflow.metadata_source import Source, snapshot_to_lake
from kafka_ops.airflow.metadata_source import resolve as resolve_source
from kafka_ops.airflow.zookeeper_hook import NOT_RETRYABLE, ZooKeeperHook
from kafka_ops.errors import KafkaOpsError, PlanError, RemediationRefused, SnapshotUntrusted
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.planning.partition_rates import latest_partition_rates
from kafka_ops.planning.plan import Plan
from kafka_ops.planning.registry import plan_for
from kafka_ops.planning.request import AUTOMATIC_ACTOR, ParamError, RemediationRequest, RequestForm, parse_request
from kafka_ops.planning.review import lower_bound, next_step, render_plan
from kafka_ops.remediation import (
    AdminApiBackend,
    AuditLog,
    Backend,
    backend_for,
    load_plan,
    read_progress,
    save_plan,
    stored_plan,
)
from kafka_ops.remediation import execute as execute_remediation
from kafka_ops.remediation.live import KRaftLiveReader, LiveReader, LiveSource
from kafka_ops.remediation.log_dir_moves import execute_dir_moves
from kafka_ops.remediation.pacing import batch_count, execution_options, pacing_of
from kafka_ops.remediation.preflight import check_offline_config
from kafka_ops.remediation.unregister import unregister_broker
from kafka_ops.settings import ClusterConfig, Settings, load_settings
from kafka_ops.validation.integrity import require_trusted, validate_snapshot

log = logging.getLogger(__name__)

PLAN_TASK = "plan"
EXECUTE_TASK = "execute"
RATES_MAX_AGE_WINDOWS = 2
"""A plan uses the byte rates of an analysis at most this many load windows older than its snapshot."""
PLAN_NOT_RETRYABLE: tuple[type[KafkaOpsError], ...] = (ParamError, PlanError, SnapshotUntrusted, *NOT_RETRYABLE)
"""Why a dry run fails that a retry cannot fix: a Param, the plan request, an untrusted snapshot, a
wrong connection, chroot or credential. A ZooKeeper that does not answer is retried."""


# -- the tasks ----------------------------------------------------------------------------------------


def validate_params(params: Mapping[str, Any], form: RequestForm, settings: Settings | None = None) -> str:
    """The DAG's first task: the id of the task to run next (`plan` or `execute`)."""
    request = request_of(params, form, settings)
    log.info("remediation request: %s", json.dumps(request.summary(), sort_keys=True))
    return PLAN_TASK if request.dry_run else EXECUTE_TASK


def plan(
    params: Mapping[str, Any],
    form: RequestForm,
    *,
    actor: str,
    run_id: str | None = None,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """Dry run: plan from a fresh, validated snapshot and save the plan (created by `actor (run_id)`);
    returns its summary."""
    request = request_of(params, form, settings)
    if not request.dry_run:
        raise AirflowSkipException("not a dry run: a reviewed plan is executed as it is, never re-planned")
    try:
        return make_plan(request, actor=actor if run_id is None else f"{actor} ({run_id})")
    except PLAN_NOT_RETRYABLE as e:
        raise AirflowFailException(str(e)) from e  # a retry cannot fix these


def execute(
    params: Mapping[str, Any], form: RequestForm, *, actor: str, run_id: str | None, settings: Settings | None = None
) -> dict[str, Any]:
    """Execute the reviewed plan `plan_id`; returns the executor's report. Skipped on a dry run."""
    request = request_of(params, form, settings)
    if request.dry_run or request.plan_id is None:
        raise AirflowSkipException("dry run: nothing is executed")
    try:
        return execute_plan(request, actor=actor, run_id=run_id)
    except KafkaOpsError as e:
        # never retried (the task has no retries): the executor resumes when the operator runs it again
        raise AirflowFailException(f"{type(e).__name__}: {e}") from e


def actor_of(context: Mapping[str, Any]) -> str:
    """Who triggered the run (the Airflow user), for the audit; else the DAG that ran it."""
    dag_run = context.get("dag_run")
    user = getattr(dag_run, "triggering_user_name", None)
    if isinstance(user, str) and user.strip():
        return user.strip()
    return f"airflow:{getattr(dag_run, 'dag_id', None) or 'unknown dag'}"


def request_of(params: Mapping[str, Any], form: RequestForm, settings: Settings | None) -> RemediationRequest:
    """The run's request; `AirflowFailException` naming the first invalid Param."""
    try:
        return parse_request(dict(params), settings or load_settings(), form, stored=stored_plan)
    except KafkaOpsError as e:
        raise AirflowFailException(str(e)) from e


# -- the work -----------------------------------------------------------------------------------------


def make_plan(request: RemediationRequest, *, actor: str) -> dict[str, Any]:
    """Snapshot the cluster into the lake, validate the snapshot, plan, save (`created_by` = `actor`),
    log the summary.

    Raises `SnapshotUntrusted` (no plan is made on a snapshot that failed validation), `ParamError`
    when the request cannot be planned on this snapshot, and the collector's errors."""
    name = request.cluster.name
    started = datetime.now(UTC)
    lake = open_lake(request.lake_root, request.lake_format)
    snapshot, _ = snapshot_to_lake(request.cluster, *_resolve(request.cluster), lake)  # the DAG's way: load too
    validation = validate_snapshot(lake, name, snapshot.snapshot_id)
    if not validation.trusted:
        raise SnapshotUntrusted(
            name, snapshot.snapshot_id, validation.failed, f"{validation.message()}; no plan was made"
        )
    window = timedelta(hours=request.cluster.thresholds.load_window_hours)
    rates = latest_partition_rates(lake, name, snapshot.captured_at, RATES_MAX_AGE_WINDOWS * window)
    source = None if request.source_plan_id is None else load_plan(lake, name, request.source_plan_id)
    new = plan_for(request, snapshot, rates, source)
    saved = save_plan(lake, new, created_by=actor)
    if request.detected:  # the automatic election asked for it: its lifecycle starts at the detection
        AuditLog(lake, new, request.cluster.remediation_backend, AUTOMATIC_ACTOR, None).record(
            "detect", "ok", detail=request.detected, at=started
        )
    log.info("%s", render_plan(new, request, pacing_of(new, request), files=saved.files))
    return {
        **new.summary(),
        "lower_bound": lower_bound(new),
        "batches": batch_count(new, request),
        "files": saved.files,
        "next": next_step(new, request),
    }


def execute_plan(request: RemediationRequest, *, actor: str, run_id: str | None) -> dict[str, Any]:
    """Execute stored plan `request.plan_id` (see the module docstring); returns the report summary.
    Raises `RemediationRefused` when a safety check refuses (nothing written to the cluster)."""
    if request.plan_id is None:
        raise ParamError("plan_id", "required to execute")
    config = request.cluster
    lake = open_lake(request.lake_root, request.lake_format)
    reviewed = load_plan(lake, config.name, request.plan_id)
    log.info("executing plan %s as reviewed: %s", reviewed.plan_id, json.dumps(reviewed.summary(), default=str))
    try:
        # before any connection is resolved or opened: a read-only cluster may have no Kafka connection at all
        check_offline_config(reviewed, config, read_progress(lake, config.name, reviewed.plan_id))
    except RemediationRefused as e:
        AuditLog(lake, reviewed, config.remediation_backend, actor, run_id).record("refuse", "refused", detail=str(e))
        raise
    if reviewed.kind == "log_dir_balance":
        return _execute_dir_moves(request, reviewed, lake, actor=actor, run_id=run_id)
    if reviewed.kind == "unregister_broker":
        done = unregister_broker(reviewed, lake=lake, cluster_config=config, actor=actor, run_id=run_id,
                                 target=KafkaAdminHook(config.kafka_conn_id).target())  # fmt: skip
        log.info("plan %s: %s", reviewed.plan_id, json.dumps(done, sort_keys=True))
        return done
    reader, backend = cluster_writer(config)
    try:
        report = execute_remediation(
            reviewed,
            lake=lake,
            cluster_config=config,
            backend=backend,
            reader=reader,
            actor=actor,
            trusted=require_trusted,
            options=execution_options(request, reviewed),
            run_id=run_id,
        )
    finally:
        backend.close()
    summary = report.summary()
    log.info("plan %s: %s", reviewed.plan_id, json.dumps(summary, sort_keys=True))
    return summary


def _execute_dir_moves(
    request: RemediationRequest, reviewed: Plan, lake: Lake, *, actor: str, run_id: str | None
) -> dict[str, Any]:
    """A log dir balance: AlterReplicaLogDirs through the cluster's Kafka connection, whatever its
    `remediation_backend` (ZooKeeper cannot move a replica between dirs)."""
    backend = AdminApiBackend(KafkaAdminHook(request.cluster.kafka_conn_id).target())
    try:
        report = execute_dir_moves(reviewed, lake=lake, cluster_config=request.cluster, backend=backend, actor=actor,
                                   trusted=require_trusted, options=execution_options(request, reviewed),
                                   run_id=run_id)  # fmt: skip
    finally:
        backend.close()
    summary = report.summary()
    log.info("plan %s: %s", reviewed.plan_id, json.dumps(summary, sort_keys=True))
    return summary


def live_reader(config: ClusterConfig) -> LiveSource:
    """Where the cluster's live state is read: ZooKeeper, or a KRaft cluster's Admin API, as its
    `metadata_source` resolves (the snapshot DAG's rule)."""
    source, _ = _resolve(config)
    if source == "KRaft":
        return KRaftLiveReader(config.name, KafkaAdminHook(config.kafka_conn_id).target())
    return LiveReader(config.name, ZooKeeperHook(config.zookeeper_conn_id).target())


def _resolve(config: ClusterConfig) -> tuple[Source, str]:
    return resolve_source(config.metadata_source, config.zookeeper_conn_id, config.kafka_conn_id)


def cluster_writer(config: ClusterConfig) -> tuple[LiveSource, Backend]:
    """The cluster's live reader and the back end that writes to it, from the cluster's connections;
    the caller closes the back end."""
    reader = live_reader(config)
    zookeeper = reader.target if isinstance(reader, LiveReader) else None
    admin = KafkaAdminHook(config.kafka_conn_id).target() if config.remediation_backend == "admin_api" else None
    return reader, backend_for(config, zookeeper=zookeeper, admin_factory=admin)
