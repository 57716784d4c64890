"""Approval of a remediation plan in the Airflow UI, in the run that made it.

A remediation run triggered with `approve_in_ui` (and Dry run on) goes `plan` → `approve` → `execute_approved`
or `rejected`:

* `approve` (`PlanApproval`, Airflow's `HITLBranchOperator`) shows the plan's review (what moves, bytes
  and the lower bound, per-broker before → after, throttle and duration, what was skipped, the rollback)
  under the run's Required actions, with two answers: Execute and Reject. Only the cluster's approvers may
  answer (`approvers`, and the users of `approver_roles`: `respondents`); Airflow refuses anyone else's
  answer. A plan nobody answers within `approval_timeout_minutes` is rejected (the default answer). The
  request is paged through the cluster's sinks with the link to the required action (`approval:<plan id>`,
  resolved once answered), and every step is a `remediation_audit` row (`approve`: requested, approved,
  rejected, timed_out, refused), with who and when.
* `execute_approved` executes exactly the plan the approver saw (its id from `plan`), after checking the
  answer once more: an answer from anyone who is not a respondent now is refused and writes nothing.
* `rejected` writes nothing to the cluster.

A run without `approve_in_ui` skips the three (a plain dry run; the two-trigger flow of `plan_id` stays
as it was, for scripts).

DAG files import this module at parse time (the operator): the remediation stack is imported by the task
bodies, when they run.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from airflow.configuration import conf
from airflow.providers.standard.operators.hitl import HITLBranchOperator
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from kafka_ops.errors import ConfigError, KafkaOpsError
from kafka_ops.planning.request import RemediationRequest, RequestForm
from kafka_ops.settings import APPROVER_ROLES, ClusterConfig

if TYPE_CHECKING:
    from kafka_ops.planning.plan import Plan

log = logging.getLogger(__name__)

APPROVE_TASK = "approve"
EXECUTE_APPROVED_TASK = "execute_approved"
REJECTED_TASK = "rejected"
EXECUTE, REJECT = "Execute", "Reject"
PLAN_TASK = "plan"
_MARKDOWN = re.compile(r"[\\`*_\[\]<>#|]")
"""Characters a plan's review may hold that Markdown would read as markup."""
ANSWER_KEY = "answer"
"""The XCom `approve` leaves for the task after it: the answer, who gave it and when."""


def respondents(cluster: ClusterConfig) -> list[str]:
    """Who may answer an approval of `cluster`'s plans: its `approvers`, and the users of its `approver_roles`
    (each role with the roles above it) as the simple auth manager lists them. `ConfigError` naming the
    settings when nobody may, or when roles are named under another auth manager."""
    users = set(cluster.approvers)
    if cluster.approver_roles:
        manager = conf.get("core", "auth_manager", fallback="")
        if not (manager or "").endswith("SimpleAuthManager"):
            raise ConfigError(
                f"cluster {cluster.name!r}: 'approver_roles' needs Airflow's simple auth manager to list a role's "
                f"users (this Airflow uses {manager or 'another'}); name them in 'approvers'"
            )
        from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager  # noqa: PLC0415

        lowest = min(APPROVER_ROLES.index(r.lower()) for r in cluster.approver_roles)
        for user in SimpleAuthManager.get_users():
            role = (user.role or "").lower()
            if role in APPROVER_ROLES and APPROVER_ROLES.index(role) >= lowest:
                users.add(user.username)
    if not users:
        raise ConfigError(
            f"cluster {cluster.name!r}: nobody may approve its plans in the UI: set 'approvers' (Airflow users) or "
            "'approver_roles' in its settings"
        )
    return sorted(users)


