"""Each partition's states over the analysis window as runs, carried from one analysis to the next.

A partition's state is (state_version, isr, leader, replicas, adding_replicas, removing_replicas,
leader_epoch). A run is one such state of one partition with the first and last snapshot of the window
that saw it (`first`, `last`: positions in `snapshot_order`); only rows with a state (`has_state`)
count. The ISR detectors (`isr_events`, `broker_attribution`, `reassignments`) work on runs, not on the
window's rows: a day of 5-minute snapshots of 20,000 partitions is 5.8 million rows and about 20,000 runs
plus one per change.

Runs compose: the runs of a window are the runs of any split of its snapshots, grouped by partition and
state with the least `first` and the greatest `last`. So each analysis publishes its runs
(`partition_runs`, with the snapshots they cover in `partition_runs_snapshots`) and the next one reads
only them and the rows of the snapshots they do not cover (normally the one new snapshot), instead of
the whole window (`carried`). The window moves on: a run whose last snapshot left it is dropped, and
one that began before it starts at the window's first snapshot, as it would if computed from the
window's rows (unless the partition had no state in that snapshot, e.g. a state znode missing then:
there a run computed from the rows would start at its next observation). The rows are read again
(`rebuilt`) when no previous analysis published runs, its window began later than this one's (a longer
`history_hours`), it analysed a later snapshot, or the analysis reads the lake as of a past time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

from kafka_ops.lake.schema import PARTITION_RUNS_COVERAGE_TABLE as COVERAGE_TABLE  # noqa: F401 - the analysis' names
from kafka_ops.lake.schema import PARTITION_RUNS_TABLE as RUNS_TABLE  # noqa: F401

KEY = ["topic", "partition"]
STATE = ["state_version", "isr", "leader", "replicas", "adding_replicas", "removing_replicas", "leader_epoch"]


def snapshot_order(frame: DataFrame) -> DataFrame:
    """Every distinct snapshot of `frame` as (snapshot_id, captured_at, idx), idx = 1, 2, … by
    (captured_at, snapshot_id)."""
    from pyspark.sql import Window  # noqa: PLC0415 - only Spark callers import pyspark
    from pyspark.sql import functions as F  # noqa: PLC0415

    # one row per snapshot (a few hundred a day): a single window partition is cheap here
    order = Window.orderBy("captured_at", "snapshot_id")
    snapshots = frame.select("snapshot_id", "captured_at").distinct()
    return snapshots.select("snapshot_id", "captured_at", F.row_number().over(order).alias("idx"))


def runs_of(partitions: DataFrame, order: DataFrame) -> DataFrame:
    """Pure: partition rows of snapshots in `order` → their runs: topic, partition, the STATE columns
    (a missing ISR as an empty one), first and last (idx in `order`)."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    isr = F.coalesce(F.col("isr"), F.array().cast("array<int>")).alias("isr")
    state = [isr if c == "isr" else F.col(c) for c in STATE]
    # int aggregation buffers keep this a hash aggregation (struct or string ones force a sort)
    return (
        partitions.where(F.col("has_state"))
        .join(F.broadcast(order.select("snapshot_id", "idx")), "snapshot_id")
        .select(*KEY, *state, "idx")
        .groupBy(*KEY, *STATE)
        .agg(F.min("idx").alias("first"), F.max("idx").alias("last"))
    )


def merged(runs: DataFrame, *state: str) -> DataFrame:
    """`runs` merged on the partition and only the state columns `state` (an ISR change is one
    boundary even when the replica order changed with it, for a detector that reads only the ISR)."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    return runs.groupBy(*KEY, *state).agg(F.min("first").alias("first"), F.max("last").alias("last"))


def extended(previous: DataFrame, rows: DataFrame, order: DataFrame) -> DataFrame:
    """Pure: runs published by an earlier analysis (`stored` form) and the partition rows of the window's
    snapshots they do not cover → the window's runs (see the module docstring)."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    ids = order.select("snapshot_id", "idx")
    carried = (
        previous.join(F.broadcast(ids.withColumnRenamed("snapshot_id", "last_snapshot_id")), "last_snapshot_id")
        .withColumnRenamed("idx", "last")
        .join(F.broadcast(ids.withColumnRenamed("snapshot_id", "first_snapshot_id")), "first_snapshot_id", "left")
        .select(*KEY, *STATE, F.coalesce("idx", F.lit(1)).alias("first"), "last")
    )
    return merged(carried.unionByName(runs_of(rows, order)), *STATE)


def stored(runs: DataFrame, order: DataFrame, snapshot_id: str, captured_at: datetime) -> DataFrame:
    """`runs` as published in `partition_runs`, by the analysis of `snapshot_id`: first and last as
    snapshot ids and capture times."""
    from pyspark.sql import functions as F  # noqa: PLC0415

    def at(idx: str, name: str) -> DataFrame:
        return F.broadcast(
            order.select(
                F.col("idx").alias(idx),
                F.col("snapshot_id").alias(f"{name}_snapshot_id"),
                F.col("captured_at").alias(f"{name}_at"),
            )
        )

    return (
        runs.join(at("first", "first"), "first")
        .join(at("last", "last"), "last")
        .select(
            F.lit(snapshot_id).alias("snapshot_id"),
            F.lit(captured_at).alias("captured_at"),
            *KEY,
            *STATE,
            "first_snapshot_id",
            "first_at",
            "last_snapshot_id",
            "last_at",
        )
    )


@dataclass(frozen=True)
class Previous:
    """An earlier analysis' published runs: the snapshot it analysed, its window's start and the
    snapshots its runs cover."""

    snapshot_id: str
    captured_at: datetime
    window_start: datetime
    covered: frozenset[str]


def usable(previous: Previous | None, since: datetime, captured_at: datetime) -> bool:
    """Whether `previous`'s runs can be carried into the window [since, captured_at]: its window began
    no later and it analysed no later snapshot."""
    return previous is not None and previous.window_start <= since and previous.captured_at <= captured_at


def uncovered(order_rows: Sequence[tuple[str, datetime]], previous: Previous) -> list[tuple[str, datetime]]:
    """The window's snapshots (snapshot_id, captured_at) whose rows `previous`'s runs do not hold."""
    return [(s, at) for s, at in order_rows if s not in previous.covered]
