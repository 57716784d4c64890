"""The bridge's server-side assignors against a real Kafka 4.4 group coordinator: Java consumers of
the consumer protocol (KIP-848) join one at a time; after each settles, the bridge, fed what the
coordinator held before the newcomer (each member's previous assignment, the newcomer's nothing,
the real member ids, topic ids and subscriptions), must compute exactly the assignment the broker
gave. The third consumer subscribes to one topic only, so the group turns heterogeneous."""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from pathlib import Path

import pytest

from kafka_ops.assignors import AssignorBridge, ConsumerGroupInput, ConsumerMember
from kafka_ops.assignors.whatif import layout_of, topic_ids_of
from kafka_ops.model.groups import TopicPartition
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.kraft.collector import KRaftCollector
from sandbox import KRaftSandbox, ensure_kafka4_jars
from sandbox.java_consumer import JavaConsumer
from tests.integration.java_groups import described, make_topics, partitions_of, wait_settled

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_the_bridge_computes_each_target_the_real_coordinator_computed(
    healthy_kraft_sandbox: KRaftSandbox, tmp_path: Path, assignor: str
) -> None:
    sandbox = healthy_kraft_sandbox
    run_id = uuid.uuid4().hex[:8]
    topics = [f"srv-{run_id}-a", f"srv-{run_id}-b"]
    make_topics(sandbox, {topics[0]: 5, topics[1]: 3})
    snapshot = KRaftCollector("sandbox", KafkaTarget(sandbox.bootstrap_servers)).collect()
    cluster, ids = layout_of(snapshot), topic_ids_of(snapshot)
    assert set(topics) <= set(ids)
    group = f"srv-{run_id}-{assignor}"
    options = {"protocol": "consumer", "remote_assignor": assignor, "jars": ensure_kafka4_jars(), "log_dir": tmp_path}
    previous: dict[str, tuple[TopicPartition, ...]] = {}
    consumers: list[JavaConsumer] = []
    with AssignorBridge() as bridge, ExitStack() as stack:
        for i, subscribed in enumerate([topics, topics, topics[:1]]):
            consumer = JavaConsumer(sandbox.bootstrap_servers, group, subscribed, client_id=f"{group}-c{i}", **options)  # type: ignore[arg-type]
            consumers.append(stack.enter_context(consumer))
            wait_settled(sandbox, group, consumers, partitions_of(sandbox, topics))
            now = described(sandbox, group)
            assert now is not None and now.assignor == assignor
            real = {m.member_id: tuple(sorted(m.assignment)) for m in now.members}
            members = tuple(
                ConsumerMember(
                    m.member_id, m.subscribed_topics or (), previous.get(m.member_id, ()), m.group_instance_id, m.rack
                )
                for m in now.members
            )
            predicted = bridge.server_assign(ConsumerGroupInput(members, group), cluster, assignor, topic_ids=ids)  # type: ignore[arg-type]
            ids_shown = [ids[t] for t in topics]
            assert dict(predicted.assignment) == real, f"after consumer {i} joined to {previous} (ids {ids_shown})"
            # in the broker's order: the uniform assignor reads a previous assignment in its map's order
            previous = {m.member_id: m.target_assignment or () for m in now.members}
    assert predicted.subscription_type == "HETEROGENEOUS"
