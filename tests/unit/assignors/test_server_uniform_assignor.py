"""Kafka's `UniformHomogeneousAssignmentBuilderTest`, `UniformHeterogeneousAssignmentBuilderTest`
and `CommonAssignorTests` (apache/kafka group-coordinator), run through the bridge on Kafka 4.4's
`UniformAssignor`.

Each test is named after the Java test it transcribes (prefixed with its class where both classes
have one of that name). Expected assignments are Kafka's, with Kafka's topic ids: the uniform
assignor's choices depend on them. Kafka's `assertSame` (an unchanged assignment reuses its maps)
cannot cross the bridge and is checked as equality.
"""

from __future__ import annotations

import itertools

import pytest

from kafka_ops.assignors import AssignorBridge, ConsumerGroupInput, ConsumerMember
from kafka_ops.assignors.model import ClusterLayout
from tests.unit.assignors.server_harness import (
    EMPTY,
    HETEROGENEOUS,
    HOMOGENEOUS,
    MemberSpec,
    Metadata,
    PartitionAssignorException,
    ServerAssignor,
    assert_assignment,
    check_validity_and_balance,
    mk_assignment,
    mk_ordered_assignment,
    mk_topic_assignment,
    uuid_of,
)

topic1_uuid = "T1-A4s3VTwiI5CTbEp6POw"
topic2_uuid = "T2-B4s3VTwiI5YHbPp6YUe"
topic3_uuid = "T3-CU8fVTLCz5YMkLoDQsa"
topic4_uuid = "T4-Tw9fVTLCz5HbPp6YQsa"
topic1_name, topic2_name, topic3_name, topic4_name = "topic1", "topic2", "topic3", "topic4"
member_a, member_b, member_c = "A", "B", "C"


@pytest.fixture
def assignor(bridge: AssignorBridge) -> ServerAssignor:
    return ServerAssignor(bridge, "uniform")


def spec(subscribed: set[str], assignment: dict[str, set[int]] | None = None, rack: str | None = None) -> MemberSpec:
    return MemberSpec(rack, None, subscribed, assignment or EMPTY)


# ---------------------------------------------------------------- UniformHomogeneousAssignmentBuilderTest


def test_homogeneous_one_member_no_topic_subscription(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3)
    members = {member_a: spec(set())}
    assert assignor.assign(members, HOMOGENEOUS, metadata, "HashMap") == {}


def test_homogeneous_one_member_subscribed_to_nonexistent_topic(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3)
    members = {member_a: spec({topic2_uuid})}
    with pytest.raises(PartitionAssignorException, match="PartitionAssignorException"):
        assignor.assign(members, HOMOGENEOUS, metadata, "HashMap")


def test_first_assignment_two_members_two_topics_no_member_racks(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic3_uuid, topic3_name, 2)
    members = {member_a: spec({topic1_uuid, topic3_uuid}), member_b: spec({topic1_uuid, topic3_uuid})}
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic3_uuid, 0, 1)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2)),
    }
    computed = assignor.assign(members, HOMOGENEOUS, metadata)
    assert_assignment(expected, computed)
    check_validity_and_balance(members, computed)


def test_homogeneous_first_assignment_num_members_greater_than_total_num_partitions(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic3_uuid, topic3_name, 2)
    members = {m: spec({topic3_uuid}) for m in (member_a, member_b, member_c)}
    # Topic 3 has 2 partitions but three members subscribed to it - one of them should not get an assignment.
    expected = {
        member_a: {},
        member_b: mk_assignment(mk_topic_assignment(topic3_uuid, 0)),
        member_c: mk_assignment(mk_topic_assignment(topic3_uuid, 1)),
    }
    computed = assignor.assign(members, HOMOGENEOUS, metadata)
    assert_assignment(expected, computed)
    check_validity_and_balance(members, computed)


