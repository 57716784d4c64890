"""Retention against a stopped consumer group, end to end: a real Java consumer reads 10 records and leaves, a
producer goes on, retention (retention.ms 60 s, a segment every 5 s) deletes what the group has not read. The
ETA `retention_risk` gives before the records go is held against when the log start offset really passes the
group's offset, and the loss it reports after against where the group's consumer really resumes.

One ZooKeeper and one Kafka 3.9 broker of their own, for this module only: Kafka checks retention every
`log.retention.check.interval.ms`, 5 min by default and not a dynamic config (the shared sandboxes keep it),
which would delay a deletion up to 5 min past its due time; here it is 1 s."""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic, OffsetSpec
from kafka.structs import TopicPartition
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors import retention_risk
from kafka_ops.jars.fetch import var_dir
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.report.digest import render_findings
from kafka_ops.snapshot.publish import groups_to_lake, snapshot_to_lake
from kafka_ops.sources import log_dirs
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from kafka_ops.thresholds import Thresholds
from sandbox import SandboxCluster
from sandbox.java_consumer import JavaConsumer
from tests.integration.java_groups import FAST

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1800)]

CLUSTER = "retention"
RETENTION_MS = 60_000
SEGMENT_MS = 5_000
READ = 10  # records the group reads before it stops
PRODUCE_S = 20.0  # how long the producer goes on after that, a record every half second


@pytest.fixture(scope="module")
def broker() -> Iterator[SandboxCluster]:
    base = var_dir() / "sandbox"
    base.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="retention-", dir=base))
    cluster = SandboxCluster(root=root, brokers=1, broker_settings={
        "offsets.topic.replication.factor": "1", "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1", "log.retention.check.interval.ms": "1000",
    })  # fmt: skip
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


class Watch:
    """The partition's log start offset, polled: when it first passed an offset."""

    def __init__(self, cluster: SandboxCluster, tp: TopicPartition) -> None:
        self.admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, **FAST)
        self.tp = tp
        self.passed: dict[int, datetime] = {}

    def poll(self, offset: int) -> int:
        start = int(self.admin.list_partition_offsets({self.tp: OffsetSpec.EARLIEST})[self.tp].offset)
        if start > offset and offset not in self.passed:
            self.passed[offset] = datetime.now(UTC)
        return start

    def end(self) -> int:
        return int(self.admin.list_partition_offsets({self.tp: OffsetSpec.LATEST})[self.tp].offset)

    def close(self) -> None:
        self.admin.close()


def rows(lake: Lake, table: str, snapshot_id: str, group: str) -> dict[str, Any]:
    (row,) = [r for r in lake.read(table, CLUSTER, [snapshot_id]).to_pylist() if r["group_id"] == group]
    return row


