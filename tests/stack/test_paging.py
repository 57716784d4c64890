"""The time-to-page benchmark's readings, without a stack: when a kafka-ops page (its own Slack payload,
built by `kafka_ops.alerting.slack.payload`, so a change of the headline fails here) and the baseline's
Alertmanager notification arrived for one cluster after a fault; its figures over faults; and the
baseline's Prometheus and Alertmanager configs as promtool and amtool check them."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.alerting.alert import Alert
from kafka_ops.alerting.incidents import Notification
from kafka_ops.alerting.slack import payload
from stack import baseline
from stack.monitoring import write_json_yaml
from stack.paging import first_alert, first_page, first_resolve, group_summary, percentile, summary, targets

pytestmark = pytest.mark.stack

T0 = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
ZK_DOWN = Alert("sandbox-zk", "offline", "critical", "1 broker offline", T0)
KRAFT_DOWN = Alert("sandbox-kraft", "offline", "critical", "1 broker offline", T0)


def page(second: int, action: str, alert: Alert = ZK_DOWN) -> dict[str, Any]:
    at = T0 + timedelta(seconds=second)
    note = Notification(action, "alerts_webhook", alert, at, T0)  # type: ignore[arg-type]
    return {"received_at": at.isoformat(), "path": "/chat", "body": payload(note)}


def alert(second: int, status: str, cluster: str, receiver: str = baseline.RECEIVER) -> dict[str, Any]:
    at = T0 + timedelta(seconds=second)
    labels = {"alertname": baseline.ALERT, "cluster": cluster}
    body = {"status": status, "alerts": [{"status": status, "labels": labels, "fingerprint": "f"}]}
    return {"received_at": at.isoformat(), "path": f"/alertmanager/{receiver}", "body": body}


def test_the_first_page_is_the_clusters_first_open_after_the_fault_not_a_reminder_nor_another_cluster() -> None:
    records = [page(-30, "open"), page(5, "open", KRAFT_DOWN), page(8, "remind"), page(40, "open"), page(90, "open")]
    found = first_page(records, "sandbox-zk", T0)
    assert found is not None and found.at == T0 + timedelta(seconds=40) and found.title == "1 broker offline"
    assert first_page(records, "sandbox-other", T0) is None


def test_a_group_stop_is_timed_to_its_own_groups_page() -> None:
    """The page about the stopped group, not an earlier one about another group of the same cluster."""
    other = Alert("sandbox-zk", "no_group_in_err:billing", "critical", "consumer group billing is in ERR", T0)
    mine = Alert("sandbox-zk", "no_group_in_err:ttp-zk-1", "critical", "consumer group ttp-zk-1 is in ERR", T0)
    records = [page(20, "open", other), page(50, "open", mine)]
    found = first_page(records, "sandbox-zk", T0, "consumer group ttp-zk-1 is in ERR")
    assert found is not None and found.at == T0 + timedelta(seconds=50) and found.key == "no_group_in_err:ttp-zk-1"


def stop(page_s: float | None, resolve_s: float | None, delay_s: float | None = None) -> dict[str, Any]:
    return {"cluster": "sandbox-kraft", "kind": "kraft", "group": "g", "stop": "left", "stopped_at": "10:00:00",
            "page_s": page_s, "resolve_s": resolve_s, "collection_to_page_s": delay_s}  # fmt: skip


def test_group_stops_count_a_missing_page_as_the_timeout_and_name_it() -> None:
    result = group_summary([stop(60.0, 40.0, 30.0), stop(None, None), stop(80.0, 45.0, 35.0)], timeout_s=900)
    assert (result["stops"], result["p50_s"], result["p95_s"], result["resolve_p95_s"]) == (3, 80.0, 900, 900)
    assert (result["collection_to_page_p50_s"], result["collection_to_page_p95_s"]) == (30.0, 35.0)
    assert result["missed"] == ["sandbox-kraft group g left at 10:00:00: no page", "sandbox-kraft group g left at "
                                "10:00:00: no resolve"]  # fmt: skip
    assert group_summary([], timeout_s=900) == {"stops": 0}


def test_the_resolve_is_of_the_same_incident_after_the_restart() -> None:
    """Matched on the incident's key, whatever its title became meanwhile (the count in it moves)."""
    restart = T0 + timedelta(seconds=60)
    retitled = Alert("sandbox-zk", "offline", "critical", "3 brokers offline", T0)
    other = Alert("sandbox-zk", "no_broker_down", "critical", "1 broker offline", T0)
    records = [page(30, "resolve"), page(70, "resolve", KRAFT_DOWN), page(80, "resolve", other),
               page(95, "resolve", retitled)]  # fmt: skip
    opened = first_page([page(10, "open")], "sandbox-zk", T0)
    assert opened is not None and opened.key == "offline"
    assert first_resolve(records, "sandbox-zk", opened, restart) == T0 + timedelta(seconds=95)
    assert first_resolve(records, "sandbox-zk", replace(opened, key="no_offline_partitions"), restart) is None


