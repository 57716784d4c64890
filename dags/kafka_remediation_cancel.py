"""Cancel a remediation plan on one Kafka cluster, from the Airflow UI.

Declares only: the form and task bodies are `kafka_ops.airflow.remediation_cancel`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import dag, get_current_context, task

from kafka_ops.airflow.remediation_cancel import DAG_ID, params

DOC_MD = """
### Cancel a remediation plan

**What it does.** Stops a plan that `kafka_partition_reassignment` or
`kafka_preferred_leader_election` is executing (or left stuck): the plan's reassignments in flight
are cancelled (each partition goes back to its replicas before the move), an execution still
running stops before its next write, the replication throttles it set are removed, and the plan
is marked cancelled so it is never resumed. Batches already completed stay applied: the plan's
`rollback.json` (path in the preview) puts them back, as a new plan.

This is its own DAG because the remediation DAGs run one at a time: a cancel queued behind the
running execution would only start after it ended.

**How to use it.**

1. *Trigger* with **Cluster** and **Plan id** and leave **Dry run** on. Task `preview` (writes
   nothing) logs the plan's status, its partitions in flight now, the batches done, the throttles
   set, and whether a cancel would be refused.
2. *Trigger* again with **Dry run** off. Task `cancel` cancels and waits up to **Wait (seconds)**
   for the moves to stop; its log lists what was cancelled and what is still moving.

**Leftover throttles.** A plan whose last batch finished while another tool's reassignment was
still moving keeps its replication throttles (the executor's log and `remediation_audit` say so).
Trigger with **Action** `clear_throttles`: the dry run (`preview`) lists the broker rates and topic
replica lists it would remove and those another move in flight still needs (kept); with **Dry
run** off, task `clear_throttles` removes them. Refused while a move of the plan is in flight.

**Safety.** Refused (and audited in `remediation_audit`) when writes are disabled for the cluster,
or the plan already completed. The `zookeeper` back end cannot cancel (ZooKeeper-mode Kafka offers
no way to through ZooKeeper): configure `remediation_backend = "admin_api"` for the cluster.
`cancel` is never retried automatically.
"""


@dag(
    dag_id=DAG_ID,
    schedule=None,
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["kafka-ops", "remediation"],
    doc_md=DOC_MD,
    params=params(),
    default_args={"retries": 1, "retry_delay": timedelta(seconds=30), "execution_timeout": timedelta(minutes=15)},
)
def kafka_remediation_cancel() -> None:
    @task.branch
    def validate_params() -> str:
        """Fails the run at once on an invalid Param; then `preview` (dry run) or `cancel`."""
        from kafka_ops.airflow import remediation_cancel  # not at parse time

        return remediation_cancel.next_task(get_current_context()["params"])

    @task
    def preview() -> dict[str, Any]:
        """Dry run: what a cancel would stop; nothing is written."""
        from kafka_ops.airflow import remediation_cancel

        return remediation_cancel.preview_task(get_current_context()["params"])

    # writes to the cluster: never retried automatically
    @task(retries=0, execution_timeout=timedelta(hours=2))
    def cancel() -> dict[str, Any]:
        """Cancel the plan: its moves in flight, a running execution, its throttles."""
        from kafka_ops.airflow import remediation_cancel
        from kafka_ops.airflow.remediation_tasks import actor_of

        context = get_current_context()
        return remediation_cancel.cancel_task(context["params"], actor=actor_of(context), run_id=context["run_id"])

    # writes to the cluster: never retried automatically
    @task(retries=0)
    def clear_throttles() -> dict[str, Any]:
        """Remove the throttles the finished or cancelled plan left (action clear_throttles)."""
        from kafka_ops.airflow import remediation_cancel
        from kafka_ops.airflow.remediation_tasks import actor_of

        context = get_current_context()
        return remediation_cancel.clear_task(context["params"], actor=actor_of(context), run_id=context["run_id"])

    validate_params() >> [preview(), cancel(), clear_throttles()]


kafka_remediation_cancel()
