"""The change watch's two sources, as the trigger's asyncio loop reads them: each `read` returns the
parts (`sources.change_digest`) that arrived within a timeout, and the collection issues met, without
ever blocking the loop. Blocking work (kazoo's session, kafka-python's requests, building clients) runs
on the trigger's own one-thread executor; kazoo's watch callbacks reach the loop through
`loop.call_soon_threadsafe`.

`WithGroupStates` adds the consumer groups without members to either source, read through the
cluster's Kafka connection.

A source that loses its cluster raises a `CollectionFailed` (`ZooKeeperUnreachable`,
`KafkaUnreachable`) from `read`; the trigger closes it and opens a new one after a backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from kafka.errors import KafkaError

from kafka_ops.errors import KafkaUnreachable, ZooKeeperUnreachable
from kafka_ops.model.cluster import CollectionIssue
from kafka_ops.sources import change_digest as parts
from kafka_ops.sources import log_dirs
from kafka_ops.sources.groups import state_poll
from kafka_ops.sources.kraft import change_poll
from kafka_ops.sources.zookeeper import znodes
from kafka_ops.sources.zookeeper.change_watch import SESSION, ZnodeChange, ZooKeeperChangeWatch

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

    from kafka_ops.sources.groups.collector import KafkaTarget
    from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget

log = logging.getLogger(__name__)

Reading = tuple[dict[str, Hashable], list[CollectionIssue]]


class ChangeSource(Protocol):
    kind: str
    """"ZooKeeper" or "KRaft", as an event's `source` says."""
    where: str
    """What is watched, for log lines (servers and chroot, never credentials)."""

    async def open(self) -> list[CollectionIssue]: ...

    async def read(self, timeout_s: float) -> Reading: ...

    async def close(self) -> None: ...


class ZooKeeperChanges:
    """The four controller watches (`ZooKeeperChangeWatch`) as parts. A session suspended for longer
    than the target's session timeout, or lost, is an unreachable cluster."""

    kind = "ZooKeeper"

    def __init__(self, target: ZooKeeperTarget, executor: Executor) -> None:
        self.target = target
        self.where = f"ZooKeeper {target.connect_string}"
        self.executor = executor
        self._queue: asyncio.Queue[ZnodeChange] = asyncio.Queue()
        self._watch: ZooKeeperChangeWatch | None = None
        self._suspended_at: float | None = None

    async def open(self) -> list[CollectionIssue]:
        loop = asyncio.get_running_loop()

        def notify(change: ZnodeChange) -> None:  # on a kazoo thread
            try:
                loop.call_soon_threadsafe(self._queue.put_nowait, change)
            except RuntimeError:  # the loop is closed: the trigger is gone, and this watch with it
                return

        self._watch = ZooKeeperChangeWatch(self.target, notify)
        return await loop.run_in_executor(self.executor, self._watch.start)

    async def read(self, timeout_s: float) -> Reading:
        if self._suspended_at is not None:
            timeout_s = min(timeout_s, max(0.0, self._suspended_at + self.target.timeout_s - time.monotonic()))
        changes = []
        with contextlib.suppress(TimeoutError):
            changes.append(await asyncio.wait_for(self._queue.get(), timeout=timeout_s))
        while not self._queue.empty():
            changes.append(self._queue.get_nowait())
        found: dict[str, Hashable] = {}
        issues: list[CollectionIssue] = []
        for change in changes:
            self._apply(change, found, issues)
        if self._suspended_at is not None and time.monotonic() - self._suspended_at >= self.target.timeout_s:
            raise ZooKeeperUnreachable(f"{self.where}: no server answered for {self.target.timeout_s:g}s")
        return found, issues

    def _apply(self, change: ZnodeChange, found: dict[str, Hashable], issues: list[CollectionIssue]) -> None:
        issued: list[CollectionIssue] = []
        if change.path == SESSION:
            if change.state == "LOST":
                raise ZooKeeperUnreachable(f"{self.where}: the session was lost")
            if change.state == "SUSPENDED":
                self._suspended_at = self._suspended_at or time.monotonic()
            elif change.state == "CONNECTED":
                self._suspended_at = None
        elif change.path == znodes.BROKER_IDS:
            found[parts.BROKERS], issued = parts.broker_ids_part(change.children)
        elif change.path == znodes.CONTROLLER:
            found[parts.CONTROLLER], issued = parts.controller_part(change.data, change.stat)
        elif change.path == znodes.ISR_CHANGE_NOTIFICATION:
            found[parts.ISR_CHANGE_NOTIFICATIONS] = parts.notifications_part(change.children)
        elif change.path == znodes.REASSIGN_PARTITIONS:
            found[parts.REASSIGNMENT], issued = parts.reassignment_part(change.data, change.stat)
        issues.extend(issued)

    async def close(self) -> None:
        if self._watch is not None:
            await asyncio.get_running_loop().run_in_executor(self.executor, self._watch.stop)
            self._watch = None


