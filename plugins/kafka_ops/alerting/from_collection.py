"""The pages a group collection raises by itself, as it lands (`validation.group_checks`), and what such
a run judges: only the groups' ERR and WARN keys, on that collection's capture time (`incidents.Judgement`).

The alerts carry the catalogue's words and the group gates' keys (`no_group_in_err:<group>`,
`no_group_in_warn:<group>`), as the analysis' own group alerts do: a group paged here and seen again by
the analysis minutes later stays one incident, and whichever judged the newer collection has the last word.
"""

from __future__ import annotations

from kafka_ops.alerting.alert import Alert, Links
from kafka_ops.alerting.from_findings import affected_item
from kafka_ops.alerting.incidents import Judgement
from kafka_ops.validation.group_checks import CHECKS, CollectionLook


def collection_alerts(cluster: str, look: CollectionLook, links: Links) -> list[Alert]:
    """An alert per group in ERR or WARN."""
    alerts = []
    for key, p in sorted(look.problems.items()):
        check, group = key.split(":", 1)
        alerts.append(
            Alert(
                cluster=cluster,
                key=key,
                severity="critical" if p.severity == "critical" else "warning",
                title=p.title,
                since=p.since,
                affected=tuple(affected_item(row) for row in p.rows[:1]),
                cause=p.cause,
                action=p.action or f"check consumer group {group}",
                links=links,
                details={
                    "gate": check,
                    "group_id": group,
                    "snapshot_id": look.findings.snapshot_id,
                    "paged_from": "group collection",
                },
            )
        )
    return alerts


def collection_judgement(look: CollectionLook) -> Judgement:
    """Every rated group's ERR and WARN keys, judged by name on the collection's capture time: an analysis
    of an older collection, finishing later, neither reopens nor resolves them."""
    captured_at = look.findings.captured_at
    return Judgement(
        scope=is_rated_key,
        evidence=lambda key: captured_at if is_rated_key(key) else None,
        named=frozenset(f"{c}:{g}" for g in look.rated for c in CHECKS),
    )


def is_rated_key(key: str) -> bool:
    """Whether incident `key` is one of Burrow's group statuses (`no_group_in_err:<group>`, ...)."""
    return key.split(":", 1)[0] in CHECKS
