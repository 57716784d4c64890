from __future__ import annotations

from datetime import timedelta

from pyspark.sql import SparkSession

from kafka_ops.analysis.detector import Context
from kafka_ops.detectors.registry import DETECTORS
from kafka_ops.detectors.topic_deletions import DETECTOR
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import ADMIN_REQUESTS, AT, BROKERS, PARTITIONS, SNAPSHOTS, frame, partition

T = [AT + timedelta(minutes=5 * i) for i in range(4)]
S = ["s0", "s1", "s2", "s3"]
NAIVE = [t.replace(tzinfo=None) for t in T]  # as Spark collects timestamps in the UTC session


def test_stuck_and_running_deletions_and_since_when(spark: SparkSession) -> None:
    latest = {"snapshot": "s3", "at": T[3]}
    parts = frame(spark, PARTITIONS, [
        partition("stuck", 0, [1, 2], [1], leader=-1, **latest),
        partition("stuck", 1, [2, 3], [3], leader=-1, **latest),
        partition("moving", 0, [1, 3, 4], [1, 3], leader=-1, adding=[4], **latest),
        partition("going", 0, [1, 3], [1], leader=-1, **latest),
        partition("kept", 0, [1, 2], [1], **latest),
    ])  # fmt: skip
    brokers = frame(spark, BROKERS, [("s3", T[3], b, None) for b in (1, 3, 4)])
    requests = frame(spark, ADMIN_REQUESTS, [
        # "stuck" requested in s1 and on since; "going" requested in s0, gone in s1, requested again in s3
        *((S[i], T[i], "delete_topic", "stuck", None) for i in (1, 2, 3)),
        ("s0", T[0], "delete_topic", "going", None),
        ("s3", T[3], "delete_topic", "going", None),
        ("s3", T[3], "delete_topic", "moving", None),
        ("s3", T[3], "delete_topic", "only_request", None),
        ("s3", T[3], "preferred_replica_election", "kept", 0),
    ])  # fmt: skip
    snapshots = frame(spark, SNAPSHOTS, list(zip(S, T, strict=True)))
    inputs = {"partitions": parts, "brokers": brokers, "admin_requests": requests, "snapshots": snapshots}
    found = DETECTOR.detect(inputs, Context("c", "s3", T[3], Thresholds()))["topic_deletions"]
    rows = {r["topic"]: r.asDict() for r in found.collect()}
    assert set(rows) == {"stuck", "moving", "going", "only_request"}
    stuck = rows["stuck"]
    assert (stuck["partitions"], stuck["replica_brokers"], stuck["offline_brokers"]) == (2, [1, 2, 3], [2])
    assert (stuck["stuck"], stuck["severity"], stuck["pending_since"]) == (True, "warning", NAIVE[1])
    assert (
        stuck["cause"]
        == "deletion of topic stuck cannot complete: its replicas on broker 2 are offline (not registered)"
    )
    assert stuck["action"] == "bring broker 2 back: Kafka then finishes the deletion by itself"
    moving = rows["moving"]
    assert (moving["offline_brokers"], moving["reassigning_partitions"], moving["stuck"]) == ([], 1, True)
    assert "1 of its partitions are being reassigned" in moving["cause"]
    going = rows["going"]
    assert (going["stuck"], going["severity"], going["action"]) == (False, "info", None)
    assert going["pending_since"] == NAIVE[3]  # requested again after a snapshot without the request
    assert going["cause"] == "topic going is being deleted (1 partition left)"
    assert (rows["only_request"]["partitions"], rows["only_request"]["stuck"]) == (0, False)
    assert found.columns[0] == "snapshot_id" and {r["snapshot_id"] for r in rows.values()} == {"s3"}


def test_registered(spark: SparkSession) -> None:
    assert DETECTORS["topic_deletions"] is DETECTOR
