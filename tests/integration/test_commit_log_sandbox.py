"""Offset commits read from `__consumer_offsets` on both sandboxes (Kafka 3.9's coordinator with
ZooKeeper, Kafka 4.4's in KRaft), against what a real Java consumer committed: every commit of the
group since the read's start, in order, each with its time, the last equal to OffsetFetch's; the
collection publishes them as `group_commits` rows, and keeps the group's coordinator."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import pytest
from kafka import KafkaAdminClient

from kafka_ops.lake.store import Lake
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from kafka_ops.sources.groups.commit_log import read_commit_log
from kafka_ops.sources.groups.tables import group_batch
from sandbox import KRaftSandbox, SandboxCluster
from sandbox.java_consumer import JavaConsumer
from tests.integration.java_groups import FAST, Sandbox, make_topics, produce

pytestmark = pytest.mark.integration

ROUNDS, PER_ROUND = 3, 10
MESSAGES = ROUNDS * PER_ROUND


def commits_match_the_consumers(cluster: Sandbox, tmp_path: Path, lake: Lake) -> None:
    run = uuid.uuid4().hex[:6]
    topic, group = f"cl-{run}", f"cl-{run}-g"
    make_topics(cluster, {topic: 2})
    since = datetime.now(UTC) - timedelta(seconds=1)
    with JavaConsumer(cluster.bootstrap_servers, group, [topic], log_dir=tmp_path) as consumer:
        for done in range(PER_ROUND, MESSAGES + 1, PER_ROUND):  # a commit per round at least
            produce(cluster, {(topic, 0): PER_ROUND, (topic, 1): PER_ROUND})
            consumer.wait_committed({(topic, 0): done, (topic, 1): done})
        committed = dict(consumer.committed)
    read = partial(read_commit_log, cluster.bootstrap_servers, FAST, since=since, timeout_s=20)
    log = read([group, f"cl-{run}-absent"])
    assert log.problems == [] and log.records_read >= len(log.commits)
    by_partition: dict[int, list[tuple[int | None, datetime]]] = {0: [], 1: []}
    for c in log.commits:
        assert (c.group_id, c.topic) == (group, topic)
        by_partition[c.partition].append((c.offset, c.committed_at))
    now = datetime.now(UTC)
    for partition, commits in by_partition.items():
        offsets = [o for o, _ in commits]
        times = [t for _, t in commits]
        assert len(commits) >= ROUNDS, commits
        assert offsets == sorted(offsets) and offsets[-1] == committed[(topic, partition)] == MESSAGES
        assert times == sorted(times) and since <= times[0] and times[-1] <= now

    snap = GroupCollector("sandbox", KafkaTarget(cluster.bootstrap_servers, FAST), group, commit_log=read).collect()
    assert [o.committed_offset for o in snap.offsets] == [MESSAGES, MESSAGES]
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, **FAST)
    try:  # the coordinator the collection keeps is the one FindCoordinator names
        found = admin._manager.run(admin._find_coordinator_ids, [group])
    finally:
        admin.close()
    assert snap.groups[0].coordinator_id == found[group]
    assert snap.commits == tuple(log.commits) and not [i for i in snap.issues if i.kind == "commit_log"]
    lake.publish(group_batch(snap))
    rows = lake.read("group_commits", "sandbox", [snap.snapshot_id]).to_pylist()
    assert [(r["partition"], r["committed_offset"], r["committed_at"]) for r in rows] == [
        (c.partition, c.offset, c.committed_at) for c in log.commits
    ]


def test_commits_on_kafka_3_9_with_zookeeper(healthy_sandbox: SandboxCluster, tmp_path: Path, lake: Lake) -> None:
    commits_match_the_consumers(healthy_sandbox, tmp_path, lake)


def test_commits_on_kafka_4_4_in_kraft(healthy_kraft_sandbox: KRaftSandbox, tmp_path: Path, lake: Lake) -> None:
    commits_match_the_consumers(healthy_kraft_sandbox, tmp_path, lake)
