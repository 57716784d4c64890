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
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_ops.airflow.analysis_arguments import capacity_table
from kafka_ops.analysis.runner import parse_capacity
from kafka_ops.capacities import BrokerCapacity, Capacities
from kafka_ops.errors import ConfigError
from kafka_ops.lake.names import check_name
from kafka_ops.lake.policy import RetentionPolicy
from kafka_ops.settings import REMEDIATION_BACKENDS, ClusterConfig, Settings, WebSettings, load_settings
from kafka_ops.thresholds import COUNTS, DURATIONS, RANGES, ZERO_ALLOWED, Thresholds
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


def a_positive_time(span: timedelta) -> None:
    """`span` is some time, and both now minus it and now plus it are dates that can be written."""
    earlier, later = NOW - span, NOW + span  # each raises OverflowError past the calendar
    assert earlier < NOW < later
    assert len(f"{earlier:%Y-%m-%d}{later:%Y-%m-%d}") == 20


def usable(settings: Settings) -> None:
    assert isinstance(settings.lake_root, str) and settings.lake_root
    for c in settings.clusters:
        usable_numbers(c)
        check_name("cluster", c.name)
        assert all(isinstance(i, str) and i for i in (c.zookeeper_conn_id, c.kafka_conn_id, *c.alert_conn_ids))
        for pattern in (c.groups_include, c.groups_exclude):
            re.compile(pattern or "")
        assert isinstance(c.writes_enabled, bool) and isinstance(c.auto_remediation, bool)
        assert c.remediation_backend in REMEDIATION_BACKENDS
        assert isinstance(c.cordoned_brokers, tuple) and len(set(c.cordoned_brokers)) == len(c.cordoned_brokers)
        assert all(type(b) is int and 0 <= b < 2**31 for b in c.cordoned_brokers)
        assert 1 <= c.min_insync_replicas_default < 2**31 and 1 <= c.auto_election_after_runs < 2**31
        assert all(type(broker_id) is int and 0 <= broker_id < 2**31 for broker_id, _ in c.capacity.brokers)
    a_positive_time(settings.web.metrics_max_age)  # /metrics: now minus it
    for days in (getattr(settings.lake, f.name) for f in fields(settings.lake) if f.name.startswith("keep_")):
        assert days is None or f"{NOW - timedelta(days=days):%Y-%m-%d}"
    assert NOW - timedelta(hours=settings.lake.vacuum_retention_hours) <= NOW
    assert NOW - timedelta(hours=settings.lake.log_retention_hours) <= NOW
    assert 1 <= settings.lake.compact_target_mb * 2**20 < 2**63  # delta-rs takes the target in bytes, as an int64


