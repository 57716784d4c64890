"""From the latest batches to the figures and KMinion's series, where the scenario lake of
`test_metrics.py` cannot go: a KRaft snapshot, a broker with no PLAINTEXT listener, log dirs a broker
could not describe, a partition whose log start offset was not read."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from prometheus_client.core import Metric

from kafka_ops.lake.store import Batch as LakeBatch
from kafka_ops.model.cluster import ClusterSnapshot, CollectionIssue, Controller, ReplicaSize
from kafka_ops.model.groups import GroupSnapshot
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.web.figures import ClusterFigures, cluster_figures
from kafka_ops.web.lake_cache import Batch, ClusterView
from kafka_ops.web.profiles import kminion
from tests.unit.snapshots import GROUPS_AT, group_snapshot, small_snapshot

NOW = GROUPS_AT
"""Four hours after the metadata snapshot (`AT`): both batches are shown with a 5-hour max age."""
MAX_AGE = timedelta(hours=5)
LabelledValues = dict[tuple[tuple[str, str], ...], float]


def view_batch(batch: LakeBatch) -> Batch:
    """What the lake cache holds of a published batch: its commit row and its tables."""
    commit = batch.tables[batch.commit_table].to_pylist()[0]
    return Batch(commit, {name: t for name, t in batch.tables.items() if name != batch.commit_table})


def figures(snap: ClusterSnapshot, groups: GroupSnapshot | None = None) -> ClusterFigures:
    collection = group_batch(groups or group_snapshot())
    view = ClusterView("c1", metadata=view_batch(snapshot_batch(snap)), groups=view_batch(collection))
    return cluster_figures(view, NOW, MAX_AGE)


def series(families: list[Metric], name: str) -> LabelledValues:
    (family,) = [f for f in families if f.name == name]
    return {tuple(sorted(s.labels.items())): s.value for s in family.samples}


def kraft_snapshot() -> ClusterSnapshot:
    """Brokers 1 and 2 on KRaft (metadata.version 3.9-IV0); the quorum leader is controller 100, not a
    broker; broker 2 listens on SASL_SSL only (a ZooKeeper-style registration with host null, port -1)."""
    snap = dataclasses.replace(small_snapshot(), source="kraft", zookeeper=None, metadata_version=21,
                               cluster_id="kraft-id", controller=Controller(100, None, 7, None, None))  # fmt: skip
    broker_2 = dataclasses.replace(snap.brokers[2], host=None, port=-1, endpoints=("SASL_SSL://kafka-2:9093",))
    snap.brokers = {**snap.brokers, 2: broker_2}
    return snap


def test_a_kraft_cluster_has_its_metadata_version_release_and_no_broker_controller() -> None:
    families = kminion([figures(kraft_snapshot())])
    (info,) = series(families, "kminion_kafka_cluster_info")
    assert dict(info) == {"cluster": "c1", "cluster_version": "v3.9", "broker_count": "2", "controller_id": "100",
                          "cluster_id": "kraft-id"}  # fmt: skip
    brokers = {dict(k)["broker_id"]: dict(k) for k in series(families, "kminion_kafka_broker_info")}
    assert [b["is_controller"] for b in brokers.values()] == ["false", "false"]  # the quorum leader is no broker
    # no PLAINTEXT listener in the registration: its first endpoint's host and port
    assert (brokers["2"]["address"], brokers["2"]["port"]) == ("kafka-2", "9093")


def test_zookeeper_cluster_without_a_controller_and_a_level_not_known_yet() -> None:
    zookeeper = dataclasses.replace(small_snapshot(), controller=None)
    (info,) = series(kminion([figures(zookeeper)]), "kminion_kafka_cluster_info")
    assert (dict(info)["cluster_version"], dict(info)["controller_id"]) == ("", "-1")
    unknown_level = dataclasses.replace(kraft_snapshot(), metadata_version=99)
    (info,) = series(kminion([figures(unknown_level)]), "kminion_kafka_cluster_info")
    assert dict(info)["cluster_version"] == ""


def test_topic_bytes_only_when_every_broker_described_its_log_dirs() -> None:
    snap = small_snapshot()
    snap.replica_sizes = [ReplicaSize("orders", 0, 1, "/a", 700), ReplicaSize("orders", 0, 2, "/a", 600)]
    described = kminion([figures(snap)])
    assert series(described, "kminion_kafka_topic_log_dir_size_total_bytes") == {
        (("cluster", "c1"), ("topic_name", "orders")): 1300
    }
    # broker 2 answered, broker 1's second log dir is offline: its bytes there are unknown
    snap.issues = [CollectionIssue("DescribeLogDirs broker 1 log dir /b", "KAFKA_STORAGE_ERROR", "log_dir")]
    partial = kminion([figures(snap)])
    assert series(partial, "kminion_kafka_topic_log_dir_size_total_bytes") == {}
    assert sorted(series(partial, "kminion_kafka_broker_log_dir_size_total_bytes").values()) == [600, 700]


def test_a_topic_low_water_mark_sum_needs_every_partitions_start() -> None:
    groups = dataclasses.replace(group_snapshot(), start_offsets={("orders", 0): 30, ("orders", 1): 0})
    families = kminion([figures(small_snapshot(), groups)])
    lows = series(families, "kminion_kafka_topic_partition_low_water_mark")
    assert {dict(k)["partition_id"]: v for k, v in lows.items()} == {"0": 30, "1": 0}  # orders-2's was not read
    assert series(families, "kminion_kafka_topic_low_water_mark_sum") == {}
    assert series(families, "kminion_kafka_topic_high_water_mark_sum") == {
        (("cluster", "c1"), ("topic_name", "orders")): 150
    }


def test_replication_factor_is_the_lowest_partitions() -> None:
    """orders-0 lists 2 replicas, orders-1 and -2 three: KMinion reads the first partition's."""
    snap = small_snapshot()
    orders = snap.topics["orders"]
    snap.topics["orders"] = dataclasses.replace(orders, partitions={0: (2, 1), 1: (1, 2, 3), 2: (1, 2, 3)})
    topics = {t.topic: t for t in figures(snap).topics}
    assert (topics["orders"].partitions, topics["orders"].replication_factor) == (3, 2)
    assert (topics["solo"].partitions, topics["solo"].replication_factor) == (1, 1)
