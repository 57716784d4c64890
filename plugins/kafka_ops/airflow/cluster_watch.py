"""Event-driven snapshots: an asset watcher per cluster whose trigger notices, within seconds, what the
cluster's controller notices, and updates the asset `kafka_ops_cluster_changes` the snapshot DAG is
scheduled on (beside its cron heartbeat).

`ClusterChangeTrigger` runs in Airflow's triggerer, on its asyncio loop. Per cluster it keeps a view of
a few parts (`sources.change_digest`): on ZooKeeper, four watches on what the ZooKeeper-mode controller
watches (`sources.zookeeper.change_watch`); on KRaft, a cheap poll every `poll_interval_s`
(`sources.kraft.change_poll`); on both, through the cluster's Kafka connection, the consumer groups
without members, polled as often (`sources.groups.state_poll`: a group whose consumers all stopped is
collected at once, and once more `GROUP_STOP_RECHECK_S` later, when Burrow's rules can rate it STOP:
the change `groups_stop_due`). A part that changes is an event, at most one per `min_gap_s`
(`watch_pacing.EventGate`: changes inside the gap are folded into the next event). Its payload:
`cluster`, `source` ("ZooKeeper" / "KRaft"), `changes` (the parts, e.g. ["brokers", "controller"]),
`first_noticed_at`, `emitted_at` (ISO times) and `notices` (readings folded into it).

A cluster that cannot be reached (or whose connection is missing or wrong) is retried after an
exponential backoff (`backoff_initial_s` doubling up to `backoff_cap_s`), said in the triggerer's log
and in the watch status (`sources.watch_status`, read by the metrics page). An answer that cannot be
parsed is a collection issue, logged; the trigger keeps running. The view survives a reconnection, so
what changed while the cluster could not be seen is an event once it can.

The trigger serializes to plain values (cluster name, source, connection ids, lake root, intervals)
and builds its clients in `run()`; building it (at DAG parse time) does no I/O.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator, Hashable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from airflow.sdk import Asset, AssetWatcher
from airflow.sdk.exceptions import AirflowException
from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from kafka_ops.errors import ConfigError, KafkaOpsError
from kafka_ops.settings import METADATA_SOURCES, Settings, load_settings
from kafka_ops.sources.groups.selection import GroupSelection

from .watch_pacing import EventGate, backoff_s

if TYPE_CHECKING:
    from kafka_ops.model.cluster import CollectionIssue

    from .change_sources import ChangeSource

log = logging.getLogger(__name__)

CLASSPATH = "kafka_ops.airflow.cluster_watch.ClusterChangeTrigger"
CHANGES_ASSET_NAME = "kafka_ops_cluster_changes"
CHANGES_ASSET_URI = "x-kafka-ops://clusters/changes"
POLL_INTERVAL_S = 3.0
MIN_GAP_S = 5.0
BACKOFF_INITIAL_S = 1.0
BACKOFF_CAP_S = 60.0
GROUP_STOP_RECHECK_S = 115.0
"""After a group loses its members, one more event this much later: Burrow's rules hold STOP back while the
consumer was at the head within the last 100 s (`detectors.lag_status.RECENT_HEAD_S`), so the collection
the loss itself started usually rates the group OK, and this one can rate it STOP."""
IDLE_READ_S = 1.0
"""How long one read waits when no event is pending (a ZooKeeper session's suspension is checked as often)."""


def _watch_errors() -> tuple[type[BaseException], ...]:
    """What means "cannot watch this cluster now" (retry after a backoff), as opposed to a bug."""
    from kafka.errors import KafkaError  # noqa: PLC0415 - not at DAG parse time
    from kazoo.exceptions import KazooException  # noqa: PLC0415

    return (KafkaOpsError, AirflowException, KafkaError, KazooException, OSError)


class ClusterChangeTrigger(BaseEventTrigger):
    """Emits an event when one cluster's controller-visible state changes (see the module docstring)."""

    def __init__(
        self,
        *,
        cluster: str,
        metadata_source: str = "auto",
        zookeeper_conn_id: str = "zookeeper_default",
        kafka_conn_id: str = "kafka_default",
        lake_root: str | None = None,
        groups_include: str | None = None,
        groups_exclude: str | None = None,
        poll_interval_s: float = POLL_INTERVAL_S,
        min_gap_s: float = MIN_GAP_S,
        backoff_initial_s: float = BACKOFF_INITIAL_S,
        backoff_cap_s: float = BACKOFF_CAP_S,
    ) -> None:
        super().__init__()
        if metadata_source not in METADATA_SOURCES:
            raise ConfigError(
                f"cluster {cluster!r}: metadata_source must be one of {list(METADATA_SOURCES)}, got {metadata_source!r}"
            )
        for name, value in (("poll_interval_s", poll_interval_s), ("min_gap_s", min_gap_s),
                            ("backoff_initial_s", backoff_initial_s), ("backoff_cap_s", backoff_cap_s)):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ConfigError(f"cluster {cluster!r}: {name} must be a positive number of seconds, got {value!r}")
        self.cluster = cluster
        self.metadata_source = metadata_source
        self.zookeeper_conn_id = zookeeper_conn_id
        self.kafka_conn_id = kafka_conn_id
        self.lake_root = lake_root
        self.groups_include, self.groups_exclude = groups_include, groups_exclude
        self._selected = GroupSelection(groups_include, groups_exclude)  # a pattern that does not compile fails here
        self.poll_interval_s = float(poll_interval_s)
        self.min_gap_s = float(min_gap_s)
        self.backoff_initial_s = float(backoff_initial_s)
        self.backoff_cap_s = float(backoff_cap_s)
        self._status: dict[str, Any] = {"state": None, "since": None, "failures": 0, "backoff_s": 0.0, "error": None,
                                        "events": 0, "last_event_at": None, "issues": 0}  # fmt: skip
        """What the watch status document says (`sources.watch_status`)."""
        self._rechecks: list[datetime] = []
        """When to note `groups_stop_due` for the groups that lost their members (`GROUP_STOP_RECHECK_S`)."""
        self._view: dict[str, Hashable] | None = None
        """The parts last read; kept across reconnections (what changed meanwhile is an event)."""

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return CLASSPATH, {
            "cluster": self.cluster,
            "metadata_source": self.metadata_source,
            "zookeeper_conn_id": self.zookeeper_conn_id,
            "kafka_conn_id": self.kafka_conn_id,
            "lake_root": self.lake_root,
            "groups_include": self.groups_include,
            "groups_exclude": self.groups_exclude,
            "poll_interval_s": self.poll_interval_s,
            "min_gap_s": self.min_gap_s,
            "backoff_initial_s": self.backoff_initial_s,
            "backoff_cap_s": self.backoff_cap_s,
        }

    async def run(self) -> AsyncIterator[TriggerEvent]:
        errors = _watch_errors()
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"kafka-ops-watch-{self.cluster}")
        gate = EventGate(self.min_gap_s)
        try:
            while True:
                source: ChangeSource | None = None
                try:
                    source = await self._open(executor)
                    async for event in self._watch(source, gate, executor):
                        yield event
                except errors as e:
                    failures = self._status["failures"] + 1
                    delay = backoff_s(failures, self.backoff_initial_s, self.backoff_cap_s)
                    where = source.where if source is not None else self._connections()
                    self.log.warning(
                        "cluster %s: cannot watch %s (%s: %s); try %d failed, next in %.1fs",
                        self.cluster, where, type(e).__name__, e, failures, delay,
                    )  # fmt: skip
                    error = f"{type(e).__name__}: {e}"
                    await self._record(executor, state="backing_off", error=error, failures=failures, backoff_s=delay)
                    await self._close(source)
                    await asyncio.sleep(delay)
                    continue
                finally:
                    await self._close(source)
        finally:
            executor.shutdown(wait=False, cancel_futures=True)

    async def _watch(
        self, source: ChangeSource, gate: EventGate, executor: ThreadPoolExecutor
    ) -> AsyncIterator[TriggerEvent]:
        """Read `source` for ever, noting what changed in the gate; an event whenever the gate lets one go."""
        from kafka_ops.sources.change_digest import (  # noqa: PLC0415
            GROUPS_STOP_DUE,
            changed_parts,
            groups_that_lost_members,
            merged,
        )

        while True:
            now = datetime.now(UTC)
            if self._rechecks and self._rechecks[0] <= now:
                self._rechecks = [t for t in self._rechecks if t > now]
                gate.note([GROUPS_STOP_DUE], now)
            wait = gate.wait_s(now)
            if wait == 0:
                payload = {"cluster": self.cluster, "source": source.kind, **gate.take(now)}
                self.log.info("cluster %s: %s changed; event %s", self.cluster, ", ".join(payload["changes"]), payload)
                await self._record(executor, events=self._status["events"] + 1, last_event_at=payload["emitted_at"])
                yield TriggerEvent(payload)
                continue
            found, issues = await source.read(IDLE_READ_S if wait is None else wait)
            if self._status["state"] != "watching":  # the cluster answered: the backoff starts again from 0
                await self._record(executor, state="watching", error=None, failures=0, backoff_s=0.0)
            self._log_issues(source, issues)
            if found:
                new = merged(self._view, {**(self._view or {}), **found})
                noticed = datetime.now(UTC)
                gate.note(changed_parts(self._view, new), noticed)
                if groups_that_lost_members(self._view, new):
                    self._rechecks.append(noticed + timedelta(seconds=GROUP_STOP_RECHECK_S))
                self._view = new

    async def _open(self, executor: ThreadPoolExecutor) -> ChangeSource:
        """Resolve the cluster's source and connection (`auto`: ZooKeeper when its connection exists, as the
        snapshot DAG resolves it), build the source's client and set its watches."""
        from airflow.sdk.bases.hook import BaseHook  # noqa: PLC0415
        from airflow.sdk.exceptions import AirflowNotFoundException  # noqa: PLC0415

        from . import change_sources, kafka_hook, zookeeper_hook  # noqa: PLC0415 - kazoo, kafka-python

        source_kind = self.metadata_source
        if source_kind == "auto":
            try:
                await BaseHook.aget_connection(self.zookeeper_conn_id)
                source_kind = "zookeeper"
            except AirflowNotFoundException:
                source_kind = "kraft"
        source: ChangeSource
        timeout_s = max(5.0, 2 * self.poll_interval_s)
        try:
            kafka = kafka_hook.target_from_connection(await BaseHook.aget_connection(self.kafka_conn_id))
        except (AirflowNotFoundException, ConfigError) as e:
            if source_kind == "kraft":
                raise
            # ZooKeeper is watched regardless; the groups cannot be (the group collection fails the same way)
            self.log.warning("cluster %s: no watch of its consumer groups: connection %r: %s", self.cluster,
                             self.kafka_conn_id, e)  # fmt: skip
            kafka = None
        if source_kind == "zookeeper" or kafka is None:
            conn = await BaseHook.aget_connection(self.zookeeper_conn_id)
            source = change_sources.ZooKeeperChanges(zookeeper_hook.target_from_connection(conn), executor)
        else:
            source = change_sources.KRaftChanges(kafka, executor, self.poll_interval_s, timeout_s)
        if kafka is not None:
            source = change_sources.WithGroupStates(
                source, kafka, interval_s=self.poll_interval_s, request_timeout_s=timeout_s, selected=self._selected
            )
        try:
            issues = await source.open()
        except BaseException:
            await self._close(source)
            raise
        self._log_issues(source, issues)
        self.log.info("cluster %s: watching %s", self.cluster, source.where)
        return source

    async def _close(self, source: ChangeSource | None) -> None:
        if source is None:
            return
        try:
            await source.close()
        except _watch_errors() as e:  # the client is being dropped anyway
            self.log.info("cluster %s: closing %s: %r", self.cluster, source.where, e)

    def _log_issues(self, source: ChangeSource, issues: list[CollectionIssue]) -> None:
        for issue in issues:
            self._status["issues"] += 1
            self.log.warning("cluster %s: collection issue at %s: %s: %s", self.cluster, source.where, issue.path,
                             issue.problem)  # fmt: skip

    def _connections(self) -> str:
        return f"connections {self.zookeeper_conn_id!r} / {self.kafka_conn_id!r} ({self.metadata_source})"

    async def _record(self, executor: ThreadPoolExecutor, **changes: Any) -> None:
        """Update the watch status and write its document (`sources.watch_status`) when the trigger knows the
        lake; a lake it cannot write is logged, never a reason to stop watching."""
        now = datetime.now(UTC).isoformat()
        if changes.get("state", self._status["state"]) != self._status["state"]:
            changes["since"] = now
        self._status |= changes
        if self.lake_root is None:
            return
        from kafka_ops.sources.watch_status import WatchStatus, WatchStatusStore  # noqa: PLC0415 - pyarrow

        root, cluster, status = self.lake_root, self.cluster, WatchStatus(**self._status, updated_at=now)

        def write() -> None:  # opening an object store's filesystem may already ask it something
            WatchStatusStore(root).write(cluster, status)

        try:
            await asyncio.get_running_loop().run_in_executor(executor, write)
        except KafkaOpsError as e:
            self.log.warning("cluster %s: %s", self.cluster, e)


