from __future__ import annotations

from datetime import timedelta

from pyspark.sql import DataFrame, SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.isr_events import (
    DETECTOR,
    detect_flapping,
    detect_isr_events,
    detect_under_replicated,
)
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, ISR_CHANGES, PARTITIONS, frame, partition, stateless, with_runs

T = [AT + timedelta(minutes=5 * i) for i in range(4)]
S = ["s1", "s2", "s3", "s4"]


def history(spark: SparkSession, *partitions: tuple[object, ...]) -> DataFrame:
    return frame(spark, PARTITIONS, list(partitions))


def at(i: int) -> dict[str, object]:
    return {"snapshot": S[i], "at": T[i]}


def no_notifications(spark: SparkSession) -> DataFrame:
    return frame(spark, ISR_CHANGES, [])


def test_events_shrink_and_expand_between_consecutive_snapshots(spark: SparkSession) -> None:
    parts = history(spark,
        partition("a", 0, [1, 2, 3], [1, 2, 3], version=0, **at(0)),
        partition("a", 0, [1, 2, 3], [1, 3], version=1, **at(1)),        # 2 left
        partition("a", 0, [1, 2, 3], [1, 3], version=1, **at(2)),        # unchanged
        partition("a", 0, [1, 2, 3], [3, 2], version=3, **at(3)),        # 1 left, 2 back, leader 1 → 3
        *(partition("a", 1, [1, 2], [1, 2], **at(i)) for i in range(4)),  # stable: no events
        partition("b", 0, [1, 2], [1, 2], **at(0)),
        stateless("b", 0, [1, 2], snapshot="s2", at=T[1]),              # no state: skipped over
        partition("b", 0, [1, 2], [2], version=1, **at(2)),              # compared with s1
    )  # fmt: skip
    result = detect_isr_events(parts, "s4")
    expected = spark.createDataFrame(
        [
            ("s4", "s2", "s1", T[1], T[0], "a", 0, "shrink", 2, [1, 2, 3], [1, 3], 1, 1, "warning"),
            ("s4", "s4", "s3", T[3], T[2], "a", 0, "shrink", 1, [1, 3], [3, 2], 1, 3, "warning"),
            ("s4", "s4", "s3", T[3], T[2], "a", 0, "expand", 2, [1, 3], [3, 2], 1, 3, "info"),
            ("s4", "s3", "s1", T[2], T[0], "b", 0, "shrink", 1, [1, 2], [2], 1, 2, "warning"),
        ],
        result.schema,
    )
    assert result.columns == [
        "snapshot_id", "event_snapshot_id", "previous_snapshot_id", "observed_at", "previous_observed_at",
        "topic", "partition", "event", "replica", "isr_before", "isr_after", "leader_before",
        "leader_after", "severity",
    ]  # fmt: skip
    assertDataFrameEqual(result, expected)


def test_events_never_pair_a_snapshot_with_a_later_one(spark: SparkSession) -> None:
    # the state znode was recreated (topic re-created) with exactly the state seen in s1: the two
    # incarnations cannot be told apart, so their boundaries are dropped rather than misordered
    parts = history(spark,
        partition("r", 0, [1, 2], [1, 2], version=0, **at(0)),
        partition("r", 0, [1, 2], [1], version=1, **at(1)),
        partition("r", 0, [1, 2], [1, 2], version=0, **at(3)),
    )  # fmt: skip
    assert detect_isr_events(parts, "s4").count() == 0


