"""When a page arrived, read from the webhook receiver's records (`stack.webhook.read_received`): a
kafka-ops page (the Slack-style `/chat` body, `soak_report.OPEN`/`RESOLVED`) and an Alertmanager
notification of the Prometheus baseline (`/alertmanager/<receiver>`), for one cluster, after a moment;
and the figures of `bench/time_to_page.py` over its faults."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from stack.soak_report import OPEN, RESOLVED, problem_key


@dataclass(frozen=True)
class Page:
    at: datetime
    title: str
    key: str | None = None
    """The incident's key (None from a body without one): its resolve is matched on it."""


def _received(record: dict[str, Any], after: datetime) -> datetime | None:
    at = datetime.fromisoformat(record["received_at"])
    return at if at >= after else None


def first_page(records: list[dict[str, Any]], cluster: str, after: datetime, title: str | None = None) -> Page | None:
    """The first kafka-ops page (an incident opened or escalated, not a reminder) about `cluster` after `after`
    (with `title` only, when given)."""
    for record in records:
        at, body = _received(record, after), record.get("body")
        if at is None or not isinstance(body, dict) or str(record.get("path", "")).startswith("/alertmanager/"):
            continue
        opened = OPEN.match(str(body.get("text", "")))
        if opened and opened["cluster"] == cluster and not opened["reminder"] and title in (None, opened["title"]):
            return Page(at, opened["title"], problem_key(body))
    return None


def first_resolve(records: list[dict[str, Any]], cluster: str, page: Page, after: datetime) -> datetime | None:
    """When kafka-ops resolved the incident `page` opened on `cluster` (by its key; by its title for a page
    without one) after `after`."""
    for record in records:
        at, body = _received(record, after), record.get("body")
        if at is None or not isinstance(body, dict):
            continue
        resolved = RESOLVED.match(str(body.get("text", "")))
        if resolved is None or resolved["cluster"] != cluster:
            continue
        if (problem_key(body) == page.key) if page.key is not None else resolved["title"] == page.title:
            return at
    return None


def first_alert(
    records: list[dict[str, Any]], receiver: str, cluster: str, status: str, after: datetime
) -> datetime | None:
    """The first Alertmanager notification to `receiver` after `after` carrying an alert of `cluster`
    (its `cluster` label) in `status` ("firing" or "resolved")."""
    for record in records:
        at, body = _received(record, after), record.get("body")
        if at is None or not isinstance(body, dict) or record.get("path") != f"/alertmanager/{receiver}":
            continue
        for alert in body.get("alerts", []):
            if alert.get("status") == status and (alert.get("labels") or {}).get("cluster") == cluster:
                return at
    return None


def percentile(values: list[float], q: float) -> float:
    """The `q` quantile (0..1) by the nearest rank: of 20 values, p95 is the 19th smallest."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summary(faults: list[dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    """The figures over `faults`; a page, floor or resolve that never came counts as `timeout_s`."""

    def figures(key: str, of: list[dict[str, Any]]) -> list[float]:
        return [f[key] if f[key] is not None else timeout_s for f in of]

    out: dict[str, Any] = {}
    if faults:
        pages = figures("page_s", faults)
        out |= {
            "p50_s": percentile(pages, 0.5),
            "p95_s": percentile(pages, 0.95),
            "max_s": max(pages),
            "floor_p95_s": percentile(figures("floor_s", faults), 0.95),
            "baseline_p95_s": percentile(figures("baseline_s", faults), 0.95),
            "resolve_p95_s": percentile(figures("resolve_s", faults), 0.95),
        }
    out["by_kind"] = {
        kind: {
            "p50_s": percentile(figures("page_s", of), 0.5),
            "p95_s": percentile(figures("page_s", of), 0.95),
            "floor_p95_s": percentile(figures("floor_s", of), 0.95),
            "baseline_p95_s": percentile(figures("baseline_s", of), 0.95),
        }
        for kind in ("zk", "kraft")
        if (of := [f for f in faults if f["kind"] == kind])
    }
    out["missed"] = [
        f"{f['cluster']} broker {f['broker']} killed at {f['killed_at']}: no {key.removesuffix('_s')}"
        for f in faults
        for key in ("floor_s", "page_s", "baseline_s", "resolve_s")
        if f[key] is None
    ]
    return out


def targets(result: dict[str, Any]) -> dict[str, Any]:
    if "p95_s" not in result:
        return {}
    p95, floor, base = result["p95_s"], result["floor_p95_s"], result["baseline_p95_s"]
    return {
        "p95_le_60s": {"target": 60, "value": p95, "met": p95 <= 60},
        "p95_le_floor_plus_30s": {"target": round(floor + 30, 1), "value": p95, "met": p95 <= floor + 30},
        "p95_below_baseline": {"target": base, "value": p95, "met": p95 < base},
    }


def group_summary(stops: list[dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    """The figures over consumer group stops (`stack.group_stops`); a page or resolve that never came
    counts as `timeout_s`, and the stop is listed in `missed`."""
    if not stops:
        return {"stops": 0}
    pages = [f["page_s"] if f["page_s"] is not None else timeout_s for f in stops]
    resolves = [f["resolve_s"] if f["resolve_s"] is not None else timeout_s for f in stops]
    delays = [f["collection_to_page_s"] for f in stops if f.get("collection_to_page_s") is not None]
    return {
        "stops": len(stops),
        "p50_s": percentile(pages, 0.5),
        "p95_s": percentile(pages, 0.95),
        "max_s": max(pages),
        "collection_to_page_p50_s": percentile(delays, 0.5) if delays else None,
        "collection_to_page_p95_s": percentile(delays, 0.95) if delays else None,
        "resolve_p95_s": percentile(resolves, 0.95),
        "missed": [
            f"{f['cluster']} group {f['group']} {f['stop']} at {f['stopped_at']}: no {key.removesuffix('_s')}"
            for f in stops
            for key in ("page_s", "resolve_s")
            if f[key] is None
        ],
    }
