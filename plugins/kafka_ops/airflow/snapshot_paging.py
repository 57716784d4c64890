"""Bodies of the snapshot DAG's paging tasks: what a committed snapshot shows by itself (offline and
under-min-ISR partitions, brokers down) and what a committed group collection shows by itself (groups in
ERR or WARN by Burrow's rules), paged at once, and the blind spots of a failed collection.

Kept apart from the analysis DAG's task bodies (`health_tasks`) so the task that takes a snapshot imports
only what paging needs (no Spark arguments, no report): on a busy worker every import is seconds before
the page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from airflow.configuration import conf

from kafka_ops.alerting.alert import PIPELINE_KEY_PREFIX, Alert, Links
from kafka_ops.alerting.dispatch import DispatchReport, dispatch
from kafka_ops.alerting.from_collection import collection_alerts, collection_judgement
from kafka_ops.alerting.from_snapshot import snapshot_alerts, snapshot_judgement
from kafka_ops.alerting.incidents import EVERYTHING, Judgement
from kafka_ops.alerting.pipeline_status import PipelineStatus
from kafka_ops.alerting.registry import notifiers_for_cluster
from kafka_ops.lake.open import lake_of
from kafka_ops.settings import ClusterConfig, Settings, load_settings
from kafka_ops.validation import group_checks, snapshot_checks

log = logging.getLogger(__name__)


def run_link(dag_id: str, run_id: str) -> str:
    """The run's page in the Airflow UI, at the api-server's configured base URL."""
    base_url = conf.get("api", "base_url", fallback="http://localhost:8080")
    return f"{base_url.rstrip('/')}/dags/{dag_id}/runs/{quote(run_id)}"


def page_from_snapshot(cluster_name: str, snapshot_id: str, at: datetime, dag_id: str, run_id: str) -> dict[str, Any]:
    """Page, remind or resolve what snapshot `snapshot_id` shows by itself (offline and under-min-ISR
    partitions, brokers down: `validation.snapshot_checks`), without waiting for the analysis."""
    settings = load_settings()
    cluster = settings.cluster(cluster_name)
    look = snapshot_checks.look(lake_of(settings), cluster.name, snapshot_id, cluster.min_insync_replicas_default)
    links = Links(airflow_run=run_link(dag_id, run_id))
    sent = send(
        settings,
        cluster,
        snapshot_alerts(cluster.name, look, links),
        judgement=snapshot_judgement(look),
        at=at,
        links=links,
    )
    return {"cluster": cluster.name, **look.summary(), "alerts": sent.to_dict()}


def page_at_once(cluster_name: str, snapshot_id: str, dag_id: str, run_id: str) -> dict[str, Any]:
    """`page_from_snapshot` from inside the task that took the snapshot, saving a task hop (on a busy
    Celery deployment, 10-20 s of queueing and start-up); what it opened and resolved, or its error. It
    never fails that task (the snapshot is published): the `page_from_snapshot` task runs next, repeats
    what this could not deliver, and fails visibly."""
    return _at_once(page_from_snapshot, cluster_name, snapshot_id, dag_id, run_id, left_to="page_from_snapshot")


def page_from_groups(
    cluster_name: str, group_snapshot_id: str, at: datetime, dag_id: str, run_id: str
) -> dict[str, Any]:
    """Page, remind or resolve the groups group collection `group_snapshot_id` rates ERR or WARN
    (`validation.group_checks`), without waiting for the analysis."""
    settings = load_settings()
    cluster = settings.cluster(cluster_name)
    look = group_checks.look(lake_of(settings), cluster.name, group_snapshot_id, cluster.thresholds)
    links = Links(airflow_run=run_link(dag_id, run_id))
    sent = send(
        settings,
        cluster,
        collection_alerts(cluster.name, look, links),
        judgement=collection_judgement(look),
        at=at,
        links=links,
    )
    return {"cluster": cluster.name, **look.summary(), "alerts": sent.to_dict()}


def send(
    settings: Settings, cluster: ClusterConfig, alerts: list[Alert], *, judgement: Judgement, at: datetime, links: Links
) -> DispatchReport:
    """`alerts` through the cluster's notifiers and its owners' (`[[owners]]`), judging what `judgement` says."""
    owners = settings.owners_on(cluster.name)
    return dispatch(
        cluster.name,
        alerts,
        at,
        lake_root=settings.lake_root,
        notifiers=notifiers_for_cluster(cluster, settings.lake_root, owners),
        owners=owners,
        reminder=cluster.alert_reminder,
        run_links=links,
        judgement=judgement,
    )


def page_groups_at_once(cluster_name: str, group_snapshot_id: str, dag_id: str, run_id: str) -> dict[str, Any]:
    """`page_from_groups` from inside the task that collected the groups: what it opened and resolved, or
    its error. It never fails that task (the collection is published): the analysis' `page_groups` pages
    the same groups minutes later."""
    return _at_once(page_from_groups, cluster_name, group_snapshot_id, dag_id, run_id, left_to="the analysis")


def _at_once(
    page: Callable[[str, str, datetime, str, str], dict[str, Any]],
    cluster_name: str,
    batch_id: str,
    dag_id: str,
    run_id: str,
    *,
    left_to: str,
) -> dict[str, Any]:
    """`page` of batch `batch_id` now: what it opened and resolved, or its error (logged, never raised:
    `left_to` pages it again)."""
    try:
        paged = page(cluster_name, batch_id, datetime.now(UTC), dag_id, run_id)
    except Exception as e:  # left to the task or the analysis named in `left_to`
        log.warning("cluster %s: paging from %s failed, left to %s: %s", cluster_name, batch_id, left_to, e)
        return {"error": f"{type(e).__name__}: {e}"[:300]}
    return {"opened": list(paged["alerts"]["opened"]), "resolved": list(paged["alerts"]["resolved"])}


def page_blind_spots(cluster_name: str, dag_id: str, run_id: str) -> dict[str, Any]:
    """Page "cannot see cluster X" for each collection stage whose latest attempt failed (the
    cluster's other incidents are held, not resolved, while it fires); when none failed, resolve such
    pages at once (only those: the analysis judges the rest)."""
    settings = load_settings()
    cluster = settings.cluster(cluster_name)
    links = Links(airflow_run=run_link(dag_id, run_id))
    blind = PipelineStatus(settings.lake_root).blind_alerts(cluster.name, links)
    # seeing again: this run judges only the pipeline's own pages (the analysis judges the rest)
    seeing = Judgement(scope=lambda key: key.startswith(PIPELINE_KEY_PREFIX))
    sent = send(settings, cluster, blind, judgement=EVERYTHING if blind else seeing, at=datetime.now(UTC), links=links)
    causes = "; ".join(f"{a.details.get('stage')}: {a.cause}" for a in blind)
    return {
        "cluster": cluster.name,
        "blind": [a.key for a in blind],
        "opened": list(sent.opened),
        "resolved": list(sent.resolved),
        "causes": causes,
    }
