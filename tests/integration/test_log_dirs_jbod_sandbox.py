"""Load on a broker with two log dirs (JBOD), which the shared sandboxes' single dirs cannot show: a
replica moving between dirs (a future replica, held half-copied by a 1 B/s throttle), the log dir
balance planned and executed (AlterReplicaLogDirs), and a dir that fails under the broker
(KAFKA_STORAGE_ERROR), each checked against Kafka's own `kafka-log-dirs`.

One ZooKeeper and one Kafka 3.9 broker of their own, for this module only."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from kafka import KafkaProducer
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import KafkaError

from kafka_ops.errors import PlanCancelled, RemediationRefused
from kafka_ops.jars.fetch import var_dir
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import plan_log_dir_balance
from kafka_ops.planning.plan import DirMove
from kafka_ops.remediation import (
    AdminApiBackend,
    ExecutionOptions,
    ExecutionReport,
    cancel,
    clear_throttles,
    read_audit,
)
from kafka_ops.remediation.backends import ALTER_LOG_DIRS_THROTTLE
from kafka_ops.remediation.log_dir_moves import execute_dir_moves
from kafka_ops.remediation.store import read_progress, write_progress
from kafka_ops.settings import ClusterConfig
from kafka_ops.snapshot.publish import collect_metadata
from kafka_ops.sources import log_dirs
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from sandbox import SandboxCluster
from tests.integration.background import Background
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


def produce(cluster: SandboxCluster, topic: str, count: int, size: int, batch_size: int = 16384) -> None:
    """Best effort: the failing dir's test produces into a dir that is gone."""
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, acks=1, linger_ms=20, retries=0, batch_size=batch_size
    )
    with contextlib.suppress(KafkaError):
        for _ in range(count):
            producer.send(topic, b"x" * size, partition=0)
        producer.flush(30)
    try:
        producer.close(timeout=5)
    except KafkaError:  # kafka-python 3.0.12's close flushes first and, when that times out, raises
        # before stopping its sender thread, which then spins on the unknown leader at 100% of a core
        # for the rest of the test session (CI: 22 CPU-minutes): stop it the way close() would have
        producer._sender.force_close()


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
        # the broker applies a dynamic config when ZooKeeper tells it, not when the write returns: a copy
        # started before that runs unthrottled and may be over before it can be seen (seen on a loaded machine)
        deadline = time.monotonic() + 60
        while throttle_of(cluster) != "1":
            assert time.monotonic() < deadline, "broker 1 never applied the 1 byte/s throttle"
            time.sleep(0.5)
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


BIG, SMALL = "ldb_big", "ldb_small"


