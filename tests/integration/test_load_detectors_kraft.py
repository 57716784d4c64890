"""The load detector on the real KRaft sandbox (Kafka 4.4): two topics produced at very different rates
between two snapshots collected through DescribeLogDirs; the analysis reports the hot partition and the
broker whose disk grows fastest, and nothing else of ours."""

from __future__ import annotations

import pytest
from kafka import KafkaProducer
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.capacities import Capacities
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.thresholds import Thresholds
from sandbox import KRaftSandbox
from tests.integration.test_kraft_remediation_sandbox import CLUSTER, create, snapshot

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HOT, COLD = "ld_hot", "ld_cold"
VALUE = 1_000
HOT_RECORDS, COLD_RECORDS = 3_000, 5
"""Between the snapshots: 3 MB into the hot partition (on broker 1 alone), 5 kB into each cold one (on
brokers 2 and 3)."""


def fill(cluster: KRaftSandbox, hot: int, cold: int) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=5)
    try:
        for _ in range(hot):
            producer.send(HOT, b"h" * VALUE, partition=0)
        for partition in range(3):
            for _ in range(cold):
                producer.send(COLD, b"c" * VALUE, partition=partition)
        producer.flush(120)
    finally:
        producer.close()


def size_of(snap: ClusterSnapshot, topic: str, partition: int) -> int:
    return max(r.size_bytes for r in snap.replica_sizes if (r.topic, r.partition) == (topic, partition))


def test_the_hot_partition_and_the_fastest_growing_broker_are_reported(
    healthy_kraft_sandbox: KRaftSandbox, lake: Lake, spark: SparkSession
) -> None:
    cluster = healthy_kraft_sandbox
    create(cluster, HOT, {0: [1]})
    create(cluster, COLD, {p: [2, 3] if p % 2 == 0 else [3, 2] for p in range(3)})
    fill(cluster, hot=10, cold=COLD_RECORDS)
    first = snapshot(cluster)
    lake.publish(snapshot_batch(first))
    fill(cluster, hot=HOT_RECORDS, cold=COLD_RECORDS)
    second = snapshot(cluster)
    lake.publish(snapshot_batch(second))
    thresholds = Thresholds(hot_partition_min_bytes_per_s=20_000.0, hot_broker_min_bytes_per_s=20_000.0)
    capacity = Capacities.from_mapping({"disk_bytes": 100_000_000_000}, "test")  # 100 GB a broker

    analyse(spark, lake.root, CLUSTER, [DETECTORS["load"]], thresholds, capacity=capacity)

    seconds = (second.captured_at - first.captured_at).total_seconds()
    parts = {
        (r["topic"], r["partition"]): r for r in lake.read("partition_load", CLUSTER, [second.snapshot_id]).to_pylist()
    }
    hot = parts[(HOT, 0)]
    grown = size_of(second, HOT, 0) - size_of(first, HOT, 0)
    assert grown > HOT_RECORDS * VALUE  # DescribeLogDirs counts the records as appended, batch headers too
    assert (hot["method"], hot["confidence"], hot["hot"]) == ("size_growth", "high", True)
    assert hot["bytes_in_per_s"] == pytest.approx(grown / seconds)
    assert (hot["readers"], hot["followers"], hot["bytes_out_per_s"]) == (0, 0, 0.0)  # nobody reads it
    cold = [parts[(COLD, p)] for p in range(3)]
    assert all(c["method"] == "size_growth" and not c["hot"] and c["followers"] == 1 for c in cold)
    assert all(0 < c["bytes_in_per_s"] < hot["bytes_in_per_s"] / 100 for c in cold)

    problems = lake.read("load_problems", CLUSTER, [second.snapshot_id]).to_pylist()
    assert {(p["topic"], p["partition"]) for p in problems if p["kind"] == "hot_partition"} == {(HOT, 0)}
    assert {p["broker_id"] for p in problems if p["kind"] == "disk_full_soon"} == {1}
    assert {p["broker_id"] for p in problems if p["kind"] == "hot_broker_in"} == {1}
    brokers = {r["broker_id"]: r for r in lake.read("broker_load", CLUSTER, [second.snapshot_id]).to_pylist()}
    assert brokers[1]["leader_bytes_in_per_s"] == pytest.approx(hot["bytes_in_per_s"])
    assert brokers[2]["replication_bytes_in_per_s"] > 0 and brokers[2]["capacity_source"] == "settings"
    # Kafka 4.4 reports each log dir's volume: the sandbox's brokers share one temporary file system
    dirs = lake.read("log_dir_load", CLUSTER, [second.snapshot_id]).to_pylist()
    assert {d["broker_id"] for d in dirs} == {1, 2, 3} and all(d["total_bytes"] and d["error"] is None for d in dirs)
