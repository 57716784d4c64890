from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kafka_ops.capacities import BrokerCapacity, Capacities
from kafka_ops.errors import ConfigError
from kafka_ops.settings import ClusterConfig, load_settings


def settings_with(tmp_path: Path, capacity: str) -> ClusterConfig:
    path = tmp_path / "kafka_ops.toml"
    path.write_text(f'[[clusters]]\nname = "a"\n{capacity}')
    return load_settings(path).clusters[0]


def test_no_capacity_is_known_unless_set() -> None:
    capacity = ClusterConfig("a").capacity
    assert capacity.of(1) == BrokerCapacity(None, None, None)
    assert (capacity.max_disk_share, capacity.max_replicas_per_broker) == (0.8, None)


def test_a_broker_of_its_own_overrides_the_cluster_default_field_by_field(tmp_path: Path) -> None:
    cluster = settings_with(
        tmp_path,
        "[clusters.capacity]\ndisk_bytes = 2_000\nnetwork_in_bytes_per_s = 100\nmax_disk_share = 0.75\n"
        "max_replicas_per_broker = 40\n[clusters.capacity.brokers.4]\ndisk_bytes = 4_000\n",
    )
    capacity = cluster.capacity
    assert capacity.of(1) == BrokerCapacity(2000, 100.0, None)
    assert capacity.of(4) == BrokerCapacity(4000, 100.0, None)
    assert (capacity.max_disk_share, capacity.max_replicas_per_broker) == (0.75, 40)
    hash(cluster)  # settings stay hashable


@pytest.mark.parametrize(
    ("table", "names"),
    [
        ("disk_bytes = -1", "'disk_bytes'"),
        ("disk_bytes = 1.5", "'disk_bytes'"),
        ("disk_bytes = true", "'disk_bytes'"),
        ("network_out_bytes_per_s = 0", "'network_out_bytes_per_s'"),
        ("network_in_bytes_per_s = nan", "'network_in_bytes_per_s'"),
        ("max_disk_share = 1.5", "'max_disk_share'"),
        ("max_disk_share = 0", "'max_disk_share'"),
        ("max_replicas_per_broker = 0", "'max_replicas_per_broker'"),
        ("disk = 5", "unknown capacity setting(s) ['disk']"),
        ("[clusters.capacity.brokers.x]\ndisk_bytes = 1", "'x' is not a broker id"),
        ("[clusters.capacity.brokers.3]\ncpu = 1", "clusters[0].capacity.brokers.3: unknown"),
        ("[clusters.capacity.brokers.3]\ndisk_bytes = 0", "capacity.brokers.3: 'disk_bytes'"),
        ("brokers = 3", "capacity.brokers: expected tables"),
    ],
)
def test_a_wrong_capacity_is_refused_naming_its_key(tmp_path: Path, table: str, names: str) -> None:
    with pytest.raises(ConfigError, match=r"clusters\[0\]\.capacity") as e:
        settings_with(tmp_path, f"[clusters.capacity]\n{table}\n")
    assert names in str(e.value)


def test_a_broker_given_twice_under_two_spellings_is_refused() -> None:
    with pytest.raises(ConfigError, match="broker 4 is given twice"):
        Capacities.from_mapping({"brokers": {"4": {}, "04": {}}}, "c")


@pytest.mark.parametrize(
    "broker_id",
    [
        "\u00b2",  # superscript two: str.isdigit() takes it, int() does not
        "\u0661\u0662",  # Arabic-Indic 12: int() reads it as 12
        "\uff11\uff12",  # fullwidth 12
        "\U0001d7d9",  # mathematical double-struck 1
        "-1", "+1", " 1", "1_0", "0x1", "1.0", "", "2147483648", "1" * 11,
    ],
)  # fmt: skip
def test_a_broker_id_is_ascii_digits_from_0_to_int32_max(tmp_path: Path, broker_id: str) -> None:
    refused = r"clusters\[0\]\.capacity\.brokers: .* is not a broker id \(a whole number from 0 to 2147483647\)"
    with pytest.raises(ConfigError, match=refused):
        settings_with(
            tmp_path, f"[clusters.capacity.brokers.{json.dumps(broker_id, ensure_ascii=False)}]\ndisk_bytes = 1\n"
        )


def test_a_broker_id_with_leading_zeros_is_that_broker(tmp_path: Path) -> None:
    capacity = settings_with(tmp_path, '[clusters.capacity.brokers."007"]\ndisk_bytes = 1\n').capacity
    assert capacity.brokers == ((7, BrokerCapacity(disk_bytes=1)),)
    assert Capacities.from_mapping({"brokers": {"2147483647": {}}}, "c").brokers == ((2147483647, BrokerCapacity()),)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("network_in_bytes_per_s = 1e308", "'network_in_bytes_per_s' must be a number of bytes per second from 1 to "
                                           "1000000000000000000, got 1e+308"),
        ("network_out_bytes_per_s = 0.5", "'network_out_bytes_per_s' must be a number of bytes per second from 1 to"),
        ("disk_bytes = 9223372036854775808", "'disk_bytes' must be a whole number of bytes from 1 to "
                                             "9223372036854775807, got 9223372036854775808"),
        ("max_disk_share = inf", "'max_disk_share' must be a share of the disk above 0 and at most 1, got inf"),
        ("max_replicas_per_broker = 2147483648", "'max_replicas_per_broker' must be a whole number from 1 to "
                                                 "2147483647, got 2147483648"),
    ],
)  # fmt: skip
def test_a_capacity_out_of_its_range_is_refused_naming_the_range(tmp_path: Path, table: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        settings_with(tmp_path, f"[clusters.capacity]\n{table}\n")
    assert message in str(e.value)


def test_the_largest_capacities_survive_the_json_the_spark_jobs_read() -> None:
    table = {"disk_bytes": 2**63 - 1, "network_in_bytes_per_s": 10**18, "max_replicas_per_broker": 2**31 - 1}
    capacities = Capacities.from_mapping(table, "c")
    assert Capacities.from_mapping(json.loads(json.dumps(table | {"max_disk_share": 1.0})), "c") == replace(
        capacities, max_disk_share=1.0
    )