def usable_numbers(c: ClusterConfig) -> None:
    """Every number of `c` as the product uses it: durations as times, counts as Spark ints, thresholds
    and capacities through the JSON that carries them to the Spark jobs."""
    a_positive_time(c.alert_reminder)  # the alerting refuses a reminder of no time
    if c.remediation_controller_quiet_seconds:  # 0 turns the check off
        a_positive_time(timedelta(seconds=c.remediation_controller_quiet_seconds))
    for key, unit in DURATIONS.items():
        a_positive_time(timedelta(**{unit: getattr(c.thresholds, key)}))
    for key in COUNTS:
        assert (0 if key in ZERO_ALLOWED else 1) <= int(getattr(c.thresholds, key)) < 2**31
    assert all(math.isfinite(v) and v >= 0 for v in asdict(c.thresholds).values())
    assert Thresholds.from_mapping(json.loads(json.dumps(asdict(c.thresholds))), "--thresholds") == c.thresholds
    assert parse_capacity(json.dumps(capacity_table(c.capacity))) == c.capacity
    assert 0 < c.capacity.max_disk_share <= 1
    assert c.capacity.max_replicas_per_broker is None or 1 <= c.capacity.max_replicas_per_broker < 2**31
    for own in (c.capacity.default, *(own for _, own in c.capacity.brokers)):
        assert own.disk_bytes is None or 0 < own.disk_bytes < 2**63
        for rate in (own.network_in_bytes_per_s, own.network_out_bytes_per_s):
            assert rate is None or 1 <= rate < 2**63


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
        ('[[clusters]]\nname = 5\n', r"clusters\[0\]: cluster name must be a string, got 5$"),
        ('[[clusters]]\nname = "a\\n"\n', r"clusters\[0\]: cluster name 'a\\n' cannot be used in lake paths"),
        ('[[clusters]]\nname = "a"\nzookeeper_conn_id = 5\n', r"'zookeeper_conn_id' must be an Airflow connection id"),
        ('[[clusters]]\nname = "a"\nkafka_conn_id = ""\n', r"'kafka_conn_id' must be an Airflow connection id, got ''"),
        ('[[clusters]]\nname = "a"\ngroups_include = "("\n', r"'groups_include' is not a valid regular expression"),
        ('[[clusters]]\nname = "a"\ngroups_exclude = "a{4294967296}"\n', r"'groups_exclude' is not a valid regular"),
        ('[[clusters]]\nname = "a"\ngroups_exclude = ["x"]\n', r"'groups_exclude' must be a regular expression"),
        (f'[[clusters]]\nname = "a"\nalert_reminder_minutes = 1{"0" * 400}\n', r"'alert_reminder_minutes' must be a"),
        (f'[[clusters]]\nname = "a"\nremediation_controller_quiet_seconds = 1{"0" * 400}\n',
         r"'remediation_controller_quiet_seconds' must be 0 \(off\) or a number"),
        (f'[[clusters]]\nname = "a"\n[clusters.thresholds]\nhistory_hours = 1{"0" * 400}\n',
         r"threshold 'history_hours' must be a number of hours from 1 ms"),
        # accepted before, and crashed where used: /metrics (HTTP 500), the alert reminder, the load window,
        # the lake's maintenance (now minus 740,000 days is before year 1), a broker id in superscript digits
        ("[web]\nmetrics_max_age_minutes = 1e308\n", r"\[web\] 'metrics_max_age_minutes' must be .* \(52596000 "),
        (A + "alert_reminder_minutes = 1e308\n", r"'alert_reminder_minutes' must be .* to 100 years"),
        (A + "[clusters.thresholds]\nload_window_hours = 1e308\n",
         r"'load_window_hours' must be a number of hours from 1 ms to 100 years \(876600 hours\), got 1e\+308"),
        (A + "[clusters.thresholds]\nlag_window = 1e300\n", r"'lag_window' must be .* to 2147483647"),
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


# -- every numeric setting: its range checked at load, every value in it usable ---------------------------


@dataclass(frozen=True)
class Numeric:
    """A numeric setting: the table it is written in (the file's text up to the key), its key, whether 0
    is in its range, and how a value is written (`cordoned_brokers` takes a list)."""

    table: str
    key: str
    zero: bool = False
    form: str = "{}"

    def file(self, value: str) -> str:
        return f"{self.table}{self.key} = {self.form.format(value)}\n"


THRESHOLDS = A + "[clusters.thresholds]\n"
CAPACITY = A + "[clusters.capacity]\n"
BROKER = A + "[clusters.capacity.brokers.3]\n"
NUMERIC = [
    Numeric(A, "alert_reminder_minutes"),
    Numeric(A, "approval_timeout_minutes"),
    Numeric(A, "remediation_controller_quiet_seconds", zero=True),
    Numeric(A, "auto_election_after_runs"),
    Numeric(A, "min_insync_replicas_default"),
    Numeric(A, "cordoned_brokers", zero=True, form="[{}]"),
    *(Numeric(THRESHOLDS, f.name, zero=f.name in ZERO_ALLOWED) for f in fields(Thresholds)),
    *(Numeric(table, f.name) for table in (CAPACITY, BROKER) for f in fields(BrokerCapacity)),
    Numeric(CAPACITY, "max_disk_share"),
    Numeric(CAPACITY, "max_replicas_per_broker"),
    Numeric("[web]\n", "metrics_max_age_minutes"),
    # 0 hours is in the range of the Delta retentions (a policy built in code vacuums at 0); the loader's
    # floor of 24 hours is test_lake_policy's
    *(Numeric("[lake]\n", f.name, zero=f.name.endswith("_hours")) for f in fields(RetentionPolicy)),
]
NEVER = ["1e308", "inf", "-inf", "nan", "-1", "-1e-300", "1" + "0" * 400, "-1" + "0" * 400, "true", '"5"']
"""Values no numeric setting takes: huge, infinite, not a number, negative, an integer too large for a
float, a boolean, a string."""
RANGE = re.compile(r"\b(from|above) \S+ .*\b(to|and at most) \d")
"""How every refusal states the range it wanted."""


