"""Every znode parser as one call shape, and where its result goes in a snapshot.

The fuzz tests and the regression tests both check the parsers' contract: a parser returns
or raises `ZnodeFormatError`, and whatever it returns builds every lake table. `accepted`
puts a result into a full snapshot and builds the tables; `rejected` checks that the error
names the path and becomes a `collection_issues` row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kafka_ops.errors import ZnodeFormatError
from kafka_ops.lake.store import Batch
from kafka_ops.model.cluster import ClusterSnapshot, CollectionIssue, PartitionState, TopicAssignment, ZnodeStat
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.zookeeper import znodes
from tests.unit.snapshots import small_snapshot

STAT = ZnodeStat(3, 40, 41, 1_795_000_000_000, 1_795_000_000_000)
FUZZED_TOPIC = "fuzzed"


def _place_state(snap: ClusterSnapshot, state: PartitionState) -> None:
    snap.topics[state.topic] = TopicAssignment(state.topic, None, {state.partition: (1, 2)}, {}, {}, 3)
    snap.partition_states[(state.topic, state.partition)] = state


def _place_topic(snap: ClusterSnapshot, topic: TopicAssignment) -> None:
    snap.topics[topic.topic] = topic


@dataclass(frozen=True)
class Parser:
    """One parser: the path it is given, how it is called, and where its result goes."""

    name: str
    path: str
    parse: Callable[[str, bytes], Any]
    place: Callable[[ClusterSnapshot, Any], None]


PARSERS: dict[str, Parser] = {
    p.name: p
    for p in [
        Parser(
            "broker",
            "/brokers/ids/7",
            lambda path, data: znodes.parse_broker(path, data, STAT),
            lambda s, b: s.brokers.__setitem__(b.broker_id, b),
        ),
        Parser("topic", f"/brokers/topics/{FUZZED_TOPIC}", znodes.parse_topic, _place_topic),
        Parser(
            "partition_state",
            znodes.state_path(FUZZED_TOPIC, 4),
            lambda path, data: znodes.parse_partition_state(path, data, STAT, FUZZED_TOPIC, 4),
            _place_state,
        ),
        Parser(
            "controller",
            znodes.CONTROLLER,
            lambda path, data: znodes.parse_controller(path, data, STAT),
            lambda s, c: setattr(s, "controller", c),
        ),
        Parser(
            "controller_epoch",
            znodes.CONTROLLER_EPOCH,
            znodes.parse_controller_epoch,
            lambda s, e: setattr(s, "controller_epoch", e),
        ),
        Parser(
            "isr_change",
            f"{znodes.ISR_CHANGE_NOTIFICATION}/isr_change_0000000001",
            lambda path, data: znodes.parse_isr_change(path, data, STAT),
            lambda s, n: s.isr_change_notifications.append(n),
        ),
        Parser(
            "log_dir_event",
            f"{znodes.LOG_DIR_EVENT_NOTIFICATION}/log_dir_event_0000000001",
            lambda path, data: znodes.parse_log_dir_event(path, data, STAT),
            lambda s, e: s.log_dir_events.append(e),
        ),
        Parser(
            "reassign_partitions",
            znodes.REASSIGN_PARTITIONS,
            znodes.parse_reassign_partitions,
            lambda s, r: s.reassignment_requests.extend(r),
        ),
        Parser(
            "preferred_election",
            znodes.PREFERRED_REPLICA_ELECTION,
            znodes.parse_preferred_election,
            lambda s, r: s.preferred_election_requests.extend(r),
        ),
        Parser(
            "config",
            f"{znodes.CONFIG_TOPICS}/orders",
            lambda path, data: znodes.parse_config(path, data, "topic"),
            lambda s, c: s.configs.append(c),
        ),
        Parser(
            "cluster_id",
            znodes.CLUSTER_ID,
            znodes.parse_cluster_id,
            lambda s, i: setattr(s, "cluster_id", i),
        ),
        Parser(
            "quota_config",
            f"{znodes.CONFIG_USERS}/alice/clients/app%202%2A",
            znodes.parse_quota_config,
            lambda s, q: s.quotas.append(q),
        ),
        Parser(
            "acls",
            f"{znodes.PREFIXED_ACLS}/Topic/orders",
            lambda path, data: znodes.parse_acls(path, data, "PREFIXED"),
            lambda s, a: s.acls.append(a),
        ),
        Parser("feature", znodes.FEATURE, znodes.parse_feature, lambda s, f: setattr(s, "feature", f)),
        Parser(
            "migration",
            znodes.MIGRATION,
            lambda path, data: znodes.parse_migration(path, data, STAT),
            lambda s, m: setattr(s, "migration", m),
        ),
        Parser(
            "config_change",
            f"{znodes.CONFIG_CHANGES}/config_change_0000000001",
            lambda path, data: znodes.parse_config_change(path, data, STAT),
            lambda s, c: s.config_changes.append(c),
        ),
    ]
}


# A valid document per JSON parser, as Kafka 3.9 writes it (the fuzz tests mutate these).
VALID: dict[str, dict[str, Any]] = {
    "broker": {
        "version": 5,
        "host": "127.0.0.1",
        "port": 9092,
        "endpoints": ["PLAINTEXT://127.0.0.1:9092"],
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
        "jmx_port": -1,
        "timestamp": "1795239774751",
        "rack": "rack-a",
        "features": {"metadata.version": {"min_version": 1, "max_version": 21}},
    },
    "topic": {
        "version": 3,
        "partitions": {"0": [1, 2], "1": [2, 1]},
        "adding_replicas": {},
        "removing_replicas": {},
        "topic_id": "c9L-C5MmQmqpHuyGMqLQlw",
    },
    "partition_state": {"version": 1, "leader": 1, "leader_epoch": 0, "controller_epoch": 1, "isr": [1, 2]},
    "controller": {"version": 2, "brokerid": 1, "timestamp": "1795239774432", "kraftControllerEpoch": -1},
    "isr_change": {"version": 1, "partitions": [{"topic": "orders", "partition": 0}]},
    "log_dir_event": {"version": 1, "broker": 1, "event": 1},
    "reassign_partitions": {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 2]}]},
    "preferred_election": {"version": 1, "partitions": [{"topic": "orders", "partition": 0}]},
    "config": {"version": 1, "config": {"retention.ms": "1"}},
    "cluster_id": {"version": "1", "id": "c9L-C5MmQmqpHuyGMqLQlw"},
    "quota_config": {
        "version": 1,
        "config": {"consumer_byte_rate": "1024", "producer_byte_rate": "2048.5", "SCRAM-SHA-256": "salt=x"},
    },
    "acls": {
        "version": 1,
        "acls": [{"principal": "User:alice", "permissionType": "Allow", "host": "*", "operation": "Read"}],
    },
    "feature": {"version": 2, "status": 1, "features": {"metadata.version": {"min_version_level": 1}}},
    "config_change": {"version": 2, "entity_path": "clients/app-1"},
    "migration": {
        "version": 0,
        "kraft_metadata_offset": 597,
        "kraft_controller_id": 101,
        "kraft_metadata_epoch": 1,
        "kraft_controller_epoch": 1,
    },
}


def encode(doc: Any) -> bytes:
    """JSON as Kafka writes it; a lone surrogate becomes a `\\ud800` escape, as a hand edit could."""
    return json.dumps(doc).encode()


def accepted(parser: Parser, result: Any) -> Batch:
    """Every table of a snapshot holding `result` (raises whatever table building raises)."""
    snap = small_snapshot()
    parser.place(snap, result)
    return snapshot_batch(snap)


def rejected(parser: Parser, error: ZnodeFormatError) -> Batch:
    """The snapshot in which `error` is a collection issue (as the collector records it)."""
    assert error.path == parser.path
    assert str(error).startswith(f"{parser.path}: ")
    snap = small_snapshot()
    snap.issues.append(CollectionIssue(error.path, error.problem))
    return snapshot_batch(snap)


def outcome(parser: Parser, data: bytes) -> tuple[Any, ZnodeFormatError | None]:
    """Parse `data`: (result, None) or (None, the format error), and check the tables build."""
    try:
        result = parser.parse(parser.path, data)
    except ZnodeFormatError as e:
        rejected(parser, e)
        return None, e
    accepted(parser, result)
    return result, None


def must_reject(parser: Parser, data: bytes, field: str) -> ZnodeFormatError:
    """`data` is rejected with an error naming `field` (a problem text, for non-JSON znodes)."""
    with pytest.raises(ZnodeFormatError) as err:
        parser.parse(parser.path, data)
    rejected(parser, err.value)
    assert field in err.value.problem, err.value.problem
    return err.value