def test_the_log_dir_balance_moves_a_big_replica_to_the_empty_dir_as_kafka_log_dirs_shows(
    jbod: tuple[SandboxCluster, list[str]], lake: Lake
) -> None:
    cluster, dirs = jbod
    admin = admin_for(cluster)
    try:  # every replica of ours in the first dir, empty (instant moves), then filled
        admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1", {THROTTLE: (AlterConfigOp.DELETE, None)})],
                            incremental=True, raise_on_unknown=False)  # fmt: skip
        admin.create_topics([NewTopic(BIG, replica_assignments={0: [1], 1: [1]}),
                             NewTopic(SMALL, replica_assignments={p: [1] for p in range(4)})])  # fmt: skip
        ours = [(BIG, 0), (BIG, 1), *((SMALL, p) for p in range(4))]
        wait_for_kafka(cluster, lambda v: {(k[2], k[3]) for k in v["replicas"]} >= set(ours), "the new topics")
        admin.alter_replica_log_dirs({(t, p, 1): dirs[0] for t, p in ours})
        wait_for_kafka(cluster, lambda v: {(k[2], k[3], k[1], k[4]) for k in v["replicas"] if k[2] in (BIG, SMALL)}
                       == {(t, p, dirs[0], False) for t, p in ours}, "the topics in the first dir")  # fmt: skip
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1, linger_ms=20)
    for partition, count in ((0, 2000), (1, 1500)):
        for _ in range(count):
            producer.send(BIG, b"b" * 1000, partition=partition)
    for partition in range(4):
        producer.send(SMALL, b"s" * 100, partition=partition)
    producer.flush(60)
    producer.close()
    _, whole = settled(cluster)
    snap = replace(whole, replica_sizes=[r for r in whole.replica_sizes if r.topic in (BIG, SMALL)])

    plan = plan_log_dir_balance(snap)

    assert [(d.topic, d.partition, d.source_dir, d.target_dir) for d in plan.dir_moves] == [(BIG, 1, *dirs)]
    backend = AdminApiBackend(KafkaTarget(cluster.bootstrap_servers))
    options = ExecutionOptions(throttle_bytes_per_s=50_000_000, poll_s=0.5)

    def run(writes_enabled: bool) -> ExecutionReport:
        config = ClusterConfig("jbod", writes_enabled=writes_enabled)
        return execute_dir_moves(plan, lake=lake, cluster_config=config, backend=backend, actor="pytest",
                                 trusted=lambda *_: None, options=options)  # fmt: skip

    try:
        with pytest.raises(RemediationRefused, match="writes enabled"):
            run(writes_enabled=False)
        report, again = run(writes_enabled=True), run(writes_enabled=True)
    finally:
        backend.close()

    assert (report.status, report.submitted, report.throttles_removed) == ("done", [0], True)
    assert again.status == "already_done"
    kafka = log_dirs_described(cluster.bootstrap_servers, [1])["replicas"]
    where = {(t, p): (d, future) for (_, d, t, p, future) in kafka if t in (BIG, SMALL)}
    assert where == {(BIG, 1): (dirs[1], False), **{tp: (dirs[0], False) for tp in ours if tp != (BIG, 1)}}
    actions = [(r["action"], r["outcome"]) for r in read_audit(lake, "jbod", plan.plan_id)]
    assert actions == [("refuse", "refused"), ("set_throttle", "ok"), ("alter_log_dirs", "ok"), ("verify", "ok"),
                       ("remove_throttle", "ok")]  # fmt: skip
    assert throttle_of(cluster) in (None, "9223372036854775807")  # gone (Kafka shows the default, or nothing)

    # a run that died with its throttle set: clear_throttles removes this plan's key (not the reassignment rates)
    died = read_progress(lake, "jbod", plan.plan_id)
    assert died is not None
    died.status, died.throttled_brokers = "failed", [1]
    write_progress(lake, died)
    admin = admin_for(cluster)
    try:
        admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1", {THROTTLE: "2000000"})], incremental=True,
                            raise_on_unknown=False)  # fmt: skip
    finally:
        admin.close()
    backend = AdminApiBackend(KafkaTarget(cluster.bootstrap_servers))
    try:
        cleared = clear_throttles(plan.plan_id, lake=lake, cluster_config=ClusterConfig("jbod", writes_enabled=True),
                                  backend=backend, zookeeper=ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot),
                                  actor="pytest")  # fmt: skip
    finally:
        backend.close()
    assert cleared.brokers_cleared == [1]
    assert throttle_of(cluster) in (None, "9223372036854775807")