def test_under_replicated_streaks(spark: SparkSession) -> None:
    rf3 = [1, 2, 3]
    parts = history(spark,
        # under since s2 through three different ISRs
        partition("u", 0, rf3, rf3, version=0, **at(0)),
        partition("u", 0, rf3, [1, 2], version=1, **at(1)),
        partition("u", 0, rf3, [1], version=2, **at(2)),
        partition("u", 0, rf3, [1, 2], version=3, **at(3)),
        # under in every snapshot: may be older than the window
        *(partition("u", 1, rf3, [2, 1], leader=2, version=4, **at(i)) for i in range(4)),
        # under, healthy, under again: the current streak starts at s3
        partition("u", 2, rf3, [1], version=1, **at(0)),
        partition("u", 2, rf3, rf3, version=2, **at(1)),
        partition("u", 2, rf3, [1], version=3, **at(2)),
        partition("u", 2, rf3, [1], version=3, **at(3)),
        # a reassignment still adding 4: not under-replicated
        *(partition("u", 3, [1, 2, 4], [1, 2], adding=[4], **at(i)) for i in range(4)),
        # healed in the latest snapshot
        partition("u", 4, rf3, [1], **at(0)),
        partition("u", 4, rf3, rf3, version=1, **at(3)),
        # created after the window started
        partition("u", 5, rf3, [3], **at(2)),
        partition("u", 5, rf3, [3], **at(3)),
        # snapshots without a state neither break nor extend a streak
        partition("u", 6, rf3, [1], **at(0)),
        stateless("u", 6, rf3, snapshot="s2", at=T[1]),
        partition("u", 6, rf3, [1], **at(2)),
        partition("u", 6, rf3, [1], **at(3)),
        # no state in the latest snapshot
        partition("u", 7, rf3, [1], **at(0)),
        stateless("u", 7, rf3, snapshot="s4", at=T[3]),
    )  # fmt: skip
    result = detect_under_replicated(parts, "s4")
    expected = spark.createDataFrame(
        [
            ("s4", "u", 0, rf3, [1, 2], [3], T[1], 600.0, False, "warning"),
            ("s4", "u", 1, rf3, [2, 1], [3], T[0], 900.0, True, "warning"),
            ("s4", "u", 2, rf3, [1], [2, 3], T[2], 300.0, False, "warning"),
            ("s4", "u", 5, rf3, [3], [1, 2], T[2], 300.0, False, "warning"),
            ("s4", "u", 6, rf3, [1], [2, 3], T[0], 900.0, True, "warning"),
        ],
        result.schema,
    )
    assert result.columns == [
        "snapshot_id", "topic", "partition", "replicas", "isr", "missing", "under_replicated_since",
        "duration_seconds", "since_window_start", "severity",
    ]  # fmt: skip
    assertDataFrameEqual(result, expected)


def test_flapping_counts_epoch_rises_no_snapshot_saw(spark: SparkSession) -> None:
    parts = history(spark,
        # +2 with nothing visible (hidden 2: one flap), +1 shrink (seen), +3 with a join and a
        # leader move (two writes seen, hidden 1: a leader-epoch bump, no flap)
        partition("f", 0, [1, 2], [1, 2], version=5, **at(0)),
        partition("f", 0, [1, 2], [1, 2], version=7, **at(1)),
        partition("f", 0, [1, 2], [1], version=8, **at(2)),
        partition("f", 0, [1, 2], [2, 1], leader=2, version=11, **at(3)),
        # every change seen: a leader move, then a shrink
        partition("f", 1, [1, 2], [1, 2], leader=1, version=1, **at(0)),
        partition("f", 1, [1, 2], [1, 2], leader=2, version=2, **at(1)),
        partition("f", 1, [1, 2], [2], leader=2, version=3, **at(2)),
        # the state znode recreated (version down): that pair is ignored, then a hidden +1 (no flap)
        partition("f", 2, [1, 2], [1, 2], version=9, **at(0)),
        partition("f", 2, [1, 2], [1, 2], version=0, **at(1)),
        partition("f", 2, [1, 2], [1, 2], version=1, **at(2)),
    )  # fmt: skip
    notifications = frame(spark, ISR_CHANGES, [
        ("s1", T[0], "isr_change_0000000001", "f", 0),
        ("s2", T[1], "isr_change_0000000001", "f", 0),  # the same znode seen twice
        ("s2", T[1], "isr_change_0000000002", "f", 0),
        ("s2", T[1], "isr_change_0000000002", "f", 1),
    ])  # fmt: skip
    result = detect_flapping(parts, notifications, "s4")
    expected = spark.createDataFrame(
        [
            ("s4", "f", 0, 3, 1, 1, 6, 0, 2, T[1], T[1], "warning"),
        ],
        result.schema,
    )
    assert result.columns == [
        "snapshot_id", "topic", "partition", "hidden_changes", "flaps", "intervals_with_flaps",
        "version_delta", "reassignment_changes", "notified_changes", "first_seen", "last_seen", "severity",
    ]  # fmt: skip
    assertDataFrameEqual(result, expected)


