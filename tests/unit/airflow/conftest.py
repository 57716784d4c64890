"""Fixtures of the Airflow task bodies' tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def lake_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Parquet lake under `tmp_path` and the settings of one cluster `c1` writing to it (`$KAFKA_OPS_CONFIG`)."""
    settings = tmp_path / "kafka-ops.toml"
    settings.write_text(f'lake_root = "{tmp_path / "lake"}"\nlake_format = "parquet"\n[[clusters]]\nname = "c1"\n')
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(settings))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    monkeypatch.delenv("KAFKA_OPS_LAKE_FORMAT", raising=False)
    return tmp_path / "lake"