class PlanApproval(HITLBranchOperator):
    """The `approve` task (module docstring): its subject, review, respondents and timeout come from the run's
    plan and the cluster's settings when it runs."""

    def __init__(self, *, form: RequestForm, **kwargs: Any) -> None:
        super().__init__(
            subject="Approve a remediation plan",
            options=[EXECUTE, REJECT],
            options_mapping={EXECUTE: EXECUTE_APPROVED_TASK, REJECT: REJECTED_TASK},
            defaults=[REJECT],  # what a timeout answers
            response_timeout=timedelta(minutes=240),
            **kwargs,
        )
        self.form = form

    def execute(self, context: Any) -> Any:
        request = _approval_request(context["params"], self.form)
        cluster = request.cluster
        plan, review = _reviewed(request, context["ti"].xcom_pull(task_ids=PLAN_TASK))
        try:
            users = respondents(cluster)
        except ConfigError as e:
            raise AirflowFailException(str(e)) from e
        self.subject = f"Execute {plan.kind} plan {plan.plan_id} on cluster {cluster.name}?"
        self.body = _body(plan, review, users, cluster)
        self.assigned_users = [{"id": u, "name": u} for u in users]
        self.response_timeout = timedelta(minutes=cluster.approval_timeout_minutes)
        base_url = conf.get("api", "base_url", fallback=None) or "http://localhost:8080"  # as the pages' links
        link = self.generate_link_to_ui_from_context(context=context, base_url=base_url)
        _audit(request, plan, context, "requested", f"from {', '.join(users)} until {_deadline(cluster)}: {link}")
        _page(request, plan, link, waiting=True)
        return super().execute(context)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        answered = event.get("chosen_options") or []
        by = event.get("responded_by_user") or {}
        at = event.get("responded_at")
        answer = {
            "answer": answered[0] if answered else None,
            "by": by.get("name") or by.get("id"),
            "at": at.isoformat() if isinstance(at, datetime) else at,
            "timed_out": bool(event.get("timedout")) or (not by and answered == [REJECT]),
        }
        context["ti"].xcom_push(key=ANSWER_KEY, value=answer)
        log.info("approval answered: %s", answer)
        return super().execute_complete(context=context, event=event)


AnswerTask = Callable[..., dict[str, Any]]


def after_answer(work: AnswerTask, context: Any, form: RequestForm) -> dict[str, Any]:
    """`work` (`execute_approved` or `rejected`) on the run's Params, `approve`'s answer and `plan`'s plan."""
    ti = context["ti"]
    answer = ti.xcom_pull(task_ids=APPROVE_TASK, key=ANSWER_KEY)
    return work(context["params"], form, answer, ti.xcom_pull(task_ids=PLAN_TASK), run_id=context["run_id"])


def execute_approved(
    params: Mapping[str, Any], form: RequestForm, answer: Mapping[str, Any] | None, planned: Mapping[str, Any] | None,
    *, run_id: str,
) -> dict[str, Any]:  # fmt: skip
    """Execute the plan the approver approved (its id from `plan`), once the answer is checked again."""
    from kafka_ops.airflow.remediation_tasks import execute_plan  # noqa: PLC0415

    request = _approval_request(params, form)
    plan, _ = _reviewed(request, planned)
    by = (answer or {}).get("by")
    try:
        allowed = respondents(request.cluster)
    except ConfigError as e:
        allowed, why = [], str(e)
    else:
        why = f"{by!r} is not among the cluster's approvers ({', '.join(allowed)})"
    if (answer or {}).get("answer") != EXECUTE or by not in allowed:
        _audit(request, plan, None, "refused", why, actor=str(by or "nobody"), run_id=run_id)
        _page(request, plan, None, waiting=False)
        raise AirflowFailException(f"plan {plan.plan_id} was not executed: {why}")
    _audit(request, plan, None, "approved", f"by {by} at {(answer or {}).get('at')}", actor=by, run_id=run_id)
    _page(request, plan, None, waiting=False)
    approved = replace(request, dry_run=False, plan_id=plan.plan_id)
    try:
        return execute_plan(approved, actor=by, run_id=run_id)
    except KafkaOpsError as e:
        raise AirflowFailException(f"{type(e).__name__}: {e}") from e


def rejected(
    params: Mapping[str, Any], form: RequestForm, answer: Mapping[str, Any] | None, planned: Mapping[str, Any] | None,
    *, run_id: str,
) -> dict[str, Any]:  # fmt: skip
    """A plan rejected, or not answered in time: audited; nothing is written to the cluster."""
    request = _approval_request(params, form)
    plan, _ = _reviewed(request, planned)
    answer = answer or {}
    outcome = "timed_out" if answer.get("timed_out") else "rejected"
    by = answer.get("by") or "nobody"
    detail = (
        f"nobody answered within {request.cluster.approval_timeout_minutes:g} minutes"
        if outcome == "timed_out"
        else f"by {by} at {answer.get('at')}"
    )
    _audit(request, plan, None, outcome, detail, actor=str(by), run_id=run_id)
    _page(request, plan, None, waiting=False)
    log.info("plan %s %s (%s): nothing was written to cluster %s", plan.plan_id, outcome, detail, plan.cluster)
    return {"plan_id": plan.plan_id, "outcome": outcome, "detail": detail}


# -- helpers --------------------------------------------------------------------------------------------


def _approval_request(params: Mapping[str, Any], form: RequestForm) -> RemediationRequest:
    from kafka_ops.airflow.remediation_tasks import request_of  # noqa: PLC0415

    request = request_of(params, form, None)
    if not request.approve_in_ui:
        raise AirflowSkipException("approve_in_ui is off: the plan waits for a second trigger with its plan_id")
    return request


