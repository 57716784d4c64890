"""The change watch's trigger against the real sandboxes: its `run()` driven directly, as the triggerer
drives it, on an asyncio loop. Nothing while the cluster is steady; an event within the controller's own
detection time after a broker is killed (kill -9), or after a consumer group's last member leaves; the
broker is restarted before the test ends.

Cost: ZooKeeper ~30 s, KRaft ~30 s (most of it the broker's restart and the cluster healing), plus the
sandboxes' start when no other test started them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from kafka_ops.airflow.cluster_watch import ClusterChangeTrigger
from kafka_ops.sources.watch_status import WatchStatusStore
from sandbox import KRaftSandbox, SandboxCluster
from sandbox.cluster import free_port
from sandbox.java_consumer import JavaConsumer
from tests.integration.java_groups import make_topics

pytestmark = pytest.mark.integration

ZK_SESSION_TIMEOUT_S = 6.0  # the sandbox brokers' zookeeper.session.timeout.ms
KRAFT_FENCING_S = 6.0  # the KRaft sandbox brokers' broker.session.timeout.ms
POLL_S = 3.0
QUIET_S = 3 * POLL_S
"""How long a steady cluster is watched for (three KRaft polls; many ZooKeeper read timeouts)."""


class Watch:
    """A trigger's `run()` consumed by a background task into a queue of (monotonic time, payload)."""

    def __init__(self, trigger: ClusterChangeTrigger) -> None:
        self.trigger = trigger
        self.events: asyncio.Queue[tuple[float, dict[str, Any]]] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def _consume(self, run: AsyncIterator[Any]) -> None:
        async for event in run:
            self.events.put_nowait((time.monotonic(), event.payload))

    async def __aenter__(self) -> Watch:
        self.task = asyncio.create_task(self._consume(self.trigger.run()))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def next(self, timeout_s: float) -> tuple[float, dict[str, Any]]:
        if self.task is not None and self.task.done():
            self.task.result()  # the trigger died: show why
        return await asyncio.wait_for(self.events.get(), timeout_s)

    async def quiet(self, seconds: float) -> None:
        """Nothing is emitted for `seconds`, and the trigger is still running."""
        with pytest.raises(TimeoutError):
            _, payload = await self.next(seconds)
            pytest.fail(f"a steady cluster emitted {payload}")
        assert self.task is not None and not self.task.done()

    async def until(self, change: str, deadline_s: float) -> tuple[float, dict[str, Any]]:
        """The first event whose `changes` include `change`, within `deadline_s`."""
        end = time.monotonic() + deadline_s
        while True:
            at, payload = await self.next(max(0.01, end - time.monotonic()))
            if change in payload["changes"]:
                return at, payload


def _connection(monkeypatch: pytest.MonkeyPatch, conn_id: str, conn: dict[str, Any]) -> None:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(conn))


