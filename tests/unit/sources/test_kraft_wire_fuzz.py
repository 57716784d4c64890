"""The KRaft wire readers against hostile peers: DescribeQuorum and `speaks_kafka` against a fake
controller (a real TCP server on 127.0.0.1, `hostile_peers.kafka_answers`) that answers with null
arrays, no topics, no partitions, random bytes or empty frames, or trickles its answer one byte every
30 ms; the hand DescribeConfigs decoder against mutated and crafted answers. Every outcome is a result
or the source's typed error naming the peer, and no 1 s call runs past about 1.5 s.

Costs about 6 s (the four deadline cases wait their 1 s each)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.errors import KafkaProtocolError as ParserError
from kafka.protocol.admin import DescribeQuorumResponse
from kafka.protocol.metadata import ApiVersionsResponse

from kafka_ops.errors import KafkaProtocolError, KafkaUnreachable
from kafka_ops.model.cluster import ClusterSnapshot, Quorum
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.kraft.collector import KRaftCollector
from kafka_ops.sources.kraft.controllers import describe_quorum, speaks_kafka
from kafka_ops.sources.kraft.quorum import parse_quorum
from kafka_ops.sources.kraft.topic_configs import DYNAMIC_TOPIC, decode_overrides, topic_overrides
from tests.unit.snapshots import small_snapshot
from tests.unit.sources.hostile_peers import Peer, framed, kafka_answers, timed
from tests.unit.sources.test_kraft_topic_configs import encoded

TIMEOUT_S = 1.0
LATEST_END_S = TIMEOUT_S + 0.5
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
API_VERSIONS, DESCRIBE_QUORUM = 18, 55
TOPIC = DescribeQuorumResponse.TopicData
PARTITION = TOPIC.PartitionData
REPLICA = PARTITION.ReplicaState


def body(response: Any, version: int) -> bytes:
    response._header = None
    return bytes(response.encode(version=version))


def versions_answer(correlation_id: int, quorum_version: int = 2) -> bytes:
    """ApiVersions v0, as long as a real listener's (some 70 APIs, 400 bytes): this one serves
    DescribeQuorum up to `quorum_version`."""
    version = ApiVersionsResponse.ApiVersion
    keys = [version(api_key=key, min_version=0, max_version=quorum_version if key == DESCRIBE_QUORUM else 3)
            for key in range(70)]  # fmt: skip
    return framed(struct.pack(">i", correlation_id) + body(ApiVersionsResponse(error_code=0, api_keys=keys), 0))


def quorum_answer(correlation_id: int, version: int, topics: list[Any] | None) -> bytes:
    """A DescribeQuorum answer (flexible: its header has a tagged-fields byte)."""
    response = DescribeQuorumResponse(error_code=0, error_message=None, topics=topics, nodes=[])
    return framed(struct.pack(">i", correlation_id) + b"\x00" + body(response, version))


def replica(replica_id: int, offset: int) -> Any:
    return REPLICA(replica_id=replica_id, replica_directory_id=None, log_end_offset=offset,
                   last_fetch_timestamp=-1, last_caught_up_timestamp=-1)  # fmt: skip


def partition(voters: list[Any] | None, observers: list[Any] | None, leader: int = 3000) -> Any:
    return PARTITION(partition_index=0, error_code=0, error_message=None, leader_id=leader, leader_epoch=5,
                     high_watermark=99, current_voters=voters, observers=observers)  # fmt: skip


HEALTHY = [TOPIC(topic_name="__cluster_metadata", partitions=[partition([replica(3000, 99)], [replica(1, 98)])])]


def controller(quorum: Callable[[int, int], bytes | None], quorum_version: int = 2, every_s: float = 0.0) -> Peer:
    """A controller listener: ApiVersions answered truly, DescribeQuorum with `quorum(correlation id,
    version)` (None: silent)."""

    def answer(api_key: int, version: int, correlation_id: int) -> bytes | None:
        if api_key == API_VERSIONS:
            return versions_answer(correlation_id, quorum_version)
        return quorum(correlation_id, version)

    return Peer(kafka_answers(answer, every_s))


def test_the_fake_controller_answers_a_quorum() -> None:
    """Without spoiling, the fake is a controller DescribeQuorum reads: the tests below spoil one that works."""
    with controller(lambda c, v: quorum_answer(c, v, HEALTHY)) as peer:
        quorum = describe_quorum(peer.address, TIMEOUT_S)
    assert quorum.leader_id == 3000 and quorum.voters == {3000: 99} and quorum.observers == {1: 98}


# -- DescribeQuorum: hostile answers ----------------------------------------------------------------

INT32 = st.integers(-(2**31), 2**31 - 1)
REPLICAS = st.one_of(st.none(), st.lists(st.builds(replica, INT32, st.integers(-(2**63), 2**63 - 1)), max_size=3))
PARTITIONS = st.one_of(st.none(), st.lists(st.builds(partition, REPLICAS, REPLICAS, INT32), max_size=2))
TOPICS = st.one_of(st.none(), st.lists(st.builds(lambda ps: TOPIC(topic_name="__cluster_metadata", partitions=ps),
                                                 PARTITIONS), max_size=2))  # fmt: skip


@FUZZ
@given(topics=TOPICS, version=st.integers(0, 2))
def test_a_quorum_answer_of_any_shape_is_a_quorum_or_a_typed_error(topics: list[Any] | None, version: int) -> None:
    """No topics, no partitions, null arrays of topics, partitions, voters or observers."""
    with controller(lambda c, v: quorum_answer(c, v, topics), quorum_version=version) as peer:
        outcome, took = timed(lambda: describe_quorum(peer.address, TIMEOUT_S))
    if isinstance(outcome, Quorum):
        assert all(isinstance(r.replica_id, int) for r in outcome.replicas)
    else:
        assert isinstance(outcome, KafkaUnreachable), repr(outcome)
        assert peer.address in str(outcome)
    assert took <= LATEST_END_S


@pytest.mark.parametrize(
    "topics, problem",
    [
        (None, "topics is None, not a list"),
        ([], "no topic"),
        ([TOPIC(topic_name="__cluster_metadata", partitions=None)], "partitions is None"),
        ([TOPIC(topic_name="__cluster_metadata", partitions=[])], "no partition of '__cluster_metadata'"),
        ([TOPIC(topic_name="__cluster_metadata", partitions=[partition(None, [])])], "current_voters is None"),
        ([TOPIC(topic_name="__cluster_metadata", partitions=[partition([], None)])], "observers is None"),
    ],
    ids=["null-topics", "no-topics", "null-partitions", "no-partitions", "null-voters", "null-observers"],
)
def test_a_quorum_answer_without_the_quorum_names_peer_and_field(topics: list[Any] | None, problem: str) -> None:
    with controller(lambda c, v: quorum_answer(c, v, topics)) as peer:
        with pytest.raises(KafkaUnreachable) as raised:
            describe_quorum(peer.address, TIMEOUT_S)
    assert f"DescribeQuorum answered by the controller at {peer.address} is not a quorum" in str(raised.value)
    assert problem in str(raised.value)


NOISE = st.one_of(
    st.binary(max_size=64).map(framed),  # a frame of random bytes
    st.just(framed(b"")),  # a zero-length frame
    st.integers(-(2**31), -1).map(lambda n: struct.pack(">i", n)),  # a negative length
    st.binary(min_size=1, max_size=64).map(lambda b: framed(b"\x00\x00\x00\x02" + b)),  # right correlation id
)


@FUZZ
@given(noise=NOISE, at=st.sampled_from([API_VERSIONS, DESCRIBE_QUORUM]))
def test_random_bytes_are_a_typed_error_and_speaks_kafka_says_no(noise: bytes, at: int) -> None:
    def answer(api_key: int, version: int, correlation_id: int) -> bytes | None:
        if api_key == at:
            return noise
        return versions_answer(correlation_id) if api_key == API_VERSIONS else quorum_answer(correlation_id, 2, HEALTHY)

    with Peer(kafka_answers(answer)) as peer:
        outcome, took = timed(lambda: describe_quorum(peer.address, TIMEOUT_S))
        spoken, spoken_took = timed(lambda: speaks_kafka("127.0.0.1", peer.port, TIMEOUT_S))
    assert isinstance(outcome, Quorum | KafkaUnreachable), repr(outcome)
    assert isinstance(spoken, bool), repr(spoken)
    assert took <= LATEST_END_S and spoken_took <= LATEST_END_S


def test_a_zero_length_frame_is_not_kafka() -> None:
    with Peer(kafka_answers(lambda key, version, correlation_id: framed(b""))) as peer:
        assert speaks_kafka("127.0.0.1", peer.port, TIMEOUT_S) is False
        with pytest.raises(KafkaUnreachable, match=r"KafkaProtocolError: .* answered ApiVersions v0 with bytes that"):
            describe_quorum(peer.address, TIMEOUT_S)


# -- deadlines --------------------------------------------------------------------------------------


@pytest.mark.parametrize("silent", [False, True], ids=["trickled", "silent"])
def test_a_trickling_or_silent_controller_cannot_hold_describe_quorum_past_its_deadline(silent: bool) -> None:
    """The whole answer trickled one byte every 30 ms (some 3 s for its ~100 bytes: each byte comes well
    within any per-read timeout, only an absolute deadline ends the call), or never sent."""
    with controller(lambda c, v: None if silent else quorum_answer(c, v, HEALTHY), every_s=0.03) as peer:
        outcome, took = timed(lambda: describe_quorum(peer.address, TIMEOUT_S))
    assert isinstance(outcome, KafkaUnreachable), repr(outcome)
    assert f"{peer.address} did not answer" in str(outcome)
    assert took <= LATEST_END_S, f"a 1 s DescribeQuorum ran {took:.1f}s"


def test_a_trickling_listener_cannot_hold_speaks_kafka_past_its_deadline() -> None:
    with Peer(kafka_answers(lambda k, v, c: versions_answer(c), every_s=0.03)) as peer:
        outcome, took = timed(lambda: speaks_kafka("127.0.0.1", peer.port, TIMEOUT_S))
    assert outcome is False
    assert took <= LATEST_END_S, f"a 1 s speaks_kafka ran {took:.1f}s"


# -- the quorum read off the admin client's answer ----------------------------------------------------

ANY_VALUE = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.none(), max_size=1), st.booleans())


FIELDS = ["leader_id", "leader_epoch", "high_watermark", "replica_id", "log_end_offset", "error",
          "replica_directory_id", "topics", "partitions", "current_voters", "observers"]  # fmt: skip
ARRAYS = ["topics", "partitions", "current_voters", "observers"]
DICTS = st.recursive(
    st.dictionaries(st.sampled_from(FIELDS), ANY_VALUE, max_size=6),
    lambda inner: st.dictionaries(st.sampled_from(ARRAYS), st.lists(inner, max_size=2), max_size=4),
    max_leaves=10,
)


@settings(FUZZ, max_examples=50)
@given(answer=DICTS)
def test_parse_quorum_of_any_dict_is_a_quorum_or_a_typed_error(answer: dict[str, Any]) -> None:
    """`KafkaAdminClient.describe_metadata_quorum`'s shape, any of it missing, null or mistyped."""
    try:
        parse_quorum(answer, "broker 1")
    except KafkaProtocolError as e:
        assert "answered by broker 1" in str(e)
    except Exception as e:
        assert type(e).__module__ == "kafka.errors", repr(e)


