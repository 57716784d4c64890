"""The end-to-end probe's page, straight from a snapshot: a broker that leads a probe partition and refused
or failed its record is one critical problem with the broker to blame, whatever its metadata says."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_ops.alerting.alert import Links
from kafka_ops.alerting.from_snapshot import SNAPSHOT_ONLY, snapshot_alerts
from kafka_ops.problems.probe import REFUSING
from kafka_ops.sources.probe import create_command, probe_layout
from kafka_ops.validation.snapshot_checks import SnapshotLook, problems, snapshot_findings
from tests.unit.detectors.frames import AT

TOO_LARGE = "MessageSizeTooLargeError: [Error 10] MessageSizeTooLargeError"


def result(partition: int, leader: int | None, error: str | None = None) -> dict[str, Any]:
    ok = error is None
    return {"topic": "kafka-ops-probe", "partition": partition, "leader": leader,
            "produce_ms": 4.0 if ok else None, "e2e_ms": 9.0 if ok else None, "error": error}  # fmt: skip


def tables(probes: list[dict[str, Any]], brokers: tuple[int, ...] = (1, 2, 3)) -> dict[str, list[dict[str, Any]]]:
    """A healthy snapshot (its probe topic's partitions led by brokers 1, 2, 3, in sync) and `probes`."""
    partitions = [
        {"topic": "kafka-ops-probe", "partition": p, "replicas": [b], "adding_replicas": [], "removing_replicas": [],
         "has_state": True, "leader": b, "isr": [b], "elr": None}
        for p, b in enumerate(brokers)
    ]  # fmt: skip
    return {"partitions": partitions, "brokers": [{"broker_id": b, "rack": None} for b in brokers],
            "configs": [], "admin_requests": [], "probe_results": probes}  # fmt: skip


def test_a_broker_refusing_the_probe_is_paged_while_its_metadata_looks_healthy() -> None:
    findings = snapshot_findings("s1", AT, tables([result(0, 1), result(1, 2, TOO_LARGE), result(2, 3)]), 1)
    (problem,) = problems(findings)
    assert (problem.key, problem.severity, problem.title) == (REFUSING, "critical", "Broker 2 does not take writes")
    assert problem.cause == f"broker 2: {TOO_LARGE} (probe kafka-ops-probe-1, acks=all)"
    assert "message.max.bytes" in (problem.action or "")
    (alert,) = snapshot_alerts("c1", SnapshotLook(findings, (problem,)), Links())
    assert alert.brokers == (2,) and alert.affected[0].text.startswith("broker 2: MessageSizeTooLargeError")
    assert REFUSING in SNAPSHOT_ONLY  # the snapshot pages and resolves it; no gate of the analysis does


@pytest.mark.parametrize(
    "probes",
    [
        [],  # not probed
        [result(0, 1), result(1, 2), result(2, 3)],  # every broker took and served its record
        [result(0, None, "no leader: the partition is offline")],  # offline: its own page says so
        [result(0, 4, "KafkaTimeoutError: timed out")],  # led by a broker not serving: the broker-down page
    ],
)
def test_nothing_to_page(probes: list[dict[str, Any]]) -> None:
    assert problems(snapshot_findings("s1", AT, tables(probes), 1)) == []


def test_several_brokers_each_with_their_first_failure() -> None:
    probes = [result(0, 1, "KafkaTimeoutError: a"), result(3, 1, "KafkaTimeoutError: b"), result(1, 2, TOO_LARGE)]
    (problem,) = problems(snapshot_findings("s1", AT, tables(probes), 1))
    assert problem.title == "2 brokers do not take writes: 1, 2"
    assert problem.cause.startswith("broker 1: KafkaTimeoutError: a (probe kafka-ops-probe-0, acks=all), 2 of its")


def test_the_probe_topic_has_a_partition_led_by_each_broker() -> None:
    assert probe_layout([1, 2, 3, 4]) == {0: [1, 2, 3], 1: [2, 3, 4], 2: [3, 4, 1], 3: [4, 1, 2]}
    assert probe_layout([7]) == {0: [7]}
    assert create_command("p", [1, 2]).endswith("--create --topic p --replica-assignment 1:2,2:1")
