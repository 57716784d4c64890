"""`[lake]` settings: retention per commit log and Delta maintenance, each wrong value named."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.lake.policy import _DAYS_KEYS, RetentionPolicy
from kafka_ops.lake.schema import COMMIT_TABLES
from kafka_ops.settings import load_settings


def settings_with(tmp_path: Path, lake: str, history_hours: float = 24) -> Path:
    path = tmp_path / "kafka_ops.toml"
    path.write_text(
        f'[[clusters]]\nname = "c1"\n[clusters.thresholds]\nhistory_hours = {history_hours}\n[lake]\n{lake}\n'
    )
    return path


def test_defaults_keep_batches_35_days_and_plans_and_audit_forever() -> None:
    policy = RetentionPolicy()
    assert [policy.keep_days(t) for t in ("snapshots", "group_snapshots", "analysis_runs")] == [35, 35, 35]
    assert policy.keep_days("snapshot_validations") == 35
    assert policy.keep_days("remediation_plans") is None
    assert policy.keep_days("remediation_audit") is None
    assert (policy.vacuum_retention_hours, policy.log_retention_hours) == (168, 168)
    assert policy.keep_reports_days == 35  # HTML reports: as long as the findings they show


def test_every_commit_log_has_a_retention_key() -> None:
    assert set(_DAYS_KEYS.values()) == COMMIT_TABLES


def test_file_values_and_forever(tmp_path: Path) -> None:
    text = 'keep_snapshots_days = 10\nkeep_findings_days = "forever"\nvacuum_retention_hours = 48\n'
    text += "keep_reports_days = 7"
    policy = load_settings(settings_with(tmp_path, text)).lake
    assert policy.keep_reports_days == 7
    assert load_settings(settings_with(tmp_path, 'keep_reports_days = "forever"')).lake.keep_reports_days is None
    assert policy.keep_days("snapshots") == 10
    assert policy.keep_days("analysis_runs") is None
    assert policy.vacuum_retention_hours == 48


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "keep_snapshots_days = 0",
            "'keep_snapshots_days' must be a whole number of days from 1 to 36525 (100 years) or 'forever', got 0",
        ),
        ("keep_snapshots_days = 740000", "'keep_snapshots_days' must be a whole number of days from 1 to 36525"),
        ("keep_groups_days = 2.5", "'keep_groups_days' must be a whole number of days from 1 to 36525"),
        (
            'keep_audit_days = "always"',
            "'keep_audit_days' must be a whole number of days from 1 to 36525 (100 years) or 'forever'",
        ),
        ("vacuum_retention_hours = true", "'vacuum_retention_hours' must be a whole number of hours from 0 to 876600"),
        ("vacuum_retention_hours = 12", "'vacuum_retention_hours' must be at least 24"),
        ("vacuum_retention_hours = 200", "'log_retention_hours' (168) must be at least 'vacuum_retention_hours'"),
        (
            "keep_reports_days = -3",
            "'keep_reports_days' must be a whole number of days from 1 to 36525 (100 years) or 'forever', got -3",
        ),
        ("vacuum_retention_hours = 876601", "'vacuum_retention_hours' must be a whole number of hours from 0 to 8766"),
        ("compact_target_mb = 1048577", "'compact_target_mb' must be a whole number from 1 to 1048576"),
        ("compact_target_mb = 0", "'compact_target_mb' must be a whole number from 1 to 1048576"),
        ("keep_validations_days = 7", "'keep_validations_days' (7) must be at least 'keep_snapshots_days'"),
        ("keep_everything = true", "[lake] unknown setting(s) ['keep_everything']"),
    ],
)
def test_bad_values_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = settings_with(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_settings(path)
    assert str(path) in str(e.value)
    assert message in str(e.value)


def test_history_must_outlive_the_analysis_window(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'keep_snapshots_days' \(2 days\) is shorter than the analysis history"):
        load_settings(settings_with(tmp_path, "keep_snapshots_days = 2", history_hours=72))
    with pytest.raises(ConfigError, match="'vacuum_retention_hours' must be at least 200"):
        load_settings(settings_with(tmp_path, "vacuum_retention_hours = 168", history_hours=200))
