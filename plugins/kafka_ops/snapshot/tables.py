"""Turn a `ClusterSnapshot` into the lake's snapshot tables (see `lake.schema`)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from kafka_ops import __version__
from kafka_ops.capacities import Capacities
from kafka_ops.lake.schema import DELETE_TOPIC, SNAPSHOT_TABLES
from kafka_ops.lake.store import Batch
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.sources.migration import migration_status

# Values of keys like these never reach the lake (Kafka encrypts most, but not all, of them).
_SECRET_KEY = re.compile(r"password|secret|jaas|credential|token|\.key$|sasl\.", re.IGNORECASE)
HIDDEN = "[hidden]"


def _ts(ms: int | None) -> datetime | None:
    return None if ms is None or ms <= 0 else datetime.fromtimestamp(ms / 1000, tz=UTC)


def _table(name: str, snap: ClusterSnapshot, columns: dict[str, list[Any]]) -> pa.Table:
    rows = len(next(iter(columns.values()))) if columns else 0
    schema = SNAPSHOT_TABLES[name]
    full = {"snapshot_id": [snap.snapshot_id] * rows, "captured_at": [snap.captured_at] * rows}
    full.update(columns)
    return pa.table({f.name: pa.array(full[f.name], f.type) for f in schema}, schema=schema)


def _rows(names: list[str], rows: list[tuple[Any, ...]]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {n: [] for n in names}
    for row in rows:
        for name, value in zip(names, row, strict=True):
            cols[name].append(value)
    return cols


def snapshot_batch(snap: ClusterSnapshot) -> Batch:
    """All tables of one snapshot, ready for `Lake.publish`."""
    builders: dict[str, Callable[[ClusterSnapshot], dict[str, list[Any]]]] = {
        "snapshots": _snapshots,
        "brokers": _brokers,
        "partitions": _partitions,
        "controller": _controller,
        "isr_change_notifications": _isr_changes,
        "log_dir_events": _log_dir_events,
        "reassignments": _reassignments,
        "admin_requests": _admin_requests,
        "configs": _configs,
        "collection_issues": _issues,
        "quotas": _quotas,
        "acls": _acls,
        "config_changes": _config_changes,
        "features": _features,
        "quorum": _quorum,
        "fenced_brokers": _fenced_brokers,
        "migration": _migration,
        "migration_divergences": _divergences,
        "log_dirs": _log_dirs,
        "replica_sizes": _replica_sizes,
        "probe_results": _probe_results,
    }
    tables = {name: _table(name, snap, build(snap)) for name, build in builders.items()}
    return Batch(snap.snapshot_id, snap.cluster, snap.captured_at, tables)


def _snapshots(s: ClusterSnapshot) -> dict[str, list[Any]]:
    return {
        "completed_at": [s.completed_at],
        "source": [s.source],
        "zookeeper": [s.zookeeper],
        "bootstrap_servers": [s.bootstrap_servers],
        "kafka_cluster_id": [s.cluster_id],
        "zxid_start": [s.zxid_start],
        "zxid_end": [s.zxid_end],
        "broker_count": [len(s.brokers)],
        "topic_count": [len(s.topics)],
        "partition_count": [s.partition_count],
        "under_replicated_count": [len(s.under_replicated())],
        "offline_count": [len(s.offline())],
        "controller_id": [s.controller.broker_id if s.controller else None],
        "controller_epoch": [s.controller_epoch],
        "issue_count": [len(s.issues)],
        "metadata_version": [s.metadata_version],
        "collector_version": [f"kafka-ops {__version__}"],
    }


def _brokers(s: ClusterSnapshot) -> dict[str, list[Any]]:
    names = ["broker_id", "host", "port", "endpoints", "rack", "jmx_port", "registered_at",
             "broker_epoch", "znode_version", "cordoned"]  # fmt: skip
    return _rows(names, [
        (b.broker_id, b.host, b.port, list(b.endpoints), b.rack, b.jmx_port,
         _ts(b.registered_at_ms), b.epoch, b.version, b.cordoned)
        for b in sorted(s.brokers.values(), key=lambda b: b.broker_id)
    ])  # fmt: skip


def _partitions(s: ClusterSnapshot) -> dict[str, list[Any]]:
    names = ["topic", "topic_id", "partition", "replicas", "adding_replicas", "removing_replicas",
             "has_state", "leader", "leader_epoch", "controller_epoch", "isr",
             "leader_recovery_state", "state_version", "state_mzxid", "state_mtime",
             "elr", "last_known_elr", "offline_replicas", *_TIERED]  # fmt: skip
    rows: list[tuple[Any, ...]] = []
    states = s.partition_states
    for topic in sorted(s.topics):
        t = s.topics[topic]
        remote = s.remote_storage.get(topic, False)
        for p in sorted(t.partitions):
            st = states.get((topic, p))
            base = (topic, t.topic_id, p, list(t.partitions[p]),
                    list(t.adding_replicas.get(p, ())), list(t.removing_replicas.get(p, ())))  # fmt: skip
            tiered = _tiered(s, topic, p) if remote else _NOT_TIERED
            if st is None:
                rows.append((*base, False, *[None] * 11, remote, *tiered))
            else:
                stat = st.stat
                rows.append((*base, True, st.leader, st.leader_epoch, st.controller_epoch,
                             list(st.isr), st.leader_recovery_state,
                             *((stat.version, stat.mzxid, _ts(stat.mtime_ms)) if stat else (None, None, None)),
                             _list(st.elr), _list(st.last_known_elr), _list(st.offline_replicas),
                             remote, *tiered))  # fmt: skip
    return _rows(names, rows)


_TIERED = ["remote_storage", "local_retention_ms", "local_retention_bytes", "log_start_offset",
           "local_log_start_offset", "tiered_end_offset", "end_offset", "copy_backlog"]  # fmt: skip
_NOT_TIERED = (None,) * (len(_TIERED) - 1)


def _tiered(s: ClusterSnapshot, topic: str, partition: int) -> tuple[Any, ...]:
    """A remote-storage partition's columns after `remote_storage` (None where unknown)."""
    settings, log = s.tiered_topics.get(topic), s.tiered_logs.get((topic, partition))
    return (
        settings.local_retention_ms if settings else None,
        settings.local_retention_bytes if settings else None,
        *((log.log_start_offset, log.local_log_start_offset, log.tiered_end_offset, log.end_offset,
           log.copy_backlog) if log else (None,) * 5),
    )  # fmt: skip