def test_validity_and_balance_for_large_sample_set(assignor: ServerAssignor) -> None:
    metadata = Metadata()
    topic_ids = set()
    for i in range(1, 101):
        topic_id = uuid_of(f"topic-{i}")
        metadata.add_topic(topic_id, f"topic-{i}", 3)
        topic_ids.add(topic_id)
    members = {f"member{i}": spec(set(topic_ids)) for i in range(1, 50)}
    check_validity_and_balance(members, assignor.assign(members, HOMOGENEOUS, metadata))


def test_reassignment_for_two_members_two_topics_given_unbalanced_prev_assignment(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic2_uuid, topic2_name, 3)
    both = {topic1_uuid, topic2_uuid}
    members = {
        member_a: spec(
            both, mk_ordered_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic2_uuid, 0, 1))
        ),
        member_b: spec(
            both, mk_ordered_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic2_uuid, 2))
        ),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic2_uuid, 0)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic2_uuid, 1, 2)),
    }
    computed = assignor.assign(members, HOMOGENEOUS, metadata)
    assert_assignment(expected, computed)
    check_validity_and_balance(members, computed)


def test_reassignment_when_partitions_are_added_for_two_members_two_topics(assignor: ServerAssignor) -> None:
    # Simulating adding partition to T1 and T2 - originally T1 -> 3 Partitions and T2 -> 3 Partitions
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 6).add_topic(topic2_uuid, topic2_name, 5)
    both = {topic1_uuid, topic2_uuid}
    members = {
        member_a: spec(
            both, mk_ordered_assignment(mk_topic_assignment(topic1_uuid, 0, 2), mk_topic_assignment(topic2_uuid, 0))
        ),
        member_b: spec(
            both, mk_ordered_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1, 2))
        ),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 2), mk_topic_assignment(topic2_uuid, 0, 3, 4)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 1, 3, 4, 5), mk_topic_assignment(topic2_uuid, 1, 2)),
    }
    computed = assignor.assign(members, HOMOGENEOUS, metadata)
    assert_assignment(expected, computed)
    check_validity_and_balance(members, computed)


def test_reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic2_uuid, topic2_name, 3)
    both = {topic1_uuid, topic2_uuid}
    members = {
        member_a: spec(
            both, mk_ordered_assignment(mk_topic_assignment(topic1_uuid, 0, 2), mk_topic_assignment(topic2_uuid, 0))
        ),
        member_b: spec(
            both, mk_ordered_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1, 2))
        ),
        # Add a new member to trigger a re-assignment.
        member_c: spec(both),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 2)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1)),
        member_c: mk_assignment(mk_topic_assignment(topic2_uuid, 0, 2)),
    }
    computed = assignor.assign(members, HOMOGENEOUS, metadata)
    assert_assignment(expected, computed)
    check_validity_and_balance(members, computed)


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic2_uuid, topic2_name, 3)
    both = {topic1_uuid, topic2_uuid}
    members = {
        member_a: spec(both, mk_assignment(mk_topic_assignment(topic1_uuid, 0), mk_topic_assignment(topic2_uuid, 0))),
        member_b: spec(both, mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1))),
        # Member C was removed
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0), mk_topic_assignment(topic2_uuid, 0, 2)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 1, 2), mk_topic_assignment(topic2_uuid, 1)),
    }
    computed = assignor.assign(members, HOMOGENEOUS, metadata)
    assert_assignment(expected, computed)
    check_validity_and_balance(members, computed)


def test_homogeneous_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 2).add_topic(topic2_uuid, topic2_name, 2)
    # Initial subscriptions were [T1, T2]
    members = {
        member_a: spec(
            {topic2_uuid}, mk_assignment(mk_topic_assignment(topic1_uuid, 0), mk_topic_assignment(topic2_uuid, 0))
        ),
        member_b: spec(
            {topic2_uuid}, mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1))
        ),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic2_uuid, 0)),
        member_b: mk_assignment(mk_topic_assignment(topic2_uuid, 1)),
    }
    computed = assignor.assign(members, HOMOGENEOUS, metadata)
    assert_assignment(expected, computed)
    check_validity_and_balance(members, computed)


