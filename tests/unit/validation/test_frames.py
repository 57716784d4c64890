"""The derived rule columns, row by row (pure pandas, no Great Expectations)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from kafka_ops.lake.schema import GROUP_TABLES, METADATA_TABLES
from kafka_ops.validation import frames
from kafka_ops.validation.suites import OK
from tests.unit.snapshots import AT


def partitions(*rows: dict[str, Any]) -> pa.Table:
    base = {"snapshot_id": "s1", "captured_at": AT, "topic_id": None, "adding_replicas": [],
            "removing_replicas": [], "has_state": True, "leader_epoch": 0, "controller_epoch": 1,
            "leader_recovery_state": None, "state_version": 0, "state_mzxid": 1, "state_mtime": AT}  # fmt: skip
    return pa.Table.from_pylist([{**base, **r} for r in rows], schema=METADATA_TABLES["partitions"])


def brokers(*ids: int) -> pa.Table:
    return pa.Table.from_pylist(
        [{"snapshot_id": "s1", "captured_at": AT, "broker_id": b} for b in ids], schema=METADATA_TABLES["brokers"]
    )


NO_MOVES = METADATA_TABLES["reassignments"].empty_table()


def p(
    topic: str, n: int, replicas: list[int], isr: list[int] | None, leader: int | None, **more: Any
) -> dict[str, Any]:
    return {"topic": topic, "partition": n, "replicas": replicas, "isr": isr, "leader": leader, **more}


def checks(
    table: pa.Table, registered: pa.Table | None = None, moves: pa.Table = NO_MOVES
) -> dict[tuple[str, int], dict[str, str]]:
    frame = frames.snapshot_partitions(table, registered if registered is not None else brokers(1, 2, 3), moves)
    names = [c for c in frame.columns if c not in {"topic", "partition", "leader", "replicas", "isr", "has_state"}]
    return {(r["topic"], r["partition"]): {n: r[n] for n in names if r[n] != OK} for r in frame.to_dict("records")}


def test_a_healthy_partition_passes_every_rule() -> None:
    assert checks(partitions(p("t", 0, [1, 2, 3], [1, 2, 3], 1))) == {("t", 0): {}}


def test_isr_members_outside_the_replicas_are_named() -> None:
    got = checks(partitions(p("t", 0, [1, 2], [1, 5, 4], 1)))
    assert got[("t", 0)] == {
        "isr_subset_of_replicas": "ISR [1, 5, 4] has broker 4, 5, which is not among the replicas [1, 2]"
    }


def test_a_leaderless_partition_needs_no_leader_in_its_isr() -> None:
    assert checks(partitions(p("t", 0, [3], [3], -1)), brokers(1, 2)) == {("t", 0): {}}  # offline: reported


def test_duplicates_in_replicas_and_isr() -> None:
    got = checks(partitions(p("t", 0, [1, 2, 1], [2, 2], 2)))
    assert got[("t", 0)] == {
        "no_duplicate_replicas": "replicas [1, 2, 1] name broker 1 more than once; "
        "ISR [2, 2] name broker 2 more than once"
    }


def test_the_odd_replication_factor_out_fails_and_ties_favour_the_higher() -> None:
    got = checks(partitions(p("t", 0, [1, 2], [1, 2], 1), p("t", 1, [1], [1], 1), p("u", 0, [1], [1], 1),
                            p("u", 1, [1, 2], [1, 2], 1)))  # fmt: skip
    assert got[("t", 0)] == {} and got[("u", 1)] == {}
    assert got[("t", 1)] == {
        "one_replication_factor_per_topic": "1 replica, while 1 of the 2 partitions of t have 2 "
        "(no reassignment in flight)"
    }


def test_a_topic_with_a_reassignment_request_is_exempt_from_the_replication_factor_rule() -> None:
    moves = pa.Table.from_pylist(
        [{"snapshot_id": "s1", "captured_at": AT, "topic": "t", "partition": 1, "replicas": [1],
          "target_replicas": [1, 2], "adding_replicas": [], "removing_replicas": [], "requested_in_znode": True}],
        schema=METADATA_TABLES["reassignments"],
    )  # fmt: skip
    table = partitions(p("t", 0, [1, 2], [1, 2], 1), p("t", 1, [1], [1], 1))
    assert checks(table, moves=moves) == {("t", 0): {}, ("t", 1): {}}


def test_unregistered_brokers_pass_when_their_absence_shows_in_the_state() -> None:
    table = partitions(
        p("t", 0, [1, 2, 3], [1, 2], 1),  # out of the ISR: under-replicated, reported
        p("t", 1, [3, 1, 2], [3], -1),  # no leader: offline, reported
        p("t", 2, [3, 1, 2], [3, 1], 3),  # leader unregistered: offline, reported
        p("t", 3, [1, 2, 3], [1, 2, 3], 1),  # in sync under live leader 1: reported by nobody
        p("t", 4, [1, 2, 3], None, None, has_state=False),  # no state: nothing to judge
    )
    got = checks(table, brokers(1, 2))
    assert {k: v for k, v in got.items() if v} == {
        ("t", 3): {
            "replicas_registered_or_reported": "broker 3 is not registered, "
            "yet in the ISR [1, 2, 3] under live leader 1"
        }
    }


def test_group_offsets_flagged_above_end_have_no_bound() -> None:
    rows = [
        {
            "group_id": "g",
            "topic": "t",
            "partition": 0,
            "committed_offset": 5,
            "end_offset": 3,
            "committed_above_end": True,
        },
        {
            "group_id": "g",
            "topic": "t",
            "partition": 1,
            "committed_offset": 5,
            "end_offset": 9,
            "committed_above_end": False,
        },
        {
            "group_id": "g",
            "topic": "t",
            "partition": 2,
            "committed_offset": None,
            "end_offset": 9,
            "committed_above_end": False,
        },
    ]
    table = pa.Table.from_pylist(
        [{"snapshot_id": "g1", "captured_at": AT, **r} for r in rows], schema=GROUP_TABLES["group_offsets"]
    )
    frame = frames.group_offsets(table)
    assert frame["end_offset_unless_flagged"].tolist()[1:] == [9, 9]
    assert frame["end_offset_unless_flagged"].isna().tolist() == [True, False, False]
