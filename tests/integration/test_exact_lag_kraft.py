"""The error of lag in seconds on the Kafka 4.4 sandbox: a producer that pauses, then writes a short
burst just before each collection, and a consumer that has read half of that burst. The exact method
(the first unconsumed record's timestamp) must be within max(1 s, 5 %) at p95; the end-offset
interpolation, which assumes the producer wrote steadily between two collections, puts the unread
records half-way between them, seconds too early, and the test shows where. The burst comes right
before the collection, so however long a collection takes on a loaded machine, the interpolation's
error only grows."""

from __future__ import annotations

import math
import time
import uuid
from datetime import datetime
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata, TopicPartition
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context
from kafka_ops.analysis.runner import read_history
from kafka_ops.detectors import lag_time
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.publish import groups_to_lake
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.thresholds import Thresholds
from sandbox import KRaftSandbox
from tests.integration.java_groups import FAST

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PAUSE_S = 4.5  # the producer pauses this long, then writes a burst; then a collection
BURST_S = 0.5
BURST = 40  # records a burst writes to each topic; the consumer commits half of them before the collection
CYCLES = 7
OLD_MS = 1_600_000_000_000  # CreateTime sent to the LogAppendTime topic: the broker must ignore it


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]


def test_exact_lag_error_against_a_pausing_producer(
    healthy_kraft_sandbox: KRaftSandbox, spark: SparkSession, tmp_path: Path
) -> None:
    servers, run = healthy_kraft_sandbox.bootstrap_servers, uuid.uuid4().hex[:6]
    created, appended = f"exact-{run}-create", f"exact-{run}-append"
    group = f"exact-{run}"
    admin = KafkaAdminClient(bootstrap_servers=servers, **FAST)
    try:
        admin.create_topics(
            [
                NewTopic(created, 1, 1),
                NewTopic(appended, 1, 1, topic_configs={"message.timestamp.type": "LogAppendTime"}),
            ]
        )
    finally:
        admin.close()
    lake, target = open_lake(tmp_path / "lake"), KafkaTarget(servers, FAST)
    producer = KafkaProducer(bootstrap_servers=servers, linger_ms=0)
    consumer = KafkaConsumer(bootstrap_servers=servers, group_id=group, enable_auto_commit=False)
    stamps: dict[str, list[int]] = {created: [], appended: []}  # per offset, the record's timestamp (ms)
    truth: list[tuple[str, datetime, str, float]] = []  # (snapshot, captured_at, topic, seconds behind)
    try:
        consumer.assign([TopicPartition(t, 0) for t in stamps])
        for _ in range(CYCLES):
            time.sleep(PAUSE_S)
            start, futures = time.monotonic(), []
            for i in range(BURST):
                now_ms = int(time.time() * 1000)
                futures.append((created, producer.send(created, b"c", partition=0, timestamp_ms=now_ms)))
                futures.append((appended, producer.send(appended, b"a", partition=0, timestamp_ms=OLD_MS)))
                time.sleep(max(start + BURST_S * (i + 1) / BURST - time.monotonic(), 0))
            producer.flush(30)
            for t, future in futures:
                metadata = future.get(30)
                assert metadata.offset == len(stamps[t])
                stamps[t].append(metadata.timestamp)  # LogAppendTime: the broker's, returned in the answer
            position = {t: len(s) - BURST // 2 for t, s in stamps.items()}
            consumer.commit({TopicPartition(t, 0): OffsetAndMetadata(o, "", -1) for t, o in position.items()})
            snap, _ = groups_to_lake("sandbox-kraft", target, lake, include=group)
            for t, o in position.items():
                truth.append(
                    (snap.snapshot_id, snap.captured_at, t, snap.captured_at.timestamp() - stamps[t][o] / 1000)
                )
    finally:
        consumer.close()
        producer.close()
    assert all(ts > OLD_MS for ts in stamps[appended])

    first, last = truth[0][1], truth[-1][1]
    window = {
        t: read_history(spark, lake.root, t, "sandbox-kraft", since=first, until=last) for t in lag_time.DETECTOR.tables
    }
    without = {
        **window,
        "group_offsets": window["group_offsets"].withColumn("record_timestamp", F.lit(None).cast("timestamp")),
    }
    rows = []
    for snapshot_id, captured_at, topic, behind in truth:
        context = Context("sandbox-kraft", snapshot_id, captured_at, Thresholds())
        found = {}
        for name, inputs in (("exact", window), ("fallback", without)):
            history = {t: frame.where(frame.captured_at <= captured_at) for t, frame in inputs.items()}
            partitions = lag_time.DETECTOR.detect(history, context)["lag_time_partitions"]
            (row,) = partitions.where(partitions.topic == topic).collect()
            found[name] = (row["method"], row["lag_seconds"])
        rows.append((topic, behind, found["exact"], found["fallback"]))

    assert len(rows) == 2 * CYCLES
    allowed = [max(1.0, 0.05 * behind) for _, behind, _, _ in rows]
    exact_errors = [abs(seconds - behind) for (_, behind, (_, seconds), _) in rows]
    assert {method for _, _, (method, _), _ in rows} == {"exact"}, rows
    assert _p95([e / a for e, a in zip(exact_errors, allowed, strict=True)]) <= 1.0, rows
    assert max(exact_errors) < 0.1, rows  # the very record's timestamp: only the clock's resolution
    # the interpolation assumes a steady producer between collections; during the pause it is wrong
    interpolated = [(behind, seconds) for _, behind, _, (method, seconds) in rows if method == "interpolated"]
    wrong = [(behind, seconds) for behind, seconds in interpolated if abs(seconds - behind) > max(1.0, 0.05 * behind)]
    # (each topic's first lagging collection has a single end-offset point: too few to interpolate)
    assert len(interpolated) == len(rows) - 2 and len(wrong) >= len(interpolated) // 2, rows
    assert {topic for topic, *_ in rows} == {created, appended}
