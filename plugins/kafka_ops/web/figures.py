"""From a `ClusterView` to the figures every metrics profile names its own way.

One pass over the latest batches gives per-partition lag (messages from the group collection,
seconds and Burrow's status from the latest group analysis), per-group roll-ups, what retention deleted
or can soon delete before the groups read it (`retention_risk_partitions`), the partitions' end and log start
offsets, the partition health counts, leader balance, controller, reassignments and
open alerts, and from the metadata snapshot the cluster's id and version, its brokers, its topics
(partitions, replication factor, cleanup policy) and the bytes its replicas hold on disk. Every part
carries the capture time of the batch it comes from.

Staleness: a part whose batch was captured more than `max_age` before `now` is left out (its
`Part.stale` is true and its figures empty), so a dashboard shows a gap and `kafka_ops_data_stale`
says why, never minutes-old lag presented as current.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafka_ops.alerting.alert import Severity
from kafka_ops.alerting.incidents import ClusterState
from kafka_ops.kafka_types import KAFKA_DEFAULT_CLEANUP_POLICY, metadata_release
from kafka_ops.remediation.lifecycle import counts, oldest_awaiting
from kafka_ops.sources.log_dirs import REQUEST as DESCRIBE_LOG_DIRS
from kafka_ops.web.lake_cache import Batch, ClusterView

Row = dict[str, Any]
STATUS_CODES = {"NOTFOUND": 0, "OK": 1, "WARN": 2, "ERR": 3, "STOP": 4, "STALL": 5, "REWIND": 6}
"""Burrow's `StatusConstant` values (core/protocol/evaluator.go)."""
HEALTH_FLAGS = ("under_replicated", "under_min_isr", "at_min_isr", "offline")
SOURCES = ("metadata", "metadata_analysis", "groups", "group_analysis")


@dataclass(frozen=True)
class Owner:
    member_id: str = ""
    client_id: str = ""
    host: str = ""


@dataclass(frozen=True)
class PartitionLag:
    group: str
    topic: str
    partition: int
    committed_offset: int | None
    end_offset: int | None
    lag: int | None
    owner: Owner
    lag_seconds: float | None = None
    method: str | None = None
    status: str | None = None
    complete: float | None = None
    """How full the partition's Burrow window is (1.0: full), with `status`."""


@dataclass(frozen=True)
class GroupFigures:
    group: str
    state: str | None
    protocol_type: str | None
    assignor: str | None
    members: int
    empty_members: int
    status: str | None = None
    """Burrow's group status (OK, WARN, ERR) from the latest analysis; None when not analysed."""
    max_lag_seconds: float | None = None
    coordinator_id: int | None = None
    topics: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per topic the group's members are assigned: (partitions assigned, members holding one)."""


@dataclass(frozen=True)
class ClusterInfo:
    """The metadata snapshot's view of the cluster as a whole."""

    cluster_id: str | None
    """Kafka's cluster id (ZooKeeper: `/cluster/id`; KRaft: DescribeCluster)."""
    version: str | None
    """The Kafka release of the finalized `metadata.version` ("3.9"): KRaft only, and there the version the
    cluster runs as a whole, below the brokers' software until an upgrade is finalized. None on ZooKeeper,
    whose snapshot holds no broker version, and for a level `kafka_types.metadata_release` does not know."""
    broker_count: int
    controller_id: int | None
    """The active controller (KRaft: the quorum leader, a controller rather than a broker); None: none."""


@dataclass(frozen=True)
class BrokerFigures:
    broker_id: int
    host: str
    port: int | None
    rack: str | None
    is_controller: bool


@dataclass(frozen=True)
class TopicFigures:
    topic: str
    partitions: int
    replication_factor: int
    """The replicas of its lowest partition, as KMinion counts them (a reassignment's adding ones included)."""
    cleanup_policy: str
    """Its `cleanup.policy` override, else Kafka's default (`delete`)."""


@dataclass(frozen=True)
class Part:
    """When a part's batch was captured, and whether it is too old to show."""

    captured_at: datetime | None
    stale: bool

    @property
    def shown(self) -> bool:
        return self.captured_at is not None and not self.stale


@dataclass(frozen=True)
class Alert:
    key: str
    severity: Severity
    title: str
    silenced: bool = False


