"""Turn a `GroupSnapshot` into the lake's group tables (see `lake.schema.GROUP_TABLES`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from kafka_ops import __version__
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE, GROUP_TABLES
from kafka_ops.lake.store import Batch
from kafka_ops.model.groups import GroupOffset, GroupSnapshot, StreamsTasks, TopicPartition, read_committed_lag


def _table(name: str, snap: GroupSnapshot, rows: list[dict[str, Any]]) -> pa.Table:
    key = {"snapshot_id": snap.snapshot_id, "captured_at": snap.captured_at}
    return pa.Table.from_pylist([{**key, **row} for row in rows], schema=GROUP_TABLES[name])


def group_batch(snap: GroupSnapshot) -> Batch:
    """All group tables of one collection, committed by their own `group_snapshots` row."""
    rows = {
        GROUP_COMMIT_TABLE: [_commit_row(snap)],
        "consumer_groups": [
            {"group_id": g.group_id, "state": g.state, "protocol_type": g.protocol_type,
             "assignor": g.assignor, "member_count": len(g.members), "group_type": g.group_type,
             "group_epoch": g.group_epoch, "assignment_epoch": g.assignment_epoch,
             "reconciling_member_count": g.reconciling_members if g.group_epoch is not None else None,
             "topology_epoch": g.topology_epoch, "coordinator_id": g.coordinator_id}
            for g in snap.groups
        ],
        "group_members": [
            {"group_id": g.group_id, "member_id": m.member_id, "group_instance_id": m.group_instance_id,
             "client_id": m.client_id, "host": m.host,
             "assigned_partitions": _partitions(m.assignment),
             "subscription": m.subscription, "member_epoch": m.member_epoch, "rack": m.rack,
             "subscribed_topics": m.subscribed_topics, "subscribed_regex": m.subscribed_regex,
             "target_partitions": _partitions(m.target_assignment),
             "reconciling": m.reconciling if m.target_assignment is not None else None,
             "process_id": m.process_id, "tasks": _tasks(m.tasks), "target_tasks": _tasks(m.target_tasks)}
            for g in snap.groups
            for m in g.members
        ],
        "group_offsets": [
            {"group_id": o.group_id, "topic": o.topic, "partition": o.partition,
             "committed_offset": o.committed_offset, "end_offset": o.end_offset, "lag": o.lag,
             "no_commit": o.no_commit, "committed_above_end": o.committed_above_end,
             "topic_deleted": o.topic_deleted, "start_offset": o.start_offset,
             **_record_time(snap, o), "read_committed_lag": read_committed_lag(o, snap.stable_offsets)}
            for o in snap.offsets
        ],
        "group_commits": [
            {"group_id": c.group_id, "topic": c.topic, "partition": c.partition, "committed_offset": c.offset,
             "committed_at": c.committed_at}
            for c in snap.commits
        ],
        "partition_end_offsets": [
            {"topic": t, "partition": p, "end_offset": end, "last_stable_offset": snap.stable_offsets.get((t, p)),
             "log_start_offset": snap.start_offsets.get((t, p))}
            for (t, p), end in sorted(snap.end_offsets.items())
        ],
        "open_transactions": [
            {"transactional_id": x.transactional_id, "producer_id": x.producer_id,
             "producer_epoch": x.producer_epoch, "state": x.state, "coordinator_id": x.coordinator_id,
             "topic": x.topic, "partition": x.partition, "start_time": x.start_time, "timeout_ms": x.timeout_ms,
             "start_offset": x.start_offset, "hanging": x.hanging}
            for x in snap.transactions
        ],
        "group_collection_issues": [
            {"group_id": i.group_id, "kind": i.kind, "problem": i.problem} for i in snap.issues
        ],
    }  # fmt: skip
    tables = {name: _table(name, snap, table_rows) for name, table_rows in rows.items()}
    return Batch(snap.snapshot_id, snap.cluster, snap.captured_at, tables, GROUP_COMMIT_TABLE)


def _record_time(snap: GroupSnapshot, o: GroupOffset) -> dict[str, Any]:
    found = snap.record_times.get((o.topic, o.partition, o.position)) if o.position is not None else None
    if found is None:
        return {"record_timestamp": None, "record_timestamp_type": None}
    at = datetime.fromtimestamp(found.timestamp_ms / 1000, UTC)
    return {"record_timestamp": at, "record_timestamp_type": found.timestamp_type}


def _partitions(partitions: tuple[TopicPartition, ...] | None) -> list[dict[str, Any]] | None:
    return None if partitions is None else [{"topic": t, "partition": p} for t, p in partitions]


def _tasks(tasks: StreamsTasks | None) -> list[dict[str, Any]] | None:
    if tasks is None:
        return None
    kinds = {"active": tasks.active, "standby": tasks.standby, "warmup": tasks.warmup}
    return [{"kind": k, "subtopology": s, "partition": p} for k, ids in kinds.items() for s, p in ids]


def _commit_row(snap: GroupSnapshot) -> dict[str, Any]:
    info = group_summary(snap)
    return {
        "completed_at": snap.completed_at,
        "bootstrap_servers": snap.bootstrap_servers,
        "group_count": info["groups"],
        "member_count": info["members"],
        "offset_count": info["offsets"],
        "partition_count": info["partitions"],
        "total_lag": info["total_lag"],
        "issue_count": info["issues"],
        "collector_version": f"kafka-ops {__version__}",
        "reconciling_member_count": info["reconciling_members"],
    }


def group_summary(snap: GroupSnapshot) -> dict[str, Any]:
    """Headline figures of a group collection (also the XCom payload: no data)."""
    states: dict[str, int] = {}
    types: dict[str, int] = {}
    for g in snap.groups:
        states[g.state] = states.get(g.state, 0) + 1
        types[g.group_type] = types.get(g.group_type, 0) + 1
    return {
        "cluster": snap.cluster,
        "snapshot_id": snap.snapshot_id,
        "groups": len(snap.groups),
        "states": dict(sorted(states.items())),
        "types": dict(sorted(types.items())),
        "members": sum(len(g.members) for g in snap.groups),
        "reconciling_members": sum(g.reconciling_members for g in snap.groups),
        "offsets": len(snap.offsets),
        "partitions": len(snap.end_offsets),
        "total_lag": sum(o.lag for o in snap.offsets if o.lag is not None),
        "no_commit": sum(o.no_commit for o in snap.offsets),
        "committed_above_end": sum(o.committed_above_end for o in snap.offsets),
        "topic_deleted": sum(o.topic_deleted for o in snap.offsets),
        "issues": len(snap.issues),
    }
