from __future__ import annotations

import json
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.settings import ClusterConfig, load_settings
from kafka_ops.thresholds import Thresholds


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kafka_ops.toml"
    path.write_text(text)
    return path


def test_defaults_watch_one_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_OPS_CONFIG", raising=False)
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    settings = load_settings()
    assert settings.lake_root == "var/lake"
    assert settings.clusters == (ClusterConfig("default"),)


def test_file_and_lake_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, 'lake_root = "s3a://lake/prod"\n[[clusters]]\nname = "payments"\n'
                           'zookeeper_conn_id = "zk_payments"\n[[clusters]]\nname = "logs"\n')  # fmt: skip
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(path))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    settings = load_settings()
    assert settings.lake_root == "s3a://lake/prod"
    assert settings.cluster("payments").zookeeper_conn_id == "zk_payments"
    assert settings.cluster("logs").zookeeper_conn_id == "zookeeper_default"
    monkeypatch.setenv("KAFKA_OPS_LAKE", "/tmp/lake")
    assert load_settings().lake_root == "/tmp/lake"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('lakes = "x"\n', r"unknown setting\(s\) \['lakes'\]"),
        ('lake = "x"\n', r"\[lake\] must be a table of settings"),
        ('[[clusters]]\nname = "a"\nzk = "x"\n', r"clusters\[0\]: unknown setting\(s\) \['zk'\]"),
        ('[[clusters]]\nname = "a"\n[[clusters]]\nname = "a"\n', r"repeated: \['a'\]"),
        ('[[clusters]]\nzookeeper_conn_id = "x"\n', r"clusters\[0\]: each cluster needs a 'name'"),
        ('[[clusters]]\nname = "a b"\n', "cluster name 'a b' cannot be used"),
        ("clusters = [", "is not valid TOML"),
        (
            '[[clusters]]\nname = "a"\n[clusters.thresholds]\nstuck = 1\n',
            r"clusters\[0\]\.thresholds: unknown threshold",
        ),
        (
            '[[clusters]]\nname = "a"\n[clusters.thresholds]\nhistory_hours = -1\n',
            r"threshold 'history_hours' must be a number of hours from 1 ms to 100 years \(876600 hours\), got -1",
        ),
    ],
)
def test_bad_settings_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read settings file"):
        load_settings(tmp_path / "nope.toml")


def test_unknown_cluster_is_named() -> None:
    with pytest.raises(ConfigError, match="no cluster named 'x'"):
        load_settings().cluster("x")


def test_thresholds_per_cluster(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\n[clusters.thresholds]\nstuck_reassignment_minutes = 5\n'
                           '[[clusters]]\nname = "b"\n')  # fmt: skip
    settings = load_settings(path)
    assert settings.cluster("a").thresholds.stuck_reassignment_minutes == 5.0
    assert settings.cluster("a").thresholds.leader_imbalance_percent == 10.0
    assert settings.cluster("b").thresholds.stuck_reassignment_minutes == 60.0


def test_alert_sinks_default_to_the_log_only() -> None:
    cluster = ClusterConfig("a")
    assert cluster.alert_conn_ids == ()
    assert cluster.alert_reminder == timedelta(hours=1)


def test_alert_settings_per_cluster(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\nalert_conn_ids = ["slack_a", "pagerduty_a"]\n'
                           'alert_reminder_minutes = 15\n[[clusters]]\nname = "b"\n')  # fmt: skip
    settings = load_settings(path)
    assert settings.cluster("a").alert_conn_ids == ("slack_a", "pagerduty_a")
    assert settings.cluster("a").alert_reminder == timedelta(minutes=15)
    assert settings.cluster("b").alert_conn_ids == ()
    assert settings.cluster("b").alert_reminder_minutes == 60.0
    hash(settings.cluster("a"))  # still a frozen, hashable config


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('alert_conn_ids = "slack_a"', r"cluster 'a': 'alert_conn_ids' must be a list of Airflow connection ids"),
        ('alert_conn_ids = ["slack_a", 3]', r"'alert_conn_ids' must be a list"),
        ('alert_conn_ids = [" slack_a"]', r"'alert_conn_ids' must be a list"),
        ('alert_conn_ids = ["x", "x"]', r"'alert_conn_ids' names a connection twice"),
        ("alert_reminder_minutes = 0", r"cluster 'a': 'alert_reminder_minutes' must be a number of minutes from 1 ms"),
        ("alert_reminder_minutes = 1e308", r"'alert_reminder_minutes' .* to 100 years \(52596000 minutes\), got 1e"),
        ("alert_reminder_minutes = 1e-9", r"'alert_reminder_minutes' must be a number of minutes from 1 ms"),
        ("alert_reminder_minutes = true", r"'alert_reminder_minutes' must be a number of minutes from 1 ms"),
        ('alert_reminder_minutes = "60"', r"'alert_reminder_minutes' must be a number of minutes from 1 ms"),
        ("alert_reminder_minutes = inf", r"'alert_reminder_minutes' must be a number of minutes from 1 ms"),
        ('alert_conn_id = ["x"]', r"clusters\[0\]: unknown setting\(s\) \['alert_conn_id'\]"),
    ],
)
def test_bad_alert_settings_name_the_key(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, f'[[clusters]]\nname = "a"\n{line}\n')
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_every_threshold_set_round_trips_through_json() -> None:
    """The analysis DAG passes a cluster's thresholds to the Spark jobs as JSON of all fields."""
    for thresholds in (Thresholds(), Thresholds(lag_allowed=5, skew_spread=3)):
        assert Thresholds.from_mapping(json.loads(json.dumps(asdict(thresholds))), "--thresholds") == thresholds
    with pytest.raises(ConfigError, match="'lag_allowed' must be a number of messages from 0 to 1000000000000000000"):
        Thresholds.from_mapping({"lag_allowed": -1}, "--thresholds")
    with pytest.raises(ConfigError, match=r"'skew_spread' must be a count \(a fraction is truncated\) from 1 to"):
        Thresholds.from_mapping({"skew_spread": 0.5}, "--thresholds")