class KRaftChanges:
    """`change_poll.poll` every `poll_interval_s` through one admin client, kept between polls, whose
    bootstrap and requests give up after `request_timeout_s`."""

    kind = "KRaft"

    def __init__(
        self, target: KafkaTarget, executor: Executor, poll_interval_s: float, request_timeout_s: float
    ) -> None:
        self.target = replace(target, options=log_dirs.bounded(target.options, request_timeout_s))
        self.where = f"Kafka {target.bootstrap_servers}"
        self.executor = executor
        self.poll_interval_s = poll_interval_s
        self._admin: KafkaAdminClient | None = None
        self._next_poll = 0.0

    async def open(self) -> list[CollectionIssue]:
        self._admin = await asyncio.get_running_loop().run_in_executor(self.executor, self._connect)
        self._next_poll = time.monotonic()
        return []

    def _connect(self) -> KafkaAdminClient:
        try:
            return self.target()
        except KafkaError as e:
            raise KafkaUnreachable(f"cannot reach {self.where}: {type(e).__name__}: {e}") from e

    async def read(self, timeout_s: float) -> Reading:
        wait = self._next_poll - time.monotonic()
        if wait > 0:
            await asyncio.sleep(min(wait, timeout_s))
            if self._next_poll > time.monotonic():
                return {}, []
        self._next_poll = time.monotonic() + self.poll_interval_s
        admin = self._admin
        if admin is None:
            raise KafkaUnreachable(f"{self.where}: the watch is closed")
        return await asyncio.get_running_loop().run_in_executor(self.executor, change_poll.poll, admin)

    async def close(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            await asyncio.get_running_loop().run_in_executor(self.executor, admin.close)


class WithGroupStates:
    """`source`'s parts, and every `interval_s` the consumer groups without members
    (`sources.groups.state_poll`, part `groups_without_members`) read through an admin client of its own
    to `target`, on a thread of its own: a slow or unreachable Kafka never delays `source`'s reads, and
    never stops them (the part stays as it was, logged once, asked again at the next interval)."""

    def __init__(
        self,
        source: ChangeSource,
        target: KafkaTarget,
        *,
        interval_s: float,
        request_timeout_s: float,
        selected: Callable[[str], bool],
    ) -> None:
        self.source = source
        self.kind, self.where = source.kind, f"{source.where}; groups at Kafka {target.bootstrap_servers}"
        self.target = replace(target, options=log_dirs.bounded(target.options, request_timeout_s))
        self.interval_s = interval_s
        self.selected = selected
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafka-ops-watch-groups")
        self._admin: KafkaAdminClient | None = None
        self._pending: asyncio.Future[tuple[Hashable, list[CollectionIssue]]] | None = None
        self._next_poll = 0.0
        self._failing = False
        self._closed = False

    async def open(self) -> list[CollectionIssue]:
        return await self.source.open()

    async def read(self, timeout_s: float) -> Reading:
        found: dict[str, Hashable] = {}
        issues: list[CollectionIssue] = []
        if self._pending is None and time.monotonic() >= self._next_poll:
            self._pending = asyncio.get_running_loop().run_in_executor(self._executor, self._poll)
        if self._pending is not None and self._pending.done():
            done, self._pending = self._pending, None
            self._next_poll = time.monotonic() + self.interval_s
            found[parts.GROUPS_WITHOUT_MEMBERS], issues = done.result()
        until_next = self.interval_s if self._pending is not None else self._next_poll - time.monotonic()
        more, more_issues = await self.source.read(max(0.0, min(timeout_s, until_next)))
        return {**found, **more}, issues + more_issues

    def _poll(self) -> tuple[Hashable, list[CollectionIssue]]:
        try:
            if self._admin is None:
                self._admin = self.target()
            answer = state_poll.memberless_groups(self._admin, self.selected)
        except (KafkaError, OSError) as e:
            if not self._failing:
                log.warning("%s: cannot list the groups without members (%s: %s); retrying", self.where,
                            type(e).__name__, e)  # fmt: skip
            self._failing = True
            self._drop_admin()
            return parts.UNKNOWN, []
        self._failing = False
        return answer

    def _drop_admin(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            with contextlib.suppress(KafkaError, OSError):
                admin.close()

    async def close(self) -> None:
        """Idempotent, as the sources' closes are (the trigger may close a source twice)."""
        if self._closed:
            return
        self._closed = True
        try:  # after the poll in flight, on the thread that polls: the client is used by one thread only
            await asyncio.get_running_loop().run_in_executor(self._executor, self._drop_admin)
        finally:
            self._executor.shutdown(wait=False, cancel_futures=True)
            await self.source.close()
