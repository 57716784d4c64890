"""Silence a Kafka cluster, brokers, topics or consumer groups for a while, from the Airflow UI.

Declares only: the form and the task body are `kafka_ops.airflow.silence_tasks`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import dag, get_current_context, task

from kafka_ops.airflow.silence_tasks import DAG_ID, params

DOC_MD = """
### Silences and maintenance windows

**What it does.** Stops paging, for a time, the problems about what you name on one cluster: brokers,
topics or consumer groups (names or regular expressions), or, naming none, the whole cluster (a
maintenance window). **Only these problems** limits it to some alert keys. A silenced problem is still
recorded: the report and the metrics show it silenced, with your reason and the silence's end; if it still
fires when the silence ends, it pages then. A problem about more than you named still pages (a second
broker down, a partition of another topic).

**How to use it.** *Trigger* with **Cluster**, what to silence, **For how long** (`90m`, `2h`, `1d`) and a
**Reason** (both required). The run's log and XCom give the silence's id. **Action** `list` logs the
cluster's silences; `end` with **Silence id** ends one now. The command line does the same:
`kafka-ops silence add|list|end`.

**Automatic silences.** While a remediation plan executes, the under-replication and leader imbalance it
causes on its own partitions and brokers are silenced by the plan itself (ended when it stops); anything
else still pages.
"""


@dag(
    dag_id=DAG_ID,
    schedule=None,
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    tags=["kafka-ops", "alerting"],
    doc_md=DOC_MD,
    params=params(),
    default_args={"retries": 1, "retry_delay": timedelta(seconds=30), "execution_timeout": timedelta(minutes=5)},
)
def kafka_silence() -> None:
    @task
    def silence() -> dict[str, Any]:
        """Add, list or end a silence (Action)."""
        from kafka_ops.airflow.remediation_tasks import actor_of
        from kafka_ops.airflow.silence_tasks import silence_task

        context = get_current_context()
        return silence_task(context["params"], actor=actor_of(context))

    silence()


kafka_silence()
