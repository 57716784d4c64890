from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from kafka_ops.detectors.assignor_skew import DETECTOR
from tests.unit.detectors.group_frames import (
    AT,
    GROUPS,
    MEMBERS,
    OFFSETS,
    Row,
    context,
    expect,
    frame,
    group,
    member,
    offset,
)


def detect(
    spark: SparkSession, groups: list[Row], members: list[Row], offsets: list[Row]
) -> tuple[DataFrame, DataFrame]:
    inputs = {
        "consumer_groups": frame(spark, GROUPS, groups),
        "group_members": frame(spark, MEMBERS, members),
        "group_offsets": frame(spark, OFFSETS, offsets),
    }
    found = DETECTOR.detect(inputs, context())
    return found["assignor_skew_groups"], found["assignor_skew_members"]


def lags(group_id: str, assigned: dict[tuple[str, int], int]) -> list[Row]:
    """group_offsets rows with the given lags (committed offset 100)."""
    return [offset(group_id, t, p, 100, 100 + lag) for (t, p), lag in assigned.items()]


def test_textbook_range_skew(spark: SparkSession) -> None:
    # 3 members, 3 topics of 4 partitions: per topic the first member gets 2, the others 1
    ranged = {
        "c-1": [(t, p) for t in "abc" for p in (0, 1)],
        "c-2": [(t, 2) for t in "abc"],
        "c-3": [(t, 3) for t in "abc"],
    }
    members = [member("g", m, tps, client=m, host=f"/10.0.0.{i}") for i, (m, tps) in enumerate(ranged.items(), 1)]
    offsets = lags("g", {(t, p): 10 for t in "abc" for p in range(4)})
    groups, per_member = detect(spark, [group("g", "Stable", "range", 3)], members, offsets)
    expect(spark, groups, [
        ("m0", "g", "range", 3, 12, 3, 6, 4.0, 3, 30, True, True, "warning",
         "range assignor's signature: the extra partitions of 3 unevenly split topics pile onto the same members: "
         "3-6 partitions per member"),
    ])  # fmt: skip
    expect(spark, per_member, [
        ("m0", "g", "c-1", "c-1", "/10.0.0.1", 6, 60, 0.5, 0.5, 1.0, "warning"),
        ("m0", "g", "c-2", "c-2", "/10.0.0.2", 3, 30, 0.25, 0.25, 1.0, "ok"),
        ("m0", "g", "c-3", "c-3", "/10.0.0.3", 3, 30, 0.25, 0.25, 1.0, "ok"),
    ])  # fmt: skip


def test_balanced_round_robin(spark: SparkSession) -> None:
    # the same 12 partitions dealt in a cycle: 4 each; topic b gives its extra to the second member
    dealt = {
        "c-1": [("a", 0), ("a", 3), ("b", 2), ("c", 1)],
        "c-2": [("a", 1), ("b", 0), ("b", 3), ("c", 2)],
        "c-3": [("a", 2), ("b", 1), ("c", 0), ("c", 3)],
    }
    members = [member("g", m, tps) for m, tps in dealt.items()]
    offsets = lags("g", {(t, p): 10 for t in "abc" for p in range(4)})
    groups, per_member = detect(spark, [group("g", "Stable", "roundrobin", 3)], members, offsets)
    expect(spark, groups, [
        ("m0", "g", "roundrobin", 3, 12, 4, 4, 4.0, 0, 0, False, False, "ok", "balanced: 4-4 partitions per member"),
    ])  # fmt: skip
    expect(spark, per_member.select("member_id", "partition_share", "lag_share", "severity"), [
        ("c-1", 1 / 3, 1 / 3, "ok"), ("c-2", 1 / 3, 1 / 3, "ok"), ("c-3", 1 / 3, 1 / 3, "ok"),
    ])  # fmt: skip


def test_unequal_subscriptions(spark: SparkSession) -> None:
    # c-1 subscribes to a and b, c-2 to a only: round-robin deals b to c-1 alone
    members = [member("g", "c-1", [("a", 0), ("b", 0), ("b", 1), ("b", 2), ("b", 3)]), member("g", "c-2", [("a", 1)])]
    groups, per_member = detect(spark, [group("g", "Stable", "roundrobin", 2)], members, [])
    expect(spark, groups, [
        ("m0", "g", "roundrobin", 2, 6, 1, 5, 3.0, 4, 0, False, True, "warning",
         "members hold different topics (unequal subscriptions?): 1-5 partitions per member"),
    ])  # fmt: skip
    expect(spark, per_member.select("member_id", "partitions", "lag_share", "lag_to_partition_ratio", "severity"), [
        ("c-1", 5, None, None, "warning"), ("c-2", 1, None, None, "ok"),
    ])  # fmt: skip


