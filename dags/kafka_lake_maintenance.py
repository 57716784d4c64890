"""Daily lake maintenance: retention, then compaction, vacuum and checkpoints of the Delta tables.

Declares only: the task bodies are `kafka_ops.airflow.lake_maintenance`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import dag, get_current_context, task

from kafka_ops.airflow.lake_maintenance import DAG_ID

DOC_MD = """
### Lake maintenance

Runs daily, one run at a time. Settings: `[lake]` in the settings file (docs/operations.md,
"Retention and maintenance").

1. **expire** (Parquet and Delta lakes): batches older than their commit log keeps
   (`keep_snapshots_days`, `keep_groups_days`, `keep_findings_days`, `keep_validations_days`: 35
   days by default; remediation plans and audit forever) are deleted, commit rows first, so a
   reader never sees a batch with rows missing. Their data rows go one run later (they are
   invisible meanwhile). The log names each table, the days and the rows deleted.
2. **compact_and_vacuum** (Delta only; skipped on a Parquet lake): each closed day of each table
   and cluster is compacted to one file (up to `compact_target_mb`), then files replaced more than
   `vacuum_retention_hours` ago are deleted, the log is checkpointed and log entries older than
   `log_retention_hours` removed. The log shows, per partition, files and bytes before and after.

**A failure** names the table and what went wrong; the other tables are done. Every step is
idempotent: clear the task (or let it retry) to finish. Time travel (`kafka-ops lake as-of`)
reaches back `vacuum_retention_hours`.
"""


@dag(
    dag_id=DAG_ID,
    schedule="30 1 * * *",
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["kafka-ops", "lake"],
    doc_md=DOC_MD,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=5), "execution_timeout": timedelta(hours=3)},
)
def kafka_lake_maintenance() -> None:
    @task
    def expire() -> dict[str, Any]:
        """Delete the batches older than the settings keep, commit rows first."""
        from kafka_ops.airflow.lake_maintenance import expire_task

        return expire_task(_run_time())

    @task
    def compact_and_vacuum() -> dict[str, Any]:
        """Compact each closed day, vacuum, checkpoint and clean the log of every Delta table."""
        from kafka_ops.airflow.lake_maintenance import tidy_task

        return tidy_task(_run_time())

    expire() >> compact_and_vacuum()


def _run_time() -> datetime:
    """The run's time (which days expire, which are closed), not the wall clock."""
    run = get_current_context()["dag_run"]
    when = getattr(run, "run_after", None) or getattr(run, "logical_date", None)
    return when if when is not None else datetime.now(UTC)


kafka_lake_maintenance()
