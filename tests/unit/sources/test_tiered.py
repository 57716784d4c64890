"""Tiered storage in the snapshot: the ListOffsets requests on the wire (Kafka's schema, the spec's first
version), the answers decoded into each partition's local and remote parts, the copy backlog's arithmetic,
and what stays null (not applicable, unsupported, refused, not Kafka's answer) with the issue that says why."""

from __future__ import annotations

import dataclasses
import struct
import time
from typing import Any

import pytest
from kafka.errors import IncompatibleBrokerVersion, KafkaConnectionError
from kafka.protocol.admin import DescribeConfigsResponse
from kafka.protocol.broker_version_data import BrokerVersionData
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

from kafka_ops.errors import KafkaProtocolError
from kafka_ops.lake.schema import TABLES
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import (
    ClusterSnapshot,
    CollectionIssue,
    ConfigOverride,
    TieredLog,
    TopicAssignment,
    copy_backlog,
)
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources import log_dirs, tiered
from kafka_ops.sources.groups.collector import KafkaTarget
from sandbox.cluster import free_port
from tests.unit.snapshots import AT, state

TopicAnswer = ListOffsetsResponse.ListOffsetsTopicResponse
PartitionAnswer = TopicAnswer.ListOffsetsPartitionResponse
NOT_LEADER = 6


def answer(version: int, topics: dict[str, list[tuple[int, int, int]]]) -> Any:
    """A ListOffsets response as the broker's bytes decode at `version`: topic -> (partition, error, offset)."""
    sent = ListOffsetsResponse(
        throttle_time_ms=0,
        topics=[TopicAnswer(name=t, partitions=[PartitionAnswer(partition_index=p, error_code=e, timestamp=-1,
                                                                offset=o, leader_epoch=0) for p, e, o in parts])
                for t, parts in topics.items()],
        version=version,
    )  # fmt: skip
    return ListOffsetsResponse.decode(sent.encode(version=version), version=version)


# -- the requests on the wire ----------------------------------------------------------------


def _compact_string(text: str) -> bytes:
    return bytes([len(text) + 1]) + text.encode()


def test_a_latest_tiered_request_is_kafkas_v9_bytes() -> None:
    """ListOffsets v9 (flexible): replica id -1, isolation level 0, then topics (compact array), each with its
    partitions (index, current leader epoch -1, timestamp -5), tagged fields after each struct."""
    request = tiered.offsets_request([("t", 0), ("t", 3)], tiered.LATEST_TIERED)
    partitions = b"".join(struct.pack(">iiq", p, -1, -5) + b"\x00" for p in (0, 3))
    expected = struct.pack(">ib", -1, 0) + b"\x02" + _compact_string("t") + b"\x03" + partitions + b"\x00" + b"\x00"
    assert request.encode(version=9) == expected
    decoded = ListOffsetsRequest.decode(expected, version=9)
    assert [(p.partition_index, p.timestamp) for p in decoded.topics[0].partitions] == [(0, -5), (3, -5)]


@pytest.mark.parametrize(
    ("spec", "broker_max", "sent"),
    [
        (tiered.EARLIEST_LOCAL, 7, None),  # Kafka 3.4 and older: no earliest-local
        (tiered.EARLIEST_LOCAL, 8, 8),
        (tiered.LATEST_TIERED, 8, None),  # Kafka 3.5-3.8: no latest-tiered
        (tiered.LATEST_TIERED, 9, 9),  # Kafka 3.9
        (tiered.LATEST_TIERED, 11, 11),  # Kafka 4.2+
        (tiered.LATEST, 7, 7),
    ],
)
def test_each_spec_goes_at_its_first_version_or_later(spec: int, broker_max: int, sent: int | None) -> None:
    """kafka-python picks the version the way a connection does: the highest both speak, never below the
    spec's first; a broker that serves less refuses the spec before anything is sent."""
    broker = BrokerVersionData(api_versions={ListOffsetsRequest.API_KEY: (0, broker_max)})
    request = tiered.offsets_request([("t", 0)], spec)
    if sent is None:
        with pytest.raises(IncompatibleBrokerVersion):
            broker.api_version(request)
    else:
        assert broker.api_version(request) == sent


