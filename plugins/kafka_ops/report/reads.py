"""Lake reads for the health report that stay small on a lake holding months of history.

`Lake.read` and `Lake.commit_log` read every file of a table for a cluster; the report runs after
every analysis, so it reads only the day partitions it needs (`<table>/cluster=<c>/dt=<day>`, `Lake.read_day`),
finds a named batch by its day and id, and reads one analysis's findings straight from that batch's files
(`validation.lake_batches`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafka_ops.lake.schema import ANALYSIS_COMMIT_TABLE, TABLES
from kafka_ops.lake.store import Lake
from kafka_ops.validation.lake_batches import CommittedBatch, days, find_commit, read_batch_table

Row = dict[str, Any]
Match = Callable[[Row], bool]
_EPOCH = datetime.min.replace(tzinfo=UTC)


def days_between(start: datetime, end: datetime) -> list[str]:
    """The `dt` partition values from `start`'s day to `end`'s, oldest first."""
    out, day = [], start.date()
    while day <= end.date():
        out.append(f"{day:%Y-%m-%d}")
        day += timedelta(days=1)
    return out


def read_days(
    lake: Lake,
    table: str,
    cluster: str,
    wanted_days: Iterable[str],
    *,
    columns: Sequence[str] | None = None,
    where: pc.Expression | None = None,
) -> pa.Table:
    """Rows of `table` in the given day directories (uncommitted rows included: filter on the commit
    log's snapshot ids unless `table` is itself a commit log). Columns as documented in
    `lake.schema` when the table is documented there."""
    schema = TABLES.get(table)
    parts = []
    for dt in wanted_days:
        rows = lake.read_day(table, cluster, dt, columns=columns, where=where)
        if rows is not None:
            parts.append(rows)
    if parts:
        return pa.concat_tables(parts, promote_options="permissive")
    if schema is None:
        return pa.table({c: pa.array([], pa.null()) for c in columns or ()})
    empty = schema.empty_table()
    return empty.select(list(columns)) if columns else empty


def commit_rows(lake: Lake, commit_table: str, cluster: str, start: datetime, end: datetime) -> list[Row]:
    """Commit rows of `commit_table` captured in [start, end], oldest first."""
    data = read_days(lake, commit_table, cluster, days_between(start, end))
    rows = [r for r in data.to_pylist() if start <= r["captured_at"] <= end]
    return sorted(rows, key=lambda r: (r["captured_at"], r["snapshot_id"]))


def latest_commit_row(
    lake: Lake, commit_table: str, cluster: str, *, keep: Match | None = None, until: datetime | None = None
) -> Row | None:
    """The newest commit row of `commit_table` (by captured_at, then `analysed_at`/`validated_at`),
    among rows `keep` accepts that were captured at or before `until`, with its `dt`. Day directories
    are read newest first until one holds such a row."""
    for dt in days(lake, commit_table, cluster):
        if until is not None and dt > f"{until:%Y-%m-%d}":
            continue
        rows = [
            r
            for r in read_days(lake, commit_table, cluster, [dt]).to_pylist()
            if (keep is None or keep(r)) and (until is None or r["captured_at"] <= until)
        ]
        if rows:
            newest: Row = max(rows, key=_commit_order)
            return {**newest, "dt": dt}
    return None


def commit_row_of(lake: Lake, commit_table: str, cluster: str, batch_id: str) -> Row | None:
    """The commit row of batch `batch_id` of `commit_table` (a snapshot's id; `<id>.analysis`,
    `<id>.validation`), with its `dt`, or None when it was never committed. Found by its file's
    path, day by day (a stat per day, no read), as `validation.lake_batches.find_commit` does."""
    batch = find_commit(lake, commit_table, cluster, batch_id)
    if batch is None:
        return None
    return {**batch.commit, "dt": batch.dt}


def findings_table(lake: Lake, cluster: str, analysis: Row, table: str) -> pa.Table | None:
    """Findings `table` of one analysis (its `analysis_runs` row, with `dt`), or None when that
    analysis did not write it."""
    batch_id = f"{analysis['snapshot_id']}.analysis"
    batch = CommittedBatch(cluster, ANALYSIS_COMMIT_TABLE, batch_id, str(analysis["dt"]), analysis)
    return read_batch_table(lake, batch, table)


def _commit_order(row: Row) -> tuple[datetime, datetime, datetime, str]:
    return (
        row["captured_at"],
        row.get("analysed_at") or _EPOCH,
        row.get("validated_at") or _EPOCH,
        str(row["snapshot_id"]),
    )
