"""Group types: ListGroups' type routes each group to its own describe API, ConsumerGroupDescribe's
answer decodes into the model (errors per group, nameless topic ids, empty groups), and the new
columns reach the lake tables (null where a type cannot have them)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.errors import CoordinatorLoadInProgressError, NotCoordinatorError
from kafka.protocol.metadata import CoordinatorType
from kafka.structs import OffsetAndMetadata, TopicPartition

from kafka_ops.model.groups import ConsumerGroup, Described, GroupMember, GroupSnapshot, ShareOffset
from kafka_ops.sources.groups import collector as groups_collector
from kafka_ops.sources.groups import types as group_types
from kafka_ops.sources.groups.collector import GroupCollector
from kafka_ops.sources.groups.consumer import decode_group
from kafka_ops.sources.groups.coordinated import raise_if_retriable
from kafka_ops.sources.groups.tables import group_batch, group_summary
from kafka_ops.sources.messages.groups import ConsumerGroupDescribeResponse
from tests.unit.snapshots import GROUPS_AT
from tests.unit.test_groups_collector import ScriptedAdmin, raw_group

Group = ConsumerGroupDescribeResponse.DescribedGroup
Member = Group.Member
Assignment = Member.Assignment
TOPIC_IDS = {"orders": uuid.UUID(int=1), "audit": uuid.UUID(int=2)}


def assignment(*topics: tuple[str, list[int]]) -> Any:
    return Assignment(
        topic_partitions=[
            Assignment.TopicPartitions(topic_id=TOPIC_IDS.get(t, uuid.UUID(int=99)), topic_name=t, partitions=ps)
            for t, ps in topics
        ]
    )


def member(member_id: str, current: Any, target: Any, regex: str = "", rack: str | None = None) -> Any:
    return Member(
        member_id=member_id, instance_id=None, rack_id=rack, member_epoch=7, client_id=f"client-{member_id}",
        client_host="/127.0.0.1", subscribed_topic_names=["orders", "audit"], subscribed_topic_regex=regex,
        assignment=current, target_assignment=target,
    )  # fmt: skip


def on_the_wire(*groups: Any) -> list[Any]:
    """The groups as a broker's v1 response carries them: encoded, then decoded."""
    response = ConsumerGroupDescribeResponse(throttle_time_ms=0, groups=list(groups))
    return list(ConsumerGroupDescribeResponse.decode(response.encode(version=1), version=1).groups)


def group(group_id: str, members: list[Any], state: str = "Stable", error: int = 0, message: str | None = None) -> Any:
    return Group(
        error_code=error, error_message=message, group_id=group_id, group_state=state, group_epoch=9,
        assignment_epoch=8, assignor_name="uniform", members=members,
    )  # fmt: skip


def decoded(*groups: Any) -> Described:
    described = Described()
    for raw in on_the_wire(*groups):
        decode_group(raw, described)
    return described


def test_a_consumer_group_decodes_with_epochs_members_and_both_assignments() -> None:
    settled = member("b", assignment(("orders", [1, 0])), assignment(("orders", [0, 1])), rack="rack-a")
    moving = member("a", assignment(("orders", [2]), ("audit", [0])), assignment(("audit", [0])))
    out = decoded(group("g", [settled, moving], state="Reconciling"))
    g = out.groups["g"]
    assert (g.group_type, g.state, g.protocol_type, g.assignor) == ("consumer", "Reconciling", "consumer", "uniform")
    assert (g.group_epoch, g.assignment_epoch) == (9, 8)
    a, b = g.members  # sorted by member id
    # in the broker's order (the coordinator's map order, which its assignor reads)
    assert a.assignment == (("orders", 2), ("audit", 0)) and a.target_assignment == (("audit", 0),)
    assert a.reconciling and not b.reconciling  # the same partitions in another order are reconciled
    assert (b.assignment, b.target_assignment) == ((("orders", 1), ("orders", 0)), (("orders", 0), ("orders", 1)))
    assert (b.member_epoch, b.rack, b.client_id, b.subscribed_topics) == (7, "rack-a", "client-b", ("audit", "orders"))
    assert b.subscribed_regex is None  # Kafka 4.4 sends "" for a member that subscribed by names
    assert b.subscription is None
    assert g.reconciling_members == 1 and out.issues == []


def test_a_regex_subscription_is_kept() -> None:
    out = decoded(group("g", [member("a", assignment(), assignment(), regex="orders.*")]))
    assert out.groups["g"].members[0].subscribed_regex == "orders.*"


def test_an_empty_group_has_epochs_and_no_members() -> None:
    out = decoded(group("idle", [], state="Empty"))
    g = out.groups["idle"]
    assert (g.state, g.members, g.group_epoch, g.reconciling_members) == ("Empty", (), 9, 0)


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (69, "Group g not found.", "GroupIdNotFoundError: Group g not found."),
        (30, None, "GroupAuthorizationFailedError: GROUP_AUTHORIZATION_FAILED"),
        (24, "", "InvalidGroupIdError: INVALID_GROUP_ID"),
    ],
)
def test_an_error_of_one_group_is_an_issue_and_the_others_decode(code: int, message: str | None, expected: str) -> None:
    out = decoded(group("bad", [], error=code, message=message), group("good", []))
    assert list(out.groups) == ["good"]
    assert [(i.group_id, i.kind, i.problem) for i in out.issues] == [("bad", "describe", expected)]