def test_the_configs_request_asks_only_the_local_retention_keys() -> None:
    request = tiered.configs_request(["a", "b"])
    assert [(r.resource_type, r.resource_name, r.configuration_keys) for r in request.resources] == [
        (2, "a", ["local.retention.ms", "local.retention.bytes", "remote.log.copy.disable"]),
        (2, "b", ["local.retention.ms", "local.retention.bytes", "remote.log.copy.disable"]),
    ]


# -- the answers -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", [8, 9, 10, 11])
def test_an_answer_decodes_to_each_partitions_offset_or_error(version: int) -> None:
    got = tiered.parse_offsets(
        answer(version, {"t": [(0, 0, 4095), (1, 0, -1), (2, NOT_LEADER, -1)]}),
        tiered.LATEST_TIERED,
        1,
        [("t", 0), ("t", 1), ("t", 2)],
    )
    assert got[("t", 0)] == 4095 and got[("t", 1)] == -1  # -1: nothing tiered yet
    assert type(got[("t", 2)]).__name__ == "NotLeaderForPartitionError"


@pytest.mark.parametrize(
    ("spec", "topics", "message"),
    [
        (tiered.LATEST, {"t": [(0, 0, 10)]}, r"broker 2: topic t partition 1 asked for is not in the answer"),
        (tiered.LATEST, {"t": [(0, 0, 10), (1, 0, 9), (7, 0, 1)]}, r"topic t partition 7 was not asked for"),
        (tiered.LATEST, {"t": [(0, 0, 10), (0, 0, 10), (1, 0, 1)]}, r"topic t partition 0 is answered twice"),
        (tiered.LATEST_TIERED, {"t": [(0, 0, -2), (1, 0, 1)]}, r"latest-tiered, -5.*topic t partition 0: offset -2"),
        (tiered.EARLIEST_LOCAL, {"t": [(0, 0, 3), (1, 0, -1)]}, r"earliest-local, -4.*topic t partition 1: offset -1"),
    ],
)
def test_an_answer_that_is_not_one_is_the_typed_error_naming_request_topic_and_partition(
    spec: int, topics: dict[str, list[tuple[int, int, int]]], message: str
) -> None:
    with pytest.raises(KafkaProtocolError, match=r"ListOffsets \(.*" + message):
        tiered.parse_offsets(answer(9, topics), spec, 2, [("t", 0), ("t", 1)])


@pytest.mark.parametrize(
    ("offsets", "message"),
    [
        ((5, 3, 9, 20), "log start offset 5 is above the local log start offset 3"),
        ((0, 3, 20, 20), "latest tiered offset 20 is not below the end offset 20"),
        ((0, 21, -1, 20), "local log start offset 21 is above the end offset 20"),
    ],
)
def test_offsets_that_contradict_each_other_are_the_typed_error(offsets: tuple[int, ...], message: str) -> None:
    with pytest.raises(KafkaProtocolError, match=f"broker 1: topic t partition 4: {message}"):
        tiered.check_order(TieredLog("t", 4, 1, *offsets))


# -- the copy backlog ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "tiered_end", "local_start", "backlog"),
    [
        (5000, 4095, 3072, 904),  # the active segment (4096..4999) is what is only local
        (5000, 4999, 3072, 0),  # a segment rolled and tiered up to the end
        (5000, -1, 0, 5000),  # nothing tiered yet: the whole local log
        (0, -1, 0, 0),  # no record at all
        (5000, 1000, 3072, 1928),  # deleted locally past the tiered end (retention): only the local rest
        (4000, 4095, 3072, 0),  # an end read before a tier that passed it: never negative
    ],
)
def test_the_copy_backlog_counts_offsets_only_in_the_local_log(
    end: int, tiered_end: int, local_start: int, backlog: int
) -> None:
    assert copy_backlog(end, tiered_end, local_start) == backlog
    assert TieredLog("t", 0, 1, 0, local_start, tiered_end, end).copy_backlog == backlog