def test_remediation_settings_default_to_dry_run_through_the_admin_api() -> None:
    cluster = ClusterConfig("a")
    assert cluster.writes_enabled is False
    assert cluster.remediation_backend == "admin_api"


def test_remediation_settings_per_cluster(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\nwrites_enabled = true\nremediation_backend = "zookeeper"\n'
                           '[[clusters]]\nname = "b"\n')  # fmt: skip
    settings = load_settings(path)
    assert settings.cluster("a").writes_enabled is True
    assert settings.cluster("a").remediation_backend == "zookeeper"
    assert settings.cluster("b").writes_enabled is False
    assert settings.cluster("b").remediation_backend == "admin_api"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('writes_enabled = "false"', r"cluster 'a': 'writes_enabled' must be true or false, got 'false'"),
        ("writes_enabled = 1", r"'writes_enabled' must be true or false, got 1"),
        ('remediation_backend = "zk"', r"'remediation_backend' must be one of \['admin_api', 'zookeeper'\], got 'zk'"),
        ('remediation_backend = "ADMIN_API"', r"'remediation_backend' must be one of"),
        (
            'metadata_source = "kafka4"',
            r"'metadata_source' must be one of \['auto', 'zookeeper', 'kraft'\], got 'kafka4'",
        ),
        ("metadata_source = 1", r"cluster 'a': 'metadata_source' must be one of"),
    ],
)
def test_bad_remediation_settings_name_the_key(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, f'[[clusters]]\nname = "a"\n{line}\n')
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_auto_remediation_is_off_by_default() -> None:
    cluster = ClusterConfig("a", writes_enabled=True)
    assert cluster.auto_remediation is False
    assert cluster.auto_election_after_runs == 3
    assert cluster.remediation_controller_quiet_seconds == 300.0


