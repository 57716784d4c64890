"""A synthetic day (or days) of snapshots, as lake batches in the snapshot tables' exact schemas.

`partitions` partitions (50 per topic, replication factor 3 over `brokers` brokers in 3
racks), one snapshot every 5 minutes. Realistic trouble, every day (a day is 288 snapshots, or
all of them if fewer): one broker is down for an hour (its replicas leave the ISRs, its
leaderships move, then it returns and catches up, leaders stay moved); a few hundred partitions
flap (shrink and expand between two snapshots, seen only as partition-epoch jumps); some
partitions shrink and expand visibly; two controller elections; a reassignment in flight for
the day's last three hours. The cluster's state carries over from one day to the next.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa

from kafka_ops.lake.schema import SNAPSHOT_TABLES
from kafka_ops.lake.store import Batch, Lake

START = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
PER_TOPIC = 50
DAY = 288


def _lists(values: np.ndarray, mask: np.ndarray) -> pa.ListArray:
    """Rows of `values` (n × k) keeping the columns where `mask` is set, as list<int32>."""
    counts = mask.sum(axis=1)
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values[mask].astype(np.int32)))


def _table(name: str, columns: dict[str, object], rows: int, snapshot_id: str, at: datetime) -> pa.Table:
    schema = SNAPSHOT_TABLES[name]
    full = {
        "snapshot_id": pa.array([snapshot_id] * rows),
        "captured_at": pa.array([at] * rows, schema.field("captured_at").type),
    }
    full.update(columns)  # type: ignore[arg-type]
    return pa.table({f.name: full.get(f.name, pa.nulls(rows, f.type)) for f in schema}, schema=schema)


def generate(
    lake_root: str, cluster: str, partitions: int, snapshots: int = 288, brokers: int = 12, seed: int = 1
) -> None:
    """Publish `snapshots` snapshots from `START` into the Parquet lake at `lake_root`."""
    lake = Lake(lake_root)
    for batch in snapshot_batches(cluster, partitions, snapshots, brokers, seed):
        lake.publish(batch)


def snapshot_batches(
    cluster: str,
    partitions: int,
    snapshots: int = 288,
    brokers: int = 12,
    seed: int = 1,
    per_day: int = DAY,
) -> Iterator[Batch]:
    """The batches of `snapshots` snapshots from `START`, `per_day` a day (288: every 5 minutes)."""
    step = timedelta(days=1) / per_day
    rng = np.random.default_rng(seed)
    n = partitions
    topics = np.array([f"topic-{i // PER_TOPIC:05d}" for i in range(n)])
    part = (np.arange(n) % PER_TOPIC).astype(np.int32)
    first = rng.integers(0, brokers, n)
    replicas = np.stack([(first + k * (1 + rng.integers(0, 2, n))) % brokers + 1 for k in range(3)], axis=1)
    replicas[:, 2] = np.where(replicas[:, 2] == replicas[:, 0], (replicas[:, 1] % brokers) + 1, replicas[:, 2])
    replicas[:, 2] = np.where(replicas[:, 2] == replicas[:, 1], (replicas[:, 1] % brokers) + 1, replicas[:, 2])
    in_isr = np.ones((n, 3), dtype=bool)
    leader = replicas[:, 0].copy()
    version = np.zeros(n, dtype=np.int32)
    epoch = np.zeros(n, dtype=np.int32)
    flappers = rng.choice(n, size=max(1, n // 60), replace=False)
    visible = rng.choice(n, size=max(1, n // 100), replace=False)
    day = min(snapshots, per_day)
    down_broker, down_from, down_to = 5, day // 3, day // 3 + 12
    moving = rng.choice(n, size=max(1, n // 500), replace=False)
    controller, controller_epoch = 1, 3
    racks = [f"rack-{'abc'[(b - 1) % 3]}" for b in range(1, brokers + 1)]
    topic_arr = pa.array(topics)
    for s in range(snapshots):
        at = START + s * step
        sid = f"{at:%Y%m%dT%H%M%S}000Z-{cluster}-synth{s:04d}"
        before_isr, before_leader = in_isr.copy(), leader.copy()
        tick = s % day  # the snapshot's place in its day
        down = down_from <= tick < down_to
        on_down = replicas == down_broker
        if down:
            in_isr &= ~on_down
            orphaned = leader == down_broker
            leader[orphaned] = np.where(in_isr[orphaned, 1], replicas[orphaned, 1], replicas[orphaned, 2])
        elif tick == down_to:
            in_isr |= on_down
        flip = visible[rng.random(len(visible)) < 0.05]
        in_isr[flip, 2] = ~in_isr[flip, 2]
        changed = np.any(in_isr != before_isr, axis=1) | (leader != before_leader)
        version += changed.astype(np.int32)
        epoch += (leader != before_leader).astype(np.int32)
        flap_now = flappers[rng.random(len(flappers)) < 0.1]
        version[flap_now] += 2  # shrank and expanded between two snapshots: only the epoch shows it
        if tick in (day // 2, day // 2 + 1):
            controller, controller_epoch = (controller % brokers) + 1, controller_epoch + 1
        registered = [b for b in range(1, brokers + 1) if not (down and b == down_broker)]
        reassigning = tick >= day - 36
        adding = np.zeros((n, 1), dtype=bool)
        tables = {
            "partitions": _table(
                "partitions",
                {
                    "topic": topic_arr,
                    "topic_id": topic_arr,
                    "partition": pa.array(part),
                    "replicas": _lists(replicas, np.ones((n, 3), dtype=bool)),
                    "adding_replicas": _lists(replicas[:, :1], adding),
                    "removing_replicas": _lists(replicas[:, :1], adding),
                    "has_state": pa.array(np.ones(n, dtype=bool)),
                    "leader": pa.array(leader.astype(np.int32)),
                    "leader_epoch": pa.array(epoch),
                    "controller_epoch": pa.array(np.full(n, controller_epoch, np.int32)),
                    "isr": _lists(replicas, in_isr),
                    "state_version": pa.array(version),
                },
                n,
                sid,
                at,
            ),
            "brokers": _table(
                "brokers",
                {
                    "broker_id": pa.array(registered, pa.int32()),
                    "rack": pa.array([racks[b - 1] for b in registered]),
                    "host": pa.array([f"10.0.0.{b}" for b in registered]),
                },
                len(registered),
                sid,
                at,
            ),
            "controller": _table(
                "controller",
                {
                    "controller_id": pa.array([controller], pa.int32()),
                    "controller_epoch": pa.array([controller_epoch], pa.int32()),
                    "elected_at": pa.array([START], pa.timestamp("us", tz="UTC")),
                },
                1,
                sid,
                at,
            ),
            "configs": _table(
                "configs",
                {
                    "entity_type": pa.array(["broker"]),
                    "entity_name": pa.array(["<default>"]),
                    "config_key": pa.array(["min.insync.replicas"]),
                    "config_value": pa.array(["2"]),
                },
                1,
                sid,
                at,
            ),
            "reassignments": _reassignments(replicas, moving, topics, part, brokers, sid, at)
            if reassigning
            else _table("reassignments", {}, 0, sid, at),
            "isr_change_notifications": _table("isr_change_notifications", {}, 0, sid, at),
            "collection_issues": _table("collection_issues", {}, 0, sid, at),  # a clean collection's: none
            "snapshots": _table(
                "snapshots",
                {
                    "broker_count": pa.array([len(registered)], pa.int32()),
                    "partition_count": pa.array([n], pa.int32()),
                    "controller_id": pa.array([controller], pa.int32()),
                    "controller_epoch": pa.array([controller_epoch], pa.int32()),
                },
                1,
                sid,
                at,
            ),
        }
        yield Batch(sid, cluster, at, tables)


def _reassignments(replicas: np.ndarray, moving: np.ndarray, topics: np.ndarray, part: np.ndarray,
                   brokers: int, sid: str, at: datetime) -> pa.Table:  # fmt: skip
    current = replicas[moving]
    target = current.copy()
    target[:, 2] = (current[:, 2] % brokers) + 1
    full = np.concatenate([target, current[:, 2:]], axis=1)
    everything = np.ones(full.shape, dtype=bool)
    return _table("reassignments", {
        "topic": pa.array(topics[moving]), "partition": pa.array(part[moving]),
        "replicas": _lists(full, everything), "target_replicas": _lists(target, np.ones(target.shape, dtype=bool)),
        "adding_replicas": _lists(target[:, 2:], np.ones((len(moving), 1), dtype=bool)),
        "removing_replicas": _lists(current[:, 2:], np.ones((len(moving), 1), dtype=bool)),
        "requested_in_znode": pa.array(np.ones(len(moving), dtype=bool)),
    }, len(moving), sid, at)  # fmt: skip