@dataclass
class ClusterFigures:
    """One cluster's figures; `up` false (with `error`) when its lake could not be read."""

    cluster: str
    up: bool
    error: str | None
    parts: dict[str, Part]
    partitions: list[PartitionLag] = field(default_factory=list)
    groups: list[GroupFigures] = field(default_factory=list)
    end_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    start_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    """Log start offsets of the partitions with an end offset (a partition whose start was not read: absent)."""
    health: pa.Table | None = None
    """The latest analysis' `isr_health` findings (one row per partition), as read."""
    counts: dict[str, int] = field(default_factory=dict)
    """under_replicated, under_min_isr, offline, brokers, partitions (metadata snapshot and analysis)."""
    leaders: Row | None = None
    controller: Row | None = None
    reassignments: list[Row] | None = None
    alerts: list[Alert] = field(default_factory=list)
    remediations: dict[str, int] | None = None
    """Remediation plans per lifecycle state (`remediation.lifecycle`); None when not read."""
    awaiting_approval_s: float | None = None
    """How long the oldest plan awaiting approval has waited; None when none waits."""
    silences: int | None = None
    """Silences in force (`kafka_ops.silences`); None when the alert state was not read."""
    info: ClusterInfo | None = None
    brokers: list[BrokerFigures] = field(default_factory=list)
    topics: list[TopicFigures] = field(default_factory=list)
    broker_bytes: dict[int, int] = field(default_factory=dict)
    """Replica bytes on disk per broker that described its log dirs (DescribeLogDirs), future replicas included."""
    topic_bytes: dict[str, int] = field(default_factory=dict)
    """Replica bytes per topic, summed over every broker; empty when some broker or log dir could not be
    described (a partial sum would look like a topic shrinking)."""
    retention: list[Row] | None = None
    """The latest group analysis' `retention_risk_partitions` rows; None when the view holds none (not analysed,
    stale, or not read by the lake cache)."""
    probes: list[Row] = field(default_factory=list)
    """The latest metadata snapshot's `probe_results` (empty: not probed)."""
    tiered: list[Row] = field(default_factory=list)
    """The latest metadata snapshot's `partitions` rows of topics with remote storage (tiered storage,
    KIP-405), with `local_bytes`, the leader's replica size (DescribeLogDirs: local segments only; null
    when unknown). Empty: no such topic."""
    catching_up: list[Row] | None = None
    """The latest group analysis' `lag_time_groups` rows (lag velocity, trend, time to close); None as above."""


def parts_of(view: ClusterView, now: datetime, max_age: timedelta) -> dict[str, Part]:
    """Each source's capture time and staleness as of `now`."""
    return {source: _part(getattr(view, source), now, max_age) for source in SOURCES}


def cluster_figures(
    view: ClusterView, now: datetime, max_age: timedelta, *, parts_only: bool = False
) -> ClusterFigures:
    """The figures of `view` as of `now` (see the module docstring for staleness); with `parts_only`,
    only whether it is up and its parts' times."""
    parts = parts_of(view, now, max_age)
    figures = ClusterFigures(view.cluster, view.error is None, view.error, parts)
    if view.error is not None or parts_only:
        return figures
    if parts["groups"].shown and view.groups is not None:
        analysis = view.group_analysis if parts["group_analysis"].shown else None
        _groups(figures, view.groups, analysis)
    if parts["metadata"].shown and view.metadata is not None:
        _metadata(figures, view.metadata)
    if parts["metadata_analysis"].shown and view.metadata_analysis is not None:
        _metadata_findings(figures, view.metadata_analysis)
    if view.incidents is not None:
        figures.alerts, figures.silences = alerts_of(view.incidents, now)
    if view.lifecycles is not None:
        figures.remediations = counts(view.lifecycles)
        figures.awaiting_approval_s = oldest_awaiting(view.lifecycles, now)
    return figures


def alerts_of(state: ClusterState, now: datetime) -> tuple[list[Alert], int]:
    """The open incidents of `state` by key (one cleared and only waiting for its resolves is not open),
    and how many of its silences are in force at `now`."""
    alerts = [
        Alert(i.key, i.severity, i.title, i.silenced is not None)
        for i in sorted(state.incidents.values(), key=lambda i: i.key)
        if i.cleared_at is None
    ]
    return alerts, sum(s.active(now) for s in state.silences)


def group_lag(analysis: Batch) -> tuple[dict[str, str], dict[str, float]]:
    """Per group of a group analysis, Burrow's status (`lag_status_groups`: OK, WARN, ERR) and how far its
    worst partition is behind in seconds (`lag_time_groups`; a group with no such figure is absent)."""
    status = {r["group_id"]: r["status"] for r in analysis.rows("lag_status_groups") or []}
    seconds = {
        r["group_id"]: r["max_lag_seconds"]
        for r in analysis.rows("lag_time_groups") or []
        if r.get("max_lag_seconds") is not None
    }
    return status, seconds


def _part(batch: Batch | None, now: datetime, max_age: timedelta) -> Part:
    if batch is None:
        return Part(None, stale=False)
    return Part(batch.captured_at, stale=now - batch.captured_at > max_age)


