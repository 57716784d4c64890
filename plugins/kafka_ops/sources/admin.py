"""The Admin API sources' one way to use a client: build it from its factory, run one collection,
close it, and turn kafka-python's errors into ours (never a crash that looks like a healthy cluster)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kafka.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError

from kafka_ops.errors import CollectionFailed, KafkaUnreachable

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

T = TypeVar("T")

UNREACHABLE = (KafkaConnectionError, KafkaTimeoutError, OSError)
"""Errors that mean "the cluster cannot be talked to", as opposed to one broker answer's error."""


class AdminFactory(Protocol):
    """Builds a connected admin client; `bootstrap_servers` names it in error messages."""

    @property
    def bootstrap_servers(self) -> str: ...

    def __call__(self) -> KafkaAdminClient: ...


def with_admin(factory: AdminFactory, doing: str, work: Callable[[KafkaAdminClient, str], T]) -> T:
    """`work(admin, where)` on a fresh client, closed after. Raises `KafkaUnreachable` when no broker
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
            return work(admin, where)
    except UNREACHABLE as e:
        raise KafkaUnreachable(f"lost Kafka at {where} while {doing}: {type(e).__name__}: {e}") from e
    except KafkaError as e:
        raise CollectionFailed(f"{doing} at Kafka {where} failed: {type(e).__name__}: {e}") from e
    finally:
        admin.close()


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