def test_the_baseline_alert_is_its_receivers_and_its_clusters_in_the_asked_status() -> None:
    records = [
        alert(20, "firing", "sandbox-zk", receiver="kafka-ops-critical"),
        alert(50, "firing", "sandbox-kraft"),
        alert(110, "firing", "sandbox-zk"),
        alert(300, "resolved", "sandbox-zk"),
        page(120, "open"),
    ]
    assert first_alert(records, baseline.RECEIVER, "sandbox-zk", "firing", T0) == T0 + timedelta(seconds=110)
    assert first_alert(records, baseline.RECEIVER, "sandbox-zk", "resolved", T0) == T0 + timedelta(seconds=300)
    assert first_alert(records, baseline.RECEIVER, "sandbox-kraft", "resolved", T0) is None


def test_p95_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]
    assert (percentile(values, 0.95), percentile(values, 0.5), percentile([7.0], 0.95)) == (19.0, 10.0, 7.0)


def fault(kind: str, page_s: float | None, floor_s: float = 6.0, baseline_s: float = 120.0) -> dict[str, Any]:
    return {"cluster": f"sandbox-{kind}", "kind": kind, "broker": 3, "killed_at": "t", "floor_s": floor_s,
            "page_s": page_s, "baseline_s": baseline_s, "resolve_s": 30.0}  # fmt: skip


def test_a_page_that_never_came_counts_as_the_timeout_and_is_named() -> None:
    result = summary([fault("zk", 40.0), fault("kraft", None), fault("zk", 50.0)], timeout_s=900)
    assert (result["p50_s"], result["p95_s"], result["max_s"]) == (50.0, 900, 900)
    assert result["missed"] == ["sandbox-kraft broker 3 killed at t: no page"]
    assert set(result["by_kind"]) == {"zk", "kraft"} and result["by_kind"]["zk"]["p95_s"] == 50.0
    met = {name: t["met"] for name, t in targets(result).items()}
    assert met == {"p95_le_60s": False, "p95_le_floor_plus_30s": False, "p95_below_baseline": False}


def test_targets_met_when_pages_come_soon_after_the_floor_and_before_the_baseline() -> None:
    result = summary([fault("zk", 20.0), fault("kraft", 25.0)], timeout_s=900)
    assert all(t["met"] for t in targets(result).values()), targets(result)


def run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_the_baselines_configs_check_with_promtool_and_amtool(tmp_path: Path) -> None:
    promtool, amtool = shutil.which("promtool"), shutil.which("amtool")
    assert promtool and amtool, "`make prometheus` installs promtool and amtool"
    rules = write_json_yaml(tmp_path / "rules.yml", baseline.rules())
    config = baseline.prometheus_config({"sandbox-zk": [9101, 9102], "sandbox-kraft": [9201]}, 9093, rules)
    checked = run(promtool, "check", "config", str(write_json_yaml(tmp_path / "prometheus.yml", config)))
    assert "SUCCESS: 1 rule files found" in checked
    assert config["global"]["scrape_interval"] == "30s"  # type: ignore[index]
    (rule,) = baseline.rules()["groups"][0]["rules"]  # type: ignore[index]
    assert rule["for"] == "1m" and "underreplicatedpartitions" in rule["expr"]
    manager = baseline.alertmanager_config(8080)
    run(amtool, "check-config", str(write_json_yaml(tmp_path / "am.yml", manager)))
    assert manager["route"]["group_wait"] == "30s"  # type: ignore[index]
