"""`kafka-ops remediation clear-throttles` picks its live source and back end from its arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.cli import main
from kafka_ops.lake.open import lake_at
from kafka_ops.remediation.store import save_plan
from tests.unit.remediation.clusters import rf2_plan

PLAN = rf2_plan()
NOWHERE = "127.0.0.1:1"  # nothing listens: a test that reached the cluster would fail


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    lake = tmp_path / "lake"
    path = tmp_path / "kafka-ops.toml"
    path.write_text(
        f'lake_root = "{lake}"\n'
        '[[clusters]]\nname = "c1"\nwrites_enabled = true\nmetadata_source = "kraft"\n'
        'remediation_backend = "admin_api"\n'
        '[[clusters]]\nname = "zk"\nwrites_enabled = true\nremediation_backend = "zookeeper"\n'
    )
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(path))
    save_plan(lake_at(lake), PLAN, created_by="pytest")
    return lake


def clear(*args: str) -> list[str]:
    return ["remediation", "clear-throttles", "--plan-id", PLAN.plan_id, *args]


def test_a_kraft_cluster_is_cleared_through_its_brokers_alone(
    settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # no --zookeeper: the KRaft route reaches the executor, whose refusal (the plan never ran) comes before any read
    assert main(clear("--cluster", "c1", "--bootstrap-servers", NOWHERE)) == 2
    assert capsys.readouterr().err == (
        f"kafka-ops: plan {PLAN.plan_id}: refused (clear throttles): the plan was never executed: it set no throttle\n"
    )


def test_without_zookeeper_the_zookeeper_back_end_is_refused_naming_the_setting(
    settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(clear("--cluster", "zk", "--bootstrap-servers", NOWHERE)) == 2
    assert "remediation_backend = 'zookeeper', but the cluster is read from KRaft (no ZooKeeper): set " \
        "remediation_backend = 'admin_api'" in capsys.readouterr().err  # fmt: skip


def test_a_live_source_is_required(settings: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(clear("--cluster", "c1")) == 2
    assert capsys.readouterr().err == (
        "kafka-ops: remediation clear-throttles needs --zookeeper (a ZooKeeper cluster) or --bootstrap-servers "
        "(a KRaft cluster)\n"
    )


def test_a_snapshot_needs_a_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--lake", str(tmp_path / "lake")]) == 2
    assert capsys.readouterr().err == "kafka-ops: snapshot needs --zookeeper or --bootstrap-servers (or both)\n"
