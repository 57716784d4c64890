"""Task bodies of the remediation DAGs (`kafka_preferred_leader_election`, `kafka_partition_reassignment`).

Each DAG is `validate_params` → `plan` (dry run) or `execute` (a reviewed plan):

* `validate_params(params, form)`: `remediation_params.parse_request`; an invalid Param fails the
  run at once (`AirflowFailException`: a retry cannot fix a Param); returns the task to run next.
* `plan(params, form, actor=...)`: a FRESH snapshot of the cluster (ZooKeeper, or KRaft's Admin API) into the lake,
  its integrity validation (an untrusted snapshot is never planned on), the planner, the plan saved
  in the lake with Kafka's files beside it, and its summary in the task log. Writes nothing to the
  cluster.
* `execute(params, form, actor=..., run_id=...)`: loads the reviewed plan by id (never re-plans),
  refuses at once when writes are disabled for the cluster (recorded in the audit table, before any
  connection is opened), then `kafka_ops.remediation.execute`, whose preflight checks that the base
  snapshot was trusted and that the live cluster still matches the plan's base.

The functions take the run's Params as a plain mapping and raise Airflow's exceptions, so they run
in a task or in a test alike; `make_plan` and `execute_plan` are the same work without Airflow's
exceptions (for the demo and for callers outside a DAG).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from kafka_ops.airflow.kafka_hook import KafkaAdminHook
from kafka_ops.airflow.metadata_source import Source, snapshot_to_lake
from kafka_ops.airflow.metadata_source import resolve as resolve_source
from kafka_ops.airflow.remediation_params import MIN_THROTTLE, Form, ParamError, RemediationRequest, parse_request
from kafka_ops.airflow.zookeeper_hook import NOT_RETRYABLE, ZooKeeperHook
from kafka_ops.errors import KafkaOpsError, PlanError, RemediationRefused, SnapshotUntrusted
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import (
    Plan,
    plan_decommission,
    plan_leader_reorder,
    plan_preferred_election,
    plan_replica_balance,
    plan_replication_factor,
)
from kafka_ops.planning.load import HARD_GOALS, ClusterLoad, PartitionRateMap, cluster_load
from kafka_ops.planning.log_dir_balance import plan_log_dir_balance
from kafka_ops.planning.partition_rates import latest_partition_rates
from kafka_ops.planning.plan_rollback import plan_rollback
from kafka_ops.planning.view import CORDONED, KAFKA_CORDONED
from kafka_ops.remediation import (
    AdminApiBackend,
    AuditLog,
    Backend,
    ExecutionOptions,
    backend_for,
    chunk_elections,
    load_plan,
    read_progress,
    save_plan,
    split_moves,
)
from kafka_ops.remediation import execute as execute_remediation
from kafka_ops.remediation.live import KRaftLiveReader, LiveReader, LiveSource
from kafka_ops.remediation.log_dir_moves import execute_dir_moves, split_dir_moves
from kafka_ops.remediation.preflight import check_offline_config
from kafka_ops.remediation.throttle_budget import BudgetThrottle, throttle_for_budget
from kafka_ops.settings import ClusterConfig, Settings, load_settings
from kafka_ops.validation.integrity import require_trusted, validate_snapshot

log = logging.getLogger(__name__)

PLAN_TASK = "plan"
EXECUTE_TASK = "execute"
INTERNAL_TOPIC_PREFIX = "__"
MAX_LISTED = 20
RATES_MAX_AGE_WINDOWS = 2
"""A plan uses the byte rates of an analysis at most this many load windows older than its snapshot."""
_LOWER_BOUNDS = ("lower_bound_moves", "lower_bound_changes")
PLAN_NOT_RETRYABLE: tuple[type[KafkaOpsError], ...] = (ParamError, PlanError, SnapshotUntrusted, *NOT_RETRYABLE)
"""Why a dry run fails that a retry cannot fix: a Param, the plan request, an untrusted snapshot, a
wrong connection, chroot or credential. A ZooKeeper that does not answer is retried."""
_PLANNER_FIELDS = {"exclude_brokers": "brokers"}
"""A planner's field name → the Param that sets it, where they differ."""


# -- the tasks ----------------------------------------------------------------------------------------


def validate_params(params: Mapping[str, Any], form: Form, settings: Settings | None = None) -> str:
    """The DAG's first task: the id of the task to run next (`plan` or `execute`)."""
    request = _request(params, form, settings)
    log.info("remediation request: %s", json.dumps(request.summary(), sort_keys=True))
    return PLAN_TASK if request.dry_run else EXECUTE_TASK


