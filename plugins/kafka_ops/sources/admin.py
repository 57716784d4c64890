"""The Admin API sources' one way to use a client: build it from its factory, run one collection,
close it, and turn kafka-python's errors into ours (never a crash that looks like a healthy cluster)."""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError

from kafka_ops.errors import CollectionFailed, KafkaUnreachable

log = logging.getLogger(__name__)

T = TypeVar("T")

REFUSED_RETRIES = 2
"""How many times `with_admin` runs a collection again after a broker refused its connection."""

UNREACHABLE = (KafkaConnectionError, KafkaTimeoutError, OSError)
"""Errors that mean "the cluster cannot be talked to", as opposed to one broker answer's error."""


class AdminClient(KafkaAdminClient):
    """`KafkaAdminClient` that sends a request meant for any broker to one that has not refused it.

    kafka-python picks such a broker at random among those in the metadata, and a dead broker stays
    there until the controller fences it (KRaft, `broker.session.timeout.ms`) or its ZooKeeper session
    expires: in that window a collection failed one time in N as "cluster unreachable", and paged
    that instead of the dead broker. A broker whose last connection failed is chosen only when
    every broker's has; one that connects again is chosen as before."""

    def __init__(self, **configs: Any) -> None:
        super().__init__(**configs)
        manager = self._manager
        any_broker = manager.least_loaded_node

        def least_loaded_node() -> Any:
            node = any_broker()
            if node is None or node not in manager._backoff:
                return node
            answering = [b.node_id for b in manager.cluster.brokers() if b.node_id not in manager._backoff]
            return answering[0] if answering else node

        manager.least_loaded_node = least_loaded_node


class AdminFactory(Protocol):
    """Builds a connected admin client; `bootstrap_servers` names it in error messages."""

    @property
    def bootstrap_servers(self) -> str: ...

    def __call__(self) -> KafkaAdminClient: ...


def with_admin(factory: AdminFactory, doing: str, work: Callable[[KafkaAdminClient, str], T]) -> T:
    """`work(admin, where)` on a fresh client, closed after, run again if a broker refused a connection
    (`past_refusals`). Raises `KafkaUnreachable` when no broker
    answers (at bootstrap, or lost while `doing`), `CollectionFailed` for any other Kafka error that
    escapes `work`; a narrower failure `work` records itself. Runs with the garbage collector paused
    (`gc_paused`)."""
    where = factory.bootstrap_servers
    try:
        admin = factory()
    except KafkaError as e:
        raise KafkaUnreachable(f"cannot reach Kafka at {where}: {type(e).__name__}: {e}") from e
    try:
        with gc_paused():
            return past_refusals(lambda: work(admin, where), where)
    except UNREACHABLE as e:
        raise KafkaUnreachable(f"lost Kafka at {where} while {doing}: {type(e).__name__}: {e}") from e
    except KafkaError as e:
        raise CollectionFailed(f"{doing} at Kafka {where} failed: {type(e).__name__}: {e}") from e
    finally:
        admin.close()


def past_refusals(call: Callable[[], T], where: str) -> T:
    """`call()` on an `AdminClient`, made again when a broker refused a connection: the client sends
    the next attempt's requests elsewhere. A timeout is never retried: a hung broker costs one
    timeout, not three."""
    for _ in range(REFUSED_RETRIES):
        try:
            return call()
        except KafkaConnectionError as e:
            log.info("a broker of %s refused a connection (%s): asking again through the others", where, e)
    return call()


async def settled(pending: Iterable[Any]) -> list[Any]:
    """Await requests already in flight (kafka-python futures), in order: each one's answer, or the
    Kafka or connection error it failed with in its place, so one failed request costs only its own
    part of a collection."""
    answers: list[Any] = []
    for future in pending:
        try:
            answers.append(await future)
        except (KafkaError, *UNREACHABLE) as e:
            answers.append(e)
    return answers


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a collection decodes its answers: tens of thousands
    of small response objects (a 10,000-partition snapshot's pages and topic configs), none of them
    cyclic garbage, which the collector would otherwise walk again and again. Measured on the KRaft
    sandbox: a third of the snapshot's time. Back on afterwards, if it was on; what was allocated is
    freed by reference counting as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