@pytest.mark.parametrize("unknown", ["local_log_start_offset", "tiered_end_offset", "end_offset"])
def test_the_copy_backlog_is_unknown_when_an_offset_it_needs_is(unknown: str) -> None:
    known = TieredLog("t", 0, 1, 0, 3072, 4095, 5000)
    assert dataclasses.replace(known, **{unknown: None}).copy_backlog is None
    assert dataclasses.replace(known, log_start_offset=None).copy_backlog == 904  # not needed


# -- into the snapshot -----------------------------------------------------------------------


def tiered_snapshot() -> ClusterSnapshot:
    """`orders` (2 partitions, remote storage, both led by broker 1), `plain` (no remote storage) and `lost`
    (remote storage, no leader)."""
    snap = ClusterSnapshot(cluster="c1", snapshot_id="s1", captured_at=AT, zookeeper=None, source="kraft")
    snap.topics = {
        "orders": TopicAssignment("orders", "id-o", {0: (1,), 1: (1,)}, {}, {}, None),
        "plain": TopicAssignment("plain", "id-p", {0: (1,)}, {}, {}, None),
        "lost": TopicAssignment("lost", "id-l", {0: (2,)}, {}, {}, None),
    }
    snap.partition_states = {
        ("orders", 0): state("orders", 0, 1, (1,)),
        ("orders", 1): state("orders", 1, 1, (1,)),
        ("plain", 0): state("plain", 0, 1, (1,)),
        ("lost", 0): state("lost", 0, -1, ()),
    }
    snap.configs = [
        ConfigOverride("topic", "orders", {"remote.storage.enable": "true", "local.retention.bytes": "1048576"}),
        ConfigOverride("topic", "lost", {"remote.storage.enable": "TRUE"}),
        ConfigOverride("topic", "plain", {"remote.storage.enable": "false"}),
    ]
    return snap


def offsets_answers(**overrides: Any) -> dict[int, Any]:
    """Broker 1's four answers for orders-0 and orders-1, `overrides` by spec name in their place."""
    figures = {tiered.EARLIEST: (0, 0), tiered.EARLIEST_LOCAL: (3072, 2048), tiered.LATEST_TIERED: (4095, -1),
               tiered.LATEST: (5000, 2100)}  # fmt: skip
    answers = {spec: answer(11, {"orders": [(0, 0, a), (1, 0, b)]}) for spec, (a, b) in figures.items()}
    for name, value in overrides.items():
        answers[{"earliest": -2, "local": -4, "tiered": -5, "latest": -1}[name]] = value
    return answers


def test_remote_storage_topics_come_from_the_overrides_and_unknown_ones_from_the_issues() -> None:
    snap = tiered_snapshot()
    snap.topics["broken"] = TopicAssignment("broken", None, {0: (1,)}, {}, {}, None)
    snap.topics["zk"] = TopicAssignment("zk", None, {0: (1,)}, {}, {}, None)
    snap.issues = [
        CollectionIssue("topic broken configs", "DescribeConfigs error 29", "request"),
        CollectionIssue("/config/topics/zk", "not JSON"),
    ]
    assert tiered.remote_storage(snap) == {"orders": True, "lost": True, "broken": None, "zk": None}


class _Untouchable:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"nothing may be sent when no topic has remote storage ({name})")


def test_no_remote_storage_topic_sends_nothing() -> None:
    snap = tiered_snapshot()
    snap.configs = [ConfigOverride("topic", "plain", {"retention.ms": "1000"})]
    tiered.read(_Untouchable(), snap)  # type: ignore[arg-type]
    assert snap.remote_storage == {} and snap.tiered_logs == {} and snap.issues == []


