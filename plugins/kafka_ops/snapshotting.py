"""Collect one cluster's snapshot and publish it to the lake: what the DAG and CLI run."""

from __future__ import annotations

import logging
from typing import Any

from kafka_ops.lake.store import Lake
from kafka_ops.model import ClusterSnapshot
from kafka_ops.snapshot_tables import snapshot_batch, summary
from kafka_ops.zk_collector import ZooKeeperCollector, ZooKeeperTarget

log = logging.getLogger(__name__)


def snapshot_to_lake(cluster: str, target: ZooKeeperTarget, lake: Lake) -> tuple[ClusterSnapshot, dict[str, Any]]:
    """Collect, publish atomically, and return the snapshot with its summary.

    Raises `CollectionFailed` when the cluster cannot be seen at all: nothing is published
    then, so a crashed collection never looks like a healthy cluster.
    """
    snap = ZooKeeperCollector(cluster, target).collect()
    lake.publish(snapshot_batch(snap))
    info = summary(snap)
    log.info(
        "published snapshot %s of %s: %s partitions, %s under-replicated, %s issues",
        snap.snapshot_id, cluster, info["partitions"], info["under_replicated"], info["issues"],
    )  # fmt: skip
    for issue in snap.issues[:20]:
        log.warning("collection issue at %s: %s", issue.path, issue.problem)
    return snap, info