def test_a_single_snapshot_has_no_events(spark: SparkSession) -> None:
    parts = history(spark, partition("a", 0, [1, 2], [1], **at(0)), partition("a", 1, [1, 2], [1, 2], **at(0)))
    context = Context("c", "s1", T[0], Thresholds())
    found = DETECTOR.detect(
        with_runs({"partitions": parts, "isr_change_notifications": no_notifications(spark)}), context
    )
    assert found["isr_events"].count() == 0
    assert found["isr_flapping"].count() == 0
    expected = spark.createDataFrame(
        [("s1", "a", 0, [1, 2], [1], [2], T[0], 0.0, True, "warning")], found["isr_under_replicated"].schema
    )
    assertDataFrameEqual(found["isr_under_replicated"], expected)


def test_empty_inputs_give_empty_findings(spark: SparkSession) -> None:
    context = Context("c", "s1", T[0], Thresholds())
    inputs = {"partitions": history(spark), "isr_change_notifications": no_notifications(spark)}
    found = DETECTOR.detect(with_runs(inputs), context)
    assert set(found) == set(DETECTOR.outputs)
    for table in found.values():
        assert table.count() == 0
        assert {"snapshot_id", "severity"} <= set(table.columns)
        assert not {"cluster", "dt"} & set(table.columns)


def test_a_broker_catching_up_on_several_partitions_is_not_flapping(spark: SparkSession) -> None:
    """[1] -> [1, 2, 3] takes two writes (followers join one at a time): nothing hidden."""
    parts = history(spark,
        partition("g", 0, [1, 2, 3], [1], version=4, **at(0)),
        partition("g", 0, [1, 2, 3], [1, 2, 3], version=6, **at(1)),
    )  # fmt: skip
    assert detect_flapping(parts, no_notifications(spark), "s2").count() == 0


def test_reassignment_epoch_bumps_are_not_flapping(spark: SparkSession) -> None:
    """Each phase of a reassignment bumps the partition epoch with no visible ISR change."""
    parts = history(spark,
        partition("h", 0, [1, 2], [1, 2], version=2, **at(0)),
        partition("h", 0, [3, 1, 2], [1, 2], version=4, adding=[3], removing=[2], **at(1)),
        partition("h", 0, [3, 1], [1, 3], version=6, **at(2)),
    )  # fmt: skip
    assert detect_flapping(parts, no_notifications(spark), "s3").count() == 0


# The writes Kafka 3.9's controller made on the sandbox for reassignments that completed between
# two snapshots (state znode version and leader epoch before -> after, see `_reassignment_writes`).
COMPLETED = [
    # [1, 2] -> [3, 1]: phase A, 3 joins, phase B, 2 removed: 4 writes, 3 of them leader-epoch bumps
    ("move", [1, 2], [1, 2], 1, [3, 1], [1, 3], 1, 4, 3),
    # [1, 2] -> [1, 2, 3]: phase A, 3 joins, phase B
    ("grow", [1, 2], [1, 2], 1, [1, 2, 3], [1, 2, 3], 1, 3, 2),
    # [1, 2, 3] -> [1]: TRS inside the ISR, no phase A; phase B, 2 and 3 removed one at a time
    ("shrink", [1, 2, 3], [1, 2, 3], 1, [1], [1], 1, 3, 3),
    # [1, 2, 3] -> [2, 3]: phase B moves the leader off 1, then removes 1
    ("leader_out", [1, 2, 3], [1, 2, 3], 1, [2, 3], [2, 3], 2, 2, 2),
    # [1, 2, 3] -> [3, 2, 1]: a reorder is a reassignment too: phase B's bump only
    ("reorder", [1, 2, 3], [1, 2, 3], 1, [3, 2, 1], [1, 2, 3], 1, 1, 1),
]