def watcher_name(cluster: str) -> str:
    return f"kafka_ops_watch_{cluster}"


def change_triggers(settings: Settings) -> list[ClusterChangeTrigger]:
    """One trigger per configured cluster, from the settings alone (no connection is looked up: `auto`
    is resolved by the trigger, in the triggerer)."""
    return [
        ClusterChangeTrigger(
            cluster=c.name,
            metadata_source=c.metadata_source,
            zookeeper_conn_id=c.zookeeper_conn_id,
            kafka_conn_id=c.kafka_conn_id,
            lake_root=settings.lake_root,
            groups_include=c.groups_include,
            groups_exclude=c.groups_exclude,
        )
        for c in settings.clusters
    ]


def cluster_changes_asset(settings: Settings | None = None) -> Asset:
    """The asset the watchers update, one watcher per cluster of `settings` (default: `load_settings()`,
    the settings file and environment: no network). Settings that cannot be read leave the asset without
    watchers (logged): the DAG still parses and its cron heartbeat runs, whose first task then fails
    with the settings' error."""
    if settings is None:
        try:
            settings = load_settings()
        except ConfigError as e:
            log.error("no cluster change watchers: %s", e)
            return Asset(name=CHANGES_ASSET_NAME, uri=CHANGES_ASSET_URI)
    watchers = [AssetWatcher(name=watcher_name(t.cluster), trigger=t) for t in change_triggers(settings)]
    return Asset(name=CHANGES_ASSET_NAME, uri=CHANGES_ASSET_URI, watchers=watchers)
