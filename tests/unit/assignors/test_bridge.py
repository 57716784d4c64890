"""The bridge itself: exact inputs (versions, raw metadata, static members, racks), cooperative
settling, batches, and how it fails (bad requests, timeouts, a dying JVM, no Java)."""

from __future__ import annotations

import dataclasses
import os
import random
from pathlib import Path

import pytest

from kafka_ops.assignors import (
    ASSIGNORS,
    AssignFailure,
    AssignmentRejected,
    AssignorBridge,
    AssignorBridgeError,
    AssignorInputError,
    AssignorName,
    AssignResult,
    ClusterLayout,
    GroupInput,
    Member,
    protocol,
    wire,
)
from kafka_ops.jars.fetch import ensure_jars
from tests.unit.assignors.kafka_harness import StickyTest, cluster_of, consumer_name, group_of, topic_name

FOUR = ClusterLayout.of_partition_counts({"t": 4})


def assign(
    bridge: AssignorBridge,
    members: list[Member],
    assignor: AssignorName = "range",
    *,
    cluster: ClusterLayout = FOUR,
    settle: bool = True,
) -> AssignResult:
    return bridge.assign(GroupInput(tuple(members)), cluster, assignor, settle=settle)


# ---------------------------------------------------------------- exact inputs


def test_static_members_come_first_by_instance_id(bridge: AssignorBridge) -> None:
    cluster = ClusterLayout.of_partition_counts({"t": 3})
    members = [
        Member("a", ("t",)),
        Member("b", ("t",), group_instance_id="z"),
        Member("c", ("t",), group_instance_id="y"),
    ]
    result = assign(bridge, members, "range", cluster=cluster)
    assert dict(result.assignment) == {"a": (("t", 2),), "b": (("t", 1),), "c": (("t", 0),)}


def test_round_robin_deals_around_unequal_subscriptions(bridge: AssignorBridge) -> None:
    # kafka-python 3.0.12's round-robin raises KeyError here; Kafka's skips members not subscribed
    cluster = ClusterLayout.of_partition_counts({"t": 2, "u": 2})
    members = [Member("a", ("t", "u")), Member("b", ("u",))]
    result = assign(bridge, members, "roundrobin", cluster=cluster)
    assert dict(result.assignment) == {"a": (("t", 0), ("t", 1), ("u", 1)), "b": (("u", 0),)}


def test_replica_racks_make_range_rack_aware(bridge: AssignorBridge) -> None:
    replicas = {"t": ((1,), (0,))}  # partition 0 only on broker 1, partition 1 only on broker 0
    members = [Member("c1", ("t",), rack="a"), Member("c2", ("t",), rack="b")]
    with_racks = ClusterLayout({0: "a", 1: "b"}, replicas)
    assert dict(assign(bridge, members, cluster=with_racks).assignment) == {"c1": (("t", 1),), "c2": (("t", 0),)}
    # brokers missing from the metadata have no rack: the plain range split
    without = ClusterLayout({}, replicas)
    assert dict(assign(bridge, members, cluster=without).assignment) == {"c1": (("t", 0),), "c2": (("t", 1),)}


def test_a_v0_member_loses_its_owned_partitions_on_the_wire(bridge: AssignorBridge) -> None:
    owned = (("t", 0), ("t", 1), ("t", 2), ("t", 3))
    v3 = assign(bridge, [Member("a", ("t",), owned, 5), Member("b", ("t",), (), 5)], "cooperative-sticky", settle=False)
    # at v3 the leader sees a's partitions and withholds the two that move to b
    assert dict(v3.assignment) == {"a": (("t", 0), ("t", 1)), "b": ()}
    v0 = assign(
        bridge,
        [Member("a", ("t",), owned, 5, version=0), Member("b", ("t",), (), 5, version=0)],
        "cooperative-sticky",
        settle=False,
    )
    nothing_owned = assign(bridge, [Member("a", ("t",)), Member("b", ("t",))], "cooperative-sticky", settle=False)
    assert v0.assignment == nothing_owned.assignment
    assert v0.revoked == {"a": (), "b": ()}