def _controller(s: ClusterSnapshot) -> dict[str, list[Any]]:
    c = s.controller
    return {
        "controller_id": [c.broker_id if c else None],
        "elected_at": [_ts(c.elected_at_ms) if c else None],
        "controller_czxid": [c.stat.czxid if c and c.stat else None],
        "kraft_controller_epoch": [c.kraft_controller_epoch if c else None],
        "controller_epoch": [s.controller_epoch],
        "controller_epoch_mzxid": [s.controller_epoch_stat.mzxid if s.controller_epoch_stat else None],
    }


def _quorum(s: ClusterSnapshot) -> dict[str, list[Any]]:
    q = s.quorum
    names = ["replica_id", "role", "directory_id", "log_end_offset", "lag", "last_fetch_at",
             "last_caught_up_at", "is_leader", "leader_id", "leader_epoch", "high_watermark"]  # fmt: skip
    if q is None:
        return _rows(names, [])
    return _rows(names, [
        (r.replica_id, r.role, r.directory_id, r.log_end_offset, q.lag(r), _ts(r.last_fetch_ms),
         _ts(r.last_caught_up_ms), r.role == "voter" and r.replica_id == q.leader_id, q.leader_id,
         q.leader_epoch, q.high_watermark)
        for r in q.replicas
    ])  # fmt: skip


