from __future__ import annotations

from datetime import timedelta

from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.broker_attribution import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import ADMIN_REQUESTS, AT, BROKERS, PARTITIONS, frame, partition, stateless, with_runs

T = [AT + timedelta(minutes=5 * i) for i in range(3)]
S = ["s0", "s1", "s2"]


def at(i: int) -> dict[str, object]:
    return {"snapshot": S[i], "at": T[i]}


def test_every_cause(spark: SparkSession) -> None:
    rows = []
    for i in range(3):
        rows += [
            partition("t", 3, [2], [2], leader=-1, **at(i)),                    # offline, 2 last in ISR
            partition("t", 4, [1, 3, 5], [1, 3], adding=[5], **at(i)),         # 5 is only being added
        ]  # fmt: skip
    rows += [
        # broker 2 leaves the ISR of t-0 in s1, of t-1 and t-6 in s2: two intervals
        partition("t", 0, [1, 2, 3], [1, 2, 3], version=0, **at(0)),
        partition("t", 0, [1, 2, 3], [1, 3], version=1, **at(1)),
        partition("t", 0, [1, 2, 3], [1, 3], version=1, **at(2)),
        partition("t", 1, [3, 1, 2], [3, 1, 2], version=0, **at(0)),
        partition("t", 1, [3, 1, 2], [3, 1, 2], version=0, **at(1)),
        partition("t", 1, [3, 1, 2], [3, 1], version=1, **at(2)),
        partition("t", 6, [2, 1], [2, 1], version=0, **at(0)),
        partition("t", 6, [2, 1], [2, 1], version=0, **at(1)),
        partition("t", 6, [2, 1], [1], version=1, **at(2)),
        # broker 3 (alive) falls out of t-2's ISR in s2
        partition("t", 2, [1, 3], [1, 3], version=0, **at(0)),
        partition("t", 2, [1, 3], [1], version=1, **at(2)),
        # broker 1 left t-5's ISR in s1 and came back: in sync now
        partition("t", 5, [4, 1], [4, 1], version=0, **at(0)),
        partition("t", 5, [4, 1], [4], version=1, **at(1)),
        partition("t", 5, [4, 1], [4, 1], version=2, **at(2)),
        # no state: ignored, so broker 7 has no row and broker 2 is not blamed for it
        stateless("t", 7, [2, 7], snapshot="s2", at=T[2]),
    ]
    parts = frame(spark, PARTITIONS, rows)
    brokers = frame(spark, BROKERS, [
        *((s, t, b, "rack-a") for s, t in zip(S[:2], T[:2], strict=True) for b in (1, 2, 3, 4)),
        ("s2", T[2], 1, "rack-a"), ("s2", T[2], 3, "rack-c"), ("s2", T[2], 4, "rack-a"), ("s2", T[2], 6, "rack-b"),
    ])  # fmt: skip
    context = Context("c", "s2", T[2], Thresholds())
    result = DETECTOR.detect(
        with_runs({"partitions": parts, "brokers": brokers, "admin_requests": frame(spark, ADMIN_REQUESTS, [])}),
        context,
    )["broker_attribution"]
    down = "broker 2 is down: 3 partitions under-replicated, still in the ISR of 1 partition"
    expected = spark.createDataFrame(
        [
            ("s2", 1, True, "rack-a", 6, 0, 0, 0, 4, 1, None, "ok"),
            ("s2", 2, False, None, 4, 3, 3, 0, 0, 2, down, "critical"),
            ("s2", 3, True, "rack-c", 4, 1, 0, 1, 1, 1, "broker 3 is alive but out of sync in 1 partition",
             "warning"),
            ("s2", 4, True, "rack-a", 1, 0, 0, 0, 1, 0, None, "ok"),
            ("s2", 5, False, None, 0, 0, 0, 0, 0, 0, None, "ok"),
            ("s2", 6, True, "rack-b", 0, 0, 0, 0, 0, 0, None, "ok"),
        ],
        result.schema,
    )  # fmt: skip
    assert result.columns == [
        "snapshot_id", "broker_id", "registered", "rack", "assigned_replicas", "missing_from_isr",
        "missing_broker_down", "missing_alive_lagging", "leaders", "shrinks_in_window", "cause", "severity",
    ]  # fmt: skip
    assertDataFrameEqual(result, expected)


def test_down_broker_fully_out_of_sync_and_a_single_snapshot(spark: SparkSession) -> None:
    parts = frame(spark, PARTITIONS, [
        partition("a", 0, [1, 2], [1]),
        partition("a", 1, [2, 1], [1], leader=1),
        partition("a", 2, [1], [1]),
    ])  # fmt: skip
    brokers = frame(spark, BROKERS, [("s1", AT, 1, None)])
    context = Context("c", "s1", AT, Thresholds())
    result = DETECTOR.detect(
        with_runs({"partitions": parts, "brokers": brokers, "admin_requests": frame(spark, ADMIN_REQUESTS, [])}),
        context,
    )["broker_attribution"]
    expected = spark.createDataFrame(
        [
            ("s1", 1, True, None, 3, 0, 0, 0, 3, 0, None, "ok"),
            ("s1", 2, False, None, 2, 2, 2, 0, 0, 0, "broker 2 is down: 2 partitions under-replicated",
             "critical"),
        ],
        result.schema,
    )  # fmt: skip
    assertDataFrameEqual(result, expected)


def test_empty_inputs_give_no_rows(spark: SparkSession) -> None:
    context = Context("c", "s1", AT, Thresholds())
    inputs = {name: frame(spark, schema, []) for name, schema in
              (("partitions", PARTITIONS), ("brokers", BROKERS), ("admin_requests", ADMIN_REQUESTS))}  # fmt: skip
    result = DETECTOR.detect(with_runs(inputs), context)["broker_attribution"]
    assert result.count() == 0
    assert {"snapshot_id", "severity"} <= set(result.columns)


def test_a_topic_pending_deletion_blames_no_broker(spark: SparkSession) -> None:
    # as the sandbox leaves a topic deleted while broker 2 is down: leader -1, the ISR one live replica
    rows = [
        partition("gone", 0, [1, 2], [1], leader=-1, version=0, **at(0)),
        partition("gone", 1, [2, 3], [3], leader=-1, version=0, **at(0)),
        partition("gone", 2, [3, 1], [1, 3], version=0, **at(0)),
        partition("gone", 2, [3, 1], [3], leader=-1, version=1, **at(1)),  # the controller parks it
        *(partition("gone", p, r, i, leader=-1, **at(1)) for p, r, i in ((0, [1, 2], [1]), (1, [2, 3], [3]))),
    ]
    parts = frame(spark, PARTITIONS, rows)
    brokers = frame(spark, BROKERS, [(s, t, b, None) for s, t in zip(S[:2], T[:2], strict=True) for b in (1, 3)])
    requests = frame(spark, ADMIN_REQUESTS, [("s1", T[1], "delete_topic", "gone", None)])
    context = Context("c", "s1", T[1], Thresholds())
    inputs = {"partitions": parts, "brokers": brokers, "admin_requests": requests}
    result = DETECTOR.detect(with_runs(inputs), context)["broker_attribution"].collect()
    assert {(r["broker_id"], r["severity"], r["cause"]) for r in result} == {(1, "ok", None), (3, "ok", None)}
    assert all(r["shrinks_in_window"] == 0 for r in result)