def test_raw_join_metadata_is_what_the_leader_decodes(bridge: AssignorBridge) -> None:
    sub = protocol.Subscription(("t",), protocol.encode_cooperative_user_data(3), (("t", 3), ("t", 1)), 3, "r")
    raw = bridge.serialize_subscription(sub, 2)  # a client speaking v2: no rack on the wire
    member = Member.from_subscription("m1", "inst-1", raw)
    assert (member.version, member.rack, member.owned, member.metadata) == (2, None, (("t", 1), ("t", 3)), raw)
    structured = Member("m1", ("t",), (("t", 1), ("t", 3)), 3, "inst-1", None, sub.user_data, version=2)
    other = Member("m2", ("t",), (), 3)
    for assignor in ASSIGNORS:
        assert (
            assign(bridge, [member, other], assignor).assignment
            == assign(bridge, [structured, other], assignor).assignment
        )


@pytest.mark.parametrize("seed", range(4))
def test_v3_members_from_fields_see_what_the_leader_decodes(bridge: AssignorBridge, seed: int) -> None:
    # At v3 the bridge builds the decoded Subscription itself rather than round-tripping it
    # through Kafka's ConsumerProtocol. It must give the same assignments: owned partitions
    # arrive sorted (sticky's tie-breaks follow their order), generations and racks intact.
    rand = random.Random(seed)
    counts = {f"topic{i}": rand.randrange(1, 7) for i in range(6)}
    cluster = ClusterLayout({0: "r0", 1: "r1"}, {t: tuple((i % 2,) for i in range(n)) for t, n in counts.items()})
    everything = [(t, p) for t, n in counts.items() for p in range(n)]
    rand.shuffle(everything)
    names = [f"m{i}" for i in range(5)]
    owned = {m: everything[i::6] for i, m in enumerate(names)}  # interleaved topics, one sixth left unowned
    for assignor in ASSIGNORS:
        fields = []
        for i, m in enumerate(names):
            topics = tuple(rand.sample(sorted(counts), rand.randrange(2, 7)))
            mine = tuple(tp for tp in owned[m] if tp[0] in topics)
            user_data = bridge.subscription_user_data(assignor, list(topics), list(mine), 4)
            rack = ("", "r0", "r1", None)[i % 4]
            fields.append(Member(m, topics, mine, 4 if i else -1, None, rack, user_data))
        raw = [
            Member.from_subscription(
                f.member_id,
                None,
                protocol.encode_subscription(
                    protocol.Subscription(f.topics, f.user_data, f.owned, f.generation, f.rack)
                ),
            )
            for f in fields
        ]
        from_fields = assign(bridge, fields, assignor, cluster=cluster)
        from_wire = assign(bridge, raw, assignor, cluster=cluster)
        untimed = [[dataclasses.replace(r, assign_seconds=0.0) for r in x.rounds] for x in (from_fields, from_wire)]
        assert untimed[0] == untimed[1], assignor


def test_malformed_metadata_fails_only_its_group(bridge: AssignorBridge) -> None:
    good = GroupInput((Member("m", ("t",)),), "good")
    bad = GroupInput((Member("m", ("t",)), Member("x", ("t",), metadata=b"\x00\x03\x00")), "bad")
    pid = bridge.pid
    results = bridge.assign_many(FOUR, [(good, "range"), (bad, "range"), (good, "sticky")])
    assert isinstance(results[0], AssignResult) and isinstance(results[2], AssignResult)
    assert isinstance(results[1], AssignFailure)
    assert "group 1 ('bad') member 1 ('x')" in results[1].message
    assert "cannot decode its subscription" in results[1].message
    assert bridge.pid == pid
    with pytest.raises(AssignmentRejected, match="member 1 \\('x'\\)"):
        bridge.assign(bad, FOUR, "range")


def test_duplicate_member_ids_are_refused() -> None:
    with pytest.raises(AssignorInputError, match="member id 'm' appears twice"):
        GroupInput((Member("m", ("t",)), Member("m", ("u",))), "g")


# ---------------------------------------------------------------- rejoining members