def reassigned(
    spark: SparkSession, case: tuple[str, list[int], list[int], int, list[int], list[int], int, int, int],
    extra_writes: int = 0, extra_bumps: int = 0,
) -> DataFrame:  # fmt: skip
    topic, rs_before, isr_before, leader_before, rs_after, isr_after, leader_after, writes, bumps = case
    return history(spark,
        partition(topic, 0, rs_before, isr_before, leader_before, version=7, epoch=4, **at(0)),
        partition(topic, 0, rs_after, isr_after, leader_after, version=7 + writes + extra_writes,
                  epoch=4 + bumps + extra_bumps, **at(1)),
    )  # fmt: skip


def test_a_reassignment_completed_between_snapshots_is_not_flapping(spark: SparkSession) -> None:
    for case in COMPLETED:
        found = detect_flapping(reassigned(spark, case), no_notifications(spark), "s2")
        assert found.count() == 0, case[0]


def test_a_true_flap_on_a_reassigned_partition_is_still_counted(spark: SparkSession) -> None:
    """The leader drops a follower and takes it back (two writes, no leader-epoch bump) during a move."""
    move = COMPLETED[0]
    found = detect_flapping(reassigned(spark, move, extra_writes=2), no_notifications(spark), "s2").collect()
    assert [(r["topic"], r["flaps"], r["hidden_changes"], r["version_delta"], r["reassignment_changes"])
            for r in found] == [("move", 1, 2, 6, 3)]  # fmt: skip


def test_a_broker_bounce_on_a_reassigned_partition_is_still_counted(spark: SparkSession) -> None:
    """The controller removes a dead follower (a leader-epoch bump) that rejoins later: one flap,
    although the leader epoch rose more than the reassignment needs."""
    grow = COMPLETED[1]
    found = detect_flapping(reassigned(spark, grow, 2, 1), no_notifications(spark), "s2").collect()
    assert [(r["flaps"], r["hidden_changes"], r["reassignment_changes"]) for r in found] == [(1, 2, 2)]


def test_reassignment_credit_is_capped_by_the_leader_epoch(spark: SparkSession) -> None:
    """2 rejoined the ISR before [1, 2] was reordered to [2, 1]: the target was inside the ISR, so
    no phase A and the leader epoch rose by 1 (phase B), not 2; a flap in the interval stays seen."""
    parts = history(spark,
        # 2 joins (1 write), phase B (1, the only leader-epoch bump), a flap (2)
        partition("t", 0, [1, 2], [1], 1, version=7, epoch=4, **at(0)),
        partition("t", 0, [2, 1], [1, 2], 1, version=7 + 1 + 1 + 2, epoch=4 + 1, **at(1)),
    )  # fmt: skip
    (found,) = detect_flapping(parts, no_notifications(spark), "s2").collect()
    assert (found["flaps"], found["hidden_changes"], found["reassignment_changes"]) == (1, 2, 1)


def test_an_assignment_missing_on_one_side_is_no_reassignment(spark: SparkSession) -> None:
    """The topic znode lacked the partition in s1: nothing is credited to a move, and the leader's
    shrink (no leader-epoch bump) still counts as the write it took: +2 leaves one unseen write."""
    before = partition("z", 0, [1, 2], [1, 2], version=0, **at(0))
    parts = history(spark,
        (*before[:4], None, *before[5:]),
        partition("z", 0, [1, 2], [1], version=2, **at(1)),
    )  # fmt: skip
    assert detect_flapping(parts, no_notifications(spark), "s2").count() == 0
