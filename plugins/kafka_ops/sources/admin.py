"""The Admin API sources' one way to use a client: build it from its factory, run one collection,
close it, and turn kafka-python's errors into ours (never a crash that looks like a healthy cluster)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

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
    escapes `work`; a narrower failure `work` records itself."""
    where = factory.bootstrap_servers
    try:
        admin = factory()
    except KafkaError as e:
        raise KafkaUnreachable(f"cannot reach Kafka at {where}: {type(e).__name__}: {e}") from e
    try:
        return work(admin, where)
    except UNREACHABLE as e:
        raise KafkaUnreachable(f"lost Kafka at {where} while {doing}: {type(e).__name__}: {e}") from e
    except KafkaError as e:
        raise CollectionFailed(f"{doing} at Kafka {where} failed: {type(e).__name__}: {e}") from e
    finally:
        admin.close()