def test_rejoining_members_send_what_a_java_consumer_sends(bridge: AssignorBridge) -> None:
    previous = [("t", 1), ("u", 0), ("t", 0)]
    for assignor in ASSIGNORS:
        m = Member.rejoining("m1", ["u", "t"], assignor, previous, 4, rack="r")
        assert m.user_data == bridge.subscription_user_data(assignor, ["u", "t"], previous, 4)
        assert m.owned == (tuple(previous) if assignor == "cooperative-sticky" else ())  # eager ones revoked all
        assert (m.topics, m.generation, m.rack) == (("t", "u"), 4, "r")
        fresh = Member.rejoining("m2", ["t"], assignor, None, 4)
        assert fresh.generation == -1
        assert fresh.user_data == bridge.subscription_user_data(assignor, ["t"], None, -1)


def test_sticky_what_if_keeps_the_survivors_partitions(bridge: AssignorBridge) -> None:
    cluster = ClusterLayout.of_partition_counts({"t": 6, "u": 3})
    before = {
        "a": [("t", 0), ("t", 3), ("u", 0)],
        "b": [("t", 1), ("t", 4), ("u", 1)],
        "c": [("t", 2), ("t", 5), ("u", 2)],
    }
    sticky_ones: tuple[AssignorName, ...] = ("sticky", "cooperative-sticky")
    for assignor in sticky_ones:
        # c leaves; a and b rejoin with what they hold
        members = [Member.rejoining(m, ["t", "u"], assignor, before[m], 7) for m in ("a", "b")]
        result = assign(bridge, members, assignor, cluster=cluster)
        for m in ("a", "b"):
            assert set(before[m]) <= set(result.assignment[m])
        assert sorted(len(p) for p in result.assignment.values()) == [4, 5]
        assert result.revoked == {"a": (), "b": ()}
    range_result = assign(
        bridge, [Member.rejoining(m, ["t", "u"], "range", before[m], 7) for m in ("a", "b")], "range", cluster=cluster
    )
    assert range_result.assignment["a"] == (("t", 0), ("t", 1), ("t", 2), ("u", 0), ("u", 1))


# ---------------------------------------------------------------- cooperative settling


def test_settle_runs_the_follow_up_rebalance(bridge: AssignorBridge) -> None:
    members = [Member("a", ("t",), (("t", 0), ("t", 1), ("t", 2), ("t", 3)), 5), Member("b", ("t",), (), 5)]
    result = assign(bridge, members, "cooperative-sticky")
    assert result.settled
    assert [dict(r.assignment) for r in result.rounds] == [
        {"a": (("t", 0), ("t", 1)), "b": ()},  # t-2 and t-3 withheld while a revokes them
        {"a": (("t", 0), ("t", 1)), "b": (("t", 2), ("t", 3))},
    ]
    assert result.first_round.transferring == {("t", 2): "b", ("t", 3): "b"}
    assert result.revoked == {"a": (("t", 2), ("t", 3)), "b": ()}
    eager: tuple[AssignorName, ...] = ("range", "roundrobin", "sticky")
    for name in eager:
        assert len(assign(bridge, members, name).rounds) == 1


@pytest.mark.parametrize("seed", range(6))
def test_settle_matches_kafkas_own_follow_up_loop(bridge: AssignorBridge, seed: int) -> None:
    rand = random.Random(seed)
    t = StickyTest(bridge, "cooperative-sticky")
    topics = [topic_name(i, 12) for i in range(12)]
    ppt = {name: t.partition_infos(name, rand.randrange(1, 9)) for name in topics}
    subscriptions = {
        consumer_name(i, 30): t.subscription(rand.sample(topics, rand.randrange(1, 12)), i) for i in range(30)
    }
    previous = t.assignor.assign_partitions(ppt, subscriptions)
    # members leave and change their subscriptions, the others rejoin owning what they had
    for i in rand.sample(range(30), 8):
        del subscriptions[consumer_name(i, 30)]
    for consumer, sub in subscriptions.items():
        topics_now = sorted(set(sub.topics) ^ {rand.choice(topics)})
        subscriptions[consumer] = t.build_subscription_v2_above(topics_now, previous[consumer], t.generation_id, 0)

    settled = bridge.assign(group_of(subscriptions), cluster_of(ppt), "cooperative-sticky", settle=True)

    # CooperativeStickyAssignorTest's own way: one rebalance, then its verifyValidityAndBalance loop
    first = t.assignor.assign_partitions(ppt, subscriptions)
    final = {m: list(p) for m, p in first.items()}
    follow_ups = t.verify_validity_and_balance(dict(subscriptions), final, ppt)

    assert settled.settled
    assert dict(settled.first_round.assignment) == {m: tuple(p) for m, p in first.items()}
    assert dict(settled.assignment) == {m: tuple(p) for m, p in final.items()}
    assert len(settled.rounds) == 1 + follow_ups


