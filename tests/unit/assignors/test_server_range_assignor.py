"""Kafka's `RangeAssignorTest` (apache/kafka group-coordinator) run through the bridge on Kafka
4.4's server-side `RangeAssignor`, and what of `GroupSpecImplTest` the bridge decides: the group
spec it builds (members, the subscription type it derives as the coordinator does, which
partitions count as assigned) as seen through `assign()`.

Each test is named after the Java test it transcribes. Kafka's test draws its topic ids with
`Uuid.randomUuid()`, so its expectations hold for any ids; here they are fixed by name.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from kafka_ops.assignors import (
    AssignorBridge,
    AssignorInputError,
    ClusterLayout,
    ConsumerGroupInput,
    ConsumerMember,
)
from tests.unit.assignors.server_harness import (
    EMPTY,
    HETEROGENEOUS,
    HOMOGENEOUS,
    MemberSpec,
    Metadata,
    PartitionAssignorException,
    ServerAssignor,
    assert_assignment,
    mk_assignment,
    mk_topic_assignment,
    uuid_of,
)

topic1_uuid, topic2_uuid, topic3_uuid = uuid_of("range-topic1"), uuid_of("range-topic2"), uuid_of("range-topic3")
topic1_name, topic2_name, topic3_name = "topic1", "topic2", "topic3"
member_a, member_b, member_c = "A", "B", "C"


@pytest.fixture
def assignor(bridge: AssignorBridge) -> ServerAssignor:
    return ServerAssignor(bridge, "range")


def spec(
    subscribed: set[str], assignment: dict[str, set[int]] | None = None, instance: str | None = None
) -> MemberSpec:
    return MemberSpec(None, instance, subscribed, assignment or EMPTY)


def test_one_member_no_topic(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3)
    computed = assignor.assign({member_a: spec(set())}, HOMOGENEOUS, metadata, "HashMap")
    assert computed == {member_a: {}}


def test_one_member_subscribed_to_non_existent_topic(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3)
    with pytest.raises(PartitionAssignorException, match="PartitionAssignorException"):
        assignor.assign({member_a: spec({topic2_uuid})}, HOMOGENEOUS, metadata, "HashMap")


def test_first_assignment_two_members_two_topics_same_subscriptions(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic3_uuid, topic3_name, 2)
    members = {member_a: spec({topic1_uuid, topic3_uuid}), member_b: spec({topic1_uuid, topic3_uuid})}
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic3_uuid, 0)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic3_uuid, 1)),
    }
    assert_assignment(expected, assignor.assign(members, HOMOGENEOUS, metadata))


def test_first_assignment_three_members_three_topics_different_subscriptions(assignor: ServerAssignor) -> None:
    metadata = (
        Metadata()
        .add_topic(topic1_uuid, topic1_name, 3)
        .add_topic(topic2_uuid, topic2_name, 3)
        .add_topic(topic3_uuid, topic3_name, 2)
    )
    members = {
        member_a: spec({topic1_uuid, topic2_uuid}),
        member_b: spec({topic3_uuid}),
        member_c: spec({topic2_uuid, topic3_uuid}),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2), mk_topic_assignment(topic2_uuid, 0, 1)),
        member_b: mk_assignment(mk_topic_assignment(topic3_uuid, 0)),
        member_c: mk_assignment(mk_topic_assignment(topic2_uuid, 2), mk_topic_assignment(topic3_uuid, 1)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_first_assignment_num_members_greater_than_num_partitions(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic3_uuid, topic3_name, 2)
    members = {m: spec({topic1_uuid, topic3_uuid}) for m in (member_a, member_b, member_c)}
    # Topic 3 has 2 partitions but three Members subscribed to it - one of them will not get a partition.
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0), mk_topic_assignment(topic3_uuid, 0)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic3_uuid, 1)),
        member_c: mk_assignment(mk_topic_assignment(topic1_uuid, 2)),
    }
    assert_assignment(expected, assignor.assign(members, HOMOGENEOUS, metadata))


def test_static_membership(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3)
    members = {
        member_a: spec({topic1_uuid}, instance="instanceA"),
        member_b: spec({topic1_uuid}, instance="instanceB"),
    }
    initial = assignor.assign(members, HOMOGENEOUS, metadata)
    # Remove static memberA and add it back with a different member Id but same instance Id.
    del members[member_a]
    members["memberA1"] = spec({topic1_uuid}, instance="instanceA")
    reassigned = assignor.assign(members, HOMOGENEOUS, metadata)
    # Assert that the assignment did not change
    assert initial[member_a] == reassigned["memberA1"]
    assert initial[member_b] == reassigned[member_b]


def test_mixed_static_membership(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 5)
    # Initialize members with instance Ids, and one without.
    members = {
        member_a: spec({topic1_uuid}, instance="instanceA"),
        member_c: spec({topic1_uuid}, instance="instanceC"),
        member_b: spec({topic1_uuid}),
    }
    initial = assignor.assign(members, HOMOGENEOUS, metadata)
    # Remove memberA and add it back with a different member Id but same instance Id.
    del members[member_a]
    members["memberA1"] = spec({topic1_uuid}, instance="instanceA")
    reassigned = assignor.assign(members, HOMOGENEOUS, metadata)
    # Assert that the assignments did not change.
    assert initial[member_a] == reassigned["memberA1"]
    assert initial[member_b] == reassigned[member_b]
    assert initial[member_c] == reassigned[member_c]


def test_reassignment_num_members_greater_than_num_partitions_when_one_member_added(assignor: ServerAssignor) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 2).add_topic(topic2_uuid, topic2_name, 2)
    both = {topic1_uuid, topic2_uuid}
    members = {
        member_a: spec(both, mk_assignment(mk_topic_assignment(topic1_uuid, 0), mk_topic_assignment(topic2_uuid, 0))),
        member_b: spec(both, mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1))),
        # Add a new Member to trigger a re-assignment
        member_c: spec(both),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0), mk_topic_assignment(topic2_uuid, 0)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1)),
        # Member C shouldn't get any assignment.
        member_c: {},
    }
    assert_assignment(expected, assignor.assign(members, HOMOGENEOUS, metadata))


def test_reassignment_when_one_partition_added_for_two_members_two_topics(assignor: ServerAssignor) -> None:
    # Simulating adding a partition - originally T1 -> 3 Partitions and T2 -> 3 Partitions
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 4).add_topic(topic2_uuid, topic2_name, 4)
    both = {topic1_uuid, topic2_uuid}
    members = {
        member_a: spec(
            both, mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic2_uuid, 0, 1))
        ),
        member_b: spec(both, mk_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic2_uuid, 2))),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic2_uuid, 0, 1)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 2, 3), mk_topic_assignment(topic2_uuid, 2, 3)),
    }
    assert_assignment(expected, assignor.assign(members, HOMOGENEOUS, metadata))


def test_reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic2_uuid, topic2_name, 3)
    both = {topic1_uuid, topic2_uuid}
    members = {
        member_a: spec(
            both, mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic2_uuid, 0, 1))
        ),
        member_b: spec(both, mk_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic2_uuid, 2))),
        # Add a new Member to trigger a re-assignment
        member_c: spec(both),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0), mk_topic_assignment(topic2_uuid, 0)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 1), mk_topic_assignment(topic2_uuid, 1)),
        member_c: mk_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic2_uuid, 2)),
    }
    assert_assignment(expected, assignor.assign(members, HOMOGENEOUS, metadata))


def test_reassignment_when_one_member_added_and_one_partition_after_initial_assignment_with_two_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    # Add a new partition to topic 1, initially T1 -> 3 partitions
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 4).add_topic(topic2_uuid, topic2_name, 3)
    both = {topic1_uuid, topic2_uuid}
    members = {
        member_a: spec(
            both, mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic2_uuid, 0, 1))
        ),
        member_b: spec(both, mk_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic2_uuid, 2))),
        # Add a new Member to trigger a re-assignment
        member_c: spec({topic1_uuid}),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1), mk_topic_assignment(topic2_uuid, 0, 1)),
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic2_uuid, 2)),
        member_c: mk_assignment(mk_topic_assignment(topic1_uuid, 3)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


def test_reassignment_when_one_member_removed_after_initial_assignment_with_two_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    metadata = Metadata().add_topic(topic1_uuid, topic1_name, 3).add_topic(topic2_uuid, topic2_name, 3)
    # Member A was removed
    members = {
        member_b: spec(
            {topic1_uuid, topic2_uuid},
            mk_assignment(mk_topic_assignment(topic1_uuid, 2), mk_topic_assignment(topic2_uuid, 2)),
        )
    }
    expected = {
        member_b: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2), mk_topic_assignment(topic2_uuid, 0, 1, 2))
    }
    assert_assignment(expected, assignor.assign(members, HOMOGENEOUS, metadata))


def test_reassignment_when_multiple_subscriptions_removed_after_initial_assignment_with_three_members_two_topics(
    assignor: ServerAssignor,
) -> None:
    metadata = (
        Metadata()
        .add_topic(topic1_uuid, topic1_name, 3)
        .add_topic(topic2_uuid, topic2_name, 3)
        .add_topic(topic3_uuid, topic3_name, 2)
    )
    # Let initial subscriptions be A -> T1, T2 // B -> T2 // C -> T2, T3
    # Change the subscriptions to A -> T1 // B -> T1, T2, T3 // C -> T2
    members = {
        member_a: spec(
            {topic1_uuid}, mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1, 2), mk_topic_assignment(topic2_uuid, 0))
        ),
        member_b: spec({topic1_uuid, topic2_uuid, topic3_uuid}, mk_assignment(mk_topic_assignment(topic2_uuid, 1))),
        member_c: spec(
            {topic2_uuid}, mk_assignment(mk_topic_assignment(topic2_uuid, 2), mk_topic_assignment(topic3_uuid, 0, 1))
        ),
    }
    expected = {
        member_a: mk_assignment(mk_topic_assignment(topic1_uuid, 0, 1)),
        member_b: mk_assignment(
            mk_topic_assignment(topic1_uuid, 2),
            mk_topic_assignment(topic2_uuid, 0, 1),
            mk_topic_assignment(topic3_uuid, 0, 1),
        ),
        member_c: mk_assignment(mk_topic_assignment(topic2_uuid, 2)),
    }
    assert_assignment(expected, assignor.assign(members, HETEROGENEOUS, metadata))


# ---------------------------------------------------------------- GroupSpecImplTest, as the bridge builds the spec


def _group(*members: ConsumerMember) -> ConsumerGroupInput:
    return ConsumerGroupInput(members, "g")


def test_subscription_type(bridge: AssignorBridge) -> None:
    """`testSubscriptionType`: the bridge derives it as the coordinator (`ModernGroup.subscriptionType`):
    homogeneous when every member subscribes to the same names, unknown topics included."""
    cluster = ClusterLayout.of_partition_counts({"t1": 2, "t2": 2})
    same = _group(ConsumerMember("a", ("t1", "t2")), ConsumerMember("b", ("t2", "t1")))
    differ = _group(ConsumerMember("a", ("t1", "t2")), ConsumerMember("b", ("t1",)))
    missing = _group(ConsumerMember("a", ("t1", "gone")), ConsumerMember("b", ("t1",)))
    for assignor in ("uniform", "range"):
        results = bridge.server_assign_many(cluster, [(same, assignor), (differ, assignor), (missing, assignor)])
        assert [getattr(r, "subscription_type", r) for r in results] == [
            "HOMOGENEOUS",
            "HETEROGENEOUS",
            "HETEROGENEOUS",
        ]


def test_unknown_topic_is_skipped_as_the_coordinator_does(bridge: AssignorBridge) -> None:
    """A subscribed name the metadata does not hold resolves to no topic id (`TopicIds`): the member
    gets the rest, where Kafka's tests (a topic id missing from the image) get an exception."""
    cluster = ClusterLayout.of_partition_counts({"t1": 2})
    result = bridge.server_assign(_group(ConsumerMember("a", ("t1", "gone"))), cluster, "uniform")
    assert result.assignment == {"a": (("t1", 0), ("t1", 1))}


