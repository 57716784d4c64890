"""A transactional producer killed mid-transaction (SIGKILL) on the Kafka 4.4 sandbox: kafka-ops finds
the open transaction with its id, partition, start offset and age, measures the read_committed lag
against the last stable offset it pins, alerts on it, and Kafka's own `kafka-transactions.sh abort`,
run exactly as the finding's action says, releases it."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic, OffsetSpec
from kafka.protocol.consumer.offsets import IsolationLevel
from kafka.structs import OffsetAndMetadata, TopicPartition
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors import transactions
from kafka_ops.lake.open import open_lake
from kafka_ops.report.digest import render_findings
from kafka_ops.snapshot.publish import groups_to_lake
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.thresholds import Thresholds
from sandbox import KRaftSandbox
from tests.integration.java_groups import FAST
from tests.integration.kafka_tools import kafka4_tool

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BEFORE, IN_TRANSACTION, AFTER = 3, 5, 10  # records before, inside and after the open transaction
COMMITTED = 1  # the group's committed offset

PRODUCER = """
import sys, time
from kafka import KafkaProducer
servers, topic, txn_id, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
producer = KafkaProducer(bootstrap_servers=servers, transactional_id=txn_id, transaction_timeout_ms=600000)
producer.init_transactions()
producer.begin_transaction()
for _ in range(n):
    producer.send(topic, b"in-transaction", partition=0)
producer.flush(30)
print("ready", flush=True)
time.sleep(600)
"""


def _offsets(admin: KafkaAdminClient, tp: TopicPartition) -> tuple[int, int]:
    """(high watermark, last stable offset)."""
    end = admin.list_partition_offsets({tp: OffsetSpec.LATEST})[tp].offset
    stable = admin.list_partition_offsets({tp: OffsetSpec.LATEST}, isolation_level=IsolationLevel.READ_COMMITTED)
    return end, stable[tp].offset


def test_a_producer_killed_mid_transaction(
    healthy_kraft_sandbox: KRaftSandbox, spark: SparkSession, tmp_path: Path
) -> None:
    servers, run = healthy_kraft_sandbox.bootstrap_servers, uuid.uuid4().hex[:6]
    topic, txn_id, group = f"txn-{run}", f"txn-{run}-producer", f"txn-{run}-readers"
    tp = TopicPartition(topic, 0)
    admin = KafkaAdminClient(bootstrap_servers=servers, **FAST)
    try:
        admin.create_topics([NewTopic(topic, 1, 1)])
        plain = KafkaProducer(bootstrap_servers=servers)
        for _ in range(BEFORE):
            plain.send(topic, b"before", partition=0)
        plain.flush(30)
        producer = subprocess.Popen(
            [sys.executable, "-c", PRODUCER, servers, topic, txn_id, str(IN_TRANSACTION)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert producer.stdout is not None
            assert producer.stdout.readline().strip() == "ready", producer.stderr.read() if producer.stderr else ""
        finally:
            producer.send_signal(signal.SIGKILL)  # mid-transaction: no commit, no abort, no close
            producer.wait(30)
        for _ in range(AFTER):
            plain.send(topic, b"after", partition=0)
        plain.flush(30)
        plain.close()
        consumer = KafkaConsumer(bootstrap_servers=servers, group_id=group, enable_auto_commit=False)
        consumer.commit({tp: OffsetAndMetadata(COMMITTED, "", -1)})
        consumer.close()
        end = BEFORE + IN_TRANSACTION + AFTER
        assert _offsets(admin, tp) == (end, BEFORE)
        time.sleep(1.5)

        lake = open_lake(tmp_path / "lake")
        snap, _ = groups_to_lake("sandbox-kraft", KafkaTarget(servers, FAST), lake, include=group)
        (row,) = snap.offsets
        assert (row.committed_offset, row.end_offset, row.lag) == (COMMITTED, end, end - COMMITTED)
        assert snap.stable_offsets[(topic, 0)] == BEFORE
        assert snap.record_times[(topic, 0, COMMITTED)].offset == COMMITTED
        (found,) = [t for t in snap.transactions if t.topic == topic]
        assert (found.transactional_id, found.partition, found.start_offset, found.state) == (
            txn_id,
            0,
            BEFORE,
            "Ongoing",
        )
        assert (found.hanging, found.timeout_ms) == (False, 600_000)
        assert found.start_time is not None and 1.5 <= (snap.captured_at - found.start_time).total_seconds() < 60
        written = lake.read("group_offsets", "sandbox-kraft", [snap.snapshot_id]).to_pylist()
        assert [(r["lag"], r["read_committed_lag"]) for r in written] == [(end - COMMITTED, BEFORE - COMMITTED)]
        ends = lake.read("partition_end_offsets", "sandbox-kraft", [snap.snapshot_id]).to_pylist()
        assert [(r["end_offset"], r["last_stable_offset"]) for r in ends] == [(end, BEFORE)]

        analyse(spark, lake.root, "sandbox-kraft", [transactions.DETECTOR], Thresholds(transaction_age_warning_s=1))
        (finding,) = lake.read("transactions", "sandbox-kraft", [snap.snapshot_id]).to_pylist()
        assert finding["severity"] == "warning" and finding["groups"] == [group]
        assert finding["problem"].startswith(
            f"transaction {txn_id} (producer {found.producer_id}, epoch {found.producer_epoch}) open on {topic}-0 "
            f"since offset {BEFORE} for "
        )
        assert finding["problem"].endswith(
            f"last stable offset {BEFORE} < high watermark {end}: read_committed consumers of {group} wait at {BEFORE}"
        )

        text = render_findings(lake, "sandbox-kraft")
        assert f"warning  {finding['problem']}; do: {finding['action']}" in text, text

        # the action's command, run as written with Kafka's own tool, ends the transaction
        command = finding["action"].split("to end it now: ")[1]
        words = shlex.split(command)
        assert words[:3] == ["kafka-transactions.sh", "--bootstrap-server", servers]
        kafka4_tool("org.apache.kafka.tools.TransactionsCommand", *words[1:])
        deadline = time.monotonic() + 30
        while _offsets(admin, tp) != (end + 1, end + 1):  # the abort marker, then nothing open
            assert time.monotonic() < deadline, _offsets(admin, tp)
            time.sleep(0.2)
    finally:
        admin.close()
