"""`protocol`: the consumer-protocol bytes, checked by hand against the schema and, byte for
byte, against kafka-clients' own `ConsumerProtocol` / assignor code through the bridge."""

from __future__ import annotations

import random
import struct

import pytest

from kafka_ops.assignors import AssignmentRejected, AssignorBridge, ProtocolError, protocol
from kafka_ops.assignors.protocol import Assignment, Subscription


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def s(v: str) -> bytes:
    raw = v.encode()
    return i16(len(raw)) + raw


SUBSCRIPTIONS = [
    Subscription(()),
    Subscription(("orders",)),
    Subscription(("b", "a"), b"\x00\x01", (("b", 3), ("a", 1), ("a", 0)), 7, "rack-1"),
    Subscription(("t",), b"", (("t", 0),), -1, None),
    Subscription(("t", "u"), None, (("u", 2), ("t", 5)), 12, ""),
    Subscription(("ü-topic", "日本"), b"\xff" * 40, (("日本", 0),), 2**31 - 1, "ラック"),
]


# ---------------------------------------------------------------- by hand


def test_decode_subscription_v3_field_by_field() -> None:
    data = (
        i16(3)
        + i32(2)
        + s("a")
        + s("b")
        + i32(2)
        + b"xy"
        + i32(1)
        + s("a")
        + i32(2)
        + i32(0)
        + i32(1)
        + i32(7)
        + s("r1")
    )
    assert protocol.decode_subscription(data) == Subscription(("a", "b"), b"xy", (("a", 0), ("a", 1)), 7, "r1", 3)


@pytest.mark.parametrize(
    ("version", "tail", "expected"),
    [
        (0, b"", Subscription(("t",), None, (), -1, None, 0)),
        (1, i32(1) + s("t") + i32(1) + i32(4), Subscription(("t",), None, (("t", 4),), -1, None, 1)),
        (2, i32(0) + i32(9), Subscription(("t",), None, (), 9, None, 2)),
        (3, i32(0) + i32(9) + i16(-1), Subscription(("t",), None, (), 9, None, 3)),
        (3, i32(0) + i32(9) + s(""), Subscription(("t",), None, (), 9, None, 3)),  # empty rack means none
        # a newer version is read as the newest known one; what follows is ignored
        (7, i32(0) + i32(9) + s("r") + b"future", Subscription(("t",), None, (), 9, "r", 7)),
    ],
)
def test_decode_subscription_versions(version: int, tail: bytes, expected: Subscription) -> None:
    data = i16(version) + i32(1) + s("t") + i32(-1) + tail
    assert protocol.decode_subscription(data) == expected


def test_encode_subscription_sorts_groups_and_drops_what_the_version_cannot_carry() -> None:
    sub = Subscription(("b", "a"), None, (("b", 1), ("a", 2), ("a", 0)), 5, "r")
    assert protocol.encode_subscription(sub, 0) == i16(0) + i32(2) + s("a") + s("b") + i32(-1)
    v1_owned = i32(2) + s("a") + i32(2) + i32(0) + i32(2) + s("b") + i32(1) + i32(1)
    assert protocol.encode_subscription(sub, 1) == i16(1) + i32(2) + s("a") + s("b") + i32(-1) + v1_owned
    assert protocol.encode_subscription(sub, 3).endswith(i32(5) + s("r"))
    assert protocol.encode_subscription(sub, 9)[:2] == i16(3)  # clamped to the newest version, as Java does


@pytest.mark.parametrize("sub", SUBSCRIPTIONS)
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_round_trip(sub: Subscription, version: int) -> None:
    decoded = protocol.decode_subscription(protocol.encode_subscription(sub, version))
    assert decoded.topics == tuple(sorted(sub.topics))
    assert decoded.user_data == sub.user_data
    assert decoded.owned_partitions == (tuple(sorted(sub.owned_partitions)) if version >= 1 else ())
    assert decoded.generation_id == (sub.generation_id if version >= 2 else -1)
    assert decoded.rack_id == (sub.rack_id or None if version >= 3 else None)


