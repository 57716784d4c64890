"""The analysis DAG's automatic election decides without writing unless the cluster allows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.airflow.auto_remediation import auto_elect


def settings_file(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "kafka-ops.toml"
    path.write_text(f'lake_root = "{tmp_path / "lake"}"\n[[clusters]]\nname = "c1"\n{extra}\n')
    return path


def test_off_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings_file(tmp_path, "")))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    off = {"cluster": "c1", "elected": False, "reason": "auto_remediation is off for this cluster"}
    assert auto_elect("c1", "r1") == off


def test_no_election_without_persistent_imbalance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allowed = "writes_enabled = true\nauto_remediation = true\nauto_election_after_runs = 2"
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings_file(tmp_path, allowed)))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    decided = auto_elect("c1", "r1")
    assert decided["elected"] is False and "2 needed" in decided["reason"]  # no analysis yet: nothing is written


def test_an_election_that_waits_for_an_approver_asks_for_an_approval_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `auto_remediation_approval`, persistent imbalance writes nothing: it returns the conf of an election
    run with Approve in the UI, which the election DAG's own form accepts, saying why."""
    from datetime import UTC, datetime, timedelta  # noqa: PLC0415

    from kafka_ops.lake.open import lake_of  # noqa: PLC0415
    from kafka_ops.planning.request import ELECTION_FORM, parse_request  # noqa: PLC0415
    from kafka_ops.remediation.store import stored_plan  # noqa: PLC0415
    from kafka_ops.settings import load_settings  # noqa: PLC0415
    from tests.unit.remediation.test_auto_election import IMBALANCED, publish_analysis  # noqa: PLC0415

    allowed = ('writes_enabled = true\nauto_remediation = true\nauto_election_after_runs = 2\n'
               'auto_remediation_approval = true\napprovers = ["ana"]')  # fmt: skip
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings_file(tmp_path, allowed)))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    settings = load_settings()
    at = datetime.now(UTC) - timedelta(minutes=10)
    for i in range(2):
        publish_analysis(lake_of(settings), f"s{i}", at + timedelta(minutes=5 * i), IMBALANCED)

    decided = auto_elect("c1", "r1")

    assert (decided["elected"], decided["awaiting_approval"]) == (False, True)
    request = parse_request(decided["conf"], settings, ELECTION_FORM, stored=stored_plan)
    assert request.approve_in_ui and request.dry_run and request.detected == decided["reason"]
    assert "each of the last 2 analyses" in decided["reason"]
    assert not (tmp_path / "lake" / "remediation_plans").exists()  # nothing planned, nothing written


def test_an_election_waiting_for_approval_needs_approvers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_ops.errors import ConfigError  # noqa: PLC0415
    from kafka_ops.settings import ClusterConfig  # noqa: PLC0415

    with pytest.raises(ConfigError, match="'auto_remediation_approval' = true needs 'approvers' or 'approver_roles'"):
        ClusterConfig("c1", writes_enabled=True, auto_remediation=True, auto_remediation_approval=True)
