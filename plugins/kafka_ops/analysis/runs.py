"""Time in the snapshot history, shared by detectors: how long ago something was, and since when a
condition has held without a break."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_ops.analysis.detector import Context


def seconds_since(column: str, context: Context) -> Column:
    """Whole seconds from timestamp `column` to the context's snapshot (null when the column is)."""
    now = F.lit(context.captured_at).cast("timestamp")
    return F.unix_timestamp(now) - F.unix_timestamp(F.col(column))


def run_since(now: DataFrame, seen: DataFrame, checked: DataFrame, keys: list[str]) -> DataFrame:
    """For each `keys` row of `now`, when its unbroken run began: the first `captured_at` in `seen`
    (rows of `keys`, snapshot_id, captured_at) after the last snapshot of `checked` (snapshot_id,
    captured_at: the snapshots that could have shown it) that did not show it. Columns: `keys`, `since`."""
    current = now.select(*keys).distinct()
    shown = seen.select(*keys, "snapshot_id").distinct()
    last_without = (
        current.crossJoin(checked.select("snapshot_id", "captured_at").distinct())
        .join(shown, [*keys, "snapshot_id"], "left_anti")
        .groupBy(*keys)
        .agg(F.max("captured_at").alias("last_without"))
    )
    return (
        seen.select(*keys, "captured_at")
        .join(current, keys)
        .join(last_without, keys, "left")
        .where(F.col("last_without").isNull() | (F.col("captured_at") > F.col("last_without")))
        .groupBy(*keys)
        .agg(F.min("captured_at").alias("since"))
    )
