"""Which clusters an analysis DAG run analyses, as spark-submit argument lists.

A run triggered by asset events analyses exactly the clusters whose batches triggered it, per
asset: a ZooKeeper snapshot triggers the cluster-health job, a group collection the
consumer-group job. A run with no triggering events (manual, from the UI) analyses every
configured cluster that has a committed batch to analyse, with both jobs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any

from kafka_ops.lake.store import Lake
from kafka_ops.settings import Settings


def spark_arguments(
    settings: Settings, events: Mapping[Any, Iterable[Any]] | None, asset: Any, commit_table: str
) -> list[list[str]]:
    """One job argument list per cluster to analyse for `asset`'s job.

    `events` is the run's `triggering_asset_events` (asset → events whose `extra` names the
    cluster); empty or None for a manual run, which takes every cluster with a batch in
    `commit_table` (the commit log `asset` announces) — a cluster never collected is skipped.
    """
    if events:
        triggered = {e.extra.get("cluster") for e in events.get(asset, ())}
        clusters = [c for c in settings.clusters if c.name in triggered]
    else:
        lake = Lake(settings.lake_root)
        clusters = [c for c in settings.clusters if lake.latest_snapshot_id(c.name, commit_table) is not None]
    return [
        ["--lake", settings.lake_root, "--cluster", c.name, "--thresholds", json.dumps(asdict(c.thresholds))]
        for c in clusters
    ]
