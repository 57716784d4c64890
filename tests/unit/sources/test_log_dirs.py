"""DescribeLogDirs answers into the snapshot's load tables: sizes, future replicas, dirs in error, brokers
that fail, answers of brokers too old to report volume sizes, and a cluster that cannot be reached."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kafka.errors import KafkaConnectionError, KafkaTimeoutError
from kafka.protocol.admin import DescribeLogDirsResponse

from kafka_ops.capacities import BrokerCapacity, Capacities
from kafka_ops.model.cluster import ClusterSnapshot, CollectionIssue, LogDir, ReplicaSize
from kafka_ops.snapshot.tables import render_summary, snapshot_batch, summary
from kafka_ops.sources import log_dirs
from kafka_ops.sources.groups.collector import KafkaTarget
from sandbox.cluster import free_port
from tests.unit.snapshots import AT, broker

Result = DescribeLogDirsResponse.DescribeLogDirsResult
Topic = Result.DescribeLogDirsTopic
Partition = Topic.DescribeLogDirsPartition
STORAGE_ERROR = 56
CLUSTER_AUTHORIZATION_FAILED = 31


def answer(version: int, *results: Any, error_code: int = 0) -> Any:
    """A response as the broker's bytes decode at `version` (fields a version lacks take their defaults)."""
    sent = DescribeLogDirsResponse(throttle_time_ms=0, error_code=error_code, results=list(results), version=version)
    return DescribeLogDirsResponse.decode(sent.encode(version=version), version=version)


def result(path: str, topics: dict[str, list[tuple[int, int, int, bool]]], error_code: int = 0) -> Any:
    return Result(
        error_code=error_code,
        log_dir=path,
        topics=[Topic(name=t, partitions=[Partition(partition_index=p, partition_size=size, offset_lag=lag,
                                                    is_future_key=future) for p, size, lag, future in parts])
                for t, parts in topics.items()],
        total_bytes=1_000_000,
        usable_bytes=400_000,
        is_cordoned=False,
    )  # fmt: skip


def empty_snapshot() -> ClusterSnapshot:
    snap = ClusterSnapshot(cluster="c", snapshot_id="s1", captured_at=AT, zookeeper=None)
    snap.brokers = {1: broker(1, "a"), 2: broker(2, "b")}
    return snap


def test_sizes_future_replicas_and_volume_bytes_are_read_per_dir() -> None:
    got = answer(4, result("/d1", {"big": [(0, 5_000, 0, False)], "small": [(1, 70, 3, False)]}),
                 result("/d2", {"big": [(0, 1_200, 40, True)]}))  # fmt: skip
    dirs, sizes, issues = log_dirs.parse_answer(2, got)
    assert dirs == [LogDir(2, "/d1", None, 1_000_000, 400_000), LogDir(2, "/d2", None, 1_000_000, 400_000)]
    assert sizes == [
        ReplicaSize("big", 0, 2, "/d1", 5_000, 0, False),
        ReplicaSize("small", 1, 2, "/d1", 70, 3, False),
        ReplicaSize("big", 0, 2, "/d2", 1_200, 40, True),  # moving to /d2: counted on both dirs
    ]
    assert issues == []


def test_a_broker_too_old_for_volume_sizes_reports_none_not_minus_one() -> None:
    dirs, sizes, _ = log_dirs.parse_answer(1, answer(3, result("/d1", {"t": [(0, 10, 0, False)]})))
    assert dirs == [LogDir(1, "/d1", None, None, None)]
    assert [s.size_bytes for s in sizes] == [10]


def test_a_dir_in_error_is_a_row_with_its_error_and_an_issue_naming_broker_and_dir() -> None:
    offline = result("/bad", {}, error_code=STORAGE_ERROR)
    dirs, sizes, issues = log_dirs.parse_answer(3, answer(4, offline, result("/ok", {"t": [(0, 9, 0, False)]})))
    assert [(d.path, d.error) for d in dirs] == [("/bad", "KAFKA_STORAGE_ERROR"), ("/ok", None)]
    assert [s.log_dir for s in sizes] == ["/ok"]
    (issue,) = issues
    assert issue.path == "DescribeLogDirs broker 3 log dir /bad"
    assert "KAFKA_STORAGE_ERROR" in issue.problem and issue.kind == "log_dir"