def test_assignment_groups_by_first_appearance_and_round_trips() -> None:
    a = Assignment((("b", 1), ("a", 0), ("b", 0)), b"ud")
    data = protocol.encode_assignment(a, 3)
    assert data == i16(3) + i32(2) + s("b") + i32(2) + i32(1) + i32(0) + s("a") + i32(1) + i32(0) + i32(2) + b"ud"
    assert protocol.decode_assignment(data) == Assignment((("b", 1), ("b", 0), ("a", 0)), b"ud", 3)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "version: truncated: needs 2 bytes, 0 left (at byte 0 of 0)"),
        (i16(-1), "unsupported version -1"),
        (i16(0) + i32(1) + i16(5) + b"ab", "topics[0]: truncated: needs 5 bytes, 2 left (at byte 8 of 10)"),
        (i16(0) + i32(-1), "topics: array length -1 is negative"),
        (i16(0) + i32(1000), "topics: array of 1000 entries cannot fit in 0 bytes"),
        (i16(0) + i32(1) + i16(-1), "topics[0]: string length -1 is negative (the field is not nullable)"),
        (i16(1) + i32(0) + i32(-1) + i32(1) + s("t") + i32(2) + i32(0), "owned_partitions[0].partitions[1]: truncated"),
        (i16(2) + i32(0) + i32(-1) + i32(0) + b"\x00", "generation_id: truncated: needs 4 bytes, 1 left"),
    ],
)
def test_malformed_subscriptions_say_where(data: bytes, problem: str) -> None:
    with pytest.raises(ProtocolError) as e:
        protocol.decode_subscription(data, where="subscription of member 'm1'")
    assert str(e.value).startswith("subscription of member 'm1': ")
    assert problem in str(e.value)
    assert isinstance(e.value, ValueError)


def test_sticky_user_data_v1_then_v0() -> None:
    v0 = i32(1) + s("t") + i32(2) + i32(3) + i32(1)
    assert protocol.decode_sticky_user_data(v0 + i32(4)) == protocol.StickyUserData((("t", 3), ("t", 1)), 4)
    assert protocol.decode_sticky_user_data(v0) == protocol.StickyUserData((("t", 3), ("t", 1)), None)
    assert protocol.encode_sticky_user_data([("t", 3), ("t", 1)], 4) == v0 + i32(4)
    with pytest.raises(ProtocolError, match="sticky user data: previous_assignment"):
        protocol.decode_sticky_user_data(i32(3))


def test_cooperative_user_data() -> None:
    assert protocol.encode_cooperative_user_data(-1) == b"\xff\xff\xff\xff"
    assert protocol.decode_cooperative_user_data(i32(12) + b"extra") == 12
    with pytest.raises(ProtocolError, match="generation: truncated"):
        protocol.decode_cooperative_user_data(b"\x00")


# ---------------------------------------------------------------- against kafka-clients


@pytest.mark.parametrize("sub", SUBSCRIPTIONS)
@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_subscription_bytes_match_java(bridge: AssignorBridge, sub: Subscription, version: int) -> None:
    java = bridge.serialize_subscription(sub, version)
    assert protocol.encode_subscription(sub, version) == java
    # decoded the same on both sides, from Java's bytes and from ours
    ours = protocol.decode_subscription(java)
    assert bridge.deserialize_subscription(java) == ours
    assert ours.version == min(version, 3)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignment_bytes_match_java(bridge: AssignorBridge, version: int) -> None:
    for a in [
        Assignment(()),
        Assignment((("b", 1), ("a", 0), ("b", 0), ("日本", 3)), b"\x01\x02"),
        Assignment(tuple(("t", p) for p in range(500)), b""),
    ]:
        java = bridge.serialize_assignment(a, version)
        assert protocol.encode_assignment(a, version) == java
        assert bridge.deserialize_assignment(java) == protocol.decode_assignment(java)


def test_every_truncation_is_refused_by_both(bridge: AssignorBridge) -> None:
    whole = protocol.encode_subscription(SUBSCRIPTIONS[2], 3)
    for cut in range(len(whole)):
        with pytest.raises(ProtocolError):
            protocol.decode_subscription(whole[:cut])
        with pytest.raises(AssignmentRejected, match="Kafka cannot decode the subscription"):
            bridge.deserialize_subscription(whole[:cut])
    assert bridge.deserialize_subscription(whole) == protocol.decode_subscription(whole)