def test_auto_remediation_per_cluster(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\nwrites_enabled = true\nauto_remediation = true\n'
                           'auto_election_after_runs = 5\nremediation_controller_quiet_seconds = 0\n'
                           '[[clusters]]\nname = "b"\n')  # fmt: skip
    settings = load_settings(path)
    a, b = settings.cluster("a"), settings.cluster("b")
    assert (a.auto_remediation, a.auto_election_after_runs, a.remediation_controller_quiet_seconds) == (True, 5, 0.0)
    assert (b.auto_remediation, b.auto_election_after_runs) == (False, 3)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('auto_remediation = "true"', r"cluster 'a': 'auto_remediation' must be true or false, got 'true'"),
        ("auto_remediation = 1", r"'auto_remediation' must be true or false, got 1"),
        ("auto_election_after_runs = 0", r"'auto_election_after_runs' must be a whole number from 1 to \d+, got 0"),
        ("auto_election_after_runs = 2.5", r"'auto_election_after_runs' must be a whole number from 1 to \d+, got 2.5"),
        ("auto_election_after_runs = true", r"'auto_election_after_runs' must be a whole number from 1 to \d+, got Tr"),
        ("remediation_controller_quiet_seconds = -1", r"'remediation_controller_quiet_seconds' must be 0 \(off\) or a"),
        ('remediation_controller_quiet_seconds = "300"', r"'remediation_controller_quiet_seconds' must be 0 \(off\)"),
        ("remediation_controller_quiet_seconds = nan", r"'remediation_controller_quiet_seconds' must be 0 \(off\)"),
        ("remediation_controller_quiet_seconds = 1e-9", r"'remediation_controller_quiet_seconds' must be 0 \(off\)"),
    ],
)
def test_bad_auto_remediation_settings_name_the_key(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, f'[[clusters]]\nname = "a"\nwrites_enabled = true\n{line}\n')
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_auto_remediation_needs_writes_enabled(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\nauto_remediation = true\n')
    with pytest.raises(ConfigError, match=r"cluster 'a': 'auto_remediation' = true needs 'writes_enabled' = true"):
        load_settings(path)


def test_static_min_isr_is_kafkas_default_unless_set_per_cluster(tmp_path: Path) -> None:
    assert ClusterConfig("a").min_insync_replicas_default == 1
    path = write(tmp_path, '[[clusters]]\nname = "a"\nmin_insync_replicas_default = 2\n[[clusters]]\nname = "b"\n')
    assert [c.min_insync_replicas_default for c in load_settings(path).clusters] == [2, 1]


@pytest.mark.parametrize("value", ["0", "true", '"2"', "1.5"])
def test_bad_static_min_isr_names_the_key(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, f'[[clusters]]\nname = "a"\nmin_insync_replicas_default = {value}\n')
    with pytest.raises(ConfigError, match=r"cluster 'a': 'min_insync_replicas_default' must be a whole number from 1"):
        load_settings(path)


def test_metadata_source_is_auto_unless_set(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\nmetadata_source = "kraft"\n[[clusters]]\nname = "b"\n')
    settings = load_settings(path)
    assert (settings.cluster("a").metadata_source, settings.cluster("b").metadata_source) == ("kraft", "auto")


def test_no_broker_is_cordoned_unless_set_per_cluster(tmp_path: Path) -> None:
    assert ClusterConfig("a").cordoned_brokers == ()
    path = write(tmp_path, '[[clusters]]\nname = "a"\ncordoned_brokers = [4, 2]\n[[clusters]]\nname = "b"\n')
    settings = load_settings(path)
    assert [c.cordoned_brokers for c in settings.clusters] == [(4, 2), ()]
    hash(settings.cluster("a"))  # a TOML array became a tuple: the config stays hashable


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("4", r"cluster 'a': 'cordoned_brokers' must be a list of broker ids \(whole numbers from 0 to 2147483647\), "
              r"got 4$"),
        ('["4"]', r"cluster 'a': 'cordoned_brokers' must be a list of broker ids .*got \('4',\)$"),
        ("[true]", r"'cordoned_brokers' must be a list of broker ids .*got \(True,\)$"),
        ("[-1]", r"'cordoned_brokers' must be a list of broker ids"),
        ("[2147483648]", r"'cordoned_brokers' must be a list of broker ids"),
        ("[1.0]", r"'cordoned_brokers' must be a list of broker ids"),
        ("[3, 1, 3]", r"cluster 'a': 'cordoned_brokers' names a broker twice: \[3, 1, 3\]$"),
    ],
)  # fmt: skip
def test_bad_cordoned_brokers_name_the_cluster_and_the_key(tmp_path: Path, value: str, message: str) -> None:
    path = write(tmp_path, f'[[clusters]]\nname = "a"\ncordoned_brokers = {value}\n')
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_a_migrating_cluster_names_its_controllers(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\ncontroller_bootstrap_servers = "kc1:9093, kc2:9093"\n')
    assert load_settings(path).cluster("a").controller_bootstrap_servers == "kc1:9093, kc2:9093"
    assert ClusterConfig("a").controller_bootstrap_servers is None


@pytest.mark.parametrize("value", ['"kc1"', '"kc1:9093,"', '""', "9093", '"kc1:port"'])
def test_bad_controller_addresses_name_the_cluster_and_the_key(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, f'[[clusters]]\nname = "a"\ncontroller_bootstrap_servers = {value}\n')
    with pytest.raises(ConfigError, match=r"cluster 'a': 'controller_bootstrap_servers' must be \"host:port\""):
        load_settings(path)


def test_tier_and_owner_are_optional_labels_per_cluster(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\ntier = "1"\nowner = "payments-team"\n[[clusters]]\nname = "b"\n')
    settings = load_settings(path)
    assert [(c.tier, c.owner) for c in settings.clusters] == [("1", "payments-team"), (None, None)]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("tier = 1", r"clusters\[0\]: cluster 'a': 'tier' must be a string \(\"1\" or \"gold\"\) without surrounding "
                     r"spaces, got 1$"),
        ('tier = ""', r"cluster 'a': 'tier' must be a string .*got ''$"),
        ('owner = " ops"', r"cluster 'a': 'owner' must be a string \(a team's name\) without surrounding spaces, "
                           r"got ' ops'$"),
        ('owner = ["ops"]', r"cluster 'a': 'owner' must be a string .*got \['ops'\]$"),
        ("owner = true", r"cluster 'a': 'owner' must be a string .*got True$"),
    ],
)  # fmt: skip
def test_bad_tier_or_owner_names_the_cluster_and_the_key(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, f'[[clusters]]\nname = "a"\n{line}\n')
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def test_a_probe_topic_is_optional_per_cluster(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clusters]]\nname = "a"\nprobe_topic = "kafka-ops-probe"\n[[clusters]]\nname = "b"\n')
    assert [c.probe_topic for c in load_settings(path).clusters] == ["kafka-ops-probe", None]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('probe_topic = "probe topic"', r"cluster 'a': 'probe_topic': 'probe topic' is not a Kafka topic name"),
        ("probe_topic = 3", r"cluster 'a': 'probe_topic': expected a topic name \(a string\), got 3$"),
        ('probe_topic = ".."', r"cluster 'a': 'probe_topic': '..' is not a Kafka topic name"),
    ],
)
def test_a_bad_probe_topic_names_the_cluster_and_the_key(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, f'[[clusters]]\nname = "a"\n{line}\n'))