# ---------------------------------------------------------------- CommonAssignorTests (both subscription types)

TOPIC_1_UUID, TOPIC_2_UUID, TOPIC_3_UUID = uuid_of("common-topic1"), uuid_of("common-topic2"), uuid_of("common-topic3")


def _common_metadata() -> Metadata:
    return (
        Metadata()
        .add_topic(TOPIC_1_UUID, "topic1", 2)
        .add_topic(TOPIC_2_UUID, "topic2", 5)
        .add_topic(TOPIC_3_UUID, "topic3", 7)
    )


@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
@pytest.mark.parametrize("rack_aware", [False, True])
def test_assignment_reuse(assignor: ServerAssignor, subscription_type: str, rack_aware: bool) -> None:
    """`testAssignmentReuse`: an unchanged group gets the same assignment again."""
    every = {TOPIC_1_UUID, TOPIC_2_UUID, TOPIC_3_UUID}
    members = {m: spec(every, rack=f"rack{i}" if rack_aware else None) for i, m in enumerate("ABC", 1)}
    first = assignor.assign(members, subscription_type, _common_metadata(), "HashMap")  # type: ignore[arg-type]
    with_assignment = {m: spec(every, first[m], members[m].rack) for m in members}
    second = assignor.assign(with_assignment, subscription_type, _common_metadata(), "HashMap")  # type: ignore[arg-type]
    for m in members:
        assert second[m] == first[m]


@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
@pytest.mark.parametrize("rack_aware", [False, True])
def test_reassignment_stickiness(assignor: ServerAssignor, subscription_type: str, rack_aware: bool) -> None:
    """`testReassignmentStickiness` (`testIterationOrderStickiness`): members in any order keep the
    first assignment (Java's LinkedHashMap in each order: the bridge's given order)."""
    every = {TOPIC_1_UUID, TOPIC_2_UUID, TOPIC_3_UUID}
    members = {
        member_a: spec(every),
        # Only one member has a rack, so that the other members are interchangeable.
        member_b: spec(every, rack="rack1" if rack_aware else None),
        member_c: spec(every),
    }
    first = assignor.assign(members, subscription_type, _common_metadata(), "HashMap")  # type: ignore[arg-type]
    for order in itertools.permutations((member_a, member_b, member_c)):
        again = {m: spec(every, first[m], members[m].rack) for m in order}
        second = assignor.assign(again, subscription_type, _common_metadata(), "LinkedHashMap")  # type: ignore[arg-type]
        assert_assignment(first, second)


# ---------------------------------------------------------------- UniformHeterogeneousAssignmentBuilderTest
# Its TestGroupSpecImpl hands members to the assignor sorted by id: the bridge's given order of a TreeMap.


def test_two_members_no_topic_subscription(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3)
    members = {member_a: spec(set()), member_b: spec(set())}
    assert assignor.assign(members, HETEROGENEOUS, metadata) == {}


def test_two_members_subscribed_to_nonexistent_topics(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3)
    members = {member_a: spec({topic3_uuid}), member_b: spec({topic2_uuid})}
    with pytest.raises(PartitionAssignorException, match="PartitionAssignorException"):
        assignor.assign(members, HETEROGENEOUS, metadata)