def _groups(figures: ClusterFigures, groups: Batch, analysis: Batch | None) -> None:
    owners: dict[tuple[str, str, int], Owner] = {}
    members: dict[str, int] = defaultdict(int)
    empty: dict[str, int] = defaultdict(int)
    topics: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for m in groups.rows("group_members") or []:
        owner = Owner(m["member_id"], m.get("client_id") or "", m.get("host") or "")
        assigned = m.get("assigned_partitions") or []
        members[m["group_id"]] += 1
        empty[m["group_id"]] += not assigned
        for tp in assigned:
            owners[(m["group_id"], tp["topic"], tp["partition"])] = owner
            topics[m["group_id"]][tp["topic"]][0] += 1
        for topic in {tp["topic"] for tp in assigned}:
            topics[m["group_id"]][topic][1] += 1
    seconds, statuses, group_status, group_seconds = _analysed(analysis)
    figures.retention = analysis.rows("retention_risk_partitions") if analysis is not None else None
    figures.catching_up = analysis.rows("lag_time_groups") if analysis is not None else None
    for r in groups.rows("group_offsets") or []:
        key = (r["group_id"], r["topic"], r["partition"])
        if r.get("topic_deleted"):
            continue
        committed = r.get("committed_offset")
        known = r.get("lag") is not None and r.get("end_offset") is not None
        if committed is None and r.get("start_offset") is not None and known:
            committed = r["end_offset"] - r["lag"]  # a share group: its position, as lag_status takes it
        lag_seconds, method = seconds.get(key, (None, None))
        status, complete = statuses.get(key, (None, None))
        figures.partitions.append(
            PartitionLag(
                *key,
                committed,
                r.get("end_offset"),
                r.get("lag"),
                owners.get(key, Owner()),
                lag_seconds,
                method,
                status,
                complete,
            )
        )
    for g in groups.rows("consumer_groups") or []:
        gid = g["group_id"]
        figures.groups.append(
            GroupFigures(
                gid,
                g.get("state"),
                g.get("protocol_type"),
                g.get("assignor"),
                members[gid],
                empty[gid],
                group_status.get(gid),
                group_seconds.get(gid),
                g.get("coordinator_id"),
                {t: (n[0], n[1]) for t, n in sorted(topics[gid].items())},
            )
        )
    ends = groups.rows("partition_end_offsets") or []
    figures.end_offsets = {(r["topic"], r["partition"]): r["end_offset"] for r in ends}
    figures.start_offsets = {
        (r["topic"], r["partition"]): r["log_start_offset"] for r in ends if r.get("log_start_offset") is not None
    }


def _metadata(figures: ClusterFigures, snapshot: Batch) -> None:
    """The snapshot's headline counts, cluster info, brokers, topics and replica bytes."""
    commit = snapshot.commit
    figures.counts = {
        "brokers": int(commit.get("broker_count") or 0),
        "partitions": int(commit.get("partition_count") or 0),
        "under_replicated": int(commit.get("under_replicated_count") or 0),
        "offline": int(commit.get("offline_count") or 0),
    }
    controller = commit.get("controller_id")
    figures.info = ClusterInfo(
        commit.get("kafka_cluster_id"), metadata_release(commit.get("metadata_version")),
        figures.counts["brokers"], controller,
    )  # fmt: skip
    figures.brokers = [
        BrokerFigures(b["broker_id"], *_address(b), b.get("rack"), b["broker_id"] == controller)
        for b in sorted(snapshot.rows("brokers") or [], key=lambda b: b["broker_id"])
    ]
    figures.topics = _topics(snapshot)
    figures.broker_bytes, figures.topic_bytes = _replica_bytes(snapshot)
    figures.probes = snapshot.rows("probe_results") or []
    figures.tiered = _tiered(snapshot)


TIERED_COLUMNS = ("topic", "partition", "leader", "local_retention_ms", "local_retention_bytes", "log_start_offset",
                  "local_log_start_offset", "tiered_end_offset", "end_offset", "copy_backlog")  # fmt: skip


def _tiered(snapshot: Batch) -> list[Row]:
    """The remote-storage partitions' rows (`TIERED_COLUMNS`, filtered in Arrow: a snapshot has 100,000
    partitions and few tiered ones) with the leader's local bytes."""
    partitions = snapshot.tables.get("partitions")
    if partitions is None or "remote_storage" not in partitions.column_names or partitions.num_rows == 0:
        return []
    on = partitions.filter(pc.fill_null(pc.equal(partitions.column("remote_storage"), True), False))
    rows = on.select(list(TIERED_COLUMNS)).to_pylist()
    if not rows:
        return []
    wanted = {(r["topic"], r["partition"], r["leader"]) for r in rows}
    local = {
        (s["topic"], s["partition"]): s["size_bytes"]
        for s in snapshot.rows("replica_sizes") or []
        if (s["topic"], s["partition"], s["broker_id"]) in wanted and not s.get("is_future")
    }
    return [{**r, "local_bytes": local.get((r["topic"], r["partition"]))} for r in rows]


