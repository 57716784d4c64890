"""Tiered storage (KIP-405) on a KRaft 4.4 cluster of its own (one controller, one broker) with Kafka's
`LocalTieredStorage`: a topic with remote storage, 1 MiB segments and 1 MiB of local retention really has
its rolled segments copied to remote storage and deleted locally, and kafka-ops's figures for each
partition (earliest, earliest-local, latest-tiered and end offsets, the copy backlog, the local bytes)
are Kafka's own tools' (`kafka-get-offsets --time -2/-4/-5/-1`, `kafka-log-dirs --describe`) and the
broker's files'. A topic without remote storage is not applicable (nulls); a client limited to an older
ListOffsets version gets "unsupported" issues and nulls, never a crash."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaProducer
from kafka.admin import NewTopic

from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources import tiered
from kafka_ops.sources.admin import AdminClient
from kafka_ops.sources.kraft.collector import KRaftCollector
from sandbox import KRaftSandbox
from sandbox.tiered import REMOTE_DIR, tiered_sandbox
from tests.integration.kafka_tools import kafka4_tool
from tests.integration.test_kraft_remediation_sandbox import CLUSTER, target

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TIERED = "tiered_orders"
EMPTY = "tiered_empty"
PLAIN = "plain_orders"
SEGMENT = 1024 * 1024
RECORD = 1000
RECORDS = 5000
"""Per partition: some 5 MB, five 1 MiB segments, four rolled and tiered, three of them deleted locally."""
TIERED_CONFIGS = {
    "remote.storage.enable": "true",
    "segment.bytes": str(SEGMENT),
    "local.retention.bytes": str(SEGMENT),
    "retention.bytes": "-1",
}
SPEC_FIELDS = {-2: "log_start_offset", -4: "local_log_start_offset", -5: "tiered_end_offset", -1: "end_offset"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftSandbox]:
    sandbox = tiered_sandbox(tmp_path_factory.mktemp("kraft-tiered")).start()
    try:
        with sandbox.admin(timeout_ms=15_000) as admin:
            admin.create_topics([
                NewTopic(TIERED, 2, 1, topic_configs=TIERED_CONFIGS),
                NewTopic(EMPTY, 1, 1, topic_configs=TIERED_CONFIGS),
                NewTopic(PLAIN, 1, 1, topic_configs={"segment.bytes": str(SEGMENT)}),
            ])  # fmt: skip
        producer = KafkaProducer(bootstrap_servers=sandbox.bootstrap_servers, linger_ms=20, acks="all")
        try:
            for i in range(RECORDS):
                value = f"{i:08d}".encode().ljust(RECORD, b"x")
                for p in (0, 1):
                    producer.send(TIERED, value=value, partition=p)
                if i < 100:
                    producer.send(PLAIN, value=value)
            producer.flush(timeout=60)
        finally:
            producer.close()
        yield sandbox
    finally:
        sandbox.stop()


def get_offsets(cluster: KRaftSandbox, spec: int) -> dict[tuple[str, int], int]:
    """`kafka-get-offsets --time <spec>` for the tiered topics: partition -> offset."""
    out = kafka4_tool(
        "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", cluster.bootstrap_servers,
        "--topic", f"{TIERED}|{EMPTY}", "--time", str(spec),
    )  # fmt: skip
    return {(t, int(p)): int(o) for t, p, o in re.findall(r"^(\S+):(\d+):(-?\d+)$", out, re.MULTILINE)}


def log_dirs_sizes(cluster: KRaftSandbox) -> dict[tuple[str, int], int]:
    """`kafka-log-dirs --describe`: each replica's size, as Kafka's tool reports it."""
    out = kafka4_tool(
        "org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", cluster.bootstrap_servers, "--describe",
        "--topic-list", f"{TIERED},{EMPTY},{PLAIN}",
    )  # fmt: skip
    described = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    sizes = {}
    for broker in described["brokers"]:
        for log_dir in broker["logDirs"]:
            for p in log_dir["partitions"]:
                topic, _, partition = p["partition"].rpartition("-")
                sizes[(topic, int(partition))] = p["size"]
    return sizes


def tools(cluster: KRaftSandbox) -> dict[tuple[str, int], dict[str, int]]:
    """Every spec's offsets per partition; `kafka-get-offsets --time -5` prints no line for a partition
    with nothing tiered (the broker's -1), which is -1 here."""
    figures: dict[tuple[str, int], dict[str, int]] = {}
    for spec, name in SPEC_FIELDS.items():
        for tp, offset in get_offsets(cluster, spec).items():
            figures.setdefault(tp, {})[name] = offset
    assert set(figures) == {(TIERED, 0), (TIERED, 1), (EMPTY, 0)}
    for found in figures.values():
        found.setdefault("tiered_end_offset", -1)
    return figures


def settled(cluster: KRaftSandbox) -> dict[tuple[str, int], dict[str, int]]:
    """Kafka's tools' figures once the broker has tiered every rolled segment and deleted locally what
    local retention lets go, and they read the same twice in a row (the remote log manager and the
    retention check run every second)."""
    seen: list[dict[tuple[str, int], dict[str, int]]] = []

    def stable() -> bool:
        now = tools(cluster)
        done = all(now[(TIERED, p)]["local_log_start_offset"] > 0 for p in (0, 1))
        same = bool(seen) and seen[-1] == now
        seen.append(now)
        return done and same

    cluster.wait_for(stable, 120, "segments tiered and deleted locally")
    return seen[-1]


def local_segment_bytes(cluster: KRaftSandbox, topic: str, partition: int) -> tuple[int, int]:
    """The broker's own files: the bytes of the partition's live local segments (not those renamed
    `.deleted`, waiting for `file.delete.delay.ms`), and the base offset of its active (last) segment."""
    folder = Path(str(cluster.root)) / "broker-1" / "data" / f"{topic}-{partition}"
    segments = sorted(folder.glob("*.log"))
    return sum(f.stat().st_size for f in segments), int(segments[-1].stem)


def remote_segment_bytes(cluster: KRaftSandbox, topic: str, partition: int) -> int:
    """What `LocalTieredStorage` holds of the partition: its remote segments' bytes."""
    remote = Path(str(cluster.root)) / REMOTE_DIR
    return sum(f.stat().st_size for f in remote.rglob("*.log") if f.parent.name.startswith(f"{topic}-{partition}-"))


def snapshot(cluster: KRaftSandbox) -> ClusterSnapshot:
    return KRaftCollector(CLUSTER, target(cluster)).collect()


def test_local_and_remote_parts_match_kafkas_tools(cluster: KRaftSandbox, lake: Lake) -> None:
    before = settled(cluster)
    snap = snapshot(cluster)
    after = tools(cluster)
    assert before == after, "the logs moved while the snapshot was taken"
    assert not [i for i in snap.issues if i.path.startswith(tiered.REQUEST)], snap.issues

    assert snap.remote_storage == {TIERED: True, EMPTY: True}
    for tp, figures in after.items():
        log = snap.tiered_logs[tp]
        assert {name: getattr(log, name) for name in SPEC_FIELDS.values()} == figures, tp
    for p in (0, 1):
        figures = after[(TIERED, p)]
        local_bytes, active_base = local_segment_bytes(cluster, TIERED, p)
        # really tiered: rolled segments are remote, the oldest deleted locally; nothing lost
        assert figures["log_start_offset"] == 0 < figures["local_log_start_offset"] <= figures["tiered_end_offset"]
        assert figures["end_offset"] == RECORDS
        # every rolled segment is copied: what is only local is the active segment, from its base offset
        assert figures["tiered_end_offset"] == active_base - 1
        assert snap.tiered_logs[(TIERED, p)].copy_backlog == RECORDS - active_base > 0
    # nothing produced: nothing tiered (-1), no backlog
    assert after[(EMPTY, 0)] == {"log_start_offset": 0, "local_log_start_offset": 0, "tiered_end_offset": -1,
                                 "end_offset": 0}  # fmt: skip
    assert snap.tiered_logs[(EMPTY, 0)].copy_backlog == 0
    # the topics' effective local retention (DescribeConfigs), the topic's own and the default (-2)
    assert snap.tiered_topics[TIERED].local_retention_bytes == SEGMENT
    assert snap.tiered_topics[TIERED].local_retention_ms == -2
    assert snap.tiered_topics[TIERED].copy_disabled is False

    # the local bytes: DescribeLogDirs' sizes are kafka-log-dirs's and the broker's live local segments,
    # and exclude the remote segments, which hold most of the partition
    sizes = {(r.topic, r.partition): r.size_bytes for r in snap.replica_sizes}
    assert {tp: sizes[tp] for tp in log_dirs_sizes(cluster)} == log_dirs_sizes(cluster)
    for p in (0, 1):
        local_bytes, _ = local_segment_bytes(cluster, TIERED, p)
        remote_bytes = remote_segment_bytes(cluster, TIERED, p)
        assert sizes[(TIERED, p)] == local_bytes
        assert remote_bytes > 2 * SEGMENT > sizes[(TIERED, p)]

    lake.publish(snapshot_batch(snap))
    rows = {(r["topic"], r["partition"]): r for r in lake.read("partitions", CLUSTER).to_pylist()}
    row = rows[(TIERED, 0)]
    assert row["remote_storage"] is True and row["local_retention_bytes"] == SEGMENT
    assert {name: row[name] for name in SPEC_FIELDS.values()} == after[(TIERED, 0)]
    assert row["copy_backlog"] == snap.tiered_logs[(TIERED, 0)].copy_backlog
    plain = rows[(PLAIN, 0)]  # no remote storage: not applicable
    assert plain["remote_storage"] is False
    assert [plain[c] for c in ("local_retention_ms", "log_start_offset", "tiered_end_offset", "copy_backlog")] == [
        None
    ] * 4


@pytest.mark.parametrize(
    ("api_version", "unsupported"),
    [((3, 4), {"earliest-local", "latest-tiered"}), ((3, 5), {"latest-tiered"})],
)
def test_an_older_listoffsets_leaves_the_tiered_offsets_unsupported(
    cluster: KRaftSandbox, api_version: tuple[int, int], unsupported: set[str]
) -> None:
    """A client speaking ListOffsets up to v7 (Kafka 3.4's) or v8 (3.5's), as against brokers that serve
    no more: the specs it cannot send are issues of kind unsupported, their fields null, the rest read."""
    snap = snapshot(cluster)
    snap.issues.clear()
    snap.tiered_logs.clear()
    older = AdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10_000, api_version=api_version)
    try:
        tiered.read(older, snap)
    finally:
        older.close()
    issues = {i.path: i for i in snap.issues}
    assert {i.kind for i in issues.values()} == {"unsupported"}
    assert {path.split()[-3] for path in issues} == unsupported
    assert all(i.problem.startswith("unsupported:") for i in issues.values())
    log = snap.tiered_logs[(TIERED, 0)]
    assert log.end_offset == RECORDS and log.log_start_offset == 0
    assert log.tiered_end_offset is None and log.copy_backlog is None
    assert (log.local_log_start_offset is None) == ("earliest-local" in unsupported)