def test_answers_fill_each_partition_and_the_settings() -> None:
    snap = tiered_snapshot()
    snap.remote_storage = tiered.remote_storage(snap)
    tiered._add_offsets(snap, 1, [("orders", 0), ("orders", 1)], offsets_answers())
    configs = DescribeConfigsResponse.DescribeConfigsResult
    entry = configs.DescribeConfigsResourceResult
    described = DescribeConfigsResponse(
        throttle_time_ms=0,
        results=[configs(error_code=0, error_message=None, resource_type=2, resource_name="orders", configs=[
            entry(name="local.retention.bytes", value="1048576", read_only=False, config_source=1,
                  is_sensitive=False, synonyms=[], config_type=5, documentation=None),
            entry(name="local.retention.ms", value="-2", read_only=False, config_source=5, is_sensitive=False,
                  synonyms=[], config_type=5, documentation=None),
            entry(name="remote.log.copy.disable", value="false", read_only=False, config_source=5,
                  is_sensitive=False, synonyms=[], config_type=1, documentation=None),
        ])],
        version=4,
    )  # fmt: skip
    tiered._add_configs(snap, ["orders"], described)
    assert snap.issues == []
    assert snap.tiered_logs[("orders", 0)] == TieredLog("orders", 0, 1, 0, 3072, 4095, 5000)
    assert snap.tiered_logs[("orders", 0)].copy_backlog == 904
    assert snap.tiered_logs[("orders", 1)].copy_backlog == 52  # nothing tiered: 2048..2099
    settings = snap.tiered_topics["orders"]
    assert (settings.local_retention_ms, settings.local_retention_bytes, settings.copy_disabled) == (
        -2,
        1048576,
        False,
    )


def test_an_unsupported_spec_is_an_unsupported_issue_and_null_fields_the_rest_stands() -> None:
    snap = tiered_snapshot()
    refused = IncompatibleBrokerVersion("No version of the 'ListOffsets' Kafka protocol is supported by both")
    tiered._add_offsets(snap, 1, [("orders", 0), ("orders", 1)], offsets_answers(tiered=refused))
    assert [(i.path, i.kind) for i in snap.issues] == [
        ("ListOffsets (tiered storage) latest-tiered broker 1", "unsupported")
    ]
    assert snap.issues[0].problem.startswith("unsupported: broker 1 does not serve ListOffsets v9+")
    found = snap.tiered_logs[("orders", 0)]
    assert (found.local_log_start_offset, found.end_offset) == (3072, 5000)
    assert found.tiered_end_offset is None and found.copy_backlog is None


def test_a_failed_request_a_partition_error_and_an_answer_that_is_not_one_are_issues_never_a_crash() -> None:
    snap = tiered_snapshot()
    answers = offsets_answers(
        latest=KafkaConnectionError("broker 1 went away"),
        local=answer(11, {"orders": [(0, 0, 3072), (1, NOT_LEADER, -1)]}),
        earliest=answer(11, {"orders": [(0, 0, 0)]}),  # orders-1 missing
    )
    tiered._add_offsets(snap, 1, [("orders", 0), ("orders", 1)], answers)
    issues = {(i.path, i.kind): i.problem for i in snap.issues}
    assert issues[("ListOffsets (tiered storage) latest broker 1", "request")].endswith("broker 1 went away")
    assert (
        "NotLeaderForPartitionError for topic orders partition 1"
        in issues[("ListOffsets (tiered storage) earliest-local topic orders partition 1", "request")]
    )
    assert (
        "topic orders partition 1 asked for is not in the answer"
        in issues[("ListOffsets (tiered storage) earliest broker 1", "parse")]
    )
    assert snap.tiered_logs[("orders", 0)] == TieredLog("orders", 0, 1, None, 3072, 4095, None)
    assert snap.tiered_logs[("orders", 1)] == TieredLog("orders", 1, 1, None, None, -1, None)


def test_contradicting_offsets_leave_the_partition_unknown_with_a_parse_issue() -> None:
    snap = tiered_snapshot()
    tiered._add_offsets(snap, 1, [("orders", 0), ("orders", 1)],
                        offsets_answers(latest=answer(11, {"orders": [(0, 0, 4000), (1, 0, 2100)]})))  # fmt: skip
    assert [(i.path, i.kind) for i in snap.issues] == [
        ("ListOffsets (tiered storage) topic orders partition 0", "parse")
    ]
    assert snap.tiered_logs[("orders", 0)] == TieredLog("orders", 0, 1)


