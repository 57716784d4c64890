"""Watch a Kafka 3.9 cluster while its metadata moves from ZooKeeper to KRaft controllers.

The ZooKeeper snapshot says whether a migration runs: the KRaft controller creates `/migration` when it
starts in migration mode (offset -1), fills it once the metadata is copied into its log, and rewrites it
with every write it mirrors to ZooKeeper (dual-write). Its phase, in Kafka's `ZkMigrationState` terms:

* `pre_migration`: `/migration` holds offset -1. The controllers wait for every broker to restart with
  `zookeeper.metadata.migration.enable` and register with them (each one that did fetches the metadata
  log: it is a quorum observer, so `waiting_brokers` are the ZooKeeper brokers that are not).
* `dual_write` (`MIGRATION`): the metadata lives in the KRaft log, and the active controller mirrors
  every change to ZooKeeper. Brokers are still in ZooKeeper mode (registered under `/brokers/ids`) or
  already restarted as KRaft brokers (`kraft_brokers`: quorum observers not registered in ZooKeeper).
* `post_migration`: no broker runs on ZooKeeper any more and the controllers stopped writing to it for
  `ZOOKEEPER_QUIET_S` (`/migration` untouched while it is rewritten about twice a second in dual-write):
  the controllers were restarted without ZooKeeper; the migration is finalized.

`watch` adds what ZooKeeper cannot tell: the controller quorum (DescribeQuorum on the controllers'
own listener, `controller_bootstrap`), and the divergences between ZooKeeper's partitions and the
KRaft metadata as the brokers serve it (Metadata through the Admin API), field by field. Either part
that cannot be read is a collection issue; the ZooKeeper snapshot stands.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError

from kafka_ops.errors import CollectionFailed
from kafka_ops.model.cluster import ClusterSnapshot, CollectionIssue, Divergence
from kafka_ops.sources.admin import AdminFactory, with_admin
from kafka_ops.sources.kraft.controllers import describe_quorum

ZOOKEEPER_QUIET_S = 60.0
"""Seconds without a write to `/migration` after which the controllers count as no longer dual-writing."""


@dataclass(frozen=True)
class MigrationWatch:
    """Where to look beyond ZooKeeper while a cluster migrates; either part may be missing."""

    controller_bootstrap: str | None = None
    admin_factory: AdminFactory | None = None


@dataclass(frozen=True)
class MigrationStatus:
    """The migration as one snapshot shows it (see the module doc); None fields were not seen."""

    phase: str
    zookeeper_brokers: tuple[int, ...]
    kraft_brokers: tuple[int, ...] | None
    waiting_brokers: tuple[int, ...] | None
    zookeeper_lag: int | None
    """Metadata records the quorum holds that ZooKeeper has not received (high watermark - offset)."""
    seconds_since_zookeeper_write: float
    zookeeper_writes_stopped: bool
    """Dual-write with brokers still on ZooKeeper, but no write to ZooKeeper for `ZOOKEEPER_QUIET_S`."""


def migration_status(snap: ClusterSnapshot) -> MigrationStatus | None:
    """The migration's phase and progress in `snap`, or None when the cluster is not migrating."""
    m = snap.migration
    if m is None:
        return None
    zk_brokers = tuple(sorted(snap.brokers))
    observers = None if snap.quorum is None else set(snap.quorum.observers)
    quiet_s = max(0.0, snap.captured_at.timestamp() - m.modified_ms / 1000)
    quiet = quiet_s > ZOOKEEPER_QUIET_S
    if m.kraft_metadata_offset < 0:
        phase = "pre_migration"
    elif not zk_brokers and quiet:
        phase = "post_migration"
    else:
        phase = "dual_write"
    lag = None
    if snap.quorum is not None and m.kraft_metadata_offset >= 0:
        lag = max(0, snap.quorum.high_watermark - m.kraft_metadata_offset)
    return MigrationStatus(
        phase=phase,
        zookeeper_brokers=zk_brokers,
        kraft_brokers=None if observers is None else tuple(sorted(observers - set(zk_brokers))),
        waiting_brokers=None
        if observers is None or phase != "pre_migration"
        else tuple(b for b in zk_brokers if b not in observers),
        zookeeper_lag=lag,
        seconds_since_zookeeper_write=quiet_s,
        zookeeper_writes_stopped=phase == "dual_write" and bool(zk_brokers) and quiet,
    )


def watch(snap: ClusterSnapshot, where: MigrationWatch) -> None:
    """Add the controller quorum and, while dual-writing, the ZooKeeper/KRaft divergences to a migrating
    cluster's snapshot (before, the KRaft log holds nothing to compare; after, ZooKeeper is abandoned)."""
    if snap.migration is None:
        return
    if where.controller_bootstrap:
        try:
            snap.quorum = describe_quorum(where.controller_bootstrap)
        except CollectionFailed as e:
            snap.issues.append(CollectionIssue(f"DescribeQuorum {where.controller_bootstrap}", str(e), "request"))
    status = migration_status(snap)
    if where.admin_factory is not None and status is not None and status.phase == "dual_write":
        try:
            topics = with_admin(where.admin_factory, "describing topics", _describe_topics)
        except CollectionFailed as e:
            snap.issues.append(CollectionIssue("Metadata (KRaft view)", str(e), "request"))
        else:
            snap.divergences = list(divergences(snap, topics))


def _describe_topics(admin: KafkaAdminClient, where: str) -> list[dict[str, Any]]:
    try:
        return list(admin.describe_topics())
    except KafkaError as e:
        raise CollectionFailed(f"Metadata at {where}: {type(e).__name__}: {e}") from e


def divergences(snap: ClusterSnapshot, kraft_topics: list[dict[str, Any]]) -> Iterator[Divergence]:
    """Every topic and partition field on which ZooKeeper (`snap`) and the brokers' KRaft metadata
    (`describe_topics` rows) disagree: replicas (in order), leader, ISR (as a set), leader epoch."""
    kraft = {t["name"]: t for t in kraft_topics if not t.get("error_code")}
    for topic in sorted(set(snap.topics) | set(kraft)):
        if topic not in kraft or topic not in snap.topics:
            yield Divergence(topic, None, "topic", _present(topic in snap.topics), _present(topic in kraft))
            continue
        theirs = {p["partition_index"]: p for p in kraft[topic]["partitions"]}
        for partition in sorted(set(snap.topics[topic].partitions) | set(theirs)):
            yield from _partition(snap, topic, partition, theirs.get(partition))


def _partition(
    snap: ClusterSnapshot, topic: str, partition: int, theirs: dict[str, Any] | None
) -> Iterator[Divergence]:
    replicas = snap.topics[topic].partitions.get(partition)
    if replicas is None or theirs is None:
        yield Divergence(topic, partition, "partition", _present(replicas is not None), _present(theirs is not None))
        return
    state = snap.partition_states.get((topic, partition))
    ours: dict[str, object] = {"replicas": list(replicas)}
    kraft: dict[str, object] = {"replicas": list(theirs["replica_nodes"])}
    if state is not None:
        ours |= {"leader": state.leader, "isr": sorted(state.isr), "leader_epoch": state.leader_epoch}
        kraft |= {"leader": theirs["leader_id"], "isr": sorted(theirs["isr_nodes"])}
        epoch = theirs.get("leader_epoch")
        kraft["leader_epoch"] = epoch if epoch is not None and epoch >= 0 else state.leader_epoch
    for field_name, value in ours.items():
        if kraft[field_name] != value:
            yield Divergence(topic, partition, field_name, str(value), str(kraft[field_name]))


def _present(present: bool) -> str | None:
    return "present" if present else None
