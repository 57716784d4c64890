"""The first unconsumed record's timestamp, read with small fetches from the Kafka 4.4 sandbox: records
in the middle of a batch, a batch the broker cuts, transaction markers, LogAppendTime, offsets
deleted by retention."""

from __future__ import annotations

import time
import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic, OffsetSpec
from kafka.structs import TopicPartition

from kafka_ops.model.groups import RecordTime
from kafka_ops.sources.groups.record_times import CREATE_TIME, LOG_APPEND_TIME, first_record_times
from sandbox import KRaftSandbox
from tests.integration.java_groups import FAST

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000  # CreateTime of the first record, ms


def _send(producer: KafkaProducer, topic: str, partition: int, timestamps: list[int], size: int = 1) -> None:
    """One batch (the producer lingers) of records with these CreateTimes."""
    for ts in timestamps:
        producer.send(topic, b"x" * size, partition=partition, timestamp_ms=ts)
    producer.flush(30)


def _wait_end(admin: KafkaAdminClient, tp: TopicPartition, end: int) -> None:
    deadline = time.monotonic() + 30
    while admin.list_partition_offsets({tp: OffsetSpec.LATEST})[tp].offset < end:
        assert time.monotonic() < deadline, f"{tp} never reached end offset {end}"
        time.sleep(0.1)


def test_first_record_times(healthy_kraft_sandbox: KRaftSandbox) -> None:
    servers, run = healthy_kraft_sandbox.bootstrap_servers, uuid.uuid4().hex[:6]
    topic, appended, big = f"rt-{run}", f"rt-{run}-append", f"rt-{run}-big"
    admin = KafkaAdminClient(bootstrap_servers=servers, **FAST)
    try:
        broker = admin.describe_cluster()["brokers"][0]["broker_id"]
        admin.create_topics(
            [
                NewTopic(topic, 3, 1),
                # two partitions on one leader, whose first batch is larger than both shares together
                NewTopic(big, replica_assignments={0: [broker], 1: [broker]}),
                NewTopic(appended, 1, 1, topic_configs={"message.timestamp.type": "LogAppendTime"}),
            ]
        )
        producer = KafkaProducer(bootstrap_servers=servers, linger_ms=500, batch_size=1 << 20)
        # partition 0: offsets 0-9 in one batch, 1 s apart; then a committed transaction (10, 11,
        # its marker 12); then one record (13)
        _send(producer, topic, 0, [T0 + i * 1000 for i in range(10)])
        transactional = KafkaProducer(bootstrap_servers=servers, transactional_id=f"rt-{run}", linger_ms=500)
        transactional.init_transactions()
        transactional.begin_transaction()
        _send(transactional, topic, 0, [T0 + 100_000, T0 + 101_000])
        transactional.commit_transaction()
        transactional.close()
        # the commit returns before the coordinator has written the marker to the partition
        _wait_end(admin, TopicPartition(topic, 0), 13)
        _send(producer, topic, 0, [T0 + 200_000])
        # partition 1: one batch of 50 records of 100 bytes, larger than the first fetch's share
        _send(producer, topic, 1, [T0 + i for i in range(50)], size=100)
        _send(producer, big, 0, [T0 + i for i in range(100)], size=100)
        _send(producer, big, 1, [T0 + i for i in range(50)], size=100)
        # partition 2: records 0-9, then 0-4 deleted by retention
        _send(producer, topic, 2, [T0 + i for i in range(10)])
        before = time.time() * 1000
        _send(producer, appended, 0, [T0 + i for i in range(5)])
        producer.close()
        admin.delete_records({TopicPartition(topic, 2): 5})

        read = first_record_times(
            admin,
            [
                (topic, 0, 0), (topic, 0, 5), (topic, 0, 5), (topic, 0, 10), (topic, 0, 12),
                (topic, 0, 11), (topic, 0, 13), (topic, 1, 30), (topic, 2, 1), (topic, 2, 7), (appended, 0, 3),
                (big, 0, 60), (big, 1, 20), (f"{topic}-deleted", 0, 4),
            ],
        )  # fmt: skip
    finally:
        admin.close()
    times = read.times
    assert times[(topic, 0, 0)] == RecordTime(0, T0, CREATE_TIME)
    assert times[(topic, 0, 5)] == RecordTime(5, T0 + 5000, CREATE_TIME)  # mid-batch: its own time
    assert times[(topic, 0, 10)] == RecordTime(10, T0 + 100_000, CREATE_TIME)
    assert times[(topic, 0, 11)] == RecordTime(11, T0 + 101_000, CREATE_TIME)
    assert times[(topic, 0, 12)] == RecordTime(13, T0 + 200_000, CREATE_TIME)  # 12 is the commit marker
    assert times[(topic, 0, 13)] == RecordTime(13, T0 + 200_000, CREATE_TIME)
    assert times[(topic, 1, 30)] == RecordTime(30, T0 + 30, CREATE_TIME)  # cut, fetched whole
    assert times[(topic, 2, 7)] == RecordTime(7, T0 + 7, CREATE_TIME)
    assert times[(big, 0, 60)] == RecordTime(60, T0 + 60, CREATE_TIME)
    assert times[(big, 1, 20)] == RecordTime(20, T0 + 20, CREATE_TIME)
    assert (topic, 2, 1) not in times
    assert [p for p in read.problems if f"{topic}-2 at offsets [1]" in p and "log start" in p], read.problems
    append = times[(appended, 0, 3)]
    assert (append.offset, append.timestamp_type) == (3, LOG_APPEND_TIME)
    assert before - 1000 <= append.timestamp_ms <= before + 60_000  # the broker's clock, not T0
    # a topic gone since its offsets were read costs its own positions only
    assert [p for p in read.problems if p.startswith(f"{topic}-deleted-0: not in the cluster's metadata")]
    assert len(read.problems) == 2, read.problems
