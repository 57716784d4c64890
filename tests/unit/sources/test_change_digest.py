"""The change watch's parts: digests equal exactly when nothing the controller notices changed."""

from __future__ import annotations

import json

from kafka_ops.model.cluster import Quorum, QuorumReplica, ZnodeStat
from kafka_ops.sources import change_digest as parts
from kafka_ops.sources.change_digest import UNKNOWN, changed_parts, merged, partition_digest

ROWS = [
    ("orders", 0, 1, (1, 2, 3), ()),
    ("orders", 1, 2, (2, 3, 1), ()),
    ("payments", 0, 3, (3, 1), None),  # a broker that does not report ELR
]


def stat(czxid: int = 100, version: int = 0) -> ZnodeStat:
    return ZnodeStat(version=version, czxid=czxid, mzxid=czxid, ctime_ms=0, mtime_ms=0)


def test_partition_digest_ignores_order_and_counts_partitions() -> None:
    assert partition_digest(ROWS) == partition_digest(reversed(ROWS))
    assert partition_digest(ROWS).startswith("3:")
    assert partition_digest([]) == partition_digest([])


def test_partition_digest_changes_with_leader_isr_elr_and_partitions() -> None:
    base = partition_digest(ROWS)
    variants = [
        [("orders", 0, 2, (1, 2, 3), ()), *ROWS[1:]],  # leader moved
        [("orders", 0, 1, (1, 2), ()), *ROWS[1:]],  # ISR shrank
        [("orders", 0, 1, (1, 3, 2), ()), *ROWS[1:]],  # ISR order (Kafka keeps it as the controller wrote it)
        [("orders", 0, 1, (1, 2, 3), (2,)), *ROWS[1:]],  # ELR
        [*ROWS[:2], ("payments", 0, 3, (3, 1), ())],  # ELR now reported, empty: not the same as unknown
        ROWS[:2],  # a partition gone
        [*ROWS, ("payments", 1, 1, (1,), None)],  # a partition added
    ]
    digests = [partition_digest(v) for v in variants]
    assert base not in digests
    assert len(set(digests)) == len(digests)


def test_first_view_is_the_baseline() -> None:
    assert changed_parts(None, {"brokers": (1, 2, 3)}) == []


def test_changed_parts_names_what_changed_and_skips_unknown() -> None:
    before = {"brokers": (1, 2, 3), "controller": (1, 7), "partitions": "3:ab"}
    after = {"brokers": (1, 2), "controller": (1, 7), "partitions": UNKNOWN}
    assert changed_parts(before, after) == ["brokers"]
    assert changed_parts(after, before) == ["brokers"]  # unknown before: no change either way
    assert changed_parts(before, {**before, "reassignment": (("orders", 0),)}) == []  # a part first seen


def test_merged_keeps_the_previous_value_of_an_unknown_part() -> None:
    before = {"partitions": "3:ab", "brokers": (1, 2, 3)}
    assert merged(before, {"partitions": UNKNOWN, "brokers": (1, 2)}) == {"partitions": "3:ab", "brokers": (1, 2)}
    assert merged(None, {"partitions": UNKNOWN}) == {"partitions": UNKNOWN}


def test_broker_and_quorum_parts() -> None:
    assert parts.broker_parts([(3, False), (1, True), (2, False)]) == {
        "brokers": (1, 2, 3),
        "fenced_brokers": (1,),
    }
    quorum = Quorum(
        leader_id=102,
        leader_epoch=4,
        high_watermark=900,
        replicas=(
            QuorumReplica(103, "voter", None, 900, None, None),
            QuorumReplica(101, "voter", None, 880, None, None),
            QuorumReplica(1, "observer", None, 900, None, None),
        ),
    )
    assert parts.quorum_parts(quorum) == {"controller": (102, 4), "quorum_voters": (101, 103)}
    moved_on = Quorum(102, 4, 950, tuple(QuorumReplica(r.replica_id, r.role, None, 950, 1, 1) for r in quorum.replicas))
    assert parts.quorum_parts(moved_on) == parts.quorum_parts(quorum)  # log offsets are not a change


def test_broker_ids_part_reports_a_child_that_is_no_broker_id() -> None:
    value, issues = parts.broker_ids_part(["3", "1", "not-a-broker", "2"])
    assert value == (1, 2, 3)
    assert [(i.path, i.kind) for i in issues] == [("/brokers/ids/not-a-broker", "parse")]


def test_controller_part_is_broker_and_election() -> None:
    data = json.dumps({"version": 2, "brokerid": 2, "timestamp": "1700000000000", "kraftControllerEpoch": -1})
    assert parts.controller_part(data.encode(), stat(czxid=41)) == ((2, 41), [])
    assert parts.controller_part(data.encode(), stat(czxid=57))[0] != (2, 41)  # the same broker elected again
    assert parts.controller_part(None, None) == (None, [])  # no controller


def test_unparseable_controller_is_an_issue_and_still_a_change() -> None:
    value, issues = parts.controller_part(b"{not json", stat(czxid=60))
    assert value == ("unparseable", 60)
    assert len(issues) == 1 and issues[0].path == "/controller"


def test_reassignment_part() -> None:
    data = {"version": 1, "partitions": [{"topic": "t", "partition": 1, "replicas": [1, 2]},
                                         {"topic": "t", "partition": 0, "replicas": [2, 3]}]}  # fmt: skip
    assert parts.reassignment_part(json.dumps(data).encode(), stat()) == ((("t", 0), ("t", 1)), [])
    assert parts.reassignment_part(None, None) == (None, [])
    value, issues = parts.reassignment_part(b'{"version": 1, "partitions": "all"}', stat(version=3))
    assert value == ("unparseable", 3)
    assert issues[0].path == "/admin/reassign_partitions"


def test_notifications_part() -> None:
    assert parts.notifications_part(["isr_change_0000000002", "isr_change_0000000001"]) == (
        "isr_change_0000000001",
        "isr_change_0000000002",
    )
    assert parts.notifications_part(None) == ()


def test_groups_that_lost_their_members_are_the_new_ones_without() -> None:
    before = {parts.GROUPS_WITHOUT_MEMBERS: parts.groups_without_members_part(["idle"])}
    after = {parts.GROUPS_WITHOUT_MEMBERS: parts.groups_without_members_part(["idle", "b", "b"])}
    assert after[parts.GROUPS_WITHOUT_MEMBERS] == ("b", "idle")
    assert parts.groups_that_lost_members(before, after) == ["b"]
    assert parts.groups_that_lost_members(after, before) == []  # b got a member back
    unknown = {parts.GROUPS_WITHOUT_MEMBERS: parts.UNKNOWN}
    assert parts.groups_that_lost_members(unknown, after) == []
    assert parts.groups_that_lost_members(None, after) == []  # the first reading is the baseline
