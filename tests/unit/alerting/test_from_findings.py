from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kafka_ops.alerting.alert import Links
from kafka_ops.alerting.from_findings import gate_alerts
from kafka_ops.validation.gates import GateReport, GateResult

AT = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
GROUPS = ("audit", "billing", "legacy", "fresh")


def warn_gate() -> GateReport:
    rows = tuple({"group_id": g, "problem": f"WARN: {g} lags"} for g in GROUPS)
    gate = GateResult(name="no_group_in_warn", severity="warning", passed=False, count=len(rows), rows=rows,
                      cause=None, action=None, since=None, meaning="groups keep up", cluster="c1",
                      snapshot_id="g1", data_docs=None)  # fmt: skip
    return GateReport("c1", "s1", "g1", (gate,), None, 0.1)


def behind(group: str, seconds: float | None, method: str | None, lower: bool | None = False) -> dict[str, Any]:
    return {"group_id": group, "max_lag_seconds": seconds, "max_lag_method": method, "max_is_lower_bound": lower,
            "max_lag_topic": "orders", "max_lag_partition": 3}  # fmt: skip


def test_a_group_alert_says_how_its_time_behind_was_obtained() -> None:
    times = {
        "audit": behind("audit", 2025.0, "extrapolated"),
        "billing": behind("billing", 1200.0, "lower_bound", True),
        # written before max_lag_method existed
        "legacy": {k: v for k, v in behind("legacy", 95.0, None).items() if k != "max_lag_method"},
    }
    alerts = {a.details["group_id"]: a for a in gate_alerts(warn_gate(), Links(), AT, behind=times)}
    assert alerts["audit"].cause == "WARN: audit lags; ~33 min (extrapolated) behind on orders-3"
    assert alerts["audit"].details["lag_seconds"] == 2025.0
    assert alerts["audit"].details["lag_seconds_method"] == "extrapolated"
    assert alerts["billing"].cause == "WARN: billing lags; ≥ 20 min behind on orders-3"
    assert alerts["legacy"].cause == "WARN: legacy lags; ~1 min (estimated) behind on orders-3"
    assert alerts["legacy"].details["lag_seconds_method"] is None
    # no figure: the gate's words alone
    assert alerts["fresh"].cause == "WARN: fresh lags" and "lag_seconds" not in alerts["fresh"].details
