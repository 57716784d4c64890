"""The change watch's trigger: plain serialization, no I/O when built, the asset built from the settings,
bad input and unreachable clusters never end it."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import time
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest
from airflow.serialization.encoders import encode_trigger
from airflow.serialization.serialized_objects import BaseSerialization

from kafka_ops.airflow import cluster_watch
from kafka_ops.airflow.change_sources import ZooKeeperChanges
from kafka_ops.airflow.cluster_watch import ClusterChangeTrigger, cluster_changes_asset
from kafka_ops.detectors.lag_status import RECENT_HEAD_S
from kafka_ops.errors import ConfigError, KafkaUnreachable
from kafka_ops.model.cluster import CollectionIssue, ZnodeStat
from kafka_ops.settings import ClusterConfig, Settings
from kafka_ops.sources.change_digest import UNKNOWN
from kafka_ops.sources.watch_status import WatchStatusStore
from kafka_ops.sources.zookeeper.change_watch import ZnodeChange
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from sandbox.cluster import free_port

KWARGS: dict[str, Any] = {
    "cluster": "payments",
    "metadata_source": "kraft",
    "zookeeper_conn_id": "zk_payments",
    "kafka_conn_id": "kafka_payments",
    "lake_root": "s3a://kafka-lake/prod",
    "groups_include": "billing-.*",
    "groups_exclude": "billing-test-.*",
    "poll_interval_s": 2.0,
    "min_gap_s": 5.0,
    "backoff_initial_s": 0.5,
    "backoff_cap_s": 30.0,
}


def test_serializes_to_plain_values_and_back() -> None:
    classpath, kwargs = ClusterChangeTrigger(**KWARGS).serialize()
    assert kwargs == KWARGS
    assert json.loads(json.dumps(kwargs)) == kwargs  # nothing but JSON values: no client, no connection
    module, _, name = classpath.rpartition(".")
    rebuilt = getattr(importlib.import_module(module), name)(**kwargs)  # as the triggerer does
    assert rebuilt.serialize() == (classpath, kwargs)
    # as the dag-processor stores it, and the triggerer reads it back
    stored = json.loads(json.dumps(encode_trigger(ClusterChangeTrigger(**KWARGS))))
    decoded = {k: BaseSerialization.deserialize(v) for k, v in stored["kwargs"].items()}
    assert stored["classpath"] == classpath and decoded == kwargs
    assert ClusterChangeTrigger.hash(classpath, kwargs) == ClusterChangeTrigger.hash(*rebuilt.serialize())


@pytest.mark.parametrize(
    ("key", "value"),
    [("metadata_source", "zk"), ("poll_interval_s", 0), ("min_gap_s", -1.0), ("backoff_cap_s", float("nan")),
     ("backoff_initial_s", True), ("poll_interval_s", "3"), ("groups_include", "billing-("),
     ("groups_exclude", "*")],
)  # fmt: skip
def test_refuses_bad_parameters(key: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=key.removeprefix("groups_")):
        ClusterChangeTrigger(**{**KWARGS, key: value})


def test_one_watcher_per_cluster_built_without_a_connection() -> None:
    """No connection exists here: `auto` is left to the trigger, which resolves it in the triggerer."""
    settings = Settings(
        lake_root="/lake",
        clusters=(
            ClusterConfig("zk", zookeeper_conn_id="zk_zk", metadata_source="zookeeper"),
            ClusterConfig("kr", kafka_conn_id="kafka_kr", metadata_source="kraft"),
            ClusterConfig("mixed", groups_include="orders-.*"),
        ),
    )
    asset = cluster_changes_asset(settings)
    assert asset.name == "kafka_ops_cluster_changes"
    assert [w.name for w in asset.watchers] == ["kafka_ops_watch_zk", "kafka_ops_watch_kr", "kafka_ops_watch_mixed"]
    kwargs = [w.trigger.serialize()[1] for w in asset.watchers]
    assert [(k["cluster"], k["metadata_source"]) for k in kwargs] == [("zk", "zookeeper"), ("kr", "kraft"),
                                                                      ("mixed", "auto")]  # fmt: skip
    assert {k["lake_root"] for k in kwargs} == {"/lake"}
    assert [k["groups_include"] for k in kwargs] == [None, None, "orders-.*"]


def test_unreadable_settings_leave_the_asset_without_watchers(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("KAFKA_OPS_CONFIG", "/nonexistent/kafka-ops.toml")
    with caplog.at_level(logging.ERROR, logger=cluster_watch.__name__):
        asset = cluster_changes_asset()
    assert asset.watchers == []
    assert "/nonexistent/kafka-ops.toml" in caplog.text


# -- bad input: parsed by the real ZooKeeper adapter, fed what kazoo's watches would hand it ----------------


def stat(czxid: int) -> ZnodeStat:
    return ZnodeStat(version=0, czxid=czxid, mzxid=czxid, ctime_ms=0, mtime_ms=0)


def test_zookeeper_adapter_turns_unparseable_znodes_into_issues() -> None:
    async def read() -> tuple[dict[str, Hashable], list[CollectionIssue]]:
        source = ZooKeeperChanges(ZooKeeperTarget("127.0.0.1:1"), executor=None)  # type: ignore[arg-type]
        for change in (
            ZnodeChange("/brokers/ids", children=("1", "2", "x")),
            ZnodeChange("/controller", data=b"\xff\xfe garbage", stat=stat(9)),
            ZnodeChange("/admin/reassign_partitions", data=b"[]", stat=stat(10)),
            ZnodeChange("/isr_change_notification", children=("isr_change_0000000001",)),
        ):
            source._queue.put_nowait(change)
        return await source.read(0.1)

    found, issues = asyncio.run(read())
    assert found == {
        "brokers": (1, 2),
        "controller": ("unparseable", 9),
        "reassignment": ("unparseable", 0),
        "isr_change_notifications": ("isr_change_0000000001",),
    }
    assert sorted(i.path for i in issues) == ["/admin/reassign_partitions", "/brokers/ids/x", "/controller"]


class ScriptedSource:
    """A source that answers a script of readings: the faults no sandbox serves on demand (an answer that
    cannot be decoded), then a real change."""

    kind = "KRaft"
    where = "scripted"

    def __init__(self, readings: list[tuple[dict[str, Hashable], list[CollectionIssue]]]) -> None:
        self.readings = readings

    async def open(self) -> list[CollectionIssue]:
        return []

    async def read(self, timeout_s: float) -> tuple[dict[str, Hashable], list[CollectionIssue]]:
        await asyncio.sleep(0.01)
        return self.readings.pop(0) if self.readings else ({}, [])

    async def close(self) -> None:
        return None


def test_an_answer_that_cannot_be_decoded_is_logged_and_the_trigger_goes_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = CollectionIssue("DescribeQuorum", "answer cannot be decoded: KeyError: 'topics'", "request")
    source = ScriptedSource([
        ({"brokers": (1, 2, 3), "controller": (101, 4)}, []),  # the baseline
        ({"brokers": (1, 2, 3), "controller": UNKNOWN}, [bad]),  # not a change: an issue
        ({"brokers": (1, 2), "controller": (101, 4)}, []),  # a broker left
    ])  # fmt: skip

    async def open_scripted(self: ClusterChangeTrigger, executor: object) -> ScriptedSource:
        return source

    monkeypatch.setattr(ClusterChangeTrigger, "_open", open_scripted)
    trigger = ClusterChangeTrigger(cluster="c1", metadata_source="kraft", min_gap_s=5.0)

    async def first_event() -> dict[str, Any]:
        run = trigger.run()
        try:
            return (await asyncio.wait_for(anext(run), 5)).payload
        finally:
            await run.aclose()

    payload = asyncio.run(first_event())
    assert payload["cluster"] == "c1" and payload["changes"] == ["brokers"]
    # the trigger logs through Airflow's structlog (the triggerer's per-trigger log), printed here
    assert "collection issue at scripted: DescribeQuorum: answer cannot be decoded" in capsys.readouterr().out


def test_a_group_that_lost_its_members_is_an_event_then_one_more_when_stop_can_be_due(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loss starts a collection at once, which Burrow's "at the head within 100 s" rule usually rates
    OK; the second event comes when STOP can be due. A group regaining members, or an unknown listing, is
    no loss."""
    source = ScriptedSource([
        ({"groups_without_members": ("idle",)}, []),  # the baseline
        ({"groups_without_members": UNKNOWN}, []),  # a coordinator did not answer: no change
        ({"groups_without_members": ("billing", "idle")}, []),  # billing's consumers stopped
        ({"groups_without_members": ("billing",)}, []),  # idle got a member: a change, not a loss
    ])  # fmt: skip

    async def open_scripted(self: ClusterChangeTrigger, executor: object) -> ScriptedSource:
        return source

    monkeypatch.setattr(ClusterChangeTrigger, "_open", open_scripted)
    monkeypatch.setattr(cluster_watch, "GROUP_STOP_RECHECK_S", 0.5)
    trigger = ClusterChangeTrigger(cluster="c1", metadata_source="kraft", min_gap_s=0.2)

    async def events(count: int) -> list[tuple[float, dict[str, Any]]]:
        run, got, start = trigger.run(), [], time.monotonic()
        try:
            for _ in range(count):
                event = await asyncio.wait_for(anext(run), 5)
                got.append((time.monotonic() - start, event.payload))
            with pytest.raises(TimeoutError):  # one recheck for one loss
                await asyncio.wait_for(anext(run), 1.0)
        finally:
            await run.aclose()
        return got

    (t1, lost), (_, regained), (t3, due) = asyncio.run(events(3))
    assert lost["changes"] == regained["changes"] == ["groups_without_members"]
    assert due["changes"] == ["groups_stop_due"] and t3 - t1 >= 0.4