def test_a_cancel_stops_a_log_dir_move_execution_and_the_plan_stays_cancelled(
    jbod: tuple[SandboxCluster, list[str]], lake: Lake
) -> None:
    """A copy crawling at 1 B/s is cancelled from elsewhere (the cancel DAG's `cancellation.cancel`): the
    executing run stops at its next poll with `PlanCancelled` and writes nothing more, so the plan stays
    cancelled and is never resumed. (Before the shared run loop, the log dir run never read the cancel
    while waiting and its next save overwrote `cancelled`: the copy, unthrottled by the cancel, finished
    and the plan ended `done`.)"""
    cluster, dirs = jbod
    topic = "ldb_cancel"
    admin = admin_for(cluster)
    try:
        admin.create_topics([NewTopic(topic, replica_assignments={0: [1]}, topic_configs={"segment.bytes": "262144"})])
    finally:
        admin.close()
    time.sleep(1)
    produce(cluster, topic, 2000, 1000)
    view = wait_for_kafka(cluster, lambda v: any(k[2] == topic for k in v["replicas"]), topic)
    source = dir_of(view, topic)
    target = next(d for d in dirs if d != source)
    (size,) = [s for (_, d, t, _, future), (s, _) in view["replicas"].items() if t == topic and not future]
    _, snap = settled(cluster)
    plan = replace(plan_log_dir_balance(snap), dir_moves=(DirMove(topic, 0, 1, source, target, size),))
    config = ClusterConfig("jbod", writes_enabled=True)
    crawl = ExecutionOptions(throttle_bytes_per_s=1, poll_s=0.3, stuck_after_s=120)
    backend, canceller = (AdminApiBackend(KafkaTarget(cluster.bootstrap_servers)) for _ in range(2))

    def execute() -> ExecutionReport:
        return execute_dir_moves(plan, lake=lake, cluster_config=config, backend=backend, actor="pytest",
                                 trusted=lambda *_: None, options=crawl)  # fmt: skip

    try:
        execution = Background(execute)
        wait_for_kafka(cluster, lambda v: (1, target, topic, 0, True) in v["replicas"], "the future replica")
        cancel(plan.plan_id, lake=lake, cluster_config=config, backend=canceller,
               zookeeper=ZooKeeperTarget(cluster.zookeeper_hosts, cluster.chroot), actor="pytest-cancel",
               poll_s=0.3)  # fmt: skip
        error = execution.error(30)
        with pytest.raises(RemediationRefused, match=rf"plan {plan.plan_id} was cancelled"):
            execute()
    finally:
        backend.close()
        canceller.close()

    assert isinstance(error, PlanCancelled), error
    assert f"plan {plan.plan_id} was cancelled before batch 0 was done (cancelled by pytest-cancel" in str(error)
    stored = read_progress(lake, "jbod", plan.plan_id)
    assert stored is not None and stored.status == "cancelled" and [s.state for s in stored.batches] == ["submitted"]
    log = [(r["batch"], r["action"], r["outcome"]) for r in read_audit(lake, "jbod", plan.plan_id)]
    # the cancel's throttle removal and the run's stop (at its next poll) race: either comes first
    assert log[:2] == [(None, "set_throttle", "ok"), (0, "alter_log_dirs", "ok")], log
    assert set(log[2:4]) == {(None, "remove_throttle", "ok"), (0, "stop", "cancelled")}, log
    assert log[4:] == [(None, "refuse", "refused")], log
    assert throttle_of(cluster) in (None, "9223372036854775807")  # the cancel removed it
    # the copy goes on unthrottled (Kafka cannot cancel it): the next test starts from a settled broker
    wait_for_kafka(cluster, lambda v: (1, target, topic, 0, False) in v["replicas"], "the copy landed")


def throttle_of(cluster: SandboxCluster) -> str | None:
    """Broker 1's `replica.alter.log.dirs.io.max.bytes.per.second`, as DescribeConfigs shows it."""
    admin = admin_for(cluster)
    try:
        (described,) = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")])["broker"].values()
    finally:
        admin.close()
    value: str | None = described.get(ALTER_LOG_DIRS_THROTTLE, {}).get("value")
    return value


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
    # batches well under segment.bytes: a batch above it is refused (RECORD_LIST_TOO_LARGE) before
    # any append, and then nothing rolls; until a roll fails the broker still counts the dir online
    # and describes it with UNKNOWN_SERVER_ERROR (its file store is gone), not KAFKA_STORAGE_ERROR
    produce(cluster, "failing", 50, 100, batch_size=300)
    wait_for_kafka(cluster, lambda v: "KafkaStorageException" in str(v["dirs"].get((1, broken))), "the failed dir")

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