def test_a_refused_describe_configs_leaves_the_settings_unknown() -> None:
    snap = tiered_snapshot()
    tiered._add_configs(snap, ["orders"], KafkaConnectionError("gone"))
    assert snap.tiered_topics["orders"] == tiered.TieredTopic("orders")
    assert [i.path for i in snap.issues] == ["DescribeConfigs (tiered topics)"]


# -- into the lake ---------------------------------------------------------------------------


def test_partitions_rows_say_tiered_not_applicable_and_unknown_apart() -> None:
    snap = tiered_snapshot()
    snap.remote_storage = {"orders": True, "lost": True, "plain_unknown": None}
    snap.topics["plain_unknown"] = TopicAssignment("plain_unknown", None, {0: (1,)}, {}, {}, None)
    tiered._add_offsets(snap, 1, [("orders", 0), ("orders", 1)], offsets_answers())
    snap.tiered_topics["orders"] = tiered.TieredTopic("orders", -2, 1048576, False)
    snap.tiered_logs[("lost", 0)] = TieredLog("lost", 0, None)
    rows = {(r["topic"], r["partition"]): r for r in snapshot_batch(snap).tables["partitions"].to_pylist()}
    columns = ["remote_storage", "local_retention_ms", "local_retention_bytes", "log_start_offset",
               "local_log_start_offset", "tiered_end_offset", "end_offset", "copy_backlog"]  # fmt: skip
    assert [rows[("orders", 0)][c] for c in columns] == [True, -2, 1048576, 0, 3072, 4095, 5000, 904]
    assert [rows[("plain", 0)][c] for c in columns] == [False, *[None] * 7]  # not applicable
    assert [rows[("plain_unknown", 0)][c] for c in columns] == [None] * 8  # its configs unknown
    assert [rows[("lost", 0)][c] for c in columns] == [True, *[None] * 7]  # no leader: offsets unknown


def test_a_partitions_batch_written_before_the_tiered_columns_reads_them_as_null(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = Lake(tmp_path / "lake")
    columns = ["remote_storage", "local_retention_ms", "local_retention_bytes", "log_start_offset",
               "local_log_start_offset", "tiered_end_offset", "end_offset", "copy_backlog"]  # fmt: skip
    old = snapshot_batch(tiered_snapshot())
    with monkeypatch.context() as older:  # the schema and the rows as an older kafka-ops had them
        schema = TABLES["partitions"]
        for c in columns:
            schema = schema.remove(schema.get_field_index(c))
        older.setitem(TABLES, "partitions", schema)
        lake.publish(dataclasses.replace(old, tables={**old.tables, "partitions": old.tables["partitions"]
                                                      .drop_columns(columns)}))  # fmt: skip
    rows = lake.read("partitions", "c1")
    assert rows.schema.field("copy_backlog").type == TABLES["partitions"].field("copy_backlog").type
    assert {c: set(rows.column(c).to_pylist()) for c in columns} == {c: {None} for c in columns}


# -- beside a ZooKeeper snapshot --------------------------------------------------------------


def test_beside_zookeeper_no_remote_storage_topic_connects_to_nothing() -> None:
    snap = tiered_snapshot()
    snap.configs = []
    target = KafkaTarget(f"127.0.0.1:{free_port()}", {"request_timeout_ms": 30_000})  # nothing listens there
    started = time.monotonic()
    tiered.collect_beside(snap, target, timeout_s=2)
    assert time.monotonic() - started < 1 and snap.issues == [] and snap.tiered_logs == {}


def test_beside_zookeeper_an_unreachable_kafka_is_an_issue_never_the_snapshot() -> None:
    snap = tiered_snapshot()
    port = free_port()
    target = KafkaTarget(f"127.0.0.1:{port}", log_dirs.bounded({"request_timeout_ms": 30_000}, timeout_s=2))
    started = time.monotonic()
    tiered.collect_beside(snap, target, timeout_s=2)
    assert time.monotonic() - started < 10
    assert snap.remote_storage == {"orders": True, "lost": True} and snap.tiered_logs == {}
    (issue,) = snap.issues
    assert issue.path == tiered.REQUEST and f"cannot reach Kafka at 127.0.0.1:{port}" in issue.problem
