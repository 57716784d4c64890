"""Fuzzing the settings file parser: any TOML an operator may write, and text that is not TOML.

Hypothesis starts from a settings file that sets every key, replaces values with anything TOML
holds (wrong types, booleans for numbers, integers too large for a float, inf and nan, strings
that are no name, regex or connection id), drops and adds keys, and also gives raw text and bytes
that are not UTF-8. The contract: `Settings` whose every value is usable, or `ConfigError`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_ops.errors import ConfigError
from kafka_ops.lake.names import check_name
from kafka_ops.settings import REMEDIATION_BACKENDS, Settings, load_settings
from kafka_ops.thresholds import COUNTS, DURATIONS
from tests.unit.json_strategies import FUZZ, mutated

FULL = {
    "lake_root": "var/lake",
    "clusters": [
        {"name": "payments", "zookeeper_conn_id": "zk", "kafka_conn_id": "kafka", "writes_enabled": True,
         "groups_include": "orders-.*", "groups_exclude": "test-.*", "alert_conn_ids": ["slack"],
         "alert_reminder_minutes": 60, "remediation_backend": "zookeeper", "remediation_controller_quiet_seconds": 0,
         "auto_remediation": True, "auto_election_after_runs": 3, "cordoned_brokers": [4, 0],
         "thresholds": {"history_hours": 2, "lag_allowed": 0, "stuck_reassignment_minutes": 30.5,
                        "load_window_hours": 1, "lag_window": 10, "disk_days_warning": 14},
         "capacity": {"disk_bytes": 2_000_000_000_000, "max_disk_share": 0.8, "brokers": {"4": {"disk_bytes": 10}}}},
        {"name": "logs"},
    ],
    "web": {"metrics_max_age_minutes": 30},
    "lake": {"keep_snapshots_days": 35, "keep_audit_days": "forever", "vacuum_retention_hours": 168,
             "log_retention_hours": 168, "compact_target_mb": 256},
}  # fmt: skip
NOW = datetime(2026, 11, 28, tzinfo=UTC)
A = '[[clusters]]\nname = "a"\n'


def toml(value: Any) -> str:
    """`value` as a TOML value (inline tables and arrays); None, which TOML lacks, becomes an empty array."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else "inf"
            if value == math.inf
            else "-inf"
            if value == -math.inf
            else repr(value)
        )
    if isinstance(value, str):
        return json.dumps(value)  # TOML basic strings take JSON's escapes (a lone surrogate is refused by TOML)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return "[]"


def toml_file(document: Any) -> str:
    try:
        if not isinstance(document, dict):
            return f"clusters = {toml(document)}\n"
        return "".join(f"{json.dumps(k)} = {toml(v)}\n" for k, v in document.items())
    except RecursionError:  # `nested(5000)` somewhere: its text, written by hand
        return "clusters = " + "[" * 5000 + "]" * 5000 + "\n"


FILES = st.one_of(
    mutated([FULL]).map(toml_file),
    st.just(toml_file(FULL)),
    st.text(max_size=60),
    st.binary(max_size=60),
)


def usable(settings: Settings) -> None:
    assert isinstance(settings.lake_root, str) and settings.lake_root
    for c in settings.clusters:
        check_name("cluster", c.name)
        assert all(isinstance(i, str) and i for i in (c.zookeeper_conn_id, c.kafka_conn_id, *c.alert_conn_ids))
        for pattern in (c.groups_include, c.groups_exclude):
            re.compile(pattern or "")
        assert isinstance(c.writes_enabled, bool) and isinstance(c.auto_remediation, bool)
        assert c.remediation_backend in REMEDIATION_BACKENDS
        assert isinstance(c.cordoned_brokers, tuple) and len(set(c.cordoned_brokers)) == len(c.cordoned_brokers)
        assert all(type(b) is int and 0 <= b < 2**31 for b in c.cordoned_brokers)
        assert math.isfinite(c.alert_reminder_minutes) and math.isfinite(c.remediation_controller_quiet_seconds)
        assert all(math.isfinite(v) for v in vars(c.thresholds).values())
        # every value used as the product uses it: durations subtracted from now, counts as Spark ints
        assert NOW - c.alert_reminder < NOW
        assert NOW - timedelta(seconds=c.remediation_controller_quiet_seconds) <= NOW
        for key, unit in DURATIONS.items():
            assert NOW - timedelta(**{unit: getattr(c.thresholds, key)}) < NOW
        assert all(int(getattr(c.thresholds, key)) < 2**31 for key in COUNTS)
        assert 1 <= c.min_insync_replicas_default < 2**31 and 1 <= c.auto_election_after_runs < 2**31
        for broker_id, own in c.capacity.brokers:
            assert type(broker_id) is int and 0 <= broker_id < 2**31
            assert own.disk_bytes is None or 0 < own.disk_bytes < 2**63
    assert NOW - settings.web.metrics_max_age < NOW
    for days in (getattr(settings.lake, f.name) for f in fields(settings.lake) if f.name.startswith("keep_")):
        assert days is None or f"{NOW - timedelta(days=days):%Y-%m-%d}"
    assert NOW - timedelta(hours=settings.lake.vacuum_retention_hours) <= NOW


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("settings")