def test_the_eta_before_and_the_loss_after_retention_deletes_a_stopped_groups_records(
    broker: SandboxCluster, spark: SparkSession, tmp_path: Path
) -> None:
    run = uuid.uuid4().hex[:6]
    topic, group = f"retention-{run}", f"stopped-{run}"
    tp = TopicPartition(topic, 0)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, **FAST)
    try:
        configs = {"retention.ms": str(RETENTION_MS), "segment.ms": str(SEGMENT_MS)}
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1, topic_configs=configs)])
    finally:
        admin.close()
    lake = open_lake(tmp_path / "lake")
    target = KafkaTarget(broker.bootstrap_servers, FAST)
    zookeeper = ZooKeeperTarget(broker.zookeeper_hosts, broker.chroot)
    snapshot_to_lake(CLUSTER, zookeeper, lake, None, KafkaTarget(broker.bootstrap_servers, log_dirs.bounded({})))
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, linger_ms=0)
    watch = Watch(broker, tp)
    collections: list[tuple[str, datetime, int | None]] = []  # (id, captured at, log start offset read)

    def collect() -> None:
        snap, _ = groups_to_lake(CLUSTER, target, lake, include=group)
        collections.append((snap.snapshot_id, snap.captured_at, snap.start_offsets.get((topic, 0))))

    try:
        # the group reads 10 records and stops: Empty, its offset at 10
        with JavaConsumer(broker.bootstrap_servers, group, [topic], client_id="stopped", log_dir=tmp_path) as consumer:
            consumer.wait_until(lambda c: bool(c.assignment), 60, "its partition")
            for _ in range(READ):
                producer.send(topic, b"m", partition=0)
                producer.flush(10)
                time.sleep(0.5)
            consumer.wait_committed({(topic, 0): READ})
        # the producer goes on; the group is collected now (its first unconsumed record just written) and now and
        # then (not too often: a collection between two records would stretch a segment past its 5 s)
        until, last = time.monotonic() + PRODUCE_S, 0.0
        while time.monotonic() < until:
            producer.send(topic, b"m", partition=0)
            producer.flush(10)
            if time.monotonic() - last > 8:
                collect()
                last = time.monotonic()
            time.sleep(0.5)
        before = collections[0]
        # until retention passes the group's offset, and deletes all it can: every record, the active segment's
        # too (Kafka rolls a new, empty one first), so that the loss below is exact
        end = watch.end()
        deadline, start = time.monotonic() + 3 * RETENTION_MS / 1000, -1
        while time.monotonic() < deadline and start < end:
            start = watch.poll(READ)
            if time.monotonic() - last > 3:
                collect()
                last = time.monotonic()
            time.sleep(0.5)
        assert READ in watch.passed and start == end, f"log start {start}, end {end}"
        collect()
        after = collections[-1]
        assert after[2] == start  # nothing left to delete, nothing produced until the group comes back below
    finally:
        producer.close()
        watch.close()

    # before: the ETA of the first unconsumed record, a lower bound within 20 % of when the log start passed it
    analyse(spark, lake.root, CLUSTER, [retention_risk.DETECTOR], Thresholds(), snapshot_id=before[0])
    early = rows(lake, "retention_risk_partitions", before[0], group)
    assert (early["state"], early["committed_offset"], early["eta_basis"], early["eta_is_lower_bound"]) == (
        "at_risk", READ, "retention.ms", True
    )  # fmt: skip
    assert (early["retention_ms"], early["retention_ms_source"], early["severity"]) == (RETENTION_MS, "topic",
                                                                                        "critical")  # fmt: skip
    eta = early["eta_seconds"]
    actual = (watch.passed[READ] - before[1]).total_seconds()
    assert eta <= actual + 1.0, (eta, actual)  # a lower bound (the log start is polled every half second)
    assert actual - eta <= 0.2 * actual, (eta, actual)

    # after: lost, as many records as the group's consumer really skips when it comes back
    analyse(spark, lake.root, CLUSTER, [retention_risk.DETECTOR], Thresholds(), snapshot_id=after[0])
    late = rows(lake, "retention_risk_partitions", after[0], group)
    # a record for the group to read when it comes back (only now: retention would delete it after 60 s)
    with KafkaProducer(bootstrap_servers=broker.bootstrap_servers) as again:
        again.send(topic, b"m", partition=0)
        again.flush(10)
    resumed = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=group, auto_offset_reset="earliest",
                            enable_auto_commit=False, consumer_timeout_ms=15_000)  # fmt: skip
    try:
        resumed.assign([tp])
        first = next(iter(resumed)).offset
    finally:
        resumed.close()
    assert first == start > READ
    assert (late["state"], late["records_lost"], late["severity"]) == ("lost", first - READ, "critical")
    # since the first collection that read the log start past the group's offset, seconds after it passed
    saw = min(at for _, at, s in collections if s is not None and s > READ)
    assert late["lost_since"].replace(tzinfo=UTC) == saw
    assert abs((saw - watch.passed[READ]).total_seconds()) < 10
    assert rows(lake, "retention_risk_groups", after[0], group)["records_lost"] == first - READ
    assert f"group {group} lost {first - READ:,} records of {topic}-0 to retention" in render_findings(lake, CLUSTER)
