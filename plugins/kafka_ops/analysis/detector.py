"""The detector contract: one detector, one module in `kafka_ops.detectors`, one registry line.

A detector is a pure function from input DataFrames (lake tables, already restricted to one
cluster and to committed snapshots) to findings DataFrames. It never builds a session, reads
files or looks at the clock: "now" is the capture time of the latest snapshot (`Context`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from kafka_ops.capacities import Capacities
from kafka_ops.thresholds import Thresholds

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SEVERITIES = ("ok", "info", "warning", "critical")


@dataclass(frozen=True)
class Context:
    """What a detector may know besides its inputs."""

    cluster: str
    snapshot_id: str
    """The latest snapshot: every findings row is tagged with it."""
    captured_at: datetime
    """Its capture time: the detectors' "now"."""
    thresholds: Thresholds
    min_insync_replicas_default: int = 1
    """The brokers' static `min.insync.replicas` (server.properties), which ZooKeeper does not hold:
    the cluster's setting, assumed wherever no dynamic config or topic override sets min ISR."""
    capacity: Capacities = field(default_factory=Capacities)
    """The brokers' disk and network capacities (`[clusters.capacity]`); None figures are unknown."""


@dataclass(frozen=True)
class Detector:
    """`detect(inputs, context)` returns findings tables by name.

    `source` is the commit log whose latest batch is the context ("now"): `snapshots` (the
    ZooKeeper metadata) or `group_snapshots` (the consumer groups, collected on their own clock).
    `inputs` maps each name in `tables` to a DataFrame of that lake table for this cluster:
    every committed batch captured within `thresholds.history_hours` up to the context's
    (use `latest()` for the context batch's rows); for a table in `latest_only`, which the detector
    reads only at the context batch, it may hold only that batch's rows. `tables` may also name
    `partition_runs`: the window's partition runs (`analysis.partition_runs`), not a lake table read
    but one the analysis builds. Every findings DataFrame must carry the columns
    `snapshot_id` (the context's) and `severity` (one of SEVERITIES); `cluster` and `dt` are
    added from the lake path, so findings must not contain them.
    """

    name: str
    tables: tuple[str, ...]
    detect: Callable[[Mapping[str, DataFrame], Context], dict[str, DataFrame]]
    outputs: tuple[str, ...]
    source: str = "snapshots"
    latest_only: tuple[str, ...] = ()


def latest(frame: DataFrame, context: Context) -> DataFrame:
    """The rows of the context's (latest) snapshot."""
    from pyspark.sql import functions as F  # noqa: PLC0415 - keep this module light

    return frame.where(F.col("snapshot_id") == context.snapshot_id)
