"""`[web]` in the settings file and `$KAFKA_OPS_METRICS_PROFILE`: the metrics endpoint's profile and staleness."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.settings import WebSettings, load_settings


def settings_file(tmp_path: Path, web: str) -> Path:
    path = tmp_path / "kafka_ops.toml"
    path.write_text(f'{web}[[clusters]]\nname = "c1"\n')
    return path


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_OPS_METRICS_PROFILE", raising=False)
    web = load_settings(settings_file(tmp_path, "")).web
    assert web == WebSettings("kafka-lag-exporter", 30.0)
    assert web.metrics_max_age == timedelta(minutes=30)


def test_file_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_OPS_METRICS_PROFILE", raising=False)
    path = settings_file(tmp_path, '[web]\nmetrics_profile = "kminion"\nmetrics_max_age_minutes = 10\n')
    assert load_settings(path).web == WebSettings("kminion", 10.0)
    monkeypatch.setenv("KAFKA_OPS_METRICS_PROFILE", "kafka_exporter")
    assert load_settings(path).web == WebSettings("kafka_exporter", 10.0)


@pytest.mark.parametrize(
    ("web", "message"),
    [
        ('[web]\nmetrics_profile = "jmx_exporter"\n', "'metrics_profile' must be one of"),
        ("[web]\nmetrics_max_age_minutes = 0\n", "'metrics_max_age_minutes' must be a number of minutes from 1 ms"),
        ("[web]\nport = 8000\n", "[web]: unknown setting(s) ['port']"),
        ('web = "x"\n', "[web] must be a table"),
    ],
)
def test_bad_web_settings_name_the_key(tmp_path: Path, web: str, message: str) -> None:
    path = settings_file(tmp_path, web)
    with pytest.raises(ConfigError, match=r"kafka_ops\.toml") as error:
        load_settings(path)
    assert message in str(error.value)


def test_bad_profile_in_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_OPS_METRICS_PROFILE", "prometheus")
    with pytest.raises(ConfigError, match=r"\$KAFKA_OPS_METRICS_PROFILE: \[web\] 'metrics_profile' must be one of"):
        load_settings(settings_file(tmp_path, ""))
