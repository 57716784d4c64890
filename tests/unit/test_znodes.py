"""Parsers against real znodes captured from the sandbox (tests/fixtures/znodes), and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.errors import ZnodeFormatError
from kafka_ops.model.cluster import ZnodeStat
from kafka_ops.sources.zookeeper import znodes
from tests.unit.znode_parsers import PARSERS, VALID, accepted, encode, must_reject, outcome

FIXTURES = Path(__file__).parents[1] / "fixtures" / "znodes"


def sample(name: str) -> tuple[str, bytes, ZnodeStat]:
    raw: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    s = raw["stat"]
    stat = ZnodeStat(s["version"], s["czxid"], s["mzxid"], s["ctime"], s["mtime"])
    return raw["path"], raw["data"].encode(), stat


def test_broker_v5_from_the_sandbox() -> None:
    path, data, stat = sample("broker")
    broker = znodes.parse_broker(path, data, stat)
    assert broker.broker_id == 1
    assert broker.version == 5
    assert broker.rack == "rack-a"
    assert broker.host == "127.0.0.1"
    assert broker.endpoints == (f"PLAINTEXT://127.0.0.1:{broker.port}",)
    assert broker.listener_security_protocol_map == {"PLAINTEXT": "PLAINTEXT"}
    assert broker.jmx_port == -1
    assert broker.registered_at_ms > 1_700_000_000_000  # a string in the znode
    assert broker.epoch == stat.czxid


def test_topic_v3_from_the_sandbox() -> None:
    path, data, _ = sample("topic")
    topic = znodes.parse_topic(path, data)
    assert topic.topic == "orders"
    assert topic.version == 3
    assert sorted(topic.partitions) == [0, 1, 2, 3, 4, 5]
    assert all(sorted(r) == [1, 2, 3] for r in topic.partitions.values())
    assert topic.adding_replicas == {} and topic.removing_replicas == {}
    assert topic.topic_id is not None and len(topic.topic_id) == 22


def test_topic_while_reassigning() -> None:
    path, data, _ = sample("topic_reassigning")
    topic = znodes.parse_topic(path, data)
    assert topic.partitions[0] == (1, 2, 3)
    assert topic.removing_replicas == {0: (3,)}
    assert topic.adding_replicas == {}


def test_partition_state_and_its_stat() -> None:
    path, data, stat = sample("partition_state")
    state = znodes.parse_partition_state(path, data, stat, "orders", 0)
    assert (state.topic, state.partition) == ("orders", 0)
    assert state.leader == state.isr[0]
    assert sorted(state.isr) == [1, 2, 3]
    assert state.controller_epoch == 1
    assert state.leader_recovery_state is None
    assert state.stat.version == 0


def test_offline_partition_state_keeps_last_isr() -> None:
    path, data, stat = sample("partition_state_offline")
    state = znodes.parse_partition_state(path, data, stat, "tp_re_02", 0)
    assert state.leader == -1
    assert len(state.isr) == 1
    assert state.stat.version == 1  # the partition epoch rose when the leader went away


def test_shrunk_isr_state() -> None:
    path, data, stat = sample("partition_state_shrunk")
    state = znodes.parse_partition_state(path, data, stat, "orders", 1)
    assert len(state.isr) == 2
    assert state.stat.version >= 1


def test_controller_and_epoch() -> None:
    path, data, stat = sample("controller")
    controller = znodes.parse_controller(path, data, stat)
    assert controller.broker_id in (1, 2, 3)
    assert controller.kraft_controller_epoch == -1
    assert controller.version == 2
    path, data, _ = sample("controller_epoch")
    assert znodes.parse_controller_epoch(path, data) == 1


def test_cluster_id_has_a_string_version() -> None:
    path, data, _ = sample("cluster_id")
    assert len(znodes.parse_cluster_id(path, data)) == 22


def test_topic_config() -> None:
    path, data, _ = sample("topic_config")
    config = znodes.parse_config(path, data, "topic")
    assert (config.entity_type, config.entity_name) == ("topic", "orders")
    assert config.config == {"min.insync.replicas": "2"}


def test_reassign_partitions_request() -> None:
    path, data, _ = sample("reassign_partitions")
    (request,) = znodes.parse_reassign_partitions(path, data)
    assert (request.topic, request.partition, request.replicas) == ("orders", 0, (1, 2))


def test_notifications_and_elections() -> None:
    stat = ZnodeStat(0, 5, 5, 1, 1)
    note = znodes.parse_isr_change(
        "/isr_change_notification/isr_change_0000000001",
        b'{"version":1,"partitions":[{"topic":"a","partition":3}]}',
        stat,
    )
    assert note.partitions == (("a", 3),)
    assert note.name == "isr_change_0000000001"
    event = znodes.parse_log_dir_event(
        "/log_dir_event_notification/log_dir_event_0000000000", b'{"version":1,"broker":2,"event":1}', stat
    )
    assert (event.broker_id, event.event) == (2, 1)
    elections = znodes.parse_preferred_election(
        "/admin/preferred_replica_election", b'{"version":1,"partitions":[{"topic":"a","partition":0}]}'
    )
    assert elections == [("a", 0)]


STATE = "/brokers/topics/t/partitions/0/state"
TOPIC = "/brokers/topics/t"
STAT = ZnodeStat(1, 1, 1, 1, 1)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty znode"),
        (b"{not json", "not valid JSON"),
        (b"[1,2]", "expected a JSON object"),
        (b'{"version":2,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1]}', "unknown version 2"),
        (b'{"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1]}', "unknown version None"),
        (b'{"version":1,"leader_epoch":0,"controller_epoch":1,"isr":[1]}', "field 'leader': missing"),
        (b'{"version":1,"leader":"1","leader_epoch":0,"controller_epoch":1,"isr":[1]}', "field 'leader'"),
        (b'{"version":1,"leader":true,"leader_epoch":0,"controller_epoch":1,"isr":[1]}', "field 'leader'"),
        (b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":"1"}', "field 'isr'"),
        (
            b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[1],"leader_recovery_state":"x"}',
            "field 'leader_recovery_state'",
        ),
    ],
)
def test_bad_partition_state_names_path_and_problem(data: bytes, message: str) -> None:
    with pytest.raises(ZnodeFormatError) as err:
        znodes.parse_partition_state(STATE, data, STAT, "t", 0)
    assert err.value.path == STATE
    assert message in str(err.value)
    assert str(err.value).startswith(STATE)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"version":4,"partitions":{}}', "unknown version 4"),
        (b'{"version":3,"partitions":{"x":[1]}}', "partition key 'x' is not a number"),
        (b'{"version":3,"partitions":{"0":[1,"2"]}}', r"field 'partitions\.0\[1\]': expected an integer, got '2'"),
        (b'{"version":3,"partitions":[1]}', "field 'partitions': expected an object"),
        (b'{"version":3,"partitions":{"0":[1]},"adding_replicas":{"1":[2]}}', "partition 1 is not in"),
    ],
)
def test_bad_topic_znode(data: bytes, message: str) -> None:
    with pytest.raises(ZnodeFormatError, match=message):
        znodes.parse_topic(TOPIC, data)


def test_bad_controller_epoch_is_not_json_but_an_integer() -> None:
    with pytest.raises(ZnodeFormatError, match="/controller_epoch: expected a plain integer"):
        znodes.parse_controller_epoch("/controller_epoch", b'{"epoch":1}')


def test_bad_broker_znodes() -> None:
    with pytest.raises(ZnodeFormatError, match="broker id 'x' is not a number"):
        znodes.parse_broker("/brokers/ids/x", b'{"version":5,"timestamp":"1"}', STAT)
    with pytest.raises(ZnodeFormatError, match="field 'timestamp'"):
        znodes.parse_broker("/brokers/ids/1", b'{"version":5,"timestamp":"soon"}', STAT)
    with pytest.raises(ZnodeFormatError, match="field 'endpoints'"):
        znodes.parse_broker("/brokers/ids/1", b'{"version":5,"timestamp":"1","endpoints":"x"}', STAT)


def test_bad_admin_znodes_name_the_entry() -> None:
    with pytest.raises(ZnodeFormatError, match=r"partitions\[1\]\.partition"):
        znodes.parse_reassign_partitions(
            "/admin/reassign_partitions",
            b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1]},'
            b'{"topic":"a","partition":"1","replicas":[1]}]}',
        )
    with pytest.raises(ZnodeFormatError, match=r"partitions\[0\]\.replicas"):
        znodes.parse_reassign_partitions(
            "/admin/reassign_partitions", b'{"version":1,"partitions":[{"topic":"a","partition":0}]}'
        )
    with pytest.raises(ZnodeFormatError, match=r"config\.retention\.ms"):
        znodes.parse_config("/config/topics/a", b'{"version":1,"config":{"retention.ms":1}}', "topic")


# -- znodes that fault injection produced: without these checks, each crashed the whole snapshot ---

BIG = 1 << 40  # beyond int32: ArrowInvalid when the tables were built
SURROGATE = "\ud800"  # JSON "\ud800": Python decodes it, UTF-8 (and Parquet) cannot hold it
LAST_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z, the last time the lake can hold
DEEP = b"[" * 5000 + b"]" * 5000  # RecursionError in json.loads


def mutated(name: str, **fields: Any) -> bytes:
    return encode({**VALID[name], **fields})


def entries(**entry: Any) -> bytes:
    """An /admin or notification document with one `partitions` entry."""
    return encode({"version": 1, "partitions": [entry]})


CRASHERS: list[tuple[str, bytes, str]] = [
    # integers beyond Kafka's int32
    ("partition_state", mutated("partition_state", leader_epoch=BIG), "field 'leader_epoch': 1099511627776"),
    ("partition_state", mutated("partition_state", isr=[1, BIG]), "field 'isr[1]'"),
    ("partition_state", mutated("partition_state", controller_epoch=BIG), "field 'controller_epoch'"),
    ("partition_state", mutated("partition_state", leader=-(1 << 31) - 1), "field 'leader'"),
    ("topic", mutated("topic", partitions={"0": [1, 1 << 31]}), "field 'partitions.0[1]'"),
    ("reassign_partitions", entries(topic="a", partition=1 << 31, replicas=[1]), "field 'partitions[0].partition'"),
    ("controller_epoch", str(BIG).encode(), "out of int32 range"),
    ("controller_epoch", b"9" * 5000, "out of int32 range"),  # int() refuses > 4,300 digits
    ("broker", mutated("broker", features={"f": {"min_version": 1 << 16}}), "field 'features.f.min_version'"),
    # digits int() or str.isdigit() accept and Kafka does not
    ("broker", mutated("broker", timestamp="\u00b2"), "field 'timestamp'"),
    ("broker", mutated("broker", timestamp="--5"), "field 'timestamp'"),
    ("controller", mutated("controller", timestamp="--5"), "field 'timestamp'"),
    ("controller", mutated("controller", timestamp="-"), "field 'timestamp'"),
    ("broker", mutated("broker", timestamp=str(1 << 62)), "field 'timestamp'"),  # after the year 9999
    ("broker", mutated("broker", timestamp="9" * 5000), "field 'timestamp'"),
    ("topic", mutated("topic", partitions={"\u00b2": [1]}), "partition key '²'"),
    ("topic", mutated("topic", partitions={"9" * 5000: [1]}), "partition key"),
    ("cluster_id", mutated("cluster_id", version="\u00b2"), "unknown version '²'"),
    ("cluster_id", mutated("cluster_id", version="9" * 5000), "unknown version"),
    # a boolean (or a float) where an integer belongs
    ("partition_state", mutated("partition_state", version=True), "unknown version True"),
    ("partition_state", mutated("partition_state", version=1.0), "unknown version 1.0"),
    ("partition_state", mutated("partition_state", isr=[True]), "field 'isr[0]': expected an integer, got True"),
    ("partition_state", mutated("partition_state", leader_recovery_state=2), "field 'leader_recovery_state'"),
    ("broker", mutated("broker", port=True), "field 'port'"),
    ("log_dir_event", mutated("log_dir_event", broker=False), "field 'broker'"),
    ("preferred_election", entries(topic="a", partition=True), "field 'partitions[0].partition'"),
    # JSON nested thousands deep
    ("partition_state", DEEP, "nested too deep"),
    ("partition_state", b'{"version":1,"leader":' + DEEP + b"}", "nested too deep"),
    # text UTF-8 cannot encode: a lone surrogate in any string field or key
    ("cluster_id", mutated("cluster_id", id=SURROGATE), "field 'id': not valid UTF-8 text: '\\ud800'"),
    ("topic", mutated("topic", topic_id=SURROGATE), "field 'topic_id'"),
    ("broker", mutated("broker", rack=SURROGATE), "field 'rack'"),
    ("broker", mutated("broker", host="h" + SURROGATE), "field 'host'"),
    ("broker", mutated("broker", endpoints=["PLAINTEXT://x:1", SURROGATE]), "field 'endpoints[1]'"),
    ("broker", mutated("broker", listener_security_protocol_map={"A": SURROGATE}), "field 'listener_"),
    ("broker", mutated("broker", features={SURROGATE: {}}), "field 'features': key '\\ud800'"),
    ("config", mutated("config", config={"a": SURROGATE}), "field 'config.a'"),
    ("config", mutated("config", config={SURROGATE: "1"}), "field 'config': key '\\ud800'"),
    ("isr_change", entries(topic=SURROGATE, partition=0), "field 'partitions[0].topic'"),
    ("reassign_partitions", entries(topic=SURROGATE, partition=0, replicas=[1]), "field 'partitions[0].topic'"),
    ("cluster_id", b'{"version":"1","id":"\xed\xa0\x80"}', "not UTF-8"),  # an encoded surrogate
    ("cluster_id", b'{"version":"1","id":"\xff"}', "not UTF-8"),
]


@pytest.mark.parametrize(("name", "data", "field"), CRASHERS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(CRASHERS)])
def test_what_crashed_the_snapshot_is_a_format_error_naming_the_field(name: str, data: bytes, field: str) -> None:
    must_reject(PARSERS[name], data, field)


def test_a_broker_znode_named_by_a_non_ascii_digit_is_a_format_error() -> None:
    for name in ("\u00b2", "9" * 5000, str(1 << 31)):
        with pytest.raises(ZnodeFormatError, match=r"broker id .* is not a number"):
            znodes.parse_broker(f"/brokers/ids/{name}", encode(VALID["broker"]), STAT)


def test_a_huge_value_is_shown_short_in_the_problem() -> None:
    error = must_reject(PARSERS["partition_state"], mutated("partition_state", leader="x" * 1_000_000), "leader")
    assert len(error.problem) < 200


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("partition_state", {"leader": (1 << 31) - 1, "leader_epoch": (1 << 31) - 1, "isr": [-(1 << 31)]}),
        ("partition_state", {"controller_epoch": -(1 << 31), "leader_recovery_state": 1}),
        ("topic", {"partitions": {"2147483647": [2147483647]}}),
        ("broker", {"timestamp": str(LAST_MS), "port": -1, "jmx_port": (1 << 31) - 1}),
        ("broker", {"timestamp": str(-(1 << 63)), "features": {"f": {"min_version": -(1 << 15)}}}),
        ("controller", {"timestamp": LAST_MS, "brokerid": (1 << 31) - 1}),
        ("cluster_id", {"id": "\u00e9\u6f22\U0001f600"}),  # non-ASCII text is fine
        ("config", {"config": {"\u00e9": "\U0001f600"}}),
    ],
)
def test_the_extremes_a_parser_accepts_build_every_table(name: str, fields: dict[str, Any]) -> None:
    _, error = outcome(PARSERS[name], mutated(name, **fields))
    assert error is None


def test_the_largest_controller_epoch_builds_every_table() -> None:
    parser = PARSERS["controller_epoch"]
    assert accepted(parser, parser.parse(parser.path, str((1 << 31) - 1).encode())).tables["controller"].num_rows == 1