def test_stop_is_rechecked_after_the_at_the_head_rule_lets_go() -> None:
    assert cluster_watch.GROUP_STOP_RECHECK_S > RECENT_HEAD_S


# -- an unreachable cluster: backoff, logged and recorded; never an event, never a dead trigger ------------


def test_unreachable_zookeeper_backs_off_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = f"127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv("AIRFLOW_CONN_ZK_DOWN", json.dumps(
        {"conn_type": "zookeeper", "host": closed, "extra": {"timeout_s": 0.3}}))  # fmt: skip
    # its Kafka connection is wrong too: the groups go unwatched, said once per try; ZooKeeper's error is the one
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_TYPO", json.dumps(
        {"conn_type": "kafka_admin", "host": "127.0.0.1:9092", "extra": {"securty_protocol": "SSL"}}))  # fmt: skip
    trigger = ClusterChangeTrigger(
        cluster="down", metadata_source="zookeeper", zookeeper_conn_id="zk_down", kafka_conn_id="kafka_typo",
        lake_root=str(tmp_path), backoff_initial_s=0.1, backoff_cap_s=0.4,
    )  # fmt: skip
    store = WatchStatusStore(tmp_path)

    async def watch_for(seconds: float) -> list[Any]:
        events: list[Any] = []

        async def consume() -> None:
            async for event in trigger.run():
                events.append(event)

        task = asyncio.create_task(consume())
        await asyncio.sleep(seconds)
        assert not task.done(), "the trigger ended"
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return events

    events = asyncio.run(watch_for(4.0))
    assert events == []
    status = store.read("down")
    assert status is not None and status.state == "backing_off"
    assert status.failures >= 4 and status.backoff_s == 0.4  # 0.1, 0.2, 0.4, 0.4, ...: capped
    assert "ZooKeeperUnreachable" in (status.error or "")
    out = capsys.readouterr().out
    warnings = [line for line in out.splitlines() if "cannot watch" in line]
    assert "try 1 failed, next in 0.1s" in warnings[0] and "try 3 failed, next in 0.4s" in warnings[2]
    assert closed in warnings[0]
    assert "no watch of its consumer groups: connection 'kafka_typo'" in out and "securty_protocol" in out


