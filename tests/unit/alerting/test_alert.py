"""`Alert` validates itself; `cannot_see_cluster` says who cannot be seen, why, and what to do."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from kafka_ops.alerting.alert import Affected, Links, cannot_see_cluster
from kafka_ops.errors import AlertError, ZooKeeperUnreachable
from tests.unit.alerting.alerts import LINKS, T0, broker_down


def test_alert_keeps_what_the_gate_said() -> None:
    alert = broker_down()
    assert alert.affected_total == 41 and alert.more_affected == 38
    assert alert.details["under_replicated"] == 40
    assert not alert.blind
    assert [label for label, _ in alert.links.labelled()] == ["Data Docs", "Airflow run", "Report"]
    assert broker_down(affected_total=None).affected_total == 3  # defaults to the listed count
    hash(Links())


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"severity": "error"}, r"severity 'error' is not one of \['critical', 'warning'\]"),
        ({"cluster": "a b"}, "cluster name 'a b' cannot be used"),
        ({"key": ""}, "key must be 1-200 printable characters"),
        ({"key": " padded"}, "key must be"),
        ({"key": "x" * 201}, "key must be"),
        ({"title": "  "}, "empty title"),
        ({"since": datetime(2025, 3, 1, 12)}, "since must be a timezone-aware datetime"),
        ({"affected_total": 2}, "affected_total 2 is less than the 3 items listed"),
        ({"details": {"rate": float("nan")}}, "detail 'rate' is nan"),
        ({"details": {"rows": [1, 2]}}, "detail 'rows' must map a name to a string, number, bool or None"),
    ],
)
def test_bad_alerts_are_refused_by_name(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(AlertError, match=message):
        broker_down(**overrides)


def test_affected_kind_is_checked() -> None:
    with pytest.raises(AlertError, match="affected kind 'host'"):
        Affected("host", "kafka-2")  # type: ignore[arg-type]


def test_cannot_see_cluster_is_a_blind_critical_per_stage() -> None:
    error = ZooKeeperUnreachable("no ZooKeeper server answered at zk1:2181 within 10 s")
    alert = cannot_see_cluster("payments", "ZooKeeper", error, T0, links=LINKS, conn_id="zk_payments")
    assert (alert.key, alert.severity, alert.blind) == ("cannot_see:zookeeper", "critical", True)
    assert alert.title == "cannot see cluster payments: the ZooKeeper snapshot failed"
    assert alert.cause == "ZooKeeperUnreachable: no ZooKeeper server answered at zk1:2181 within 10 s"
    assert "ZooKeeper ensemble" in alert.action and "health is unknown" in alert.action
    assert alert.affected == (Affected("cluster", "payments (ZooKeeper through the Airflow connection 'zk_payments')"),)
    kafka = cannot_see_cluster("payments", "Kafka", "KafkaUnreachable: bootstrap timed out", T0)
    assert kafka.key == "cannot_see:kafka" and "brokers are up" in kafka.action
    with pytest.raises(AlertError, match="'what' must be one of"):
        cannot_see_cluster("payments", "Spark", "x", T0)  # type: ignore[arg-type]
