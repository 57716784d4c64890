"""The group detectors on consumer-protocol groups (KIP-848, `group_type` consumer): skew reads the
members' current assignments as for a classic group; the client-side what-if skips them."""

from __future__ import annotations

from pyspark.sql import SparkSession

from kafka_ops.detectors.assignor_skew import DETECTOR as SKEW
from kafka_ops.detectors.assignor_whatif import groups_today
from tests.unit.detectors.group_frames import GROUPS, MEMBERS, OFFSETS, context, frame, group, member, sid

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