def test_first_assignment_two_members_two_topics(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic3_uuid, topic3_name, 6)
    members = {member_a: spec({topic1_uuid, topic3_uuid}), member_b: spec({topic3_uuid})}
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2), mk_topic_assignment(topic3_uuid, 4)),
        member_b: mk_assignment(mk_topic_assignment(topic3_uuid, 0, 1, 2, 3, 5)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_heterogeneous_first_assignment_num_members_greater_than_total_num_partitions(
    assignor: ServerAssignor,
) -> None:
    metadata = Metadata().add_topic(topic3_uuid, topic3_name, 1).add_topic(topic1_uuid, topic1_name, 2)
    members = {member_a: spec({topic3_uuid}), member_b: spec({topic3_uuid}), member_c: spec({topic1_uuid})}
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic3_uuid, 0)),
        member_b: {},
        member_c: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_reassignment_for_two_members_three_topics_given_unbalanced_prev_assignment(assignor: ServerAssignor) -> None:
    metadata = (
        Metadata()
        .add_topic(topic1_uuid, topic1_name, 6)
        .add_topic(topic2_uuid, topic2_name, 4)
        .add_topic(topic3_uuid, topic3_name, 4)
    )
    members = {
        member_a: spec({topic1_uuid}, mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2))),
        member_b: spec(
            {topic1_uuid, topic2_uuid},
            mk_assignment(mk_topic_assignment(topic1_uuid, 3), mk_topic_assignment(topic2_uuid, 0)),
        ),
        member_c: spec(
            {topic1_uuid, topic2_uuid, topic3_uuid},
            mk_assignment(
                mk_topic_assignment(topic1_uuid, 4, 5),
                mk_topic_assignment(topic2_uuid, 1, 2, 3),
                mk_topic_assignment(topic3_uuid, 0, 1, 2, 3),
            ),
        ),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2, 5)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 3), mk_topic_assignment(topic2_uuid, 0, 1, 2, 3)),
        member_c: mk_assignment(mk_topic_assignment(topic1_uuid, 4), mk_topic_assignment(topic3_uuid, 0, 1, 2, 3)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_reassignment_when_partitions_are_added_for_two_members(assignor: ServerAssignor) -> None:
    # Simulating adding partitions to T1, T2, T3 - originally T1 -> 4, T2 -> 3, T3 -> 2, T4 -> 3
    metadata = (
        Metadata()
        .add_topic(topic1_uuid, topic1_name, 6)
        .add_topic(topic2_uuid, topic2_name, 5)
        .add_topic(topic3_uuid, topic3_name, 3)
        .add_topic(topic4_uuid, topic4_name, 3)
    )
    members = {
        member_a: spec(
            {topic1_uuid, topic3_uuid},
            mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2, 3), mk_topic_assignment(topic3_uuid, 0, 1)),
        ),
        member_b: spec(
            {topic1_uuid, topic2_uuid, topic3_uuid, topic4_uuid},
            mk_assignment(mk_topic_assignment(topic2_uuid, 0, 1, 2), mk_topic_assignment(topic4_uuid, 0, 1, 2)),
        ),
    }
    expected = {
        member_a: mk_assignment(
            mk_topic_assignment(topic1_uuid, 0, 1, 2, 3, 4, 5), mk_topic_assignment(topic3_uuid, 0, 1, 2)
        ),
        member_b: mk_assignment(
            mk_topic_assignment(topic2_uuid, 0, 1, 2, 3, 4), mk_topic_assignment(topic4_uuid, 0, 1, 2)
        ),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_reassignment_when_one_member_added_and_partitions_added_two_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    # Initially T1 -> 3, T2 -> 3 partitions.
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 6).add_topic(topic2_uuid, topic2_name, 7)
    members = {
        member_a: spec(
            {topic1_uuid}, mk_assignment(mk_topic_assignment(topic1_uuid, 0, 2), mk_topic_assignment(topic2_uuid, 0))
        ),
        member_b: spec(
            {topic1_uuid, topic2_uuid},
            mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1, 2)),
        ),
        # Add a new member to trigger a re-assignment.
        member_c: spec({topic1_uuid, topic2_uuid}),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 2, 3, 4, 5)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1, 2, 6)),
        member_c: mk_assignment(mk_topic_assignment(topic2_uuid, 0, 3, 4, 5)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_three_topics(
    assignor: ServerAssignor,
) -> None:
    metadata = (
        Metadata()
        .add_topic(topic1_uuid, topic1_name, 3)
        .add_topic(topic2_uuid, topic2_name, 8)
        .add_topic(topic3_uuid, topic3_name, 3)
    )
    members = {
        member_a: spec(
            {topic1_uuid, topic3_uuid},
            mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2), mk_topic_assignment(topic3_uuid, 0, 1)),
        ),
        member_b: spec({topic2_uuid}, mk_assignment(mk_topic_assignment(topic2_uuid, 3, 4, 5, 6))),
        # Member C was removed
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2), mk_topic_assignment(topic3_uuid, 0, 1, 2)),
        member_b: mk_assignment(mk_topic_assignment(topic2_uuid, 0, 1, 2, 3, 4, 5, 6, 7)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_heterogeneous_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic2_uuid, topic2_name, 5)
    # Initial subscriptions were [T1, T2]
    members = {
        member_a: spec(
            {topic1_uuid}, mk_assignment(mk_topic_assignment(topic1_uuid, 0, 2), mk_topic_assignment(topic2_uuid, 1, 3))
        ),
        member_b: spec(
            {topic1_uuid, topic2_uuid},
            mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 0, 2, 4)),
        ),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2)),
        member_b: mk_assignment(mk_topic_assignment(topic2_uuid, 0, 1, 2, 3, 4)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_reassignment_when_topic_partitions_run_out_and_members_have_no_partitions(assignor: ServerAssignor) -> None:
    metadata = (
        Metadata()
        .add_topic(topic1_uuid, topic1_name, 2)
        .add_topic(topic2_uuid, topic2_name, 2)
        .add_topic(topic3_uuid, topic3_name, 2)
    )
    every = {topic1_uuid, topic2_uuid, topic3_uuid}
    members = {
        member_a: spec(
            every,
            mk_assignment(
                mk_topic_assignment(topic1_uuid, 0, 1),
                mk_topic_assignment(topic2_uuid, 0, 1),
                mk_topic_assignment(topic3_uuid, 0, 1),
            ),
        ),
        member_b: spec(every),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic2_uuid, 0), mk_topic_assignment(topic3_uuid, 0, 1)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic2_uuid, 1)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_first_assignment_with_two_members_including_one_without_subscriptions(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3)
    members = {member_a: spec({topic1_uuid}), member_b: spec(set())}
    expected = {member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2)), member_b: {}}
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


