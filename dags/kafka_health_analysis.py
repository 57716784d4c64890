"""Analyse each cluster's history on Spark whenever a new snapshot or group collection lands.

Declares and wires only: the detectors live in `kafka_ops.detectors`, the Spark jobs in
`spark_jobs/cluster_health.py` and `spark_jobs/consumer_groups.py`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import Param, dag, get_current_context, task
from airflow.utils.trigger_rule import TriggerRule

from kafka_ops.airflow.assets import GROUP_SNAPSHOT_ASSET, SNAPSHOT_ASSET
from kafka_ops.planning.request import ELECTION_FORM

SPARK_JOBS = os.environ.get(
    "KAFKA_OPS_SPARK_JOBS",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spark_jobs"),
)

SPARK_QUEUE = os.environ.get("KAFKA_OPS_SPARK_QUEUE", "")
"""The executor queue of the Spark jobs (Celery: a worker must serve it). A spark-submit holds its worker slot for
minutes: on a queue of their own, served by some of the workers only, they never take every slot the snapshot
DAG pages from. Empty: the default queue."""

SPARK_CONNECT_CONN_ID = os.environ.get("KAFKA_OPS_SPARK_CONNECT_CONN_ID", "")
"""An Airflow connection of type `spark_connect`: the jobs run on that warm Spark Connect server, inside
the task, instead of one spark-submit (a new JVM) each. Empty: spark-submit on `spark_default`."""

DOC_MD = """
### Kafka health analysis

**What it does.** Scheduled on the assets `kafka_ops_snapshots` and `kafka_ops_group_snapshots`:
each time the snapshot DAG commits a batch, this DAG runs the matching Spark job for every
cluster that just got one (a manual run analyses every configured cluster with both jobs). Runs go
one at a time; each analyses the cluster's newest batch when it starts (not the older one that
created it, so a run queued behind a long one never analyses a stale batch), and leaves out a job
whose newest batch an earlier run analysed (its log says so).

* `analyse_cluster` (`spark_jobs/cluster_health.py`, on ZooKeeper snapshots): ISR health
  (under-replicated, under-min-ISR, at-min-ISR, offline), ISR shrink/expand events, time
  under-replicated and flapping, which broker is to blame, leader balance (ZooKeeper and KRaft
  rules, fixable by a preferred election or blocked and why), replica and rack placement,
  controller churn and zombie-controller symptoms, and reassignments in flight or stuck.
