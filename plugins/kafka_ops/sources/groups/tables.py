"""Turn a `GroupSnapshot` into the lake's group tables (see `lake.schema.GROUP_TABLES`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from kafka_ops import __version__
from kafka_ops.lake.schema import GROUP_COMMIT_TABLE, GROUP_TABLES
from kafka_ops.lake.store import Batch
from kafka_ops.sources.groups.model import GroupSnapshot


def _table(name: str, snap: GroupSnapshot, rows: list[dict[str, Any]]) -> pa.Table:
    key = {"snapshot_id": snap.snapshot_id, "captured_at": snap.captured_at}
    return pa.Table.from_pylist([{**key, **row} for row in rows], schema=GROUP_TABLES[name])


def group_batch(snap: GroupSnapshot) -> Batch:
    """All group tables of one collection, committed by their own `group_snapshots` row."""
    rows = {
        GROUP_COMMIT_TABLE: [_commit_row(snap)],
        "consumer_groups": [
            {"group_id": g.group_id, "state": g.state, "protocol_type": g.protocol_type,
             "assignor": g.assignor, "member_count": len(g.members)}
            for g in snap.groups
        ],
        "group_members": [
            {"group_id": g.group_id, "member_id": m.member_id, "group_instance_id": m.group_instance_id,
             "client_id": m.client_id, "host": m.host,
             "assigned_partitions": [{"topic": t, "partition": p} for t, p in m.assignment],
             "subscription": m.subscription}
            for g in snap.groups
            for m in g.members
        ],
        "group_offsets": [
            {"group_id": o.group_id, "topic": o.topic, "partition": o.partition,
             "committed_offset": o.committed_offset, "end_offset": o.end_offset, "lag": o.lag,
             "no_commit": o.no_commit, "committed_above_end": o.committed_above_end,
             "topic_deleted": o.topic_deleted}
            for o in snap.offsets
        ],
        "partition_end_offsets": [
            {"topic": t, "partition": p, "end_offset": end} for (t, p), end in sorted(snap.end_offsets.items())
        ],
        "group_collection_issues": [
            {"group_id": i.group_id, "kind": i.kind, "problem": i.problem} for i in snap.issues
        ],
    }  # fmt: skip
    tables = {name: _table(name, snap, table_rows) for name, table_rows in rows.items()}
    return Batch(snap.snapshot_id, snap.cluster, snap.captured_at, tables, GROUP_COMMIT_TABLE)


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
    }


def group_summary(snap: GroupSnapshot) -> dict[str, Any]:
    """Headline figures of a group collection (also the XCom payload: no data)."""
    states: dict[str, int] = {}
    for g in snap.groups:
        states[g.state] = states.get(g.state, 0) + 1
    return {
        "cluster": snap.cluster,
        "snapshot_id": snap.snapshot_id,
        "groups": len(snap.groups),
        "states": dict(sorted(states.items())),
        "members": sum(len(g.members) for g in snap.groups),
        "offsets": len(snap.offsets),
        "partitions": len(snap.end_offsets),
        "total_lag": sum(o.lag for o in snap.offsets if o.lag is not None),
        "no_commit": sum(o.no_commit for o in snap.offsets),
        "committed_above_end": sum(o.committed_above_end for o in snap.offsets),
        "topic_deleted": sum(o.topic_deleted for o in snap.offsets),
        "issues": len(snap.issues),
    }