def _reviewed(request: RemediationRequest, planned: Mapping[str, Any] | None) -> tuple[Plan, str]:
    """The plan this run made (from `plan`'s summary) as stored, and its review."""
    from kafka_ops.lake.open import open_lake  # noqa: PLC0415
    from kafka_ops.planning.review import render_plan  # noqa: PLC0415
    from kafka_ops.remediation import load_plan  # noqa: PLC0415
    from kafka_ops.remediation.pacing import pacing_of  # noqa: PLC0415

    if not planned or not planned.get("plan_id"):
        raise AirflowFailException("task plan left no plan_id: nothing to approve")
    lake = open_lake(request.lake_root, request.lake_format)
    plan = load_plan(lake, request.cluster.name, str(planned["plan_id"]))
    review = render_plan(plan, request, pacing_of(plan, request), files=planned.get("files") or None)
    return plan, review


def _body(plan: Plan, review: str, users: list[str], cluster: ClusterConfig) -> str:
    """The required action's text (Markdown): what answering does, then the review line by line (the UI
    collapses a code block's line breaks, so each line is a hard break, its indent kept as no-break spaces)."""
    lines = []
    for line in review.splitlines():
        if line.strip().startswith("next "):  # the two-trigger flow's next step: this run executes on Execute
            continue
        text = _MARKDOWN.sub(r"\\\g<0>", line.lstrip(" "))
        lines.append("\u00a0" * (len(line) - len(line.lstrip(" "))) + text)
    return (
        f"**{plan.kind}** plan `{plan.plan_id}` on cluster **{cluster.name}**, made from snapshot "
        f"`{plan.snapshot_id}`. **Execute** runs exactly this plan now, throttled and batched; **Reject** writes "
        f"nothing. Only {', '.join(users)} may answer; without an answer by {_deadline(cluster)} it is "
        "rejected.\n\n" + "  \n".join(lines) + "\n"
    )


def _deadline(cluster: ClusterConfig) -> str:
    return f"{datetime.now(UTC) + timedelta(minutes=cluster.approval_timeout_minutes):%Y-%m-%d %H:%M UTC}"


def _audit(
    request: RemediationRequest, plan: Plan, context: Any, outcome: str, detail: str,
    *, actor: str | None = None, run_id: str | None = None,
) -> None:  # fmt: skip
    from kafka_ops.airflow.remediation_tasks import actor_of  # noqa: PLC0415
    from kafka_ops.lake.open import open_lake  # noqa: PLC0415
    from kafka_ops.remediation import AuditLog  # noqa: PLC0415

    lake = open_lake(request.lake_root, request.lake_format)
    who = actor or (actor_of(context) if context is not None else "airflow")
    run = run_id or (context["run_id"] if context is not None else None)
    AuditLog(lake, plan, request.cluster.remediation_backend, who, run).record("approve", outcome, detail=detail)


def _page(request: RemediationRequest, plan: Plan, link: str | None, *, waiting: bool) -> None:
    """Page the approval request through the cluster's sinks (`waiting`), or resolve it; a sink that fails
    is logged, never fatal: the request is in the Airflow UI either way."""
    from kafka_ops.airflow.snapshot_paging import send  # noqa: PLC0415
    from kafka_ops.alerting.alert import Alert, Links  # noqa: PLC0415
    from kafka_ops.alerting.incidents import Judgement  # noqa: PLC0415
    from kafka_ops.settings import load_settings  # noqa: PLC0415

    key = f"approval:{plan.plan_id}"
    settings = load_settings()
    now = datetime.now(UTC)
    links = Links(airflow_run=link)
    alerts = []
    if waiting:
        moved = f"{plan.moves} replica moves, {len(plan.elections)} elections"
        alerts.append(
            Alert(
                cluster=request.cluster.name,
                key=key,
                severity="warning",
                title=f"{plan.kind} plan {plan.plan_id} on {request.cluster.name} awaits approval",
                since=now,
                cause=f"a remediation run planned {moved} and waits for an approver",
                action=f"review it and answer Execute or Reject in the Airflow UI: {link}",
                links=links,
                details={"plan_id": plan.plan_id, "kind": plan.kind},
            )
        )
    try:
        send(settings, request.cluster, alerts, judgement=Judgement(scope=lambda k: k == key), at=now, links=links)
    except KafkaOpsError as e:
        log.warning("plan %s: the approval request was not paged: %s", plan.plan_id, e)
