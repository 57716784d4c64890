"""Tiny inline lake-shaped DataFrames for detector tests: only the columns detectors use,
typed exactly as the lake stores them."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import reduce
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from kafka_ops.analysis.partition_runs import RUNS_TABLE, runs_of, snapshot_order

AT = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)

PARTITIONS = (
    "snapshot_id string, captured_at timestamp, topic string, partition int, replicas array<int>, "
    "adding_replicas array<int>, removing_replicas array<int>, has_state boolean, leader int, "
    "leader_epoch int, controller_epoch int, isr array<int>, state_version int, elr array<int>"
)
BROKERS = "snapshot_id string, captured_at timestamp, broker_id int, rack string"
CONFIGS = (
    "snapshot_id string, captured_at timestamp, entity_type string, entity_name string, "
    "config_key string, config_value string"
)
CONTROLLER = (
    "snapshot_id string, captured_at timestamp, controller_id int, elected_at timestamp, "
    "controller_czxid long, kraft_controller_epoch int, controller_epoch int, controller_epoch_mzxid long"
)
REASSIGNMENTS = (
    "snapshot_id string, captured_at timestamp, topic string, partition int, replicas array<int>, "
    "target_replicas array<int>, adding_replicas array<int>, removing_replicas array<int>, "
    "requested_in_znode boolean"
)
ISR_CHANGES = "snapshot_id string, captured_at timestamp, notification string, topic string, partition int"
ADMIN_REQUESTS = "snapshot_id string, captured_at timestamp, request string, topic string, partition int"
SNAPSHOTS = "snapshot_id string, captured_at timestamp"


def partition(
    topic: str, p: int, replicas: list[int], isr: list[int], leader: int | None = None, *,
    snapshot: str = "s1", at: datetime = AT, adding: list[int] | None = None,
    removing: list[int] | None = None, version: int = 0, epoch: int = 0, controller_epoch: int = 1,
    elr: list[int] | None = None,
) -> tuple[Any, ...]:  # fmt: skip
    lead = isr[0] if leader is None and isr else (-1 if leader is None else leader)
    return (snapshot, at, topic, p, replicas, adding or [], removing or [], True, lead, epoch,
            controller_epoch, isr, version, elr)  # fmt: skip


def frame(spark: SparkSession, schema: str, rows: list[tuple[Any, ...]]) -> DataFrame:
    return spark.createDataFrame(rows, schema)


def stateless(topic: str, p: int, replicas: list[int], *, snapshot: str = "s1", at: datetime = AT) -> tuple[Any, ...]:
    """A PARTITIONS row whose state znode is missing (`has_state` false)."""
    return (snapshot, at, topic, p, replicas, [], [], False, None, None, None, None, None, None)


def with_runs(inputs: dict[str, DataFrame]) -> dict[str, DataFrame]:
    """`inputs` (each a window's rows, with `partitions`) as the analysis hands them to a detector
    taking partition runs: plus the window's snapshots (those of every input, where no `snapshots`
    is given) and the runs of its partitions, built as `analysis.runner` builds them."""
    timed = [f.select("snapshot_id", "captured_at") for f in inputs.values() if "captured_at" in f.columns]
    snapshots = inputs.get("snapshots", reduce(lambda a, b: a.union(b), timed).distinct())
    return {**inputs, "snapshots": snapshots, RUNS_TABLE: runs_of(inputs["partitions"], snapshot_order(snapshots))}