def test_is_partition_assigned(bridge: AssignorBridge) -> None:
    """`testIsPartitionAssigned`: the current assignments make the spec's inverted assignment, so a
    held partition stays with its member and only unheld ones go to a newcomer (the uniform
    assignor asks `isPartitionAssigned`; Kafka 4.4's range assignor does not, and re-ranges)."""
    cluster = ClusterLayout.of_partition_counts({"t1": 4})
    group = _group(ConsumerMember("a", ("t1",), (("t1", 2), ("t1", 3))), ConsumerMember("b", ("t1",)))
    uniform = bridge.server_assign(group, cluster, "uniform")
    assert uniform.assignment == {"a": (("t1", 2), ("t1", 3)), "b": (("t1", 0), ("t1", 1))}
    assert bridge.server_assign(group, cluster, "range").assignment == {
        "a": (("t1", 0), ("t1", 1)),
        "b": (("t1", 2), ("t1", 3)),
    }


def test_member_ids_and_member_assignment(bridge: AssignorBridge) -> None:
    """`testMemberIds` / `testMemberAssignment`: every member is in the spec with its own assignment;
    a member given nothing is still answered for."""
    cluster = ClusterLayout.of_partition_counts({"t1": 1})
    group = _group(ConsumerMember("a", ("t1",), (("t1", 0),)), ConsumerMember("b", ("t1",)))
    result = bridge.server_assign(group, cluster, "uniform")
    assert result.assignment == {"a": (("t1", 0),), "b": ()}