def plan(
    params: Mapping[str, Any], form: Form, *, actor: str, run_id: str | None = None, settings: Settings | None = None
) -> dict[str, Any]:
    """Dry run: plan from a fresh, validated snapshot and save the plan (created by `actor (run_id)`);
    returns its summary."""
    request = _request(params, form, settings)
    if not request.dry_run:
        raise AirflowSkipException("not a dry run: a reviewed plan is executed as it is, never re-planned")
    try:
        return make_plan(request, actor=actor if run_id is None else f"{actor} ({run_id})")
    except PLAN_NOT_RETRYABLE as e:
        raise AirflowFailException(str(e)) from e  # a retry cannot fix these


def execute(
    params: Mapping[str, Any], form: Form, *, actor: str, run_id: str | None, settings: Settings | None = None
) -> dict[str, Any]:
    """Execute the reviewed plan `plan_id`; returns the executor's report. Skipped on a dry run."""
    request = _request(params, form, settings)
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


def _request(params: Mapping[str, Any], form: Form, settings: Settings | None) -> RemediationRequest:
    try:
        return parse_request(dict(params), settings or load_settings(), form)
    except KafkaOpsError as e:
        raise AirflowFailException(str(e)) from e


# -- the work -----------------------------------------------------------------------------------------


def make_plan(request: RemediationRequest, *, actor: str) -> dict[str, Any]:
    """Snapshot the cluster into the lake, validate the snapshot, plan, save (`created_by` = `actor`),
    log the summary.

    Raises `SnapshotUntrusted` (no plan is made on a snapshot that failed validation), `ParamError`
    when the request cannot be planned on this snapshot, and the collector's errors."""
    name = request.cluster.name
    lake = open_lake(request.lake_root, request.lake_format)
    snapshot, _ = snapshot_to_lake(request.cluster, *_resolve(request.cluster), lake)  # the DAG's way: load too
    validation = validate_snapshot(lake, name, snapshot.snapshot_id)
    if not validation.trusted:
        raise SnapshotUntrusted(
            name, snapshot.snapshot_id, validation.failed, f"{validation.message()}; no plan was made"
        )
    window = timedelta(hours=request.cluster.thresholds.load_window_hours)
    rates = latest_partition_rates(lake, name, snapshot.captured_at, RATES_MAX_AGE_WINDOWS * window)
    new = plan_for(request, snapshot, rates)
    saved = save_plan(lake, new, created_by=actor)
    log.info("%s", render_plan(new, request, files=saved.files))
    return {
        **new.summary(),
        "lower_bound": lower_bound(new),
        "batches": batch_count(new, request),
        "files": saved.files,
        "next": next_step(new, request),
    }


def plan_for(request: RemediationRequest, snapshot: ClusterSnapshot, rates: PartitionRateMap | None = None) -> Plan:
    """The planner of `request.action` on `snapshot`; a refusal names the Param to change, or the
    cluster's `cordoned_brokers` (a setting, and Kafka's own cordons: no Param can change them) or
    the hard goal of the load-aware planners that the cluster's capacities make unreachable. The
    data-moving planners take the snapshot's load (replica sizes, capacities): with sizes they plan
    by bytes, without they plan by counts; `rates` (the latest analysis' byte rates) feed the inbound
    and leader bytes-in goals."""
    pattern_used = request.topic_pattern is not None
    cordoned = request.cluster.cordoned_brokers
    load = cluster_load(snapshot, request.cluster.capacity, rates)
    try:
        topics = topic_scope(request, snapshot)
        if request.action == "preferred_election":
            return plan_preferred_election(snapshot, topics=topics)
        if request.action == "leader_reorder":
            return plan_leader_reorder(snapshot, topics=topics)
        if request.action == "replication_factor":
            if topics is None or request.replication_factor is None:  # parse_request guarantees both
                raise ParamError("topics", "name the topics whose replication factor to change")
            return plan_replication_factor(
                snapshot, topics, request.replication_factor, cordoned_brokers=cordoned, load=load
            )
        if request.action in ("rollback", "finish") and request.source_plan_id is not None:
            source = load_plan(
                open_lake(request.lake_root, request.lake_format), request.cluster.name, request.source_plan_id
            )
            return plan_rollback(snapshot, source, finish=request.action == "finish")
        return _broker_plan(request, snapshot, load)
    except PlanError as e:
        if e.field == CORDONED or e.field in HARD_GOALS:
            raise PlanError(CORDONED, f"{e.problem} (cluster {request.cluster.name!r})") from e
        param = _PLANNER_FIELDS.get(e.field, e.field)
        if param == "topics" and pattern_used:
            param = "topic_pattern"
        raise ParamError(param, e.problem) from e


