"""Bodies of the analysis DAG's tasks around the Spark jobs (validation, gates, alerts, report).

Each takes the run's target (`analysis_arguments.Target`) and plain values the DAG reads from
its context, and returns a small JSON-ready dict for XCom. The work is in `validation.pipeline`,
`alerting.firing`, `validation`, `alerting` and `report`; this module only reads settings and connects them.

A target with `as_of` (a run with that Param) is forensic: validation keeps a past batch's recorded
verdict, the gates and the report judge the analysed batches current then, and nothing acts on the
past (no alert opened, reminded or resolved; no automatic election).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from kafka_ops.airflow.analysis_arguments import Target, as_of_time
from kafka_ops.airflow.snapshot_paging import run_link, send
from kafka_ops.alerting.alert import Links
from kafka_ops.alerting.firing import analysis_judgement, firing_alerts, group_alerts, group_judgement
from kafka_ops.alerting.silence_store import silences_of
from kafka_ops.lake.open import lake_of
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE
from kafka_ops.report.model import ReportLinks
from kafka_ops.report.publish import report_url, write_report
from kafka_ops.settings import load_settings
from kafka_ops.validation.gates import run_group_gates
from kafka_ops.validation.pipeline import (
    gate_report_from_dict,
    gate_report_to_dict,
    gates_of,
    health_gates,
    latest_analysed,
    validate_batches,
)

log = logging.getLogger(__name__)


def validate(target: Target, at: datetime) -> dict[str, Any]:
    """Integrity of the batches this run analyses (recorded in `snapshot_validations`)."""
    settings = load_settings()
    cluster = settings.cluster(target["cluster"])
    return validate_batches(
        lake_of(settings),
        cluster.name,
        at,
        snapshot_id=target["snapshot_id"],
        group_snapshot_id=target["group_snapshot_id"],
        thresholds=cluster.thresholds,
        keep_recorded="as_of" in target,
    )


def gates(target: Target, at: datetime) -> dict[str, Any]:
    """The health gates over the cluster's latest findings (`report` None before any analysis); in
    an as-of run, over the findings of the batches current then (`as_of` passed on)."""
    settings = load_settings()
    cluster = settings.cluster(target["cluster"])
    lake = lake_of(settings)
    if "as_of" not in target:
        report = health_gates(lake, cluster.name, cluster.thresholds, at)
        return {"cluster": cluster.name, "report": gate_report_to_dict(report) if report else None}
    group = target["group_snapshot_id"] if target["groups"] else None
    report = gates_of(
        lake, cluster.name, cluster.thresholds, at, snapshot_id=target["snapshot_id"], group_snapshot_id=group
    )
    return {
        "cluster": cluster.name,
        "report": gate_report_to_dict(report) if report else None,
        "as_of": target["as_of"],
    }


def alerts(gated: dict[str, Any], at: datetime, dag_id: str, run_id: str) -> dict[str, Any]:
    """Open, remind or resolve the cluster's incidents through its notifiers (log sink by default);
    each alert links to this run and to the health report the run writes next. Nothing in an as-of
    run: the past is never paged about, nor are incidents resolved from it."""
    if skipped := as_of_skip(gated, "send_alerts", "no incident is opened, reminded or resolved from the past"):
        return skipped
    settings = load_settings()
    cluster = settings.cluster(gated["cluster"])
    lake = lake_of(settings)
    page = _report_id(gated)
    links = Links(airflow_run=run_link(dag_id, run_id), report=report_url(lake, cluster.name, page) if page else None)
    gate_report = gate_report_from_dict(gated["report"]) if gated["report"] else None
    firing = firing_alerts(lake, cluster.name, gate_report, links)
    judgement = analysis_judgement(lake, cluster.name, gate_report)
    return send(settings, cluster, firing, judgement=judgement, at=at, links=links).to_dict()


def group_pages(target: Target, at: datetime, dag_id: str, run_id: str) -> dict[str, Any]:
    """Page or resolve the cluster's consumer groups (the group gates' incidents only) as soon as the
    groups' analysis is published, without waiting for the cluster-health job, the other gates and the
    report: the consumer-status path of the run. `alerts` later in the run judges every incident again,
    these included (an open incident is not paged twice). Nothing in an as-of run, nor when the run
    analysed no group collection of the cluster. Only the group gates' suites, without Data Docs (the
    run's `health_gates` runs them all and builds the pages), and without waiting for the cluster's
    first metadata analysis."""
    gated = {"cluster": target["cluster"], **({"as_of": target["as_of"]} if "as_of" in target else {})}
    if skipped := as_of_skip(gated, "page_groups", "no incident is opened, reminded or resolved from the past"):
        return skipped
    if not target["groups"]:
        return {"cluster": target["cluster"], "skipped": True, "reason": "this run analysed no group collection"}
    settings = load_settings()
    cluster = settings.cluster(target["cluster"])
    lake = lake_of(settings)
    latest = latest_analysed(lake, cluster.name, GROUP_COMMIT_TABLE)
    if latest is None:
        return {"cluster": cluster.name, "skipped": True, "reason": "no group collection analysed yet"}
    gate_report = run_group_gates(lake, cluster.name, latest[0], thresholds=cluster.thresholds, validated_at=at)
    links = Links(airflow_run=run_link(dag_id, run_id))
    alerts = group_alerts(lake, cluster.name, gate_report, links, seen_at=latest[1])
    sent = send(settings, cluster, alerts, judgement=group_judgement(latest[1]), at=at, links=links)
    return {"group_snapshot_id": gate_report.group_snapshot_id, **sent.to_dict()}


def report(gated: dict[str, Any], at: datetime, dag_id: str, run_id: str) -> str | None:
    """The cluster's health report for the snapshot the gates judged; None before any analysis."""
    page = _report_id(gated)
    if page is None:
        return None
    gate_report = gate_report_from_dict(gated["report"])
    links = ReportLinks(airflow_run=run_link(dag_id, run_id), data_docs=gate_report.data_docs)
    settings = load_settings()
    as_of = as_of_time(gated["as_of"]) if gated.get("as_of") else None
    silences = silences_of(settings.lake_root, gated["cluster"])
    return write_report(lake_of(settings), gated["cluster"], snapshot_id=page, gates=gate_report, links=links,
                        now=at, as_of=as_of, silences=silences)  # fmt: skip


def auto_election(gated: dict[str, Any], run_id: str) -> dict[str, Any]:
    """The cluster's automatic preferred election (`auto_remediation.auto_elect`); nothing in an
    as-of run: the cluster is never written to because of the past."""
    if skipped := as_of_skip(gated, "auto_election", "nothing is written to the cluster because of the past"):
        return {**skipped, "elected": False}
    from kafka_ops.airflow.auto_remediation import auto_elect  # noqa: PLC0415 - the remediation stack only when used

    return auto_elect(gated["cluster"], run_id)


def as_of_skip(gated: dict[str, Any], task: str, why: str) -> dict[str, Any] | None:
    """In an as-of run, what `task` returns instead of acting (and says so in its log); else None."""
    as_of = gated.get("as_of")
    if not as_of:
        return None
    reason = f"an analysis as of {as_of} is forensic: {why}"
    log.info("%s skipped for cluster %s: %s", task, gated["cluster"], reason)
    return {"cluster": gated["cluster"], "skipped": True, "reason": reason}


def _report_id(gated: dict[str, Any]) -> str | None:
    """The report is named after the ZooKeeper snapshot its gates judged."""
    return gated["report"]["snapshot_id"] if gated["report"] else None