TABLE_NAMES = {A: "clusters", THRESHOLDS: "thresholds", CAPACITY: "capacity", BROKER: "capacity.brokers.3",
               "[web]\n": "web", "[lake]\n": "lake"}  # fmt: skip


@pytest.mark.parametrize("setting", [pytest.param(s, id=f"{TABLE_NAMES[s.table]}.{s.key}") for s in NUMERIC])
def test_a_numeric_setting_out_of_its_range_is_refused_naming_the_file_the_key_and_the_range(
    tmp_path: Path, setting: Numeric
) -> None:
    for value in [*NEVER, *([] if setting.zero else ["0"])]:
        path = tmp_path / "kafka_ops.toml"
        path.write_text(setting.file(value))
        with pytest.raises(ConfigError) as refused:
            load_settings(path)
        message = str(refused.value)
        assert f"'{setting.key}'" in message and str(path) in message, (value, message)
        assert RANGE.search(message), (value, message)
        if setting.table.startswith(A):
            assert "clusters[0]" in message, (value, message)


def test_the_table_holds_every_numeric_setting() -> None:
    """A numeric field added to the settings without its row here would go unchecked."""

    def numeric(cls: type) -> set[str]:
        return {f.name for f in fields(cls) if re.search(r"\b(int|float)\b", str(f.type))}

    wanted = (
        numeric(ClusterConfig) | numeric(Thresholds) | numeric(Capacities) - {"brokers"} | numeric(BrokerCapacity)
        | numeric(WebSettings) | numeric(RetentionPolicy)
    )  # fmt: skip
    assert wanted == {s.key for s in NUMERIC}
    assert set(RANGES) == {f.name for f in fields(Thresholds)}


def test_every_default_threshold_is_in_its_range() -> None:
    defaults = asdict(Thresholds())
    assert Thresholds.from_mapping(defaults, "defaults") == Thresholds()
    for key, allowed in RANGES.items():
        assert allowed.holds(allowed.most), key
        assert not allowed.holds(math.nextafter(allowed.most, math.inf)), key
        assert allowed.holds(defaults[key]), key


@pytest.mark.parametrize("key", sorted(RANGES))
def test_a_threshold_at_its_bounds_is_accepted_and_usable_and_just_past_them_refused(key: str) -> None:
    allowed = RANGES[key]
    least = math.nextafter(allowed.least, math.inf) if allowed.above else allowed.least
    for value in (least, allowed.most):
        thresholds = Thresholds.from_mapping({key: value}, "t")
        usable_numbers(ClusterConfig("a", thresholds=thresholds))
    for value in (math.nextafter(least, -math.inf), math.nextafter(allowed.most, math.inf)):
        with pytest.raises(ConfigError, match=rf"t: threshold '{key}' must be .*, got "):
            Thresholds.from_mapping({key: value}, "t")


EDGES = [
    0, 5e-324, 1e-300, 1e-9, 1.6e-5, 0.001, 0.5, 1, 24, 36_525, 36_526, 876_600, 52_596_000, 3_155_760_000,
    2**31 - 1, 2**31, 10**18, 10**18 + 1, 2**63 - 1, 2**63, 1e308, 10**400,
]  # fmt: skip
"""Values at or next to the settings' bounds: the shortest duration (1 ms in hours, minutes, seconds),
100 years in days, hours, minutes and seconds, int32, 10^18, int64, the largest float."""
VALUES = st.one_of(
    st.sampled_from(EDGES),
    st.sampled_from(EDGES).map(lambda v: -v),
    st.floats(),
    st.integers(min_value=-(2**70), max_value=2**70),
)


@FUZZ
@given(st.sampled_from(NUMERIC), VALUES)
def test_any_accepted_numeric_setting_is_usable_and_a_refused_one_names_its_key(
    folder: Path, setting: Numeric, value: float
) -> None:
    path = folder / "kafka_ops.toml"
    path.write_text(setting.file(toml(value)))
    try:
        settings = load_settings(path)
    except ConfigError as e:
        assert setting.key in str(e)
    else:
        usable(settings)
