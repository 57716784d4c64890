"""The assignor what-if detector end to end on lake-shaped frames: a classic group gets a row per
client assignor and per server-side assignor of the consumer protocol (KIP-848), told apart by
`protocol`; a consumer-protocol group gets the server-side ones only (its members sent no
JoinGroup metadata for a client assignor to read)."""

from __future__ import annotations

from pyspark.sql import SparkSession

from kafka_ops.assignors.protocol import Subscription, encode_subscription
from kafka_ops.detectors.assignor_whatif import DETECTOR, topic_ids
from tests.unit.detectors.frames import AT, BROKERS
from tests.unit.detectors.group_frames import GROUPS, MEMBERS, OFFSETS, context, frame, group, member, offset

WHATIF_MEMBERS = (
    MEMBERS + ", subscription binary, rack string, subscribed_topics array<string>, subscribed_regex string"
)
END_OFFSETS = "snapshot_id string, captured_at timestamp, topic string, partition int, end_offset long"
PARTITIONS = (
    "snapshot_id string, captured_at timestamp, topic string, topic_id string, partition int, replicas array<int>"
)
TOPICS = ("a", "b", "c")
# the textbook range skew: 3 members, 3 topics x 4 partitions; m0 gets the extra partition of each
TODAY = {
    "m0": [(t, p) for t in TOPICS for p in (0, 1)],
    "m1": [(t, 2) for t in TOPICS],
    "m2": [(t, 3) for t in TOPICS],
}
IDS = {"a": "Tpc-A4s3VTwiI5CTbEp6PA", "b": "Tpc-B4s3VTwiI5CTbEp6PA", "c": "Tpc-C4s3VTwiI5CTbEp6PA"}


def test_a_classic_group_gets_both_protocols_rows(spark: SparkSession) -> None:
    sub = encode_subscription(Subscription(TOPICS, None, (), 4, None, 3))
    members = [(*member("billing", m, tps), sub, None, None, None) for m, tps in TODAY.items()]
    members.append((*member("new", "n0", [("a", 0)]), None, "r1", ["a"], None))
    inputs = {
        "consumer_groups": frame(
            spark,
            GROUPS,
            [group("billing", "Stable", "range", 3), group("new", "Stable", "uniform", 1, group_type="consumer")],
        ),
        "group_members": frame(spark, WHATIF_MEMBERS, members),
        "group_offsets": frame(
            spark, OFFSETS, [offset("billing", t, p, 0, 10) for tps in TODAY.values() for t, p in tps]
        ),
        "partition_end_offsets": frame(spark, END_OFFSETS, []),
        "partitions": frame(spark, PARTITIONS, [("s1", AT, t, IDS[t], p, [1]) for t in TOPICS for p in range(4)]),
        "brokers": frame(spark, BROKERS, [("s1", AT, 1, None)]),
    }
    assert topic_ids(inputs["partitions"]) == IDS
    found = DETECTOR.detect(inputs, context())

    rows = {(r["protocol"], r["assignor"]): r for r in found["assignor_whatif"].collect() if r["group_id"] == "billing"}
    assert sorted(rows) == [
        ("classic", "cooperative-sticky"),
        ("classic", "range"),
        ("classic", "roundrobin"),
        ("classic", "sticky"),
        ("consumer", "range"),
        ("consumer", "uniform"),
    ]
    uniform = rows[("consumer", "uniform")]
    assert (uniform["min_partitions"], uniform["max_partitions"], uniform["lag_spread"]) == (4, 4, 0)
    assert (uniform["moved_partitions"], uniform["revoked_partitions"], uniform["rebalance_rounds"]) == (2, 2, None)
    assert uniform["error"] is None and not uniform["is_current"]
    assert rows[("consumer", "range")]["max_partitions"] == 6
    assert rows[("classic", "range")]["is_current"]
    # the consumer-protocol group: the broker's assignors only, its own (uniform) the current one
    new = {(r["protocol"], r["assignor"]): r for r in found["assignor_whatif"].collect() if r["group_id"] == "new"}
    assert sorted(new) == [("consumer", "range"), ("consumer", "uniform")]
    assert new[("consumer", "uniform")]["is_current"] and new[("consumer", "uniform")]["max_partitions"] == 4

    recs = {r["group_id"]: r for r in found["assignor_recommendations"].collect()}
    billing = recs["billing"]
    assert (billing["recommended"], billing["recommended_protocol"]) == ("cooperative-sticky", "classic")
    assert (recs["new"]["recommended"], recs["new"]["error"], recs["new"]["members"]) == (None, None, 1)
