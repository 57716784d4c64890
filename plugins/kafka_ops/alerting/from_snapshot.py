"""The pages a snapshot raises by itself, as it lands (`validation.snapshot_checks`), and what such a
run judges: only those keys, on that snapshot's capture time (`incidents.Judgement`).

The alerts carry the catalogue's words, and the keys of the analysis' gates (`no_offline_partitions`,
`no_under_min_isr_partitions`) or the snapshot's own (`no_broker_down`): a problem paged here and seen
again by the analysis minutes later stays one incident.
"""

from __future__ import annotations

from kafka_ops.alerting.alert import Alert, Links
from kafka_ops.alerting.from_findings import affected_item, subjects_of
from kafka_ops.alerting.incidents import Judgement
from kafka_ops.problems.registry import GATES
from kafka_ops.validation.snapshot_checks import CHECKS, SnapshotLook

SNAPSHOT_ONLY = frozenset(CHECKS) - set(GATES)
"""The keys only a snapshot judges (no gate of the analysis does): the analysis neither opens nor resolves them."""

SHOWN = 10
"""Affected items listed in a page (the rest as "and N more")."""


def snapshot_alerts(cluster: str, look: SnapshotLook, links: Links) -> list[Alert]:
    """An alert per failed snapshot check."""
    snapshot_id = look.findings.snapshot_id
    return [
        Alert(
            cluster=cluster,
            key=p.key,
            severity="critical" if p.severity == "critical" else "warning",
            title=p.title,
            since=p.since,
            affected=tuple(affected_item(row) for row in p.rows[:SHOWN]),
            affected_total=len(p.rows),
            cause=p.cause,
            action=p.action or "",
            links=links,
            details={"gate": p.key, "snapshot_id": snapshot_id, "paged_from": "snapshot"},
            **subjects_of(p.rows, len(p.rows)),
        )
        for p in look.problems
    ]


def snapshot_judgement(look: SnapshotLook) -> Judgement:
    """The snapshot checks' keys, judged on the snapshot's capture time."""
    captured_at = look.findings.captured_at
    return Judgement(
        scope=lambda key: key in CHECKS,
        evidence=lambda key: captured_at if key in CHECKS else None,
        named=frozenset(CHECKS),
    )
