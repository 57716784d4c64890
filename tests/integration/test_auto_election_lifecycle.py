"""The analysis DAG's automatic election on the real sandbox, from the decision to the end of its lifecycle:
once leader imbalance persisted over the configured analyses, it plans on a fresh snapshot and executes
through the executor; its lifecycle starts at `detected`, dated when it decided and saying why."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_ops.airflow.auto_remediation import ACTOR, auto_elect
from kafka_ops.lake.open import lake_of
from kafka_ops.remediation.lifecycle import lifecycles
from kafka_ops.settings import load_settings
from sandbox import SandboxCluster
from tests.unit.remediation.test_auto_election import IMBALANCED, publish_analysis

pytestmark = [pytest.mark.integration]


def test_an_automatic_election_is_detected_planned_and_executed(
    healthy_sandbox: SandboxCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    zookeeper = {"conn_type": "zookeeper", "host": healthy_sandbox.zookeeper_hosts,
                 "extra": {"chroot": healthy_sandbox.chroot}}  # fmt: skip
    kafka = {"conn_type": "kafka", "host": healthy_sandbox.bootstrap_servers, "extra": {"request_timeout_ms": 10_000}}
    monkeypatch.setenv("AIRFLOW_CONN_ZK_AUTO", json.dumps(zookeeper))
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_AUTO", json.dumps(kafka))
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(
        f'lake_root = "{tmp_path / "lake"}"\n[[clusters]]\nname = "auto"\nzookeeper_conn_id = "zk_auto"\n'
        'kafka_conn_id = "kafka_auto"\nwrites_enabled = true\nauto_remediation = true\nauto_election_after_runs = 2\n'
        "remediation_controller_quiet_seconds = 0\n"
    )
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    lake = lake_of(load_settings())
    at = datetime.now(UTC) - timedelta(minutes=10)
    for i in range(2):
        publish_analysis(lake, f"s{i}", at + timedelta(minutes=5 * i), IMBALANCED, cluster="auto")
    before = datetime.now(UTC)

    decided = auto_elect("auto", "analysis-run-1")

    assert decided["elected"] is True, decided
    (found,) = lifecycles(lake, "auto")
    assert found.plan_id == decided["plan"]["plan_id"]
    states = [s.state for s in found.steps]
    assert states[:2] == ["detected", "planned"] and states[-1] in ("done", "planned"), states
    detected = found.steps[0]
    assert detected.by == ACTOR and "each of the last 2 analyses" in detected.detail
    assert before <= detected.at <= found.steps[1].at
    if decided["execution"]["status"] != "nothing_to_do":  # the sandbox's leaders may already be preferred
        assert states[-2:] == ["executing", "done"]
