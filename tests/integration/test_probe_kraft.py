"""The end-to-end probe on the KRaft sandbox: a probe topic created only where writes are enabled, laid out
with a partition led by each broker, each probed with a real acks=all produce and read; then broker 2 alone
refuses records (its own `message.max.bytes` set below the probe's record, through IncrementalAlterConfigs):
its metadata stays healthy, the probe records Kafka's refusal, and the snapshot pages it with broker 2 to
blame and nothing else. A broker that is no partition's preferred leader (added since the topic was laid out)
gets a partition of its own where writes are enabled."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, NewTopic

from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.problems.probe import REFUSING
from kafka_ops.snapshot.publish import snapshot_to_lake
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.probe import ISSUE_KIND, ProbeRequest
from kafka_ops.validation.snapshot_checks import look
from sandbox import KRaftSandbox
from tests.integration.java_groups import FAST

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REFUSING_BROKER = 2


@pytest.fixture
def probe_topic(healthy_kraft_sandbox: KRaftSandbox) -> Iterator[str]:
    topic = f"kafka-ops-probe-{uuid.uuid4().hex[:6]}"
    yield topic
    with healthy_kraft_sandbox.admin() as admin:
        admin.delete_topics([topic])


def snapshot(sandbox: KRaftSandbox, lake: Lake, topic: str, *, create: bool = False) -> ClusterSnapshot:
    snap, _ = snapshot_to_lake(
        "sandbox", KafkaTarget(sandbox.bootstrap_servers, FAST), lake, probe=ProbeRequest(topic, create, 5.0)
    )
    return snap


def probe_issues(snap: ClusterSnapshot) -> list[str]:
    return [i.problem for i in snap.issues if i.kind == ISSUE_KIND]


def max_message_bytes(sandbox: KRaftSandbox, value: str | None) -> None:
    op = value if value is not None else (AlterConfigOp.DELETE, None)
    resource = ConfigResource(ConfigResourceType.BROKER, str(REFUSING_BROKER), {"message.max.bytes": op})
    with sandbox.admin() as admin:
        assert admin.alter_configs([resource], incremental=True) == {"broker": {str(REFUSING_BROKER): "OK"}}


def test_the_probe_pages_a_broker_that_refuses_writes_while_its_metadata_looks_healthy(
    healthy_kraft_sandbox: KRaftSandbox, probe_topic: str, tmp_path: Path
) -> None:
    sandbox, lake = healthy_kraft_sandbox, open_lake(tmp_path / "lake")
    missing = snapshot(sandbox, lake, probe_topic)
    assert not missing.probes
    (issue,) = probe_issues(missing)
    assert (
        "writes are not enabled" in issue
        and f"--create --topic {probe_topic} --replica-assignment 1:2:3,2:3:1,3:1:2" in issue
    )

    (created,) = probe_issues(snapshot(sandbox, lake, probe_topic, create=True))
    assert created.startswith("created with a partition led by each of brokers [1, 2, 3]")

    def led_by_each(snap: ClusterSnapshot) -> bool:
        states = [snap.partition_states.get((probe_topic, p)) for p in range(3)]
        return all(s is not None and s.leader == p + 1 for p, s in enumerate(states))

    sandbox.wait_for(lambda: led_by_each(snapshot(sandbox, lake, probe_topic)), 60, "the probe topic's leaders")
    healthy = snapshot(sandbox, lake, probe_topic)
    assert [(r.partition, r.leader, r.error) for r in healthy.probes] == [(0, 1, None), (1, 2, None), (2, 3, None)]
    # read back once the leader's high watermark passes it, which may be before the producer hears the ack
    assert all(r.produce_ms and r.e2e_ms and 0 < r.e2e_ms < 5_000 for r in healthy.probes), healthy.probes
    assert not look(lake, "sandbox", healthy.snapshot_id).problems

    max_message_bytes(sandbox, "10")  # below any record batch: broker 2 refuses every produce it leads
    try:
        found: list[ClusterSnapshot] = []

        def refused() -> bool:
            found[:] = [snapshot(sandbox, lake, probe_topic)]
            return found[0].probes[1].error is not None

        sandbox.wait_for(refused, 60, f"broker {REFUSING_BROKER} refusing the probe")
        (snap,) = found
        assert [r.error is None for r in snap.probes] == [True, False, True]
        assert snap.probes[1].error is not None and snap.probes[1].error.startswith("MessageSizeTooLargeError")
        assert snap.under_replicated() == [] and REFUSING_BROKER in snap.brokers  # the metadata looks healthy
        (problem,) = look(lake, "sandbox", snap.snapshot_id).problems
        assert (problem.key, problem.title) == (REFUSING, f"Broker {REFUSING_BROKER} does not take writes")
    finally:
        max_message_bytes(sandbox, None)


def test_a_broker_that_is_no_partitions_preferred_leader_gets_a_partition_where_writes_are_enabled(
    healthy_kraft_sandbox: KRaftSandbox, probe_topic: str, tmp_path: Path
) -> None:
    """A probe topic laid out before broker 3 joined (here: created by hand on brokers 1 and 2 only): broker 3
    is not probed, which is an issue; without writes it says how to add a partition, with writes kafka-ops
    adds one led by broker 3, and the next snapshots probe all three."""
    sandbox, lake = healthy_kraft_sandbox, open_lake(tmp_path / "lake")
    with sandbox.admin() as admin:
        admin.create_topics([NewTopic(probe_topic, replica_assignments={0: [1, 2], 1: [2, 1]})])
    sandbox.wait_for(lambda: len(snapshot(sandbox, lake, probe_topic).probes) == 2, 60, "the probe topic's leaders")

    (read_only,) = probe_issues(snapshot(sandbox, lake, probe_topic))
    assert read_only == (
        "broker(s) [3] lead no partition of it and are not probed: add a partition led by each "
        "(kafka-topics --alter --partitions with --replica-assignment)"
    )
    (added,) = probe_issues(snapshot(sandbox, lake, probe_topic, create=True))
    assert added == "broker(s) [3] lead no partition of it and are not probed: added a partition led by each of " \
        "brokers [3], probed from the next snapshot on"  # fmt: skip
    assert snapshot(sandbox, lake, probe_topic).topics[probe_topic].partitions[2] == (3, 1)

    def all_three() -> bool:
        snap = snapshot(sandbox, lake, probe_topic)
        return [(r.leader, r.error) for r in snap.probes] == [(1, None), (2, None), (3, None)]

    sandbox.wait_for(all_three, 60, "broker 3 probed")
    assert probe_issues(snapshot(sandbox, lake, probe_topic)) == []