# ---------------------------------------------------------------- failures


def test_a_refused_request_leaves_the_jvm_running(bridge: AssignorBridge) -> None:
    pid = bridge.pid
    with pytest.raises(AssignmentRejected, match="Kafka cannot decode the subscription"):
        bridge.deserialize_subscription(b"")
    with pytest.raises(AssignmentRejected, match="Unsupported subscription version: -1"):
        bridge.serialize_subscription(protocol.Subscription(("t",)), -1)
    assert bridge.pid == pid
    assert assign(bridge, [Member("m", ("t",))]).assignment["m"] == tuple(("t", p) for p in range(4))


@pytest.mark.jvm  # its own bridge, not the fixture's
def test_a_request_past_its_timeout_stops_the_jvm_and_the_next_one_restarts_it() -> None:
    with AssignorBridge(heap="128m") as own:
        first_pid = own.pid
        with pytest.raises(AssignorBridgeError, match="gave no answer to assign within 1e-06s and was stopped"):
            own.assign(GroupInput((Member("m", ("t",)),)), FOUR, "range", timeout_s=1e-6)
        assert own.assign(GroupInput((Member("m", ("t",)),)), FOUR, "range").assignment["m"][0] == ("t", 0)
        assert own.pid != first_pid


@pytest.mark.jvm  # its own bridge, not the fixture's
def test_a_jvm_that_dies_is_reported_with_its_stderr() -> None:
    big = ClusterLayout({0: "a"}, {f"t{i}": ((0,),) * 20_000 for i in range(20)})
    members = tuple(Member(f"m{i}", tuple(big.topics), rack="a") for i in range(50))
    with AssignorBridge(heap="24m") as own:
        with pytest.raises(AssignorBridgeError, match=r"(?s)exited \(code \d+\) during assign.*OutOfMemoryError"):
            own.assign(GroupInput(members), big, "range")


@pytest.mark.jvm  # reaches `java` only once the bridge is compiled (javac), as the bridge fixture does first
def test_no_java_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    ensure_jars()
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(AssignorBridgeError, match="cannot start 'java' \\(a Java 17\\+ runtime must be on PATH\\)"):
        AssignorBridge().start()


def test_no_javac_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a fresh class cache (nothing compiled yet) next to the fetched jars, and no JDK tools
    (tmp_path / "jars").symlink_to(ensure_jars())
    monkeypatch.setenv("KAFKA_OPS_VAR", str(tmp_path))
    no_jdk = [d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "javac").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(no_jdk))
    with pytest.raises(AssignorBridgeError, match=r"cannot build the assignor bridge: 'javac' .* is not on PATH"):
        AssignorBridge().start()


# ---------------------------------------------------------------- wire encoding (no JVM)


def test_partitions_travel_flat_against_a_name_table() -> None:
    names = wire.NameTable()
    flat = names.flat([("b", 3), ("a", 1), ("b", 0)])
    assert (names.names, flat) == (["b", "a"], [0, 3, 1, 1, 0, 0])
    assert wire.from_flat(flat, names.names) == (("b", 3), ("a", 1), ("b", 0))


def test_a_cluster_without_placement_travels_as_counts() -> None:
    assert wire.cluster_json(FOUR) == {"brokers": [], "topics": [["t", 4]]}
    placed = ClusterLayout({1: "a", 2: None}, {"t": ((1, 2), (2, 1))})
    assert wire.cluster_json(placed) == {"brokers": [[1, "a"], [2, None]], "topics": [["t", ((1, 2), (2, 1))]]}