def test_range_orders_static_members_first(spark: SparkSession) -> None:
    # static b-2 sorts before dynamic a-1, so range gives it the extra partition of x and of y
    members = [
        member("g", "a-1", [("x", 2), ("y", 2)]),
        member("g", "b-2", [("x", 0), ("x", 1), ("y", 0), ("y", 1)], instance="static-1"),
    ]
    groups, _ = detect(spark, [group("g", "Stable", "range", 2)], members, [])
    expect(spark, groups.select("spread", "range_signature", "skewed"), [(2, True, True)])
    # the same counts the other way round are not what range deals
    swapped = [
        member("g", "a-1", [("x", 0), ("x", 1), ("y", 0), ("y", 1)]),
        member("g", "b-2", [("x", 2), ("y", 2)], instance="static-1"),
    ]
    groups, _ = detect(spark, [group("g", "Stable", "range", 2)], swapped, [])
    expect(spark, groups.select("spread", "range_signature", "skewed"), [(2, False, True)])


def test_lag_shares(spark: SparkSession) -> None:
    members = [member("g", "c-1", [("a", 0), ("a", 1)]), member("g", "c-2", [("a", 2), ("a", 3)])]
    # a-1's lag is unknown (end offset not read): it counts as 0
    offsets = [*lags("g", {("a", 0): 0, ("a", 2): 30, ("a", 3): 10}), offset("g", "a", 1, 100, None)]
    quiet = [member("q", "c-1", [("a", 0)]), member("q", "c-2", [("a", 1)])]
    found_groups, per_member = detect(
        spark, [group("g", "Stable", "range", 2), group("q", "Stable", "range", 2)], members + quiet,
        offsets + lags("q", {("a", 0): 0, ("a", 1): 0}),
    )  # fmt: skip
    expect(spark, found_groups.select("group_id", "lag_spread", "severity"), [("g", 40, "ok"), ("q", 0, "ok")])
    expect(spark, per_member.select("group_id", "member_id", "lag", "partition_share", "lag_share",
                                    "lag_to_partition_ratio"), [
        ("g", "c-1", 0, 0.5, 0.0, 0.0),
        ("g", "c-2", 40, 0.5, 1.0, 2.0),
        ("q", "c-1", 0, 0.5, None, None),
        ("q", "c-2", 0, 0.5, None, None),
    ])  # fmt: skip


def test_member_without_partitions(spark: SparkSession) -> None:
    # more members than partitions: one idles
    members = [member("g", "c-1", [("a", 0)]), member("g", "c-2", [("a", 1)]), member("g", "c-3", [])]
    found_groups, per_member = detect(spark, [group("g", "Stable", "range", 3)], members, [])
    expect(spark, found_groups.select("partitions", "min_partitions", "max_partitions", "spread", "cause"), [
        (2, 0, 1, 1, "balanced: 0-1 partitions per member"),
    ])  # fmt: skip
    expect(spark, per_member.select("member_id", "partitions", "partition_share"), [
        ("c-1", 1, 0.5), ("c-2", 1, 0.5), ("c-3", 0, 0.0),
    ])  # fmt: skip


def test_groups_skipped(spark: SparkSession) -> None:
    two = [("a", 0), ("a", 1), ("a", 2)]
    groups = [
        group("empty", "Empty", "", 0),
        group("single", "Stable", "range", 1),
        group("moving", "PreparingRebalance", "range", 2),
        ("m0", AT, "connect", "Stable", "connect", "sessioned", 2, "classic"),
        group("old", "Stable", "range", 2, minutes=10),  # Stable only in an older collection
    ]
    members = [
        member("single", "c-1", two),
        member("moving", "c-1", []), member("moving", "c-2", []),
        member("connect", "w-1", []), member("connect", "w-2", []),
        member("old", "c-1", two), member("old", "c-2", []),
    ]  # fmt: skip
    found_groups, per_member = detect(spark, groups, members, [])
    assert found_groups.count() == 0 and per_member.count() == 0


def test_empty_input(spark: SparkSession) -> None:
    found_groups, per_member = detect(spark, [], [], [])
    assert found_groups.count() == 0 and per_member.count() == 0
    for found in (found_groups, per_member):
        assert {"snapshot_id", "severity"} <= set(found.columns)
        assert not {"cluster", "dt"} & set(found.columns)


def test_streams_and_share_groups_are_measured_too(spark: SparkSession) -> None:
    # the textbook range layout in a streams group (active tasks' input partitions) and in a share group:
    # both skewed; only the streams group, whose partitions are dealt, can carry range's signature
    ranged = {
        "c-1": [(t, p) for t in "abc" for p in (0, 1)],
        "c-2": [(t, 2) for t in "abc"],
        "c-3": [(t, 3) for t in "abc"],
    }
    groups = [
        ("m0", AT, "app", "Stable", "streams", "sticky", 3, "streams"),
        ("m0", AT, "shared", "Stable", "share", "simple", 3, "share"),
    ]
    members = [member(g, m, tps) for g in ("app", "shared") for m, tps in ranged.items()]
    found, _ = detect(spark, groups, members, [])
    expect(spark, found.select("group_id", "assignor", "spread", "range_signature", "skewed"), [
        ("app", "sticky", 3, True, True),
        ("shared", "simple", 3, False, True),
    ])  # fmt: skip
