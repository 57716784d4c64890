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