def test_a_topic_id_the_broker_could_not_name_is_an_issue_not_a_partition() -> None:
    nameless = assignment(("orders", [0]), ("", [3, 4]))
    out = decoded(group("g", [member("a", nameless, assignment(("orders", [0])))]))
    a = out.groups["g"].members[0]
    assert a.assignment == (("orders", 0),) and not a.reconciling
    (issue,) = out.issues
    assert (issue.group_id, issue.kind) == ("g", "assignment")
    assert (
        "member a: assignment holds partitions [3, 4] of topic id 00000000-0000-0000-0000-000000000063" in issue.problem
    )


def test_a_retriable_error_is_raised_for_a_retry_and_a_moved_coordinator_forgotten() -> None:
    cached = {(CoordinatorType.GROUP, "g"): 2, (CoordinatorType.GROUP, "h"): 3}
    admin = SimpleNamespace(_manager=SimpleNamespace(cluster=SimpleNamespace(_coordinators=cached)))
    (moved, loading, fine) = on_the_wire(
        group("g", [], error=16), group("h", [], error=14, message="loading"), group("i", [])
    )

    def check(raw: Any) -> None:
        raise_if_retriable(admin, raw.group_id, raw.error_code, raw.error_message)

    with pytest.raises(NotCoordinatorError, match="group g"):
        check(moved)
    assert cached == {(CoordinatorType.GROUP, "h"): 3}
    with pytest.raises(CoordinatorLoadInProgressError, match="group h: loading"):
        check(loading)
    check(fine)


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        ({"group_id": "g"}, "classic"),  # ListGroups before v5: Kafka 3.x, ZooKeeper clusters
        ({"group_id": "g", "group_type": ""}, "classic"),
        ({"group_id": "g", "group_type": "consumer"}, "consumer"),
        ({"group_id": "g", "group_type": "Share"}, "share"),
        ({"group_id": "g", "group_type": "future-kind"}, "future-kind"),
    ],
)
def test_group_type_of_a_listed_group(listed: dict[str, object], expected: str) -> None:
    assert group_types.group_type_of(listed) == expected


TYPES = {"a-classic": "classic", "b-consumer": "consumer", "c-share": "share", "d-streams": "streams"}


class TypedAdmin(ScriptedAdmin):
    """ListGroups v5 answers with a type per group; DescribeGroups knows only classic groups
    (Kafka 4.4 answers it for any other with GROUP_ID_NOT_FOUND and state Dead)."""

    def __init__(self, types: dict[str, str]) -> None:
        super().__init__({"a-classic": raw_group("Stable")}, refused="none")
        self.types = types
        self.described_classic: list[list[str]] = []

    def list_groups(self, broker_ids: list[int] | None = None) -> list[dict[str, str]]:
        return [{"group_id": g, "group_type": t} for g, t in self.types.items()]

    def describe_groups(self, ids: list[str]) -> dict[str, dict[str, object]]:
        self.described_classic.append(sorted(ids))
        return super().describe_groups(ids)

    def list_group_offsets(self, specs: dict[str, None]) -> dict[str, dict[object, object]]:
        self.offset_calls.append(sorted(specs))
        return {g: {TopicPartition("orders", 0): OffsetAndMetadata(4, "", -1)} for g in specs}


def test_each_type_is_described_by_its_own_api_and_share_offsets_by_theirs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: dict[str, list[list[str]]] = {"consumer": [], "share": [], "streams": [], "share_offsets": []}

    def describer(group_type: str) -> Any:
        def describe(admin: Any, ids: list[str]) -> Described:
            calls[group_type].append(ids)
            return Described({g: ConsumerGroup(g, "Stable", group_type, "x", group_type=group_type) for g in ids})

        return describe

    def share_offsets(admin: Any, ids: list[str]) -> tuple[dict[str, Any], list[Any]]:
        calls["share_offsets"].append(ids)
        return {g: {("orders", 0): ShareOffset(start_offset=3, lag=2)} for g in ids}, []

    for group_type in ("consumer", "share", "streams"):
        monkeypatch.setitem(group_types.DESCRIBERS, group_type, describer(group_type))  # type: ignore[arg-type]
    monkeypatch.setattr(groups_collector, "share_offsets", share_offsets)
    admin = TypedAdmin(TYPES)

    class Factory:
        bootstrap_servers = "k1:9092"

        def __call__(self) -> TypedAdmin:
            return admin

    snap = GroupCollector("c1", Factory()).collect()  # type: ignore[arg-type]
    assert admin.described_classic == [["a-classic"]]
    assert calls == {
        "consumer": [["b-consumer"]], "share": [["c-share"]], "streams": [["d-streams"]],
        "share_offsets": [["c-share"]],
    }  # fmt: skip
    assert {g.group_id: g.group_type for g in snap.groups} == TYPES
    assert snap.issues == ()
    # a share group commits nothing: OffsetFetch is not asked for it, DescribeShareGroupOffsets is
    assert admin.offset_calls == [["a-classic", "b-consumer", "d-streams"]]
    share_rows = [o for o in snap.offsets if o.group_id == "c-share"]
    assert [(o.committed_offset, o.start_offset, o.lag, o.no_commit) for o in share_rows] == [(None, 3, 2, False)]
    assert {o.group_id for o in snap.offsets} == set(TYPES)  # nobody's offsets are lost
    assert not any(g.state == "Dead" for g in snap.groups)