def test_a_missing_connection_is_retried_not_fatal(capsys: pytest.CaptureFixture[str]) -> None:
    trigger = ClusterChangeTrigger(
        cluster="nowhere", metadata_source="auto", zookeeper_conn_id="zk_missing", kafka_conn_id="kafka_missing",
        backoff_initial_s=0.1, backoff_cap_s=0.2,
    )  # fmt: skip

    async def watch_for(seconds: float) -> bool:
        task = asyncio.create_task(anext(trigger.run()))
        await asyncio.sleep(seconds)
        alive = not task.done()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return alive

    assert asyncio.run(watch_for(1.0))
    out = capsys.readouterr().out
    assert "The conn_id `kafka_missing` isn't defined" in out and "try 3 failed" in out


class LostAtFirstRead(ScriptedSource):
    """Opens (the bootstrap answers) and fails its first read: what brokers that accept a connection but
    not the requests look like."""

    async def read(self, timeout_s: float) -> tuple[dict[str, Hashable], list[CollectionIssue]]:
        raise KafkaUnreachable("DescribeCluster: no broker answered")


def test_a_source_that_opens_but_never_answers_still_backs_off_exponentially(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async def open_lost(self: ClusterChangeTrigger, executor: object) -> ScriptedSource:
        return LostAtFirstRead([])

    monkeypatch.setattr(ClusterChangeTrigger, "_open", open_lost)
    trigger = ClusterChangeTrigger(cluster="c1", lake_root=str(tmp_path), backoff_initial_s=0.1, backoff_cap_s=0.4)

    async def watch_for(seconds: float) -> None:
        task = asyncio.create_task(anext(trigger.run()))
        await asyncio.sleep(seconds)
        assert not task.done(), "the trigger ended"
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(watch_for(1.5))  # 0.1 + 0.2 + 0.4 + 0.4 + ...
    status = WatchStatusStore(tmp_path).read("c1")
    assert status is not None and status.state == "backing_off"
    assert status.failures >= 4 and status.backoff_s == 0.4
