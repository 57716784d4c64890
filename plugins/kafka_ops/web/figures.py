"""From a `ClusterView` to the figures every metrics profile names its own way.

One pass over the latest batches gives per-partition lag (messages from the group collection,
seconds and Burrow's status from the latest group analysis), per-group roll-ups, the partitions'
end offsets, the partition health counts, leader balance, controller, reassignments and open
alerts. Every part carries the capture time of the batch it comes from.

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
    severity: str
    title: str


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
    health: pa.Table | None = None
    """The latest analysis' `isr_health` findings (one row per partition), as read."""
    counts: dict[str, int] = field(default_factory=dict)
    """under_replicated, under_min_isr, offline, brokers, partitions (metadata snapshot and analysis)."""
    leaders: Row | None = None
    controller: Row | None = None
    reassignments: list[Row] | None = None
    alerts: list[Alert] = field(default_factory=list)


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
        commit = view.metadata.commit
        figures.counts = {
            "brokers": int(commit.get("broker_count") or 0),
            "partitions": int(commit.get("partition_count") or 0),
            "under_replicated": int(commit.get("under_replicated_count") or 0),
            "offline": int(commit.get("offline_count") or 0),
        }
    if parts["metadata_analysis"].shown and view.metadata_analysis is not None:
        _metadata_findings(figures, view.metadata_analysis)
    if view.incidents is not None:
        figures.alerts = [
            Alert(i.key, i.severity, i.title)
            for i in sorted(view.incidents.incidents.values(), key=lambda i: i.key)
            if i.cleared_at is None
        ]
    return figures


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
    figures.end_offsets = {
        (r["topic"], r["partition"]): r["end_offset"] for r in groups.rows("partition_end_offsets") or []
    }


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
    group_status = {r["group_id"]: r["status"] for r in analysis.rows("lag_status_groups") or []}
    group_seconds = {
        r["group_id"]: r["max_lag_seconds"]
        for r in analysis.rows("lag_time_groups") or []
        if r.get("max_lag_seconds") is not None
    }
    return seconds, statuses, group_status, group_seconds


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