def test_a_failing_consumer_batch_is_retried_group_by_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(groups_collector, "RETRY_BACKOFF_S", 0.0)

    def describe_consumer(admin: Any, ids: list[str]) -> Described:
        if "b-consumer" in ids:
            raise CoordinatorLoadInProgressError("group b-consumer: loading")
        return Described({g: ConsumerGroup(g, "Stable", "consumer", "range", group_type="consumer") for g in ids})

    monkeypatch.setitem(group_types.DESCRIBERS, "consumer", describe_consumer)
    admin = TypedAdmin({"a-consumer": "consumer", "b-consumer": "consumer"})

    class Factory:
        bootstrap_servers = "k1:9092"

        def __call__(self) -> TypedAdmin:
            return admin

    snap = GroupCollector("c1", Factory()).collect()  # type: ignore[arg-type]
    assert [g.group_id for g in snap.groups] == ["a-consumer"]
    assert [(i.group_id, i.kind) for i in snap.issues] == [("b-consumer", "describe")]


def snapshot_with_types() -> GroupSnapshot:
    moving = GroupMember("m1", None, "c1", "/h", (("orders", 0), ("orders", 1)), member_epoch=5, rack="a",
                         subscribed_topics=("orders",), target_assignment=(("orders", 0),))  # fmt: skip
    settled = GroupMember("m2", None, "c2", "/h", (), member_epoch=5, subscribed_regex="ord.*", target_assignment=())
    classic = GroupMember("k1", None, "k", "/h", (("orders", 1),), subscription=b"\x00\x03")
    return GroupSnapshot(
        cluster="c1", snapshot_id="g1", captured_at=GROUPS_AT, bootstrap_servers="k1:9092",
        groups=(
            ConsumerGroup("new", "Reconciling", "consumer", "uniform", (moving, settled), "consumer", 12, 12),
            ConsumerGroup("old", "Stable", "consumer", "range", (classic,)),
        ),
        offsets=(),
    )  # fmt: skip


def test_tables_carry_the_types_and_leave_what_a_type_cannot_have_null() -> None:
    tables = group_batch(snapshot_with_types()).tables
    cols = ["group_id", "group_type", "group_epoch", "assignment_epoch", "reconciling_member_count"]
    assert tables["consumer_groups"].select(cols).to_pylist() == [
        {"group_id": "new", "group_type": "consumer", "group_epoch": 12, "assignment_epoch": 12,
         "reconciling_member_count": 1},
        {"group_id": "old", "group_type": "classic", "group_epoch": None, "assignment_epoch": None,
         "reconciling_member_count": None},
    ]  # fmt: skip
    m1, m2, k1 = tables["group_members"].to_pylist()
    assert m1["target_partitions"] == [{"topic": "orders", "partition": 0}] and m1["reconciling"] is True
    assert (m1["member_epoch"], m1["rack"], m1["subscribed_topics"], m1["subscription"]) == (5, "a", ["orders"], None)
    assert (m2["reconciling"], m2["subscribed_regex"], m2["target_partitions"]) == (False, "ord.*", [])
    assert k1["subscription"] == b"\x00\x03"
    assert all(k1[c] is None for c in ("member_epoch", "rack", "subscribed_topics", "target_partitions", "reconciling"))
    (commit,) = tables["group_snapshots"].to_pylist()
    assert commit["reconciling_member_count"] == 1
    info = group_summary(snapshot_with_types())
    assert (info["types"], info["reconciling_members"]) == ({"classic": 1, "consumer": 1}, 1)


def test_a_type_without_a_describer_is_an_issue_and_keeps_its_offsets() -> None:
    """A group type a newer broker lists that kafka-ops cannot describe is never asked with another
    type's API nor reported Dead: one issue per group, and its committed offsets still collected."""
    admin = TypedAdmin({"a-classic": "classic", "z-future": "future-kind"})

    class Factory:
        bootstrap_servers = "k1:9092"

        def __call__(self) -> TypedAdmin:
            return admin

    snap = GroupCollector("c1", Factory()).collect()  # type: ignore[arg-type]
    assert admin.described_classic == [["a-classic"]]
    assert [g.group_id for g in snap.groups] == ["a-classic"]
    assert [(i.group_id, i.kind) for i in snap.issues] == [("z-future", "type_not_collected")]
    assert "future-kind groups are not described yet" in snap.issues[0].problem
    assert {o.group_id for o in snap.offsets} == {"a-classic", "z-future"}