def test_zookeeper_watch_sees_a_killed_broker_within_its_session_timeout(
    healthy_sandbox: SandboxCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cluster = healthy_sandbox
    _connection(monkeypatch, "zk_watch", {"conn_type": "zookeeper", "host": cluster.zookeeper_connect})
    trigger = ClusterChangeTrigger(
        cluster="sandbox", metadata_source="auto", zookeeper_conn_id="zk_watch", kafka_conn_id="absent",
        lake_root=str(tmp_path / "lake"),
    )  # fmt: skip
    victim = max(b for b in cluster.broker_ids() if b != cluster.controller_id())

    async def scenario() -> None:
        async with Watch(trigger) as watch:
            await watch.quiet(QUIET_S)
            killed_at = time.monotonic()
            cluster.kill_broker(victim)  # SIGKILL: returns at once
            try:
                at, payload = await watch.until("brokers", ZK_SESSION_TIMEOUT_S + 5)
                assert at - killed_at <= ZK_SESSION_TIMEOUT_S + 5
                assert payload["cluster"] == "sandbox" and payload["source"] == "ZooKeeper"
            finally:
                cluster.start_broker(victim)  # on this thread: the broker dies with the thread that started it
            await watch.until("brokers", 120)  # the broker registers again

    asyncio.run(scenario())
    status = WatchStatusStore(tmp_path / "lake").read("sandbox")
    assert status is not None and status.state == "watching" and status.failures == 0 and status.events >= 2
    cluster.wait_healthy(180)


def test_unparseable_znodes_are_logged_issues_and_the_watch_goes_on(
    sandbox: SandboxCluster,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Garbage in the znodes the controller watches, in a chroot of the sandbox's ZooKeeper that no broker
    uses (the real controller must not read it). Cost: ~8 s."""
    chroot = f"/watch-bad-input-{uuid.uuid4().hex[:8]}"
    zk = KazooClient(hosts=sandbox.zookeeper_hosts)
    zk.start()
    try:
        for path in ("/brokers/ids/1", "/brokers/ids/2", "/isr_change_notification"):
            zk.create(chroot + path, makepath=True)
        zk.create(chroot + "/controller", b'{"version": 2, "brokerid": "one"')
        host = f"{sandbox.zookeeper_hosts}{chroot}"
        _connection(monkeypatch, "zk_bad_input", {"conn_type": "zookeeper", "host": host})
        # its Kafka connection leads nowhere: the groups cannot be listed, and the znodes are watched regardless
        _connection(monkeypatch, "kafka_nowhere", {"conn_type": "kafka_admin", "host": f"127.0.0.1:{free_port()}"})
        trigger = ClusterChangeTrigger(
            cluster="bad", metadata_source="zookeeper", zookeeper_conn_id="zk_bad_input",
            kafka_conn_id="kafka_nowhere", lake_root=str(tmp_path), min_gap_s=1.0, poll_interval_s=1.0,
        )  # fmt: skip

        async def scenario() -> list[dict[str, Any]]:
            async with Watch(trigger) as watch:
                await watch.quiet(2)  # the unparseable controller is an issue, not an event
                zk.create(chroot + "/admin/reassign_partitions", b'{"version": 1, "partitions": 7}', makepath=True)
                zk.create(chroot + "/brokers/ids/notanid")
                _, first = await watch.until("reassignment", 10)
                zk.create(chroot + "/brokers/ids/3")
                _, second = await watch.until("brokers", 10)
                return [first, second]

        first, second = asyncio.run(scenario())
    finally:
        zk.delete(chroot, recursive=True)
        zk.stop()
        zk.close()
    assert first["changes"] == ["reassignment"] and second["changes"] == ["brokers"]
    out = capsys.readouterr().out + caplog.text
    assert "collection issue at ZooKeeper" in out and "/controller: " in out
    assert out.count("cannot list the groups without members") == 1  # said once, not at every poll
    assert "/admin/reassign_partitions: " in out and "/brokers/ids/notanid" in out
    status = WatchStatusStore(tmp_path).read("bad")
    assert status is not None and status.state == "watching" and status.issues >= 3 and status.events == 2


def test_kraft_watch_on_zookeeper_brokers_backs_off_naming_the_setting(
    sandbox: SandboxCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A wrong `metadata_source` is never a dead trigger: it says what to set, and retries (the setting
    may be fixed). Cost: ~3 s."""
    _connection(monkeypatch, "kafka_zk_mode", {"conn_type": "kafka_admin", "host": sandbox.bootstrap_servers})
    trigger = ClusterChangeTrigger(
        cluster="zkmode", metadata_source="kraft", kafka_conn_id="kafka_zk_mode", lake_root=str(tmp_path),
        backoff_initial_s=0.2, backoff_cap_s=0.4,
    )  # fmt: skip
    store = WatchStatusStore(tmp_path)

    async def scenario() -> None:
        async with Watch(trigger) as watch:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                status = store.read("zkmode")
                if status is not None and status.failures >= 2:
                    break
                await asyncio.sleep(0.2)
            assert watch.events.empty()
            assert watch.task is not None and not watch.task.done()

    asyncio.run(scenario())
    status = store.read("zkmode")
    assert status is not None and status.state == "backing_off" and status.failures >= 2
    assert (status.error or "").startswith("NotAKRaftCluster") and "metadata_source = zookeeper" in status.error


def test_kraft_watch_sees_a_fenced_broker_within_fencing_time_and_two_polls(
    healthy_kraft_sandbox: KRaftSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = healthy_kraft_sandbox
    _connection(monkeypatch, "kafka_watch", {"conn_type": "kafka_admin", "host": cluster.bootstrap_servers})
    trigger = ClusterChangeTrigger(
        cluster="kraft", metadata_source="auto", zookeeper_conn_id="absent_zk", kafka_conn_id="kafka_watch",
        poll_interval_s=POLL_S,
    )  # fmt: skip
    victim = max(cluster.broker_ids())
    bound = KRAFT_FENCING_S + 2 * POLL_S + 5

    async def scenario() -> None:
        async with Watch(trigger) as watch:
            await watch.quiet(QUIET_S)
            killed_at = time.monotonic()
            cluster.kill_broker(victim)  # SIGKILL: returns at once
            try:
                at, payload = await watch.until("fenced_brokers", bound)
                assert at - killed_at <= bound
                assert payload["cluster"] == "kraft" and payload["source"] == "KRaft"
            finally:
                cluster.start_broker(victim)  # on this thread: the broker dies with the thread that started it
            await watch.until("fenced_brokers", 120)  # unfenced again once it caught up

    asyncio.run(scenario())
    cluster.wait_healthy(180)


def test_zookeeper_watch_sees_a_group_lose_and_regain_its_members(
    healthy_sandbox: SandboxCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A consumer group whose only consumer (Kafka's Java client) leaves is an event within two polls of
    the groups without members; its consumer back is another. Only the groups the settings select count:
    a group outside `groups_include` comes and goes unseen. Cost: ~25 s."""
    cluster = healthy_sandbox
    run = uuid.uuid4().hex[:6]
    topic, watched, ignored = f"watch-{run}", f"watch-{run}-billing", f"watch-{run}-ignored"
    make_topics(cluster, {topic: 1})
    _connection(monkeypatch, "zk_group_watch", {"conn_type": "zookeeper", "host": cluster.zookeeper_connect})
    _connection(monkeypatch, "kafka_group_watch", {"conn_type": "kafka_admin", "host": cluster.bootstrap_servers})
    trigger = ClusterChangeTrigger(
        cluster="sandbox", metadata_source="zookeeper", zookeeper_conn_id="zk_group_watch",
        kafka_conn_id="kafka_group_watch", groups_include=f"watch-{run}-(billing|orders)", poll_interval_s=1.0,
        min_gap_s=1.0,
    )  # fmt: skip
    bound = 2 * 1.0 + 1.0 + 5  # two polls, the gap, a loaded machine

    def consumer(group: str) -> JavaConsumer:
        return JavaConsumer(cluster.bootstrap_servers, group, [topic], log_dir=tmp_path / group)

    async def scenario() -> list[dict[str, Any]]:
        seen = []
        with consumer(watched) as billing:
            billing.wait_until(lambda c: bool(c.assignment), 60, "its partition")
            async with Watch(trigger) as watch:
                await watch.quiet(3)
                with consumer(ignored) as other:  # joins, then leaves: outside the selection
                    other.wait_until(lambda c: bool(c.assignment), 60, "its partition")
                await watch.quiet(3)
                left_at = time.monotonic()
                billing.close()  # leaves the group: Empty at once
                at, payload = await watch.until("groups_without_members", bound)
                assert at - left_at <= bound
                seen.append(payload)
                with consumer(watched) as again:
                    again.wait_until(lambda c: bool(c.assignment), 60, "its partition")
                    seen.append((await watch.until("groups_without_members", bound + 30))[1])
        return seen

    left, back = asyncio.run(scenario())
    assert left["changes"] == ["groups_without_members"] and left["source"] == "ZooKeeper"
    assert back["changes"] == ["groups_without_members"]