# -- the hand DescribeConfigs decoder ----------------------------------------------------------------

NAMES = st.text(min_size=1, max_size=8)
CONFIGS = st.dictionaries(NAMES, st.tuples(st.one_of(st.none(), st.text(max_size=8)), st.sampled_from([1, 4, 5])),
                          max_size=3)  # fmt: skip
ANSWERS = st.lists(st.tuples(NAMES, st.sampled_from([0, 0, 3, 29]), CONFIGS), max_size=3)


def mutated(data: bytes, how: str, at: int, byte: int) -> bytes:
    at %= len(data) + 1
    if how == "cut":
        return data[:at]
    if how == "flip":
        return data[:at] + bytes([byte]) + data[at + 1 :]
    return data[:at] + bytes([byte]) + data[at:]


@FUZZ
@given(
    results=ANSWERS,
    version=st.integers(1, 4),
    how=st.sampled_from(["cut", "flip", "insert"]),
    at=st.integers(0, 1 << 16),
    byte=st.integers(0, 255),
)
def test_a_mutated_describe_configs_answer_is_decoded_or_refused(
    results: list[Any], version: int, how: str, at: int, byte: int
) -> None:
    """Decoded (every name a non-empty string, and the overrides build the snapshot's tables) or
    refused with ValueError, the error kafka-python's parser turns into a failed request."""
    data = mutated(encoded(results, version), how, at, byte)
    try:
        answer = decode_overrides(data, version)
    except ValueError:
        return
    assert all(isinstance(t.name, str) and t.name for t in answer.results)
    assert all(isinstance(k, str) and k for t in answer.results for k in t.overrides)
    overrides, _ = topic_overrides([answer], "broker 1")
    snap = small_snapshot()
    snap.configs.extend(overrides)
    snapshot_batch(snap)


