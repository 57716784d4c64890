"""What an analysis DAG run analyses: one target per cluster, and the Spark jobs' arguments.

A run triggered by asset events analyses, for each cluster and job its events name (a ZooKeeper
snapshot triggers the cluster-health job, a group collection the consumer-group job), the cluster's
newest batch when the run starts, pinned for the run's validation, jobs and gates: runs go one at a
time, so a run queued behind a long one would otherwise analyse a batch that newer ones have made
stale, and the newest (a consumer group gone to STOP, say) would wait for every run before its own.
A job whose newest batch an earlier run already analysed is left out (a run whose every job is left
out does nothing). A run with no triggering events (manual, from the UI) analyses every configured
cluster's latest batches, with both jobs where the cluster has batches for them. A run with the
`as_of` Param (a Delta lake's time travel) analyses, per cluster, the batches that were the latest
at that time, and carries the Param in its targets so validation, gates, alerts and the report know
the run is about the past.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any, NotRequired, TypedDict

from kafka_ops.analysis.runner import parse_as_of
from kafka_ops.capacities import BrokerCapacity, Capacities
from kafka_ops.errors import ConfigError
from kafka_ops.lake.open import lake_of
from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE, COMMIT_TABLE, GROUP_COMMIT_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.settings import Settings

log = logging.getLogger(__name__)


class Target(TypedDict):
    """One cluster's work in one run; a batch id of None means "the latest"."""

    cluster: str
    zookeeper: bool
    snapshot_id: str | None
    groups: bool
    group_snapshot_id: str | None
    as_of: NotRequired[str]
    """Only in a run with the `as_of` Param (its value): the batch ids are the ones current then."""


def analysis_targets(
    settings: Settings,
    events: Mapping[Any, Iterable[Any]] | None,
    snapshot_asset: Any,
    group_asset: Any,
    as_of: object = None,
) -> list[Target]:
    """One target per cluster to analyse. `events` is the run's `triggering_asset_events`
    (asset → events whose `extra` carries `cluster` and `snapshot_id`); empty for a manual run.
    `as_of` is the run's Param of that name: when set, see `as_of_targets`."""
    if as_of is not None and as_of != "":
        return as_of_targets(settings, as_of)
    if events:
        return newest_targets(settings, events, snapshot_asset, group_asset)
    lake = lake_of(settings)
    targets = []
    for c in settings.clusters:
        has_snapshot = lake.latest_snapshot_id(c.name, COMMIT_TABLE) is not None
        has_groups = lake.latest_snapshot_id(c.name, GROUP_COMMIT_TABLE) is not None
        if has_snapshot or has_groups:
            targets.append(Target(cluster=c.name, zookeeper=has_snapshot, snapshot_id=None, groups=has_groups,
                                  group_snapshot_id=None))  # fmt: skip
    return targets


def newest_targets(
    settings: Settings, events: Mapping[Any, Iterable[Any]], snapshot_asset: Any, group_asset: Any
) -> list[Target]:
    """For each configured cluster and job the events name, the cluster's newest batch of that job's
    commit log (the event's own when the lake lists none), unless an earlier run analysed it already."""
    triggered = {
        COMMIT_TABLE: {e.extra.get("cluster"): e.extra.get("snapshot_id") for e in events.get(snapshot_asset, ())},
        GROUP_COMMIT_TABLE: {e.extra.get("cluster"): e.extra.get("snapshot_id") for e in events.get(group_asset, ())},
    }
    lake = lake_of(settings)
    targets = []
    for c in settings.clusters:
        batch = {
            table: newest_unanalysed(lake, c.name, table, by_cluster[c.name])
            for table, by_cluster in triggered.items()
            if c.name in by_cluster
        }
        snapshot, groups = batch.get(COMMIT_TABLE), batch.get(GROUP_COMMIT_TABLE)
        if snapshot is not None or groups is not None:
            targets.append(Target(cluster=c.name, zookeeper=snapshot is not None, snapshot_id=snapshot,
                                  groups=groups is not None, group_snapshot_id=groups))  # fmt: skip
    return targets


def newest_unanalysed(lake: Lake, cluster: str, commit_table: str, triggered: str | None) -> str | None:
    """The newest batch of `cluster` in `commit_table` (`triggered`, the event's, when the log lists
    none), or None when the analysis of that batch is published already (its `analysis_runs` row:
    rows are dated by the analysed batch's capture, so the newest analysed one is read from the
    newest day or two)."""
    newest = lake.latest_snapshot_id(cluster, commit_table) or triggered
    analysed = lake.latest_commits(cluster, ANALYSIS_COMMIT_TABLE, keep=lambda row: row["source"] == commit_table)
    if newest is not None and analysed and analysed[0]["snapshot_id"] == newest:
        log.info("cluster %s: %s batch %s is analysed already (an earlier run): not analysed again", cluster,
                 commit_table, newest)  # fmt: skip
        return None
    if newest != triggered:
        log.info("cluster %s: analysing %s batch %s, the newest, instead of %s that triggered the run", cluster,
                 commit_table, newest, triggered)  # fmt: skip
    return newest


