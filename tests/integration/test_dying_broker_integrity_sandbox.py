"""Snapshots taken while a broker dies (kill -9): between its ZooKeeper session expiring and the
controller shrinking the ISRs, it is unregistered yet in ISRs under live leaders. That is Kafka's
normal gap, and the integrity check must trust those snapshots."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.validation import frames
from kafka_ops.validation.integrity import validate_snapshot
from sandbox import SandboxCluster
from tests.integration.kafka_data import admin_for, create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "dying_broker"
PARTITIONS = 150  # enough ISR writes for the controller that its catching up spans several snapshots


def hidden(snap: ClusterSnapshot, broker: int) -> int:
    """Partitions counting `broker` in sync under a live leader while it is not registered."""
    return sum(
        1
        for (topic, p), st in snap.partition_states.items()
        if frames.hidden_brokers(snap.replicas(topic, p), st.isr, st.leader, set(snap.brokers), has_state=True)
        == [broker]
    )


def snapshots_while_dying(sandbox: SandboxCluster, victim: int) -> list[ClusterSnapshot]:
    """kill -9 `victim`, then snapshot back to back until no ISR of the test's topic names it (other topics of
    the session sandbox may hold RF-1 partitions on it, whose ISR Kafka leaves as it was when they go offline).

    The gap between the broker's session expiry and the controller's ISR shrink lasts about 0.1 s here, too
    short to hit by chance, and a watch that freezes the controller when it sees the registration go loses
    the race on a loaded machine. So the test makes the gap itself: it freezes the controller (SIGSTOP),
    kills the broker and removes its registration znode, as ZooKeeper does when the dead broker's session
    expires; takes two snapshots; and resumes the controller well within its own session, whose child watch
    on /brokers/ids then tells it the broker has gone."""
    controller = sandbox._node(sandbox.controller_id()).process
    assert controller is not None
    zk = KazooClient(hosts=sandbox.zookeeper_connect)
    zk.start(timeout=30)
    taken: list[ClusterSnapshot] = [sandbox.snapshot()]
    os.kill(controller.pid, signal.SIGSTOP)
    try:
        sandbox.kill_broker(victim)
        zk.delete(f"/brokers/ids/{victim}")
        taken += [sandbox.snapshot(), sandbox.snapshot()]
    finally:
        os.kill(controller.pid, signal.SIGCONT)
        zk.stop()
        zk.close()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        snap = sandbox.snapshot()
        taken.append(snap)
        ours = (st for (topic, _), st in snap.partition_states.items() if topic == TOPIC)
        if victim not in snap.brokers and not any(victim in st.isr for st in ours):
            return taken
    raise AssertionError(f"the ISRs still name broker {victim} 90 s after it was killed")


def test_snapshots_in_the_gap_before_the_controller_shrinks_the_isr_are_trusted(
    healthy_sandbox: SandboxCluster, tmp_path: Path
) -> None:
    sandbox = healthy_sandbox
    create_topic(sandbox, TOPIC, {p: [1 + (p + i) % 3 for i in range(3)] for p in range(PARTITIONS)})
    try:
        sandbox.wait_healthy(180)
        victim = next(b for b in (3, 2, 1) if b != sandbox.controller_id())
        taken = snapshots_while_dying(sandbox, victim)
        gap = [s for s in taken if victim not in s.brokers and hidden(s, victim)]
        assert gap, "no snapshot fell between the broker's registration going and the controller's ISR shrink"
        lake = Lake(tmp_path / "lake")
        last_alive = max((s for s in taken if victim in s.brokers), key=lambda s: s.captured_at)
        shrunk = taken[-1]
        for snap in [last_alive, *gap, shrunk]:
            lake.publish(snapshot_batch(snap))
        for snap in [*gap, shrunk]:
            result = validate_snapshot(lake, "sandbox", snap.snapshot_id, data_docs=False)
            assert result.trusted, result.message()
        # what made the 14 snapshots untrusted: the old rule alone refuses every gap snapshot
        assert all(hidden(s, victim) > 0 for s in gap)
        departed = validate_snapshot(lake, "sandbox", gap[0].snapshot_id, data_docs=False).observed
        assert departed["departed_brokers_in_isr"][str(victim)]["last_seen"] == last_alive.snapshot_id
    finally:
        for broker in sandbox.broker_ids():
            if not sandbox.broker_running(broker):
                sandbox.start_broker(broker)
        sandbox.wait_healthy(180)
        admin = admin_for(sandbox)
        try:
            admin.delete_topics([TOPIC])
        finally:
            admin.close()
        sandbox.wait_for(lambda s: TOPIC not in s.topics, 120, f"{TOPIC} deleted")
