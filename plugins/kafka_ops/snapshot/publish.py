"""Collect one cluster's snapshot (metadata from ZooKeeper or KRaft, or consumer groups) and publish it to the
lake: what the DAG and CLI run."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from functools import partial
from typing import Any

from kafka_ops.capacities import Capacities
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.model.groups import GroupSnapshot
from kafka_ops.snapshot.tables import snapshot_batch, summary
from kafka_ops.sources import log_dirs, tiered
from kafka_ops.sources.admin import AdminFactory
from kafka_ops.sources.groups.collector import GroupCollector, KafkaTarget
from kafka_ops.sources.groups.commit_log import READ_TIMEOUT_S, read_commit_log, read_from
from kafka_ops.sources.groups.tables import group_batch, group_summary
from kafka_ops.sources.kraft.collector import KRaftCollector
from kafka_ops.sources.migration import MigrationWatch, watch
from kafka_ops.sources.probe import ProbeRequest, probe_beside
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget

log = logging.getLogger(__name__)


def collect_metadata(
    cluster: str,
    target: ZooKeeperTarget | AdminFactory,
    migration: MigrationWatch | None = None,
    brokers: AdminFactory | None = None,
) -> ClusterSnapshot:
    """One snapshot from the source `target` names: a ZooKeeper ensemble (`ZooKeeperTarget`), or a
    KRaft cluster's brokers (a `KafkaTarget`, read through the Admin API and the controller quorum,
    log dirs included). A ZooKeeper cluster that is migrating to KRaft is also watched from
    `migration`'s side, and its brokers' log dirs and its remote-storage topics' offsets are read through
    `brokers` (its Kafka connection, bounded in time: see `log_dirs.collect_beside`,
    `tiered.collect_beside`; a Kafka outage is an issue, never a failure). No `brokers`: a ZooKeeper
    snapshot without load rows nor tiered offsets (the DAG logs why: the cluster has no Kafka connection)."""
    if isinstance(target, ZooKeeperTarget):
        snap = ZooKeeperCollector(cluster, target).collect()
        if migration is not None:
            watch(snap, migration)
        if brokers is not None:
            log_dirs.collect_beside(snap, brokers)
            tiered.collect_beside(snap, brokers)
        else:
            snap.remote_storage = tiered.remote_storage(snap)
        return snap
    return KRaftCollector(cluster, target).collect()


def snapshot_to_lake(
    cluster: str,
    target: ZooKeeperTarget | AdminFactory,
    lake: Lake,
    migration: MigrationWatch | None = None,
    brokers: AdminFactory | None = None,
    *,
    capacities: Capacities | None = None,
    probe: ProbeRequest | None = None,
) -> tuple[ClusterSnapshot, dict[str, Any]]:
    """Collect (from ZooKeeper or a KRaft cluster, see `collect_metadata`), `probe` each broker through
    the cluster's Kafka connection where asked (`sources.probe`), publish atomically, and return the
    snapshot with its summary (disk use per broker against `capacities` where set).

    Raises `CollectionFailed` when the cluster cannot be seen at all: nothing is published
    then, so a crashed collection never looks like a healthy cluster.
    """
    snap = collect_metadata(cluster, target, migration, brokers)
    if probe is not None:
        probe_beside(snap, brokers if isinstance(target, ZooKeeperTarget) else target, probe)
    lake.publish(snapshot_batch(snap))
    info = summary(snap, capacities)
    log.info(
        "published %s snapshot %s of %s: %s partitions, %s under-replicated, %s issues",
        snap.source, snap.snapshot_id, cluster, info["partitions"], info["under_replicated"], info["issues"],
    )  # fmt: skip
    for issue in snap.issues[:20]:
        log.warning("collection issue at %s: %s", issue.path, issue.problem)
    return snap, info


def groups_to_lake(
    cluster: str,
    admin_factory: AdminFactory,
    lake: Lake,
    include: str | None = None,
    exclude: str | None = None,
) -> tuple[GroupSnapshot, dict[str, Any]]:
    """Collect `cluster`'s consumer groups and publish them as their own batch.

    The groups' commits logged in `__consumer_offsets` are read from just before the collection
    before this one (`commit_log.read_from`). Raises `KafkaUnreachable` / `CollectionFailed` when the
    groups cannot be collected at all: nothing is published then. Per-group failures are published
    as issue rows.
    """
    commit_log = None
    if isinstance(admin_factory, KafkaTarget):  # the commit log is read with a consumer of its own
        previous = lake.latest_commit(cluster, GROUP_COMMIT_TABLE)
        since = read_from(previous["captured_at"] if previous else None, datetime.now(UTC))  # type: ignore[arg-type]
        target = admin_factory
        commit_log = partial(
            read_commit_log, target.bootstrap_servers, target.options, since=since, timeout_s=READ_TIMEOUT_S
        )
    snap = GroupCollector(cluster, admin_factory, include, exclude, commit_log=commit_log).collect()
    lake.publish(group_batch(snap))
    info = group_summary(snap)
    log.info(
        "published group snapshot %s of %s: %s groups %s, %s offsets, total lag %s, %s issues",
        snap.snapshot_id, cluster, info["groups"], info["states"], info["offsets"], info["total_lag"], info["issues"],
    )  # fmt: skip
    for issue in snap.issues[:20]:
        log.warning("group collection issue (%s, group %s): %s", issue.kind, issue.group_id, issue.problem)
    return snap, info
