"""Load on a broker with two log dirs (JBOD), which the shared sandboxes' single dirs cannot show: a
replica moving between dirs (a future replica, held half-copied by a 1 B/s throttle) and a dir that
fails under the broker (KAFKA_STORAGE_ERROR), each checked against Kafka's own `kafka-log-dirs`.

One ZooKeeper and one Kafka 3.9 broker of their own, for this module only."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import KafkaError

from kafka_ops.sandbox import SandboxCluster
from kafka_ops.sandbox.jars import var_dir
from kafka_ops.snapshot.model import ClusterSnapshot
from kafka_ops.snapshot.publish import collect_metadata
from kafka_ops.sources import log_dirs
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from tests.integration.kafka_data import admin_for
from tests.integration.kafka_tools import LogDirsView, log_dirs_described

pytestmark = [pytest.mark.integration, pytest.mark.slow]

THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"


@pytest.fixture(scope="module")
def jbod() -> Iterator[tuple[SandboxCluster, list[str]]]:
    base = var_dir() / "sandbox"
    base.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="jbod-", dir=base))
    dirs = [str(root / "dir-a"), str(root / "dir-b")]
    cluster = SandboxCluster(root=root, brokers=1, broker_settings={
        "log.dirs": ",".join(dirs), "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
    })  # fmt: skip
    cluster.start()
    try:
        yield cluster, dirs
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def produce(cluster: SandboxCluster, topic: str, count: int, size: int) -> None:
    """Best effort: the failing dir's test produces into a dir that is gone."""
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1, linger_ms=20, retries=0)
    with contextlib.suppress(KafkaError):
        for _ in range(count):
            producer.send(topic, b"x" * size, partition=0)
        producer.flush(30)
    with contextlib.suppress(KafkaError):
        producer.close(timeout=5)


def snapshot(cluster: SandboxCluster) -> ClusterSnapshot:
    brokers = KafkaTarget(cluster.bootstrap_servers, log_dirs.bounded({}))
    return collect_metadata("jbod", ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot), None, brokers)


def settled(cluster: SandboxCluster) -> tuple[LogDirsView, ClusterSnapshot]:
    for _ in range(10):
        before = log_dirs_described(cluster.bootstrap_servers, [1])
        snap = snapshot(cluster)
        if log_dirs_described(cluster.bootstrap_servers, [1]) == before:
            return before, snap
        time.sleep(1)
    raise AssertionError("kafka-log-dirs never agreed with itself twice in a row")


def wait_for_kafka(cluster: SandboxCluster, check: Callable[[LogDirsView], bool], what: str) -> LogDirsView:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        view = log_dirs_described(cluster.bootstrap_servers, [1])
        if check(view):
            return view
        time.sleep(1)
    raise AssertionError(f"kafka-log-dirs never showed {what}")


def dir_of(view: LogDirsView, topic: str) -> str:
    (found,) = {d for (_, d, t, _, future) in view["replicas"] if t == topic and not future}
    return str(found)


def test_a_replica_moving_between_log_dirs_is_reported_on_both(jbod: tuple[SandboxCluster, list[str]]) -> None:
    cluster, dirs = jbod
    admin = admin_for(cluster)
    try:
        admin.create_topics(
            [NewTopic("moving", replica_assignments={0: [1]}, topic_configs={"segment.bytes": "262144"})]
        )
        time.sleep(1)
        produce(cluster, "moving", 2000, 1000)  # 2 MB in 256 KB segments
        source = dir_of(wait_for_kafka(cluster, lambda v: any(k[2] == "moving" for k in v["replicas"]), "moving"),
                        "moving")  # fmt: skip
        target = next(d for d in dirs if d != source)
        # 1 byte/s: the copy stops after its first fetch, so the future replica holds still to be compared
        admin.alter_configs(
            [ConfigResource(ConfigResourceType.BROKER, "1", {THROTTLE: "1"})], incremental=True, raise_on_unknown=False
        )
        answer = admin.alter_replica_log_dirs({("moving", 0, 1): target})
        assert {e.__name__ for e in answer.values()} == {"NoError"}, answer
        wait_for_kafka(cluster, lambda v: (1, target, "moving", 0, True) in v["replicas"], "the future replica")
    finally:
        admin.close()

    kafka, snap = settled(cluster)

    ours = {(r.broker_id, r.log_dir, r.topic, r.partition, r.is_future): (r.size_bytes, r.offset_lag)
            for r in snap.replica_sizes}  # fmt: skip
    assert ours == kafka["replicas"]
    current, future = ours[(1, source, "moving", 0, False)], ours[(1, target, "moving", 0, True)]
    assert current[0] >= 2_000_000 and 0 <= future[0] < current[0] and future[1] > 0  # half copied, lagging
    assert sorted(d.path for d in snap.log_dirs) == sorted(dirs) and snap.issues == []


def test_a_log_dir_failing_under_the_broker_is_a_row_with_its_error_and_an_issue(
    jbod: tuple[SandboxCluster, list[str]],
) -> None:
    cluster, dirs = jbod
    admin = admin_for(cluster)
    try:
        admin.create_topics(
            [NewTopic("failing", replica_assignments={0: [1]}, topic_configs={"segment.bytes": "1024"})]
        )
        time.sleep(1)
    finally:
        admin.close()
    produce(cluster, "failing", 5, 100)
    broken = dir_of(wait_for_kafka(cluster, lambda v: any(k[2] == "failing" for k in v["replicas"]), "failing"),
                    "failing")  # fmt: skip
    shutil.rmtree(broken)  # the disk is gone: the next segment roll cannot create its file
    produce(cluster, "failing", 50, 100)
    wait_for_kafka(cluster, lambda v: v["dirs"].get((1, broken)) is not None, "the failed dir")

    kafka, snap = settled(cluster)

    assert {(d.broker_id, d.path): d.error for d in snap.log_dirs} == {
        (1, broken): "KAFKA_STORAGE_ERROR",
        **{(1, d): None for d in dirs if d != broken},
    }
    assert kafka["dirs"][(1, broken)] is not None
    (failed,) = [d for d in snap.log_dirs if d.error]
    assert (failed.total_bytes, failed.usable_bytes) == (None, None)  # an offline dir reports no volume
    assert [i.path for i in snap.issues] == [f"DescribeLogDirs broker 1 log dir {broken}"]
    healthy = [d for d in dirs if d != broken]
    ours = {(r.broker_id, r.log_dir, r.topic, r.partition, r.is_future): (r.size_bytes, r.offset_lag)
            for r in snap.replica_sizes}  # fmt: skip
    assert ours == kafka["replicas"] and {k[1] for k in ours} <= set(healthy)
