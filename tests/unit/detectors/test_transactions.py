from __future__ import annotations

from pyspark.sql import SparkSession

from kafka_ops.detectors.transactions import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.group_frames import OFFSETS, context, frame, minutes_ago, offset, sid

TRANSACTIONS = (
    "snapshot_id string, captured_at timestamp, transactional_id string, producer_id long, producer_epoch int, "
    "state string, coordinator_id int, topic string, partition int, start_time timestamp, timeout_ms long, "
    "start_offset long, hanging boolean"
)
ENDS = (
    "snapshot_id string, captured_at timestamp, topic string, partition int, end_offset long, last_stable_offset long"
)
COMMITS = "snapshot_id string, captured_at timestamp, bootstrap_servers string"
NOW = (sid(0), minutes_ago(0))


def test_open_long_open_overdue_and_hanging(spark: SparkSession) -> None:
    txns = [
        (*NOW, "young", 1, 0, "Ongoing", 2, "t", 0, minutes_ago(1), 900_000, 10, False),
        (*NOW, "slow", 2, 0, "Ongoing", 2, "t", 1, minutes_ago(10), 900_000, 20, False),
        (*NOW, "dead", 3, 1, "Ongoing", 2, "t", 2, minutes_ago(3), 60_000, 30, False),
        (*NOW, None, 4, 0, None, None, "t", 3, None, None, 40, True),
        (sid(5), minutes_ago(5), "gone", 5, 0, "Ongoing", 2, "t", 0, minutes_ago(6), 900_000, 5, False),
        (sid(5), minutes_ago(5), None, 4, 0, None, None, "t", 3, None, None, 40, True),  # hanging then too
    ]
    ends = [(*NOW, "t", p, 100, lso) for p, lso in ((0, 10), (1, 20), (2, 30), (3, 40))]
    offsets = [offset("readers", "t", 1, 20, 100), offset("others", "t", 1, 50, 100), offset("a", "t", 3, 40, 100)]
    inputs = {
        "open_transactions": frame(spark, TRANSACTIONS, txns),
        "partition_end_offsets": frame(spark, ENDS, ends),
        "group_offsets": frame(spark, OFFSETS, offsets),
        "group_snapshots": frame(spark, COMMITS, [(sid(5), minutes_ago(5), "k1:9092"), (*NOW, "k1:9092")]),
    }
    found = DETECTOR.detect(inputs, context(Thresholds(transaction_age_warning_s=300)))["transactions"]
    rows = {r["partition"]: r.asDict() for r in found.collect()}
    assert sorted(rows) == [0, 1, 2, 3]  # only the latest collection's
    assert {p: (r["severity"], r["hanging"], r["overdue"]) for p, r in rows.items()} == {
        0: ("ok", False, False),  # a transaction in progress
        1: ("warning", False, False),  # 10 minutes open
        2: ("critical", False, True),  # past its own 60 s timeout: the coordinator should have aborted it
        3: ("critical", True, False),
    }
    assert rows[1]["age_seconds"] == 600.0 and rows[1]["groups"] == ["others", "readers"]
    assert rows[1]["problem"] == (
        "transaction slow (producer 2, epoch 0) open on t-1 since offset 20 for 600 s; last stable offset 20 "
        "< high watermark 100: read_committed consumers of others, readers wait at 20"
    )
    assert rows[1]["action"].endswith(
        "to end it now: kafka-transactions.sh --bootstrap-server k1:9092 abort --topic t --partition 1 "
        "--start-offset 20"
    )
    assert rows[3]["problem"].startswith(
        "hanging: producer 4 (epoch 0), no coordinator has its transaction open on t-3"
    )
    assert rows[3]["action"] == (
        "confirm with kafka-transactions.sh --bootstrap-server k1:9092 find-hanging --topic t --partition 3, "
        "then abort it: kafka-transactions.sh --bootstrap-server k1:9092 abort --topic t --partition 3 "
        "--start-offset 40"
    )


def hanging_in(spark: SparkSession, earlier: list[tuple[object, ...]]) -> tuple[str, bool, bool, str]:
    """Severity, hanging, suspected_hanging and problem of producer 4's transaction, hanging on t-3 now,
    with `earlier` the previous collection's open transactions."""
    now = [(*NOW, None, 4, 0, None, None, "t", 3, None, None, 40, True)]
    inputs = {
        "open_transactions": frame(spark, TRANSACTIONS, now + earlier),
        "partition_end_offsets": frame(spark, ENDS, [(*NOW, "t", 3, 100, 40)]),
        "group_offsets": frame(spark, OFFSETS, []),
        "group_snapshots": frame(spark, COMMITS, [(sid(5), minutes_ago(5), "k1:9092"), (*NOW, "k1:9092")]),
    }
    (row,) = DETECTOR.detect(inputs, context())["transactions"].collect()
    return row["severity"], row["hanging"], row["suspected_hanging"], row["problem"]


def test_hanging_seen_once_is_only_suspected(spark: SparkSession) -> None:
    # a transaction ending between the leader's and the coordinator's reads looks hanging for one collection
    before = (sid(5), minutes_ago(5))
    severity, hanging, suspected, problem = hanging_in(spark, [])
    assert (severity, hanging, suspected) == ("warning", False, True)
    assert problem.startswith("possibly hanging (seen once; the next collection tells): producer 4")
    # the previous collection saw it open but not hanging, or hanging at another start offset: still only suspected
    not_hanging = (*before, None, 4, 0, None, None, "t", 3, None, None, 40, False)
    elsewhere = (*before, None, 4, 0, None, None, "t", 3, None, None, 39, True)
    assert hanging_in(spark, [not_hanging])[:3] == ("warning", False, True)
    assert hanging_in(spark, [elsewhere])[:3] == ("warning", False, True)
    # the same transaction hanging in two collections in a row: critical
    same = (*before, None, 4, 0, None, None, "t", 3, None, None, 40, True)
    assert hanging_in(spark, [same])[:3] == ("critical", True, False)