@FUZZ
@given(FILES)
def test_a_settings_file_is_usable_settings_or_a_config_error(folder: Path, text: str | bytes) -> None:
    path = folder / "kafka_ops.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode(errors="surrogatepass"))
    try:
        settings = load_settings(path)
    except ConfigError:
        pass
    else:
        usable(settings)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"\xff\xfe", r"kafka_ops\.toml is not UTF-8 text"),
        ("clusters = " + "[" * 5000 + "]" * 5000, r"kafka_ops\.toml nests arrays or tables too deeply to be settings"),
        ('[[clusters]]\nname = 5\n', r"^cluster name must be a string, got 5$"),
        ('[[clusters]]\nname = "a\\n"\n', r"^cluster name 'a\\n' cannot be used in lake paths"),
        ('[[clusters]]\nname = "a"\nzookeeper_conn_id = 5\n', r"'zookeeper_conn_id' must be an Airflow connection id"),
        ('[[clusters]]\nname = "a"\nkafka_conn_id = ""\n', r"'kafka_conn_id' must be an Airflow connection id, got ''"),
        ('[[clusters]]\nname = "a"\ngroups_include = "("\n', r"'groups_include' is not a valid regular expression"),
        ('[[clusters]]\nname = "a"\ngroups_exclude = "a{4294967296}"\n', r"'groups_exclude' is not a valid regular"),
        ('[[clusters]]\nname = "a"\ngroups_exclude = ["x"]\n', r"'groups_exclude' must be a regular expression"),
        (f'[[clusters]]\nname = "a"\nalert_reminder_minutes = 1{"0" * 400}\n', r"'alert_reminder_minutes' must be a"),
        (f'[[clusters]]\nname = "a"\nremediation_controller_quiet_seconds = 1{"0" * 400}\n',
         r"'remediation_controller_quiet_seconds' must be a number"),
        (f'[[clusters]]\nname = "a"\n[clusters.thresholds]\nhistory_hours = 1{"0" * 400}\n',
         r"threshold 'history_hours' must be a positive number"),
        # accepted before, and crashed where used: /metrics (HTTP 500), the alert reminder, the load window,
        # the lake's maintenance (now minus 740,000 days is before year 1), a broker id in superscript digits
        ("[web]\nmetrics_max_age_minutes = 1e308\n", r"\[web\] 'metrics_max_age_minutes' must be .* at most 52596000"),
        (A + "alert_reminder_minutes = 1e308\n", r"'alert_reminder_minutes' must be .* at most"),
        (A + "[clusters.thresholds]\nload_window_hours = 1e308\n",
         r"threshold 'load_window_hours' must be a positive number of hours at most 876600, got 1e\+308"),
        (A + "[clusters.thresholds]\nlag_window = 1e300\n", r"'lag_window' must be .* at most 2147483647"),
        ("[lake]\nkeep_snapshots_days = 740000\n", r"'keep_snapshots_days' must be a whole number of days from 1 to"),
        (A + '[clusters.capacity.brokers."\u00b2"]\ndisk_bytes = 1\n', r"'\u00b2' is not a broker id"),
        (A + '[clusters.capacity.brokers."\u0661\u0662"]\ndisk_bytes = 1\n', r"is not a broker id"),
        (A + "[clusters.capacity]\ndisk_bytes = 1e300\n", r"'disk_bytes' must be a whole number of"),
    ],
)  # fmt: skip
def test_what_the_fuzzer_found_in_settings(tmp_path: Path, text: str | bytes, message: str) -> None:
    path = tmp_path / "kafka_ops.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError, match=message):
        load_settings(path)
