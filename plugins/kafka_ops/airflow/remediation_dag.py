"""The one shape both remediation DAGs share: `validate_params` → `plan` (dry run) or `execute`; with
`approve_in_ui`, `plan` → `approve` (the Airflow UI's Required actions) → `execute_approved` or `rejected`
(`kafka_ops.airflow.approval`).

`kafka_preferred_leader_election` and `kafka_partition_reassignment` differ only in their form
(actions, fields, defaults), their doc and how long an execution may take; the DAG files call
`remediation_dag` with those. Task bodies are in `remediation_tasks`, imported inside the tasks
so that parsing a DAG file opens no connection and reads no file.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import DAG, dag, get_current_context, task

from kafka_ops.airflow.approval import APPROVE_TASK, PlanApproval
from kafka_ops.airflow.remediation_params import form_params
from kafka_ops.planning.request import RequestForm


def remediation_dag(form: RequestForm, doc_md: str, execute_timeout: timedelta) -> DAG:
    @dag(
        dag_id=form.dag_id,
        schedule=None,
        start_date=datetime(2026, 1, 1, tzinfo=UTC),
        catchup=False,
        max_active_runs=1,
        tags=["kafka-ops", "remediation"],
        doc_md=doc_md,
        params=form_params(form),
        default_args={
            "retries": 1,
            "retry_delay": timedelta(seconds=30),
            "execution_timeout": timedelta(minutes=15),
        },
    )
    def remediation() -> None:
        @task.branch
        def validate_params() -> str:
            """Fails the run at once on an invalid Param; then `plan` (dry run) or `execute`."""
            from kafka_ops.airflow import remediation_tasks  # noqa: PLC0415 - not at parse time

            return remediation_tasks.validate_params(get_current_context()["params"], form)

        @task
        def plan() -> dict[str, Any]:
            """Dry run: fresh snapshot, integrity validation, plan saved to the lake; nothing written to Kafka."""
            from kafka_ops.airflow import remediation_tasks  # noqa: PLC0415

            context = get_current_context()
            actor = remediation_tasks.actor_of(context)
            return remediation_tasks.plan(context["params"], form, actor=actor, run_id=context["run_id"])

        # writes to the cluster: an automatic retry must never repeat a write (run the DAG again to resume)
        @task(retries=0, execution_timeout=execute_timeout)
        def execute() -> dict[str, Any]:
            """Execute the reviewed plan `plan_id` through the remediation executor."""
            from kafka_ops.airflow import remediation_tasks  # noqa: PLC0415

            context = get_current_context()
            actor = remediation_tasks.actor_of(context)
            return remediation_tasks.execute(context["params"], form, actor=actor, run_id=context["run_id"])

        @task(retries=0, execution_timeout=execute_timeout)
        def execute_approved() -> dict[str, Any]:
            """Execute the plan the approver approved (writes to the cluster: never retried)."""
            from kafka_ops.airflow import approval  # noqa: PLC0415

            return approval.after_answer(approval.execute_approved, get_current_context(), form)

        @task
        def rejected() -> dict[str, Any]:
            """The plan was rejected or not answered in time: audited, nothing written."""
            from kafka_ops.airflow import approval  # noqa: PLC0415

            return approval.after_answer(approval.rejected, get_current_context(), form)

        planned = plan()
        validate_params() >> [planned, execute()]
        planned >> PlanApproval(task_id=APPROVE_TASK, form=form) >> [execute_approved(), rejected()]

    built: DAG = remediation()
    return built
