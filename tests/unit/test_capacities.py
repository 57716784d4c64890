from __future__ import annotations

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
