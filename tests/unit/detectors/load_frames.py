"""Lake-shaped frames for the load detector's tests: replica sizes, log dirs, end offsets and group
offsets over several snapshots, typed as the lake stores them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from kafka_ops.analysis.detector import Context
from kafka_ops.capacities import Capacities
from kafka_ops.detectors.partition_load import detect_load
from kafka_ops.thresholds import Thresholds
from tests.unit.detectors.frames import AT, BROKERS, PARTITIONS, partition

REPLICA_SIZES = (
    "snapshot_id string, captured_at timestamp, topic string, partition int, broker_id int, log_dir string, "
    "size_bytes long, offset_lag long, is_future boolean"
)
LOG_DIRS = (
    "snapshot_id string, captured_at timestamp, broker_id int, log_dir string, error string, total_bytes long, "
    "usable_bytes long"
)
END_OFFSETS = (
    "snapshot_id string, captured_at timestamp, topic string, partition int, end_offset long, last_stable_offset long"
)
GROUP_OFFSETS = (
    "snapshot_id string, captured_at timestamp, group_id string, topic string, partition int, "
    "committed_offset long, start_offset long"
)
MINUTE = timedelta(minutes=1)
LATEST = "s3"
"""Snapshots s1, s2, s3 ten minutes apart; s3 (at AT) is the context."""


def at(snapshot: str) -> Any:
    return AT - (3 - int(snapshot[1:])) * 10 * MINUTE


def size(snapshot: str, topic: str, p: int, broker: int, nbytes: int, log_dir: str = "/d1",
         future: bool = False) -> tuple[Any, ...]:  # fmt: skip
    return (snapshot, at(snapshot), topic, p, broker, log_dir, nbytes, 0, future)


def log_dir(broker: int, path: str = "/d1", total: int | None = None, usable: int | None = None,
            error: str | None = None, snapshot: str = LATEST) -> tuple[Any, ...]:  # fmt: skip
    return (snapshot, at(snapshot), broker, path, error, total, usable)


def end_offset(snapshot: str, topic: str, p: int, offset: int) -> tuple[Any, ...]:
    return ("g" + snapshot, at(snapshot), topic, p, offset, offset)


def committed(group: str, topic: str, p: int, offset: int | None, snapshot: str = LATEST) -> tuple[Any, ...]:
    return ("g" + snapshot, at(snapshot), group, topic, p, offset, None)


def run(
    spark: SparkSession,
    *,
    partitions: list[tuple[Any, ...]],
    sizes: list[tuple[Any, ...]],
    dirs: list[tuple[Any, ...]] = (),  # type: ignore[assignment]
    offsets: list[tuple[Any, ...]] = (),  # type: ignore[assignment]
    groups: list[tuple[Any, ...]] = (),  # type: ignore[assignment]
    brokers: list[int] = (1, 2, 3),  # type: ignore[assignment]
    thresholds: Mapping[str, float] | None = None,
    capacity: Mapping[str, Any] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """The detector's tables as sorted lists of row dicts."""
    inputs = {
        "partitions": spark.createDataFrame(partitions, PARTITIONS),
        "brokers": spark.createDataFrame([(LATEST, AT, b, None) for b in brokers], BROKERS),
        "log_dirs": spark.createDataFrame(list(dirs), LOG_DIRS),
        "replica_sizes": spark.createDataFrame(sizes, REPLICA_SIZES),
        "partition_end_offsets": spark.createDataFrame(list(offsets), END_OFFSETS),
        "group_offsets": spark.createDataFrame(list(groups), GROUP_OFFSETS),
    }
    context = Context(
        "c", LATEST, AT, Thresholds.from_mapping(dict(thresholds or {}), "test"),
        capacity=Capacities.from_mapping(dict(capacity or {}), "test"),
    )  # fmt: skip
    return {name: _rows(frame) for name, frame in detect_load(inputs, context).items()}


def _rows(frame: DataFrame) -> list[dict[str, Any]]:
    return sorted((r.asDict() for r in frame.collect()), key=lambda r: [str(v) for v in r.values()])


def leader_of(topic: str, p: int, replicas: list[int]) -> tuple[Any, ...]:
    """A partition of the latest snapshot, led by its first replica, all in sync."""
    return partition(topic, p, replicas, replicas, snapshot=LATEST)