# ---------------------------------------------------------------- the coordinator's map order


@pytest.mark.parametrize("first", ["b", "a"])
def test_a_previous_assignment_is_read_in_the_coordinator_s_order_where_two_topic_ids_share_a_bucket(
    bridge: AssignorBridge, first: str
) -> None:
    """Two topic ids of a real Kafka 4.4 run that fall in one bucket of a HashMap: the coordinator
    holds a target assignment in the order its record lists the topics (`Assignment.fromRecord`
    puts), which is the order ConsumerGroupDescribe reports, and a member over its quota keeps the
    partitions it meets first. The coordinator gave the remaining member b-0..2 and a-0 when its
    target listed b first."""
    a, b = "srv-83e30f48-a", "srv-83e30f48-b"
    ids = {a: "9x_ZdKhISH6OU032GjUnwg", b: "i661EktIS9uFsVfieXVfhg"}
    in_a, in_b = [(a, p) for p in range(5)], [(b, p) for p in range(3)]
    previous = (*in_b, *in_a) if first == "b" else (*in_a, *in_b)
    old, new = "v6OHdsYQQNe7TkKiriUGHw", "5HbXFskQSnepVeksiAJRWw"
    group = ConsumerGroupInput((ConsumerMember(old, (a, b), previous), ConsumerMember(new, (a, b))), "g")
    cluster = ClusterLayout.of_partition_counts({a: 5, b: 3})
    kept = bridge.server_assign(group, cluster, "uniform", topic_ids=ids).assignment[old]
    assert kept == (((a, 0), *in_b) if first == "b" else tuple(in_a[:4]))
