"""ZooKeeper watches on what a ZooKeeper-mode Kafka controller itself watches, for the change watch.

`/brokers/ids` (children: a broker registering or losing its session), `/controller` (an election),
`/isr_change_notification` (children: brokers on an old inter-broker protocol announcing ISR changes)
and `/admin/reassign_partitions` (a reassignment started, progressing, done): four watches, however
many partitions the cluster has, never one per partition.

kazoo runs the watches on its own threads: every change (and every session state change) is handed
to `notify` on such a thread, which must only pass it on (the change watch's trigger puts it on its
asyncio loop with `loop.call_soon_threadsafe`). `start` and `stop` block; call them off any event loop.
kazoo's recipes call `notify` once with each znode's current state when the watch is set, and again
after a reconnection, so a reader sees the state, not only the changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import AuthFailedError, KazooException, NoAuthError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from kafka_ops.errors import NotAKafkaChroot, ZooKeeperAuthFailed, ZooKeeperUnreachable
from kafka_ops.model.cluster import CollectionIssue, ZnodeStat
from kafka_ops.sources.zookeeper import znodes
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget

log = logging.getLogger(__name__)

WATCHED_CHILDREN = (znodes.BROKER_IDS, znodes.ISR_CHANGE_NOTIFICATION)
WATCHED_DATA = (znodes.CONTROLLER, znodes.REASSIGN_PARTITIONS)
SESSION = "session"
"""The `path` of a `ZnodeChange` that tells a session state change (`state`: kazoo's KazooState)."""


@dataclass(frozen=True, slots=True)
class ZnodeChange:
    """One watched znode's state as a watch fired (`children` for a children watch, `data` and `stat`
    for a data watch; `stat` None: the znode does not exist), or with `path` SESSION, the session's
    new `state` ("CONNECTED", "SUSPENDED", "LOST")."""

    path: str
    children: tuple[str, ...] | None = None
    data: bytes | None = None
    stat: ZnodeStat | None = None
    state: str | None = None


Notify = Callable[[ZnodeChange], None]


class ZooKeeperChangeWatch:
    """The four watches on one cluster's chroot, through one kazoo session (see the module docstring)."""

    def __init__(self, target: ZooKeeperTarget, notify: Notify) -> None:
        self.target = target
        self.notify = notify
        self._client: KazooClient | None = None

    def start(self) -> list[CollectionIssue]:
        """Connect and set the watches; returns the issues met (a watched parent znode missing).
        Raises `ZooKeeperUnreachable` (no server answered within the target's timeout),
        `ZooKeeperAuthFailed`, `NotAKafkaChroot`; on any of them nothing is left running."""
        client = self._client = KazooClient(**self.target.kazoo_options())
        try:
            client.start(timeout=self.target.timeout_s)
            if client.exists(znodes.BROKER_IDS) is None:
                raise NotAKafkaChroot(
                    f"no {znodes.BROKER_IDS} under {self.target.connect_string}: is the chroot right?"
                )
            client.add_listener(self._state)
            return self._watch(client)
        except KazooTimeoutError as e:
            self.stop()
            raise ZooKeeperUnreachable(
                f"no ZooKeeper server of {self.target.connect_string} answered within {self.target.timeout_s:g}s"
            ) from e
        except (AuthFailedError, NoAuthError) as e:
            self.stop()
            raise ZooKeeperAuthFailed(f"ZooKeeper at {self.target.connect_string} refused the session: {e!r}") from e
        except KazooException as e:
            self.stop()
            raise ZooKeeperUnreachable(f"ZooKeeper at {self.target.connect_string}: {type(e).__name__}: {e}") from e
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """End the session and kazoo's threads (idempotent)."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.stop()
            except KazooException as e:  # already stopping: the session is gone either way
                log.info("stopping the ZooKeeper session of %s: %r", self.target.connect_string, e)
            client.close()

    def _watch(self, client: KazooClient) -> list[CollectionIssue]:
        issues = []
        for path in WATCHED_CHILDREN:
            if client.exists(path) is None:  # Kafka creates these at startup: a cluster that never ran
                issues.append(CollectionIssue(path, "not present: not watched", "request"))
                continue
            ChildrenWatch(client, path, func=partial(self._children, path))
        for path in WATCHED_DATA:
            DataWatch(client, path, func=partial(self._data, path))
        return issues

    # kazoo's threads call these; a False return would end the watch, so they return None
    def _children(self, path: str, children: list[str]) -> None:
        self.notify(ZnodeChange(path, children=tuple(children)))

    def _data(self, path: str, data: bytes | None, stat: Any) -> None:
        self.notify(ZnodeChange(path, data=data, stat=None if stat is None else znodes.stat_of(stat)))

    def _state(self, state: str) -> None:
        self.notify(ZnodeChange(SESSION, state=str(state)))
