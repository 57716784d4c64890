"""The group detectors on consumer-protocol groups (KIP-848, `group_type` consumer): skew reads the
members' current assignments as for a classic group; the client-side what-if skips them."""

from __future__ import annotations

from pyspark.sql import SparkSession

from kafka_ops.detectors.assignor_skew import DETECTOR as SKEW
from kafka_ops.detectors.assignor_whatif import groups_today
from kafka_ops.detectors.lag_status import DETECTOR as LAG_STATUS
from tests.unit.detectors.group_frames import (
    COMMITS,
    GROUPS,
    MEMBERS,
    OFFSETS,
    QUOTAS,
    SNAPSHOTS,
    context,
    frame,
    group,
    member,
    sid,
)
from tests.unit.detectors.test_lag_status import STOPPED, history

WHATIF_MEMBERS = MEMBERS + ", subscription binary"


def test_skew_of_a_consumer_protocol_group(spark: SparkSession) -> None:
    members = [member("new", "m-1", [("a", 0), ("a", 1), ("a", 2)]), member("new", "m-2", [("a", 3)])]
    inputs = {
        "consumer_groups": frame(spark, GROUPS, [group("new", "Stable", "uniform", 2, group_type="consumer")]),
        "group_members": frame(spark, MEMBERS, members),
        "group_offsets": frame(spark, OFFSETS, []),
    }
    found = SKEW.detect(inputs, context())["assignor_skew_groups"]
    (row,) = found.select("group_id", "assignor", "min_partitions", "max_partitions", "spread").collect()
    assert tuple(row) == ("new", "uniform", 1, 3, 2)


def test_the_client_side_whatif_skips_consumer_protocol_groups(spark: SparkSession) -> None:
    groups = [
        group("classic", "Stable", "range", 1),
        group("new", "Stable", "uniform", 1, group_type="consumer"),
        # collected before group types were: null type, a classic group
        (sid(0), *group("older", "Stable", "range", 1)[1:-1], None),
    ]
    members = [(*member(g, f"{g}-m", [("a", 0)]), b"") for g in ("classic", "new", "older")]
    today = groups_today(frame(spark, GROUPS, groups), frame(spark, WHATIF_MEMBERS, members), context())
    assert [g.group_id for g in today] == ["classic", "older"]


def test_a_reconciling_consumer_protocol_group_still_vouches_for_its_members(spark: SparkSession) -> None:
    """Classic members stop consuming in a rebalance; a consumer-protocol member keeps consuming what it
    holds while others reconcile: a stopped partition it holds is STALL, not STOP."""
    stopped = history("new", "t", 0, STOPPED) + history("old", "t", 0, STOPPED)
    inputs = {
        "group_offsets": frame(spark, OFFSETS, stopped),
        "group_commits": frame(spark, COMMITS, []),
        "group_members": frame(spark, MEMBERS, [member("new", "m-1", [("t", 0)]), member("old", "c-1", [("t", 0)])]),
        "consumer_groups": frame(spark, GROUPS, [group("new", "Reconciling", "uniform", 2, group_type="consumer"),
                                                 group("old", "PreparingRebalance", "range", 1)]),
        "quotas": frame(spark, QUOTAS, []),
        "snapshots": frame(spark, SNAPSHOTS, []),
    }  # fmt: skip
    found = LAG_STATUS.detect(inputs, context())["lag_status_partitions"]
    statuses = {r["group_id"]: r["status"] for r in found.select("group_id", "status").collect()}
    assert statuses == {"new": "STALL", "old": "STOP"}