def as_of_targets(settings: Settings, as_of: object) -> list[Target]:
    """One target per cluster that had batches at time `as_of` (the Param's value): the ZooKeeper
    snapshot and group collection that were its latest then (Delta time travel on the commit logs).
    A Parquet lake keeps no past versions, and a time before any batch has nothing to analyse: a
    `ConfigError` naming the Param, before any work."""
    at = as_of_time(as_of)
    if settings.lake_format != "delta":
        raise ConfigError(
            f"Param 'as_of' ({as_of}): the lake at {settings.lake_root} is a Parquet lake, which keeps no past "
            "versions; an analysis as of a past time needs lake_format = 'delta' (kafka-ops lake migrate), "
            "or leave the Param empty to analyse the lake as it is now"
        )
    lake = lake_of(settings)
    targets = []
    for c in settings.clusters:
        snapshot = batch_then(lake, c.name, at, COMMIT_TABLE)
        groups = batch_then(lake, c.name, at, GROUP_COMMIT_TABLE)
        if snapshot is not None or groups is not None:
            targets.append(Target(cluster=c.name, zookeeper=snapshot is not None, snapshot_id=snapshot,
                                  groups=groups is not None, group_snapshot_id=groups, as_of=str(as_of)))  # fmt: skip
    if not targets:
        names = ", ".join(c.name for c in settings.clusters)
        raise ConfigError(
            f"Param 'as_of' ({as_of}): no configured cluster ({names}) had a snapshot or group collection in the "
            f"lake at {settings.lake_root} then: pick a later time"
        )
    return targets


def batch_then(lake: Lake, cluster: str, at: datetime, commit_table: str) -> str | None:
    """The id of `cluster`'s latest batch in `commit_table` at `at`; None when it had none yet (or
    the table did not exist then). `LakeError` when the table's kept history starts after `at`."""
    from kafka_ops.lake.delta_store import DeltaLake  # noqa: PLC0415 - deltalake only on a Delta lake
    from kafka_ops.lake.time_travel import batch_as_of, version_as_of  # noqa: PLC0415

    if not isinstance(lake, DeltaLake) or version_as_of(lake, commit_table, at) is None:
        return None
    then = batch_as_of(lake, cluster, at, commit_table)
    return then.snapshot_id if then is not None else None


def as_of_time(value: object) -> datetime:
    """The run's `as_of` Param as a time with its zone; a `ConfigError` naming the Param otherwise."""
    if not isinstance(value, str):
        raise ConfigError(f"Param 'as_of': expected an ISO 8601 time, got {value!r}")
    try:
        return parse_as_of(value)
    except argparse.ArgumentTypeError as e:
        raise ConfigError(f"Param 'as_of': {e}") from None


def spark_arguments(
    settings: Settings, targets: Sequence[Target], source: str, as_of: object = None
) -> list[list[str]]:
    """One job argument list per target to analyse with the job of `source` (`snapshots` →
    cluster_health.py, `group_snapshots` → consumer_groups.py); `as_of` is the run's Param of
    that name (an ISO 8601 time with its zone, or None: the lake as it is now)."""
    past = as_of_arguments(as_of)
    out = []
    for target in targets:
        wanted, batch = (
            (target["zookeeper"], target["snapshot_id"])
            if source == COMMIT_TABLE
            else (target["groups"], target["group_snapshot_id"])
        )
        if not wanted:
            continue
        cluster = settings.cluster(target["cluster"])
        args = ["--lake", settings.lake_root, "--cluster", target["cluster"],
                "--thresholds", json.dumps(asdict(cluster.thresholds)),
                "--min-insync-replicas-default", str(cluster.min_insync_replicas_default),
                "--capacity", json.dumps(capacity_table(cluster.capacity)),
                "--lake-format", settings.lake_format]  # fmt: skip
        out.append(args + past + (["--snapshot-id", batch] if batch else []))
    return out


def as_of_arguments(value: object) -> list[str]:
    """The jobs' --as-of for the run's `as_of` Param; a value that is not a time with its zone is a
    `ConfigError` naming the Param."""
    if value is None or value == "":
        return []
    as_of_time(value)
    return ["--as-of", str(value)]


def spark_jars(settings: Settings) -> str:
    """spark-submit's --jars for the analysis jobs (fetched by Maven on the first call): Delta Lake's
    Spark connector when the lake is on Delta, Hadoop's S3A filesystem when its root is on S3
    (`s3://`, `s3a://`); '' for a local Parquet lake. The S3A settings themselves are the session's
    (`analysis.runner.build_session`, from the driver's AWS variables), not spark-submit's --conf."""
    from kafka_ops.jars.fetch import ensure_delta_spark_jars, ensure_spark_s3_jars  # noqa: PLC0415 - Maven once
    from kafka_ops.lake.object_store import is_s3  # noqa: PLC0415

    jars = ensure_delta_spark_jars() if settings.lake_format == "delta" else []
    if is_s3(settings.lake_root):
        jars += ensure_spark_s3_jars()
    return ",".join(str(j) for j in jars)


def capacity_table(capacity: Capacities) -> dict[str, Any]:
    """`capacity` as the `[clusters.capacity]` table it was read from (what the jobs' --capacity parses)."""

    def figures(broker: BrokerCapacity) -> dict[str, Any]:
        return {f.name: value for f in fields(broker) if (value := getattr(broker, f.name)) is not None}

    table: dict[str, Any] = {**figures(capacity.default), "max_disk_share": capacity.max_disk_share}
    if capacity.max_replicas_per_broker is not None:
        table["max_replicas_per_broker"] = capacity.max_replicas_per_broker
    if capacity.brokers:
        table["brokers"] = {str(broker_id): figures(own) for broker_id, own in capacity.brokers}
    return table