def _broker_plan(request: RemediationRequest, snapshot: ClusterSnapshot, load: ClusterLoad) -> Plan:
    """The actions on brokers: decommission, log dir balance, replica balance."""
    cordoned = request.cluster.cordoned_brokers
    if request.action == "decommission":
        return plan_decommission(snapshot, request.brokers, cordoned_brokers=cordoned, load=load)
    if request.action == "log_dir_balance":
        share = request.cluster.capacity.max_disk_share
        return plan_log_dir_balance(snapshot, brokers=request.brokers, max_disk_share=share)
    return plan_replica_balance(snapshot, exclude_brokers=request.brokers, cordoned_brokers=cordoned, load=load)


def topic_scope(request: RemediationRequest, snapshot: ClusterSnapshot) -> list[str] | None:
    """The topics a request names, or those its pattern fully matches (never internal `__` topics);
    None when it names none (every topic)."""
    if request.topics:
        return list(request.topics)
    if request.topic_pattern is None:
        return None
    regex = re.compile(request.topic_pattern)
    matched = sorted(t for t in snapshot.topics if regex.fullmatch(t) and not t.startswith(INTERNAL_TOPIC_PREFIX))
    if not matched:
        shown = ", ".join(sorted(snapshot.topics)[:10]) or "none"
        raise ParamError(
            "topic_pattern",
            f"{request.topic_pattern!r} matches no topic in snapshot {snapshot.snapshot_id} (topics: {shown})",
        )
    return matched


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


def execution_options(request: RemediationRequest, plan_: Plan | None = None) -> ExecutionOptions:
    """The executor's pacing: the run's batch size and throttle (from `plan_`'s bytes and the time
    budget when the run gives one), the cluster's controller quiet period."""
    return ExecutionOptions(
        batch_max_partitions=request.batch_size,
        election_batch_size=request.batch_size,
        throttle_bytes_per_s=throttle_of(request, plan_),
        controller_quiet_s=request.cluster.remediation_controller_quiet_seconds,
    )


# -- the summary an operator reviews -----------------------------------------------------------------


def budget_throttle(request: RemediationRequest, plan_: Plan) -> BudgetThrottle | None:
    """The throttle from the run's time budget and the plan's bytes; None without a budget."""
    if request.time_budget_minutes is None:
        return None
    return throttle_for_budget(plan_, request.time_budget_minutes, request.cluster.capacity, minimum=MIN_THROTTLE)


def throttle_of(request: RemediationRequest, plan_: Plan | None) -> int | None:
    """The throttle to set: from the time budget when given (and a plan to size), else the Param's."""
    budget = None if plan_ is None else budget_throttle(request, plan_)
    return request.throttle_bytes_per_s if budget is None else budget.rate


def batch_count(plan_: Plan, request: RemediationRequest) -> int:
    """How many reassignment batches the executor will run the plan in, paced as `request` asks."""
    options = execution_options(request)
    if plan_.dir_moves:
        return len(split_dir_moves(plan_.dir_moves, options.batch_max_partitions))
    return len(split_moves(plan_.reassignments, options.batch_max_partitions, options.batch_max_moves_per_broker))


def election_requests(plan_: Plan, request: RemediationRequest) -> int:
    """How many election requests the executor will send for the plan."""
    return len(chunk_elections(plan_.elections, execution_options(request).election_batch_size))


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
    *,
    files: Mapping[str, str] | None = None,
    partitions: bool = True,
    validated: bool = True,
) -> str:
    """The dry run's summary: what moves, per-broker counts before and after, the lower bound and,
    given `files`, where the plan files are and what to do next. `partitions` False leaves out the
    per-partition lists; `validated` says whether the base snapshot passed integrity validation."""
    batches = batch_count(plan_, request)
    throttle = _throttle_text(plan_, request)
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
        + (
            f", {election_requests(plan_, request)} request(s) of at most {request.batch_size}"
            if plan_.elections
            else ""
        ),
        *_dir_move_lines(plan_, request, batches, throttle),
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


def _throttle_text(plan_: Plan, request: RemediationRequest) -> str:
    budget = budget_throttle(request, plan_) if plan_.reassignments or plan_.dir_moves else None
    if budget is None:
        return f"{request.throttle_bytes_per_s} B/s" if request.throttle_bytes_per_s else "none"
    late = (f"; capped by the network capacity of broker(s) {list(budget.capped)}: about "
            f"{budget.seconds / 60:.0f} min, over the budget") if budget.capped else ""  # fmt: skip
    return (f"{budget.rate} B/s (time budget {request.time_budget_minutes:g} min; busiest broker "
            f"{budget.busiest}{late})")  # fmt: skip


def _listed(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    more = [f"    ... and {len(items) - MAX_LISTED} more (see the plan files)"] if len(items) > MAX_LISTED else []
    return [f"  {title}", *(f"    {item}" for item in items[:MAX_LISTED]), *more]