@pytest.mark.parametrize(
    "data",
    [
        i16(-1),
        i16(0) + i32(-1),
        i16(0) + i32(1000),
        i16(0) + i32(1) + i16(-1),
        i16(0) + i32(1) + i16(-7),
        i16(1) + i32(0) + i32(-5) + i32(-1),  # any negative user-data length is null...
        i16(1) + i32(0) + i32(-1) + i32(-1),  # ...but owned partitions are not nullable
        i16(3) + i32(0) + i32(-1) + i32(0) + i32(3) + i16(-9),  # any negative rack length is null
        i16(0) + i32(1) + s("ok") + i32(-1) + b"\x00\x00trailing",
        i16(0) + i32(2) + i16(1) + b"\xff" + i16(2) + b"\xe2\x82" + i32(-1),  # malformed UTF-8
    ],
)
def test_odd_bytes_read_alike(bridge: AssignorBridge, data: bytes) -> None:
    try:
        ours: Subscription | None = protocol.decode_subscription(data)
    except ProtocolError:
        ours = None
    if ours is None:
        with pytest.raises(AssignmentRejected):
            bridge.deserialize_subscription(data)
    else:
        assert bridge.deserialize_subscription(data) == ours


def test_python_encoded_bytes_decode_in_java(bridge: AssignorBridge) -> None:
    rand = random.Random(7)
    for _ in range(30):
        topics = tuple(f"topic-{rand.randrange(50)}" for _ in range(rand.randrange(6)))
        owned = tuple((rand.choice(topics), rand.randrange(20)) for _ in range(rand.randrange(8))) if topics else ()
        sub = Subscription(
            topics, rand.choice([None, b"", b"abc"]), owned, rand.randrange(-1, 9), rand.choice([None, "a"])
        )
        for version in range(4):
            data = protocol.encode_subscription(sub, version)
            assert bridge.deserialize_subscription(data) == protocol.decode_subscription(data)


def test_sticky_user_data_matches_what_a_java_consumer_sends(bridge: AssignorBridge) -> None:
    # StickyAssignor groups partitions in a java.util.HashMap: topic order is hash order, which
    # the encoder reproduces, across the map's resizes (13, 40, 300 topics).
    rand = random.Random(3)
    for n_topics in (1, 3, 13, 40, 300):
        topics = [f"{rand.choice(['orders', 'clicks', 'ü'])}-{rand.randrange(10_000)}" for _ in range(n_topics)]
        assigned = [(rand.choice(topics), rand.randrange(64)) for _ in range(3 * n_topics)]
        for generation in (-1, 0, 17):
            java = bridge.subscription_user_data("sticky", topics, assigned, generation)
            assert java == protocol.encode_sticky_user_data(assigned, generation)
            decoded = protocol.decode_sticky_user_data(java)
            seen = bridge.member_data("sticky", Subscription(tuple(topics), java))
            assert decoded.partitions == seen.partitions
            assert decoded.generation == seen.generation == generation
    assert bridge.subscription_user_data("sticky", ["t"], None, -1) is None  # never assigned: no user data


def test_cooperative_user_data_matches_java(bridge: AssignorBridge) -> None:
    for generation in (-1, 0, 5, 2**31 - 1):
        java = bridge.subscription_user_data("cooperative-sticky", ["t"], [("t", 0)], generation)
        assert java == protocol.encode_cooperative_user_data(generation)
        assert protocol.decode_cooperative_user_data(java) == generation
    assert bridge.subscription_user_data("range", ["t"], [("t", 0)], 3) is None


def test_java_hashmap_order_follows_buckets_and_compute_if_absent() -> None:
    # "b" (98) and "q" (113) sit in buckets 2 and 1 of a 16-slot table; "a" (97) joins "q"'s
    # bucket at its head, as computeIfAbsent links new keys
    assert protocol.java_hashmap_order(["b", "q", "a", "q"]) == ["a", "q", "b"]