def test_a_partition_held_twice_is_refused_with_where() -> None:
    with pytest.raises(AssignorInputError, match=r"group 'g': t1-0 is assigned to both 'a' and 'b'"):
        _group(ConsumerMember("a", ("t1",), (("t1", 0),)), ConsumerMember("b", ("t1",), (("t1", 0),)))


def test_an_unknown_assignor_fails_that_group_only(bridge: AssignorBridge) -> None:
    cluster = ClusterLayout.of_partition_counts({"t1": 1})
    good = _group(ConsumerMember("a", ("t1",)))
    bad, ok = bridge.server_assign_many(cluster, [(good, "sticky"), (good, "range")])  # type: ignore[list-item]
    assert "unknown server-side assignor 'sticky'" in getattr(bad, "message", "")
    assert getattr(ok, "assignment", None) == {"a": (("t1", 0),)}


# ---------------------------------------------------------------- the bridge's JVM


@pytest.mark.jvm  # its own bridge, not the fixture's
def test_a_restarted_jvm_loads_the_server_side_assignors_again() -> None:
    """The server-side assignors live in the JVM's own class loader: a JVM that died (killed here)
    is restarted on the next request, and they are loaded into the new one."""
    cluster = ClusterLayout.of_partition_counts({"t1": 2})
    group = _group(ConsumerMember("a", ("t1",)))
    with AssignorBridge() as own:
        assert own.server_assign(group, cluster, "range").assignment == {"a": (("t1", 0), ("t1", 1))}
        first = own.pid
        assert first is not None and own.group_coordinator_version == "4.4.0"
        os.kill(first, signal.SIGKILL)
        time.sleep(1)  # dead before the next request, which then finds it gone and starts another
        assert own.server_assign(group, cluster, "uniform").assignment == {"a": (("t1", 0), ("t1", 1))}
        assert own.pid not in (None, first)