* `analyse_groups` (`spark_jobs/consumer_groups.py`, on group collections): lag status per
  partition and group by Burrow's rules (OK, WARN, STALL, STOP, REWIND; groups roll up to ERR),
  lag in seconds (Kafka Lag Exporter's interpolation), and assignor skew with a what-if of
  Kafka's own assignors on the group's real members.
* `page_groups`: as soon as `analyse_groups` published, pages (and resolves) the consumer groups
  the group gates fail (ERR or WARN, retention about to take unconsumed records, a hanging
  transaction): the consumer-status path never waits on the cluster-health job or the report.
  `send_alerts` judges every incident again at the end of the run; an open one is not paged twice.

Each job reads the last day of its batches from the lake and writes one findings table per
detector output, atomically (commit log `analysis_runs`).

**Spark.** The two jobs go to the executor queue `$KAFKA_OPS_SPARK_QUEUE` when set (on Celery, serve it
with some workers only, so a long analysis never takes the slots the snapshot DAG pages from).
`SparkSubmitOperator` on the `spark_default` connection (`local[*]` by default;
point it at a standalone, YARN or Kubernetes master to run on a cluster). With
`KAFKA_OPS_SPARK_CONNECT_CONN_ID` set (a `spark_connect` connection), the same jobs run inside the
task on that long-lived Spark Connect server instead: no JVM to start per run (the server holds
Delta's connector and the lake's S3 settings; a server that is down fails the task naming the
connection, never a fallback to spark-submit). Thresholds come
from the kafka-ops settings file, per cluster (`[clusters.thresholds]`). On a Delta lake
(`lake_format = "delta"`), `spark_jars` hands spark-submit Delta Lake's Spark connector
(fetched by `make jars`) and the jobs read every table through it; on a lake root on S3 (`s3://`,
`s3a://`), also Hadoop's S3A filesystem, which the jobs set up from the AWS variables of the
worker that runs spark-submit (docs/operations.md, "S3"). The `as_of` Param of a manual
run makes both jobs analyse the lake as it was then (Delta only: each table at its version
current then; a Parquet lake fails the run's first task, naming the Param).

**As of a past time** (the `as_of` Param, e.g. `2026-11-21T03:10:00+00:00`): a forensic run, end to
end. The targets are each cluster's snapshot and group collection that were the latest then;
validation keeps their recorded verdicts (a batch never validated is validated and recorded under
its own id, so a current snapshot's verdict never changes); the gates and the report judge the
findings of those batches, and the report opens with "as of <time>: snapshot <id> captured <t>"
(`_reports/<cluster>/<id>.html`, never `latest.html`). `send_alerts` and `auto_election` do
nothing and say why in their logs: no incident is opened, reminded or resolved from the past, and
nothing is written to a cluster. The findings are published as the analysis of that batch; the web
UI, /metrics, the digest and alerting keep showing the latest batch (they pick the newest capture).

**Automatic election.** `auto_election` does nothing unless the cluster's settings say
`auto_remediation = true` (and `writes_enabled`): then, once leader imbalance a preferred election
can fix has persisted for `auto_election_after_runs` analyses, it plans an election on a fresh,
validated snapshot and executes it with every safety check (audit actor `kafka-ops
auto-remediation`). It never retries. With `auto_remediation_approval = true` it executes nothing:
`request_approval` starts a `kafka_preferred_leader_election` run with *Approve in the UI*, whose plan
the cluster's approvers approve or reject under its Required actions.

**When it fails.** A failed `analyse_*` task means no findings were published for that batch
(the previous findings stay). An unhealthy cluster or a lagging group is a finding, never a
task failure.
"""


DAG_ID = "kafka_health_analysis"
JARS = "{{ ti.xcom_pull(task_ids='spark_jars') }}"
"""spark-submit --jars, from the `spark_jars` task (empty on a Parquet lake: no --jars)."""


@dag(
    dag_id=DAG_ID,
    schedule=SNAPSHOT_ASSET | GROUP_SNAPSHOT_ASSET,
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["kafka-ops", "analysis", "spark"],
    doc_md=DOC_MD,
    params={
        "as_of": Param(
            None,
            type=["null", "string"],
            title="As of",
            description="Manual runs only: analyse each cluster's lake as it was at this ISO 8601 time with its "
            "zone, e.g. 2026-11-21T03:10:00+00:00 (a Delta lake's time travel; empty: now). Forensic: the report "
            "shows the batch current then; no alert is sent and nothing is written to a cluster.",
        )
    },
    default_args={
        "retries": 1,
        "retry_delay": timedelta(seconds=60),
        "execution_timeout": timedelta(minutes=20),
    },
)
def kafka_health_analysis() -> None:
    @task
    def analysis_targets() -> list[dict[str, Any]]:
        """One target per cluster its events name: each triggered job's newest batch not analysed yet
        (all clusters' latest if manual)."""
        from kafka_ops.airflow.analysis_arguments import analysis_targets
        from kafka_ops.settings import load_settings

        context = get_current_context()
        events = context.get("triggering_asset_events")
        as_of = context["params"].get("as_of")
        return [dict(t) for t in analysis_targets(load_settings(), events, SNAPSHOT_ASSET, GROUP_SNAPSHOT_ASSET, as_of)]

    @task(map_index_template="{{ task.op_kwargs['target']['cluster'] }}")
    def validate_snapshots(target: dict[str, Any]) -> dict[str, Any]:
        """Great Expectations integrity suites on the batches analysed; untrusted ones are marked so."""
        from kafka_ops.airflow.health_tasks import validate

        return validate(target, _run_time())  # type: ignore[arg-type]

    @task
    def cluster_health_arguments(targets: list[dict[str, Any]]) -> list[list[str]]:
        from kafka_ops.airflow.analysis_arguments import spark_arguments
        from kafka_ops.settings import load_settings

        as_of = get_current_context()["params"].get("as_of")
        return spark_arguments(load_settings(), targets, "snapshots", as_of)  # type: ignore[arg-type]

    @task
    def consumer_groups_arguments(targets: list[dict[str, Any]]) -> list[list[str]]:
        from kafka_ops.airflow.analysis_arguments import spark_arguments
        from kafka_ops.settings import load_settings

        as_of = get_current_context()["params"].get("as_of")
        return spark_arguments(load_settings(), targets, "group_snapshots", as_of)  # type: ignore[arg-type]

    @task
    def spark_jars() -> str:
        """spark-submit --jars: Delta Lake's Spark connector when lake_format = 'delta', Hadoop's S3A
        filesystem when the lake root is on S3, else none. Through spark-submit, it first fails (and is
        retried) while the `spark_default` connection's standalone master does not answer, naming it."""
        from kafka_ops.airflow.analysis_arguments import spark_jars
        from kafka_ops.airflow.spark_master import check_connection
        from kafka_ops.settings import load_settings

        if not SPARK_CONNECT_CONN_ID:
            check_connection("spark_default")
        return spark_jars(load_settings())

    @task(trigger_rule=TriggerRule.NONE_FAILED, map_index_template="{{ task.op_kwargs['target']['cluster'] }}")
    def health_gates(target: dict[str, Any]) -> dict[str, Any]:
        """The gates over the latest findings (an as-of run's: the batch current then): offline,
        under-min-ISR, leader imbalance, controller churn, groups in ERR/WARN. A failing gate is a
        finding, not a task failure."""
        from kafka_ops.airflow.health_tasks import gates

        return gates(target, _run_time())  # type: ignore[arg-type]

    @task(trigger_rule=TriggerRule.NONE_FAILED, map_index_template="{{ task.op_kwargs['gated']['cluster'] }}")
    def send_alerts(gated: dict[str, Any]) -> dict[str, Any]:
        """Open, remind or resolve incidents (one per problem) through the cluster's notifiers; nothing
        in an as-of run."""
        from kafka_ops.airflow.health_tasks import alerts

        return alerts(gated, _run_time(), DAG_ID, get_current_context()["run_id"])

    @task(trigger_rule=TriggerRule.NONE_FAILED, map_index_template="{{ task.op_kwargs['gated']['cluster'] }}")
    def health_report(gated: dict[str, Any]) -> str | None:
        """The cluster's HTML health report (charts, gates, top problems) written into the lake."""
        from kafka_ops.airflow.health_tasks import report

        return report(gated, _run_time(), DAG_ID, get_current_context()["run_id"])

    @task(
        trigger_rule=TriggerRule.NONE_FAILED,
        retries=0,  # it may write to the cluster: a retry must never repeat a write
        map_index_template="{{ task.op_kwargs['gated']['cluster'] }}",
    )
    def auto_election(gated: dict[str, Any]) -> dict[str, Any]:
        """Only for clusters with `auto_remediation = true` (off by default): a preferred election
        once fixable leader imbalance persisted for `auto_election_after_runs` analyses."""
        from kafka_ops.airflow.health_tasks import auto_election

        return auto_election(gated, get_current_context()["run_id"])

    targets = analysis_targets()
    validated = validate_snapshots.expand(target=targets)
    zookeeper_args = cluster_health_arguments(targets)  # type: ignore[arg-type]
    group_args = consumer_groups_arguments(targets)  # type: ignore[arg-type]
    jars = spark_jars()
    validated >> [zookeeper_args, group_args, jars]
    analysed = [
        _analysis(task_id, job, arguments)
        for task_id, job, arguments in (
            ("analyse_cluster", "cluster_health.py", zookeeper_args),
            ("analyse_groups", "consumer_groups.py", group_args),
        )
    ]
    jars >> analysed
    analysed[1] >> page_groups.expand(target=targets)
    gated = health_gates.expand(target=targets)
    analysed >> gated
    sent = send_alerts.expand(gated=gated)
    _request_approvals(sent >> [health_report.expand(gated=gated), auto_election.expand(gated=gated)])


def _request_approvals(report_and_election: list[Any]) -> None:
    """`request_approval`, after the automatic election (the last of `report_and_election`): a
    `kafka_preferred_leader_election` run with Approve in the UI per cluster whose automatic election waits for
    an approver (none: the mapped task is skipped)."""
    elected = report_and_election[-1]

    @task
    def approval_requests(elections: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The election runs to start: one per cluster whose automatic election waits for an approver."""
        return [e["conf"] for e in elections if e.get("awaiting_approval")]

    TriggerDagRunOperator.partial(task_id="request_approval", trigger_dag_id=ELECTION_FORM.dag_id).expand(
        conf=approval_requests(elected)
    )


def _analysis(task_id: str, job: str, arguments: Any) -> Any:
    """The mapped analysis task running `spark_jobs/<job>` once per argument list: on the Spark Connect
    server of `SPARK_CONNECT_CONN_ID` when set, else through spark-submit."""
    queue: dict[str, Any] = {"queue": SPARK_QUEUE} if SPARK_QUEUE else {}
    if not SPARK_CONNECT_CONN_ID:
        return SparkSubmitOperator.partial(
            task_id=task_id,
            application=os.path.join(SPARK_JOBS, job),
            conn_id="spark_default",
            name=f"kafka-ops-{job.removesuffix('.py').replace('_', '-')}",
            jars=JARS,
            **queue,
        ).expand(application_args=arguments)

    @task(task_id=task_id, **queue)
    def analyse_on_spark_connect(application_args: list[str]) -> dict[str, Any]:
        from kafka_ops.airflow.connect_analysis import analyse_on_connect

        return analyse_on_connect(SPARK_CONNECT_CONN_ID, job, application_args)

    return analyse_on_spark_connect.expand(application_args=arguments)


@task(trigger_rule=TriggerRule.NONE_FAILED, map_index_template="{{ task.op_kwargs['target']['cluster'] }}")
def page_groups(target: dict[str, Any]) -> dict[str, Any]:
    """The consumer groups' pages and resolves (the group gates only) as soon as their analysis is
    published: they never wait on the cluster-health job; `send_alerts` judges them again."""
    from kafka_ops.airflow.health_tasks import group_pages

    return group_pages(target, _run_time(), DAG_ID, get_current_context()["run_id"])  # type: ignore[arg-type]


def _run_time() -> datetime:
    """The run's time ("now" for validations, gates and incidents), not the wall clock."""
    run = get_current_context()["dag_run"]
    when = getattr(run, "run_after", None) or getattr(run, "logical_date", None)
    return when if when is not None else datetime.now(UTC)


kafka_health_analysis()