def _address(broker: Row) -> tuple[str, int | None]:
    """The broker's host and port as registered; a ZooKeeper registration without a PLAINTEXT listener
    has neither (host null, port -1), so then its first endpoint's (`SASL_SSL://kafka-1:9093`)."""
    host, port = broker.get("host"), broker.get("port")
    if host and port is not None and port >= 0:
        return host, port
    for endpoint in broker.get("endpoints") or []:
        name, _, number = endpoint.partition("://")[2].rpartition(":")
        if name and number.isdigit():
            return name.strip("[]"), int(number)
    return host or "", None


def _topics(snapshot: Batch) -> list[TopicFigures]:
    """Every topic of the snapshot: partition count and replication factor (in Arrow: 100,000
    partitions), and cleanup policy."""
    partitions = snapshot.tables.get("partitions")
    if partitions is None or partitions.num_rows == 0:
        return []
    ordered = partitions.select(["topic", "partition", "replicas"]).sort_by([("topic", "ascending"),
                                                                             ("partition", "ascending")])  # fmt: skip
    factors = pc.fill_null(pc.list_value_length(ordered.column("replicas")), 0)
    counted = (
        pa.table({"topic": ordered.column("topic"), "factor": factors})
        .group_by("topic", use_threads=False)  # ordered: "first" is the lowest partition's
        .aggregate([("factor", "count"), ("factor", "first")])
        .sort_by("topic")
    )
    policies = {
        c["entity_name"]: c["config_value"]
        for c in snapshot.rows("configs") or []
        if c["entity_type"] == "topic" and c["config_key"] == "cleanup.policy" and c.get("config_value")
    }
    return [
        TopicFigures(topic, count, factor, policies.get(topic, KAFKA_DEFAULT_CLEANUP_POLICY))
        for topic, count, factor in zip(
            counted.column("topic").to_pylist(),
            counted.column("factor_count").to_pylist(),
            counted.column("factor_first").to_pylist(),
            strict=True,
        )
    ]


def _replica_bytes(snapshot: Batch) -> tuple[dict[int, int], dict[str, int]]:
    """(bytes per broker, bytes per topic) of the snapshot's replicas; per topic only when every broker
    and log dir was described (DescribeLogDirs left no collection issue)."""
    sizes = snapshot.tables.get("replica_sizes")
    if sizes is None or sizes.num_rows == 0:
        return {}, {}
    per_broker = sizes.group_by("broker_id").aggregate([("size_bytes", "sum")])
    broker_bytes = dict(
        zip(per_broker.column("broker_id").to_pylist(), per_broker.column("size_bytes_sum").to_pylist(), strict=True)
    )
    issues = snapshot.tables.get("collection_issues")
    if issues is None or pc.any(pc.starts_with(issues.column("path"), DESCRIBE_LOG_DIRS)).as_py():
        return broker_bytes, {}
    per_topic = sizes.group_by("topic").aggregate([("size_bytes", "sum")])
    topic_bytes = dict(
        zip(per_topic.column("topic").to_pylist(), per_topic.column("size_bytes_sum").to_pylist(), strict=True)
    )
    return broker_bytes, topic_bytes


Key = tuple[str, str, int]


def _analysed(
    analysis: Batch | None,
) -> tuple[
    dict[Key, tuple[float | None, str | None]], dict[Key, tuple[str, float | None]], dict[str, str], dict[str, float]
]:
    if analysis is None:
        return {}, {}, {}, {}
    seconds = {
        (r["group_id"], r["topic"], r["partition"]): (r.get("lag_seconds"), r.get("method"))
        for r in analysis.rows("lag_time_partitions") or []
    }
    statuses = {
        (r["group_id"], r["topic"], r["partition"]): (r["status"], r.get("complete"))
        for r in analysis.rows("lag_status_partitions") or []
    }
    return seconds, statuses, *group_lag(analysis)


def _metadata_findings(figures: ClusterFigures, analysis: Batch) -> None:
    health = analysis.tables.get("isr_health")
    if health is not None:
        figures.health = health
        # the detector's flags, as kafka-topics' --under-replicated / --under-min-isr partitions count them
        figures.counts = {**figures.counts, **{flag: _count(health, flag) for flag in HEALTH_FLAGS}}
    leaders = analysis.rows("leader_balance_cluster")
    figures.leaders = leaders[0] if leaders else None
    controller = analysis.rows("controller_health")
    figures.controller = controller[0] if controller else None
    figures.reassignments = analysis.rows("reassignments_in_flight")


def _count(health: pa.Table, flag: str) -> int:
    """Rows with `flag` set (the detector's boolean column), or, in findings without it, with that status."""
    column = health.column(flag) if flag in health.column_names else pc.equal(health.column("status"), flag)
    return int(pc.sum(pc.cast(column, pa.int64())).as_py() or 0)