def _fenced_brokers(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [(b.broker_id, b.host, b.port, b.rack) for b in sorted(s.fenced_brokers.values(), key=lambda b: b.broker_id)]
    return _rows(["broker_id", "host", "port", "rack"], rows)


def _log_dirs(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [(d.broker_id, d.path, d.error, d.total_bytes, d.usable_bytes) for d in s.log_dirs]
    return _rows(["broker_id", "log_dir", "error", "total_bytes", "usable_bytes"], rows)


def _replica_sizes(s: ClusterSnapshot) -> dict[str, list[Any]]:
    """Column by column: a large cluster has a million replicas."""
    names = ["topic", "partition", "broker_id", "log_dir", "size_bytes", "offset_lag", "is_future"]
    return {name: [getattr(r, name) for r in s.replica_sizes] for name in names}


def _probe_results(s: ClusterSnapshot) -> dict[str, list[Any]]:
    names = ["topic", "partition", "leader", "produce_ms", "e2e_ms", "error"]
    return {name: [getattr(r, name) for r in s.probes] for name in names}


def _migration(s: ClusterSnapshot) -> dict[str, list[Any]]:
    names = ["phase", "kraft_controller_id", "kraft_controller_epoch", "kraft_metadata_offset",
             "kraft_metadata_epoch", "zookeeper_written_at", "zookeeper_writes_stopped", "zookeeper_brokers",
             "kraft_brokers", "waiting_brokers", "zookeeper_lag", "divergences"]  # fmt: skip
    status, m = migration_status(s), s.migration
    if status is None or m is None:
        return _rows(names, [])
    return _rows(names, [(
        status.phase, m.kraft_controller_id, m.kraft_controller_epoch, m.kraft_metadata_offset,
        m.kraft_metadata_epoch, _ts(m.modified_ms), status.zookeeper_writes_stopped,
        list(status.zookeeper_brokers), _list(status.kraft_brokers), _list(status.waiting_brokers),
        status.zookeeper_lag, None if s.divergences is None else len(s.divergences),
    )])  # fmt: skip


def _divergences(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [(d.topic, d.partition, d.field, d.zookeeper, d.kraft) for d in s.divergences or []]
    return _rows(["topic", "partition", "field", "zookeeper", "kraft"], rows)


def _list(values: tuple[int, ...] | None) -> list[int] | None:
    return None if values is None else list(values)


def _isr_changes(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [(n.name, t, p, _ts(n.stat.ctime_ms)) for n in s.isr_change_notifications for t, p in n.partitions]
    return _rows(["notification", "topic", "partition", "created_at"], rows)


def _log_dir_events(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [(e.name, e.broker_id, e.event, _ts(e.stat.ctime_ms)) for e in s.log_dir_events]
    return _rows(["notification", "broker_id", "event", "created_at"], rows)


def _reassignments(s: ClusterSnapshot) -> dict[str, list[Any]]:
    requested = {(r.topic, r.partition): list(r.replicas) for r in s.reassignment_requests}
    moving: dict[tuple[str, int], tuple[list[int], list[int], list[int], list[int]]] = {}
    for topic, t in s.topics.items():
        for p in sorted(set(t.adding_replicas) | set(t.removing_replicas)):
            removing = t.removing_replicas.get(p, ())
            target = [r for r in t.partitions[p] if r not in removing]
            moving[(topic, p)] = (list(t.partitions[p]), target,
                                  list(t.adding_replicas.get(p, ())), list(removing))  # fmt: skip
    rows = []
    for key in sorted(set(moving) | set(requested)):
        if key in moving:
            # an Admin API reassignment is in the topic znode only: its target is what stays after removal
            replicas, target, adding, removing_ = moving[key]
        else:  # requested in /admin/reassign_partitions, not started yet: nothing adding or removing
            current = s.topics.get(key[0])
            replicas = list(current.partitions.get(key[1], ())) if current else []
            target, adding, removing_ = requested[key], [], []
        rows.append((key[0], key[1], replicas, requested.get(key, target), adding, removing_, key in requested))
    names = ["topic", "partition", "replicas", "target_replicas", "adding_replicas",
             "removing_replicas", "requested_in_znode"]  # fmt: skip
    return _rows(names, rows)


def _admin_requests(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows: list[tuple[Any, ...]] = [("preferred_replica_election", t, p) for t, p in s.preferred_election_requests]
    rows += [(DELETE_TOPIC, t, None) for t in s.pending_topic_deletions]
    return _rows(["request", "topic", "partition"], rows)


def _configs(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [
        (c.entity_type, c.entity_name, key, HIDDEN if _SECRET_KEY.search(key) else value)
        for c in s.configs
        for key, value in sorted(c.config.items())
    ]
    return _rows(["entity_type", "entity_name", "config_key", "config_value"], rows)


def _quotas(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [
        (q.entity_path, q.user, q.client_id, q.ip, key, value)
        for q in sorted(s.quotas, key=lambda q: q.entity_path)
        for key, value in sorted(q.quotas.items())
    ]
    return _rows(["entity_path", "user", "client_id", "ip", "quota_key", "quota_value"], rows)


def _acls(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [(a.resource_type, a.pattern_type, a.name, a.allow, a.deny, a.principals) for a in s.acls]
    names = ["resource_type", "pattern_type", "resource_name", "allow_count", "deny_count", "principal_count"]
    return _rows(names, rows)


def _config_changes(s: ClusterSnapshot) -> dict[str, list[Any]]:
    rows = [(c.name, c.entity_path, _ts(c.stat.ctime_ms)) for c in s.config_changes]
    return _rows(["notification", "entity_path", "created_at"], rows)


def _features(s: ClusterSnapshot) -> dict[str, list[Any]]:
    f = s.feature
    rows: list[tuple[Any, ...]] = []
    if f is not None:
        rows = [(f.status, name, list(levels.items())) for name, levels in sorted(f.features.items())]
        rows = rows or [(f.status, None, None)]
    return _rows(["status", "feature", "levels"], rows)


def _issues(s: ClusterSnapshot) -> dict[str, list[Any]]:
    return _rows(["path", "kind", "problem"], [(i.path, i.kind, i.problem) for i in s.issues])


def summary(snap: ClusterSnapshot, capacities: Capacities | None = None) -> dict[str, Any]:
    """The headline figures an operator reads first (also the XCom payload: no data). Disk: see
    `_disk_summary`."""
    return {
        "cluster": snap.cluster,
        "snapshot_id": snap.snapshot_id,
        "source": snap.source,
        "brokers": sorted(snap.brokers),
        "fenced_brokers": sorted(snap.fenced_brokers),
        "cordoned_brokers": sorted(b for b, broker in snap.brokers.items() if broker.cordoned),
        "topics": len(snap.topics),
        "partitions": snap.partition_count,
        "under_replicated": len(snap.under_replicated()),
        "offline": len(snap.offline()),
        "controller": snap.controller.broker_id if snap.controller else None,
        "controller_epoch": snap.controller_epoch,
        "reassignments_in_flight": sum(
            len(set(t.adding_replicas) | set(t.removing_replicas)) for t in snap.topics.values()
        ),
        "issues": len(snap.issues),
        "quota_entities": sum(1 for q in snap.quotas if q.quotas),
        "acls": sum(a.allow + a.deny for a in snap.acls),
        "acl_resources": len(snap.acls),
        "config_changes_pending": len(snap.config_changes),
        "zxid_range": [snap.zxid_start, snap.zxid_end],
        "metadata_version": snap.metadata_version,
        "quorum_lagging": _lagging_replicas(snap),
        "migration": _migration_summary(snap),
        **_disk_summary(snap, capacities),
    }


def _disk_summary(snap: ClusterSnapshot, capacities: Capacities | None) -> dict[str, Any]:
    """`disk_bytes`: every replica's size on disk, summed (None when no log dir was described);
    `disk_used_share`: per broker id (a string), its replicas' bytes over its disk capacity, from
    `capacities` where set, else the sum of its log dirs' volume sizes where every one is known."""
    if not snap.log_dirs:
        return {"disk_bytes": None, "disk_used_share": {}}
    used: dict[int, int] = defaultdict(int)
    for r in snap.replica_sizes:
        used[r.broker_id] += r.size_bytes
    volumes: dict[int, list[int | None]] = defaultdict(list)
    for d in snap.log_dirs:
        volumes[d.broker_id].append(d.total_bytes)
    shares = {}
    for broker, totals in sorted(volumes.items()):
        capacity = capacities.of(broker).disk_bytes if capacities is not None else None
        if capacity is None and None not in totals:
            capacity = sum(t for t in totals if t is not None)
        if capacity:
            shares[str(broker)] = round(used[broker] / capacity, 4)
    return {"disk_bytes": sum(used.values()), "disk_used_share": shares}


def _migration_summary(snap: ClusterSnapshot) -> dict[str, Any] | None:
    status = migration_status(snap)
    if status is None:
        return None
    return {
        "phase": status.phase,
        "zookeeper_brokers": list(status.zookeeper_brokers),
        "kraft_brokers": _list(status.kraft_brokers),
        "waiting_brokers": _list(status.waiting_brokers),
        "zookeeper_lag": status.zookeeper_lag,
        "divergences": None if snap.divergences is None else len(snap.divergences),
    }


def _lagging_replicas(snap: ClusterSnapshot) -> list[int]:
    q = snap.quorum
    return [] if q is None else sorted(r.replica_id for r in q.replicas if (q.lag(r) or 0) > 0)


def render_summary(info: dict[str, Any], examples: list[str] | None = None) -> str:
    kraft = info.get("source") == "kraft"
    controller = "quorum leader" if kraft else "broker"
    lines = [
        f"cluster {info['cluster']}  snapshot {info['snapshot_id']}  ({'KRaft' if kraft else 'ZooKeeper'})",
        f"  brokers        {len(info['brokers'])} {info['brokers']}"
        + (f"   fenced {info['fenced_brokers']}" if info.get("fenced_brokers") else "")
        + (f"   cordoned {info['cordoned_brokers']}" if info.get("cordoned_brokers") else ""),
        f"  topics         {info['topics']}",
        f"  partitions     {info['partitions']}",
        f"  under-replicated {info['under_replicated']}   offline {info['offline']}",
        f"  controller     {controller} {info['controller']}  epoch {info['controller_epoch']}",
        f"  reassignments  {info['reassignments_in_flight']} partitions in flight",
        f"  quotas         {info['quota_entities']} entities",
        f"  ACLs           {info['acls']} on {info['acl_resources']} resources",
        f"  errors         {info['issues']} {'requests failed' if kraft else 'znodes could not be read'}",
    ]
    if info.get("disk_bytes") is not None:
        shares = "".join(f"  {b} {share:.1%}" for b, share in info["disk_used_share"].items())
        used = f"; share of disk used{shares}" if shares else ""
        lines.append(f"  disk           {info['disk_bytes']:,} bytes of replicas{used}")
    migration = info.get("migration")
    if migration:
        seen = {k: migration[k] for k in ("waiting_brokers", "kraft_brokers", "zookeeper_lag", "divergences")}
        lines.append(
            f"  migration      {migration['phase']}, brokers on ZooKeeper {migration['zookeeper_brokers']}"
            + "".join(f", {k.replace('_', ' ')} {v}" for k, v in seen.items() if v is not None)
        )
    lines += [f"    {e}" for e in examples or []]
    return "\n".join(lines)


def to_json(info: dict[str, Any]) -> str:
    return json.dumps(info, sort_keys=True)