def test_a_refused_answer_and_a_failed_broker_are_issues_the_other_brokers_still_count() -> None:
    snap = empty_snapshot()
    log_dirs.add_answers(snap, {
        1: KafkaConnectionError("socket disconnected"),
        2: answer(4, result("/d", {"t": [(0, 1, 0, False)]})),
        3: answer(4, error_code=CLUSTER_AUTHORIZATION_FAILED),
        4: KafkaTimeoutError("Request timed out after 5000 ms"),
    })  # fmt: skip
    assert [(r.broker_id, r.topic) for r in snap.replica_sizes] == [(2, "t")]
    assert [d.broker_id for d in snap.log_dirs] == [2]
    assert [i.path for i in snap.issues] == [
        "DescribeLogDirs broker 1", "DescribeLogDirs broker 3", "DescribeLogDirs broker 4",
    ]  # fmt: skip
    assert "socket disconnected" in snap.issues[0].problem
    assert "CLUSTER_AUTHORIZATION_FAILED" in snap.issues[1].problem
    assert "KafkaTimeoutError" in snap.issues[2].problem


def test_an_unreachable_kafka_costs_the_snapshot_seconds_and_an_issue_never_the_snapshot() -> None:
    snap = empty_snapshot()
    port = free_port()  # nothing listens there
    target = KafkaTarget(f"127.0.0.1:{port}", log_dirs.bounded({"request_timeout_ms": 30_000}, timeout_s=2))
    started = time.monotonic()
    log_dirs.collect_beside(snap, target, timeout_s=2)
    assert time.monotonic() - started < 10
    assert snap.log_dirs == [] and snap.replica_sizes == []
    (issue,) = snap.issues
    assert issue.path == "DescribeLogDirs" and f"cannot reach Kafka at 127.0.0.1:{port}" in issue.problem
    assert "KafkaConfigurationError" not in issue.problem  # the bounded options are ones the client takes


def test_bounded_options_cut_every_timeout_and_keep_shorter_ones() -> None:
    got = log_dirs.bounded({"request_timeout_ms": 30_000, "bootstrap_timeout_ms": 1_000, "client_id": "x"}, 5)
    assert got == {"request_timeout_ms": 5_000, "bootstrap_timeout_ms": 1_000, "client_id": "x"}


def loaded_snapshot() -> ClusterSnapshot:
    snap = empty_snapshot()
    snap.log_dirs = [LogDir(1, "/a", None, 1_000, 300), LogDir(1, "/b", None, 3_000, 2_000),
                     LogDir(2, "/a", None, None, None), LogDir(2, "/bad", "KAFKA_STORAGE_ERROR")]  # fmt: skip
    snap.replica_sizes = [ReplicaSize("t", 0, 1, "/a", 600), ReplicaSize("t", 0, 2, "/a", 600),
                          ReplicaSize("t", 1, 1, "/b", 200, is_future=True)]  # fmt: skip
    return snap


def test_summary_weighs_disk_use_against_settings_else_the_log_dirs_volumes() -> None:
    snap = loaded_snapshot()
    info = summary(snap)
    assert info["disk_bytes"] == 1_400
    assert info["disk_used_share"] == {"1": 0.2}  # 800 of 1,000 + 3,000; broker 2's volume sizes are unknown
    with_settings = summary(snap, Capacities(brokers=((2, BrokerCapacity(disk_bytes=6_000)),)))
    assert with_settings["disk_used_share"] == {"1": 0.2, "2": 0.1}
    assert "1,400 bytes of replicas; share of disk used  1 20.0%  2 10.0%" in render_summary(with_settings)
    assert summary(empty_snapshot())["disk_bytes"] is None


def test_the_load_tables_hold_every_row() -> None:
    snap = loaded_snapshot()
    snap.issues.append(CollectionIssue("DescribeLogDirs broker 2 log dir /bad", "offline", "log_dir"))
    tables = snapshot_batch(snap).tables
    assert tables["log_dirs"].column("error").to_pylist() == [None, None, None, "KAFKA_STORAGE_ERROR"]
    assert tables["replica_sizes"].column("is_future").to_pylist() == [False, False, True]
    assert tables["replica_sizes"].column("size_bytes").to_pylist() == [600, 600, 200]


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_every_version_kafka_python_speaks_decodes(version: int) -> None:
    dirs, sizes, _ = log_dirs.parse_answer(1, answer(version, result("/d", {"t": [(0, 10, 0, False)]})))
    assert [s.size_bytes for s in sizes] == [10]
    assert (dirs[0].total_bytes is not None) == (version >= 4)
