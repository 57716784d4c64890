"""Everything wrong with a cluster now, as alerts: its failed health gates, its untrusted latest batches
and its blind pipeline stages (the analysis DAG's alert step, after `validation.pipeline`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow.fs as pafs

from kafka_ops.alerting.alert import Alert, Links
from kafka_ops.alerting.from_findings import gate_alerts, untrusted_alert
from kafka_ops.alerting.from_snapshot import SNAPSHOT_ONLY
from kafka_ops.alerting.incidents import Judgement
from kafka_ops.alerting.pipeline_status import PipelineStatus
from kafka_ops.lake.schema import COMMIT_TABLE, GROUP_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.validation.gates import GROUP_GATES, GateReport
from kafka_ops.validation.integrity import validation_of
from kafka_ops.validation.lake_batches import find_commit
from kafka_ops.validation.pipeline import latest_analysed

SOURCES = (COMMIT_TABLE, GROUP_COMMIT_TABLE)
LAG_TIME_GROUPS = "lag_time_groups"


def firing_alerts(lake: Lake, cluster: str, gates: GateReport | None, links: Links) -> list[Alert]:
    """Everything wrong with `cluster` now: failed gates, untrusted latest batches, blind stages."""
    alerts: list[Alert] = []
    for source in SOURCES:
        latest = latest_analysed(lake, cluster, source)
        if latest is None:
            continue
        row = validation_of(lake, cluster, latest[0])
        if row is not None and not row["trusted"]:
            docs = Links(row["data_docs"], links.airflow_run, links.report)
            failed = list(row["failed"] or ())
            alerts.append(untrusted_alert(cluster, source, latest[0], failed, since=latest[1], links=docs))
        if source == COMMIT_TABLE and gates is not None:
            alerts += gate_alerts(gates, links, seen_at=latest[1], behind=_time_behind(lake, cluster, gates))
    alerts += PipelineStatus(lake.root).blind_alerts(cluster, links)
    return alerts


def group_alerts(lake: Lake, cluster: str, gates: GateReport, links: Links, seen_at: datetime) -> list[Alert]:
    """The failed group gates of `gates` (a group in ERR or WARN, retention about to take unconsumed
    records, a hanging transaction), one alert per group, as `firing_alerts` words them; `seen_at` is
    the judged group collection's capture time."""
    alerts = gate_alerts(gates, links, seen_at=seen_at, behind=_time_behind(lake, cluster, gates))
    return [a for a in alerts if is_group_key(a.key)]


def is_group_key(key: str) -> bool:
    """Whether incident `key` is a group gate's (`<gate>:<group id>`)."""
    return key.split(":", 1)[0] in GROUP_GATES


def group_judgement(seen_at: datetime) -> Judgement:
    """What the groups' early paging judges: the group gates' keys only (the cluster's other incidents are
    the whole analysis' to judge, later in the same run), on the judged collection's capture time
    `seen_at` (the group collection's own paging may have judged a newer one meanwhile)."""
    return Judgement(scope=is_group_key, evidence=lambda key: seen_at if is_group_key(key) else None)


def analysis_judgement(lake: Lake, cluster: str, gates: GateReport | None) -> Judgement:
    """What the analysis' alerting judges: every key but those only a snapshot pages
    (`from_snapshot.SNAPSHOT_ONLY`), its metadata gates on the analysed snapshot's capture time and its
    group gates on the analysed group collection's (the snapshot DAG may have judged them on a newer
    snapshot or collection meanwhile)."""
    latest = latest_analysed(lake, cluster, COMMIT_TABLE) if gates is not None else None
    if gates is None or latest is None:
        return Judgement(scope=lambda key: key not in SNAPSHOT_ONLY)
    captured_at = latest[1]
    metadata = frozenset(r.name for r in gates.results if r.snapshot_id == gates.snapshot_id)
    groups = gates.group_snapshot_id
    judged = find_commit(lake, GROUP_COMMIT_TABLE, cluster, groups) if groups is not None else None
    groups_at = judged.captured_at if judged is not None else None

    def evidence(key: str) -> datetime | None:
        return captured_at if key in metadata else groups_at if is_group_key(key) else None

    return Judgement(scope=lambda key: key not in SNAPSHOT_ONLY, evidence=evidence, named=metadata)


def _time_behind(lake: Lake, cluster: str, gates: GateReport) -> dict[str, dict[str, Any]]:
    """The `lag_time_groups` rows of the group collection the group gates judged, by group id
    (none when that analysis wrote no such table)."""
    collection = gates.group_snapshot_id
    if collection is None or lake.fs.get_file_info(f"{lake.base}/{LAG_TIME_GROUPS}").type != pafs.FileType.Directory:
        return {}
    return {str(r["group_id"]): r for r in lake.read(LAG_TIME_GROUPS, cluster, [collection]).to_pylist()}
