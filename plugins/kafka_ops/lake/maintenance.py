"""Lake maintenance, run daily by `kafka_lake_maintenance`: retention, then each Delta table tidied.

`maintain(lake, policy, now)`:

1. retention (`lake.retention.expire`): batches older than the policy keeps leave the lake whole,
   commit rows first; on the Parquet lake too;
2. for each Delta table (the Parquet lake has no more to do: one file per batch, no log):
   * compaction: each (cluster, dt) partition of a closed, kept day (`dt` before `now`'s day and
     not expiring: expired rows wait for their deletion, see `lake.retention`) holding
     more than one file is rewritten by delta-rs `optimize.compact` into files of up to
     `compact_target_mb` (a day of 5-minute snapshots, 288 files per table, ends as one file
     unless it is bigger than that). Compaction changes no rows (`dataChange=false`): readers
     of any version see the same batches. Today's partition is left to the next run;
   * vacuum: files that a newer version replaced (compaction, retention) more than
     `vacuum_retention_hours` ago are deleted, and so are files no version ever committed (a
     writer killed mid-publish) once that old. That is also how far back time travel reaches.
     delta-rs refuses less than 168 h unless told not to enforce its floor: the settings
     enforce their own (at least 24 h and every cluster's analysis `history_hours`, the longest
     read the lake serves), so the floor is lifted only below 168 h;
   * a checkpoint of the current version, then the log cleanup: log entries older than
     `log_retention_hours` (the tables' `delta.logRetentionDuration`, set here, as is
     `delta.deletedFileRetentionDuration`, so Spark's own VACUUM and log cleanup agree; and
     `delta.checkpointInterval`, for a table created before the writers set it) and older than
     the checkpoint are deleted.

Every step is idempotent: a rerun after a crash or a retry redoes only what is left. One table
failing does not stop the others; `maintain` then raises a `LakeError` naming each failure.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from deltalake import DeltaTable, WriterProperties
from deltalake.exceptions import DeltaError

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import TABLE_PROPERTIES, DeltaLake
from kafka_ops.lake.policy import RetentionPolicy
from kafka_ops.lake.retention import Expired, Progress, cutoff_of, expire, lake_tables
from kafka_ops.lake.schema import commit_table_of
from kafka_ops.lake.store import Lake

log = logging.getLogger(__name__)

DELTA_VACUUM_FLOOR_HOURS = 168
"""delta-rs refuses a shorter vacuum retention unless `enforce_retention_duration=False`."""


@dataclass(frozen=True)
class Compaction:
    """One (cluster, dt) partition of `table` compacted."""

    table: str
    cluster: str
    dt: str
    files_before: int
    files_after: int
    bytes_before: int
    bytes_after: int


@dataclass(frozen=True)
class TableMaintenance:
    """What maintenance did to one Delta table, and the table after it."""

    table: str
    compactions: tuple[Compaction, ...]
    files_vacuumed: int
    version: int
    """The version checkpointed."""
    files: int
    bytes: int
    most_files_in_a_closed_day: int
    """The most files any (cluster, dt) partition of a closed day holds after compaction (days
    expiring, whose rows are already invisible, left out)."""


@dataclass(frozen=True)
class MaintenanceReport:
    expired: tuple[Expired, ...]
    tables: tuple[TableMaintenance, ...]
    """Empty on the Parquet lake (nothing to compact or vacuum)."""

    @property
    def files_per_table_day(self) -> int:
        """The most files of any table in any closed day of any cluster, after maintenance."""
        return max((t.most_files_in_a_closed_day for t in self.tables), default=0)

    def summary(self) -> dict[str, Any]:
        """Counts small enough for XCom."""
        return {
            "rows_expired": sum(e.rows for e in self.expired),
            "partitions_compacted": sum(len(t.compactions) for t in self.tables),
            "files_vacuumed": sum(t.files_vacuumed for t in self.tables),
            "files_per_table_day": self.files_per_table_day,
            "bytes": sum(t.bytes for t in self.tables),
        }


def maintain(lake: Lake, policy: RetentionPolicy, now: datetime, log: Progress | None = None) -> MaintenanceReport:
    """Retention, then compaction, vacuum, checkpoint and log cleanup of every Delta table (see
    the module docstring). `now` is the run's logical time: it decides which days expire and
    which are closed. Raises `LakeError` naming every table that failed, after doing the others."""
    say = log or _log_info
    expired = expire(lake, policy, now, say)
    report = MaintenanceReport(tuple(expired), tidy(lake, policy, now, say))
    say(f"done: {report.summary()}")
    return report


def tidy(
    lake: Lake, policy: RetentionPolicy, now: datetime, log: Progress | None = None
) -> tuple[TableMaintenance, ...]:
    """Step 2 of `maintain`: compaction, vacuum, checkpoint and log cleanup of every Delta table;
    nothing on the Parquet lake. Raises `LakeError` naming every table that failed, after the others."""
    say = log or _log_info
    if not isinstance(lake, DeltaLake):
        say(f"{lake.root} is a Parquet lake: one file per batch and no log, so no compaction or vacuum")
        return ()
    done, failed = [], []
    for table in lake_tables(lake):
        try:
            days = policy.keep_days(commit_table_of(table))
            expiring = cutoff_of(now, days) if days is not None else ""  # invisible: gone next run
            done.append(_maintain_table(lake, table, policy, (expiring, f"{now:%Y-%m-%d}"), say))
        except (DeltaError, OSError, LakeError) as e:
            say(f"{table}: FAILED: {e}")
            failed.append(f"{table}: {e}")
    if failed:
        raise LakeError(
            f"maintenance of the Delta lake at {lake.root} failed for {len(failed)} table(s), the others were done; "
            f"rerun it (every step is idempotent): {'; '.join(failed)}"
        )
    return tuple(done)


def _maintain_table(
    lake: DeltaLake, table: str, policy: RetentionPolicy, days: tuple[str, str], say: Progress
) -> TableMaintenance:
    """Compact the days from `days[0]` (the first kept) to before `days[1]` (today), vacuum, checkpoint."""
    kept, today = days
    delta = lake.open_table(table)
    if delta is None:
        raise LakeError(f"no Delta table {lake.table_uri(table)}")
    _set_retention_properties(delta, policy)
    compactions = []
    files, sizes = _partitions(delta)
    for cluster, dt in sorted(p for p in files if kept <= p[1] < today and files[p] > 1):
        delta.optimize.compact(
            partition_filters=[("cluster", "=", cluster), ("dt", "=", dt)],
            target_size=policy.compact_target_mb * 2**20,
            writer_properties=WriterProperties(compression="ZSTD"),  # as the writers
        )
        after_files, after_sizes = _partitions(delta)
        done = Compaction(
            table,
            cluster,
            dt,
            files[cluster, dt],
            after_files[cluster, dt],
            sizes[cluster, dt],
            after_sizes[cluster, dt],
        )
        say(
            f"{table} cluster={cluster} dt={dt}: {done.files_before} -> {done.files_after} files, "
            f"{done.bytes_before} -> {done.bytes_after} bytes"
        )
        compactions.append(done)
    hours = policy.vacuum_retention_hours
    vacuumed = delta.vacuum(
        retention_hours=hours,
        dry_run=False,
        enforce_retention_duration=hours >= DELTA_VACUUM_FLOOR_HOURS,
        full=True,  # also files no version committed (a writer killed mid-publish)
    )
    delta.create_checkpoint()
    delta.cleanup_metadata()
    files, sizes = _partitions(delta)
    closed = [n for (_, dt), n in files.items() if kept <= dt < today]
    done_table = TableMaintenance(
        table,
        tuple(compactions),
        len(vacuumed),
        delta.version(),
        sum(files.values()),
        sum(sizes.values()),
        max(closed, default=0),
    )
    say(
        f"{table}: {len(compactions)} partitions compacted, {done_table.files_vacuumed} files vacuumed "
        f"(older than {hours} h), checkpoint at version {done_table.version}; now {done_table.files} files, "
        f"{done_table.bytes} bytes, at most {done_table.most_files_in_a_closed_day} files per closed day"
    )
    return done_table


def _partitions(delta: DeltaTable) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
    """Live files and bytes per (cluster, dt) partition, from the Delta log (no data read)."""
    actions = delta.get_add_actions(flatten=True)
    keys = zip(actions.column("partition.cluster").to_pylist(), actions.column("partition.dt").to_pylist(), strict=True)
    files: Counter[tuple[str, str]] = Counter()
    sizes: Counter[tuple[str, str]] = Counter()
    for key, size in zip(keys, actions.column("size_bytes").to_pylist(), strict=True):
        files[key] += 1
        sizes[key] += size
    return files, sizes


def _set_retention_properties(delta: DeltaTable, policy: RetentionPolicy) -> None:
    wanted = {
        "delta.logRetentionDuration": f"interval {policy.log_retention_hours} hours",
        "delta.deletedFileRetentionDuration": f"interval {policy.vacuum_retention_hours} hours",
        **TABLE_PROPERTIES,  # a table created before the writers set it
    }
    current = delta.metadata().configuration
    if any(current.get(k) != v for k, v in wanted.items()):
        delta.alter.set_table_properties(wanted)


def _log_info(message: str) -> None:
    log.info("%s", message)