def flexible_answer(entry: bytes, configs: bytes = b"\x02") -> bytes:
    """A v4 answer of one topic `t` whose configs array is `configs` (compact count) then `entry`."""
    return (struct.pack(">i", 0) + b"\x02" + struct.pack(">h", 0) + b"\x00" + b"\x02" + b"\x02t"
            + configs + entry + b"\x00" + b"\x00")  # fmt: skip


ENTRY_TAIL = bytes([0, DYNAMIC_TOPIC, 0, 1, 2, 0])  # read only, source, sensitive, synonyms [], type, doc null
TAG_OF_2_TO_THE_70 = b"\x01" + b"\x00" + b"\xff" * 9 + b"\x01"  # one tagged field (tag 0) claiming 2^70 bytes


@pytest.mark.parametrize(
    "data, problem",
    [
        (flexible_answer(b"\x02k\x02v" + ENTRY_TAIL + TAG_OF_2_TO_THE_70), "longer than five bytes"),
        (flexible_answer(b"", configs=b"\x00"), "configs of 't' is a null array"),
        (flexible_answer(b"\x00\x02v" + ENTRY_TAIL + b"\x00"), "null or empty name"),
        (flexible_answer(b"\x01\x02v" + ENTRY_TAIL + b"\x00"), "null or empty name"),
        (struct.pack(">i", 0) + b"\x00\x00", "results is a null array"),
    ],
    ids=["tag-of-2^70-bytes", "null-configs", "null-name", "empty-name", "null-results"],
)
def test_crafted_describe_configs_answers_are_refused_with_a_reason(data: bytes, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        decode_overrides(data, 4)


def test_a_null_configs_array_of_an_old_version_is_refused() -> None:
    """kafka-python decodes v1-v3 itself; a null configs array there was a TypeError."""
    data = encoded([("t", 0, {})], 1)
    null_configs = data[:-4] + struct.pack(">i", -1)
    with pytest.raises(ValueError, match="configs of 't' is a null array"):
        decode_overrides(null_configs, 1)


def test_a_refused_answer_is_an_issue_naming_the_broker_and_the_reason() -> None:
    """What the collector records when kafka-python's parser failed a request on our ValueError: its
    parser raises "Unable to decode response" while handling it (so the ValueError is its context)."""
    failed = ParserError("Unable to decode response")
    failed.__context__ = ValueError("results is a null array")
    _, issues = topic_overrides([failed], "broker 2")
    assert [i.path for i in issues] == ["DescribeConfigs (topics) from broker 2"]
    assert issues[0].problem.endswith("Unable to decode response (results is a null array)")
    snap: ClusterSnapshot = small_snapshot()
    snap.issues.extend(issues)
    snapshot_batch(snap)


def test_the_admin_api_client_holds_its_deadline_against_a_trickling_broker() -> None:
    """kafka-python's own wire client (the KRaft snapshot's, and through the same `KafkaTarget` the group
    collection's): a broker that trickles its ApiVersions answer (400 bytes, one every 30 ms) fails the
    bootstrap at its 1 s timeout."""
    with Peer(kafka_answers(lambda k, v, c: versions_answer(c), every_s=0.03)) as peer:
        target = KafkaTarget(peer.address, {"request_timeout_ms": 1000, "bootstrap_timeout_ms": 1000})
        outcome, took = timed(KRaftCollector("x", target).collect)
    assert isinstance(outcome, KafkaUnreachable), repr(outcome)
    assert peer.address in str(outcome)
    assert took <= LATEST_END_S, f"a 1 s bootstrap ran {took:.1f}s"
