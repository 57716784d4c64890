"""Alerts as a health gate would build them, at fixed times (never the wall clock)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kafka_ops.alerting.alert import Affected, Alert, Links

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
LINKS = Links(
    data_docs="http://airflow.example/data_docs/payments/index.html",
    airflow_run="http://airflow.example/dags/kafka_health_analysis/runs/scheduled__2025-03-01T12:00",
    report="http://airflow.example/reports/payments.html",
)


def broker_down(cluster: str = "payments", **overrides: Any) -> Alert:
    """What the gate says when broker 2 is killed."""
    fields: dict[str, Any] = {
        "cluster": cluster,
        "key": "under_replicated",
        "severity": "critical",
        "title": "40 partitions under-replicated",
        "since": T0,
        "affected": (
            Affected("broker", "2 (rack b): down, 40 partitions lost it from their ISR"),
            Affected("partition", "orders-0: isr [1, 3] of [1, 2, 3]"),
            Affected("partition", "orders-1: isr [3, 1] of [2, 3, 1]"),
        ),
        "affected_total": 41,
        "cause": "broker 2 is down: 40 partitions under-replicated",
        "action": "restart broker 2; once it is back in every ISR, run kafka_preferred_leader_election",
        "links": LINKS,
        "details": {"under_replicated": 40, "offline": 0, "brokers_down": "2"},
    }
    fields.update(overrides)
    return Alert(**fields)


def lagging_group(cluster: str = "payments", **overrides: Any) -> Alert:
    fields: dict[str, Any] = {
        "cluster": cluster,
        "key": "group_lag:billing",
        "severity": "warning",
        "title": "consumer group billing is 15 minutes behind",
        "since": T0,
        "affected": (Affected("group", "billing: lag 120000 on orders, growing"),),
        "cause": "the group's consumers stopped committing 15 minutes ago",
        "action": "check the billing consumers (kafka-consumer-groups.sh --describe --group billing)",
        "links": LINKS,
    }
    fields.update(overrides)
    return Alert(**fields)
