"""Retention: old batches leave the lake whole, never torn, on Delta and on Parquet.

Each commit log keeps `RetentionPolicy.keep_days(commit log)` days of batches (None: forever),
counted in `dt` days before `now`'s day: the batches of `dt < cutoff` expire. A batch lives in one
`dt` in every table it spans, so a day cutoff takes all of its rows or none. Per commit log:

1. its commit rows of `dt < cutoff` are deleted (on Delta one commit per table; on Parquet one
   file per batch): each batch becomes invisible to every reader at once, exactly as if it had
   never been published;
2. the rows of its data tables are deleted for the days whose commit rows were *already gone when
   this run started* (deleted by an earlier run); days whose commit rows this run deleted keep
   their (now invisible) data rows until the next run. A reader that read the commit log just
   before step 1 and reads a data table a moment later therefore still finds the rows it expects:
   it would have to span two maintenance runs (a day) to see a batch with rows missing.

A crash at any point leaves batches either committed and whole, or invisible; running `expire`
again finishes the job (every step deletes by `dt`, so a repeated step deletes nothing twice).
Expired rows leave Delta's current version at once; their files go with the vacuum
(`lake.maintenance`). On Parquet the `dt=` folders are deleted; a reader listing a folder being
deleted may fail (and be retried), it never sees a torn batch.

The side folders (names starting with `_`), either format:

* `_reports/<cluster>/<id>.html` (health reports) expire by `keep_reports_days`, counted from the
  day each file was written, as the tables count `dt` days; `latest.html` always stays. Leftovers
  of an interrupted write (`*.tmp`) expire with them.
* `_plans` and `_executions` (plan files and execution progress) and `_alerting` (incident state,
  the alert log) are kept: they are the record of what was done to a cluster and who was paged.
* `_validation` (Data Docs) prunes itself at every validation (`validation.runner`, 3 days).
* `_staging` (Parquet) and `_delta_pending` (Delta intents) belong to a publish under way or
  interrupted: `recover()` finishes or removes them, never retention.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.names import REPORTS_DIR
from kafka_ops.lake.policy import RetentionPolicy
from kafka_ops.lake.schema import (
    ANALYSIS_COMMIT_TABLE,
    COMMIT_TABLE,
    COMMIT_TABLES,
    GROUP_COMMIT_TABLE,
    VALIDATION_COMMIT_TABLE,
    commit_table_of,
)
from kafka_ops.lake.store import Lake

log = logging.getLogger(__name__)

Progress = Callable[[str], None]
# batches first, their validations after: a kept batch never loses its validation row first
_COMMIT_ORDER = [COMMIT_TABLE, GROUP_COMMIT_TABLE, ANALYSIS_COMMIT_TABLE, VALIDATION_COMMIT_TABLE]


@dataclass(frozen=True)
class Expired:
    """Rows (and files) one table lost to retention in one run; `commit` is true for a commit log."""

    table: str
    commit_table: str
    cutoff: str
    days: tuple[str, ...]
    rows: int
    files: int

    @property
    def commit(self) -> bool:
        return self.table == self.commit_table


def lake_tables(lake: Lake) -> list[str]:
    """The tables of the lake: its top folders not starting with `_` (on Delta: those with a log)."""
    try:
        infos = lake.fs.get_file_info(pafs.FileSelector(lake.base, allow_not_found=True))
    except OSError as e:
        raise LakeError(f"cannot list the lake at {lake.root}: {e}") from e
    names = sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory and not i.base_name.startswith("_"))
    if isinstance(lake, DeltaLake):
        log_type = pafs.FileType.Directory
        names = [n for n in names if lake.fs.get_file_info(f"{lake.base}/{n}/_delta_log").type == log_type]
    return names


def cutoff_of(now: datetime, keep_days: int) -> str:
    """The first `dt` kept: batches of earlier days expire."""
    return f"{now - timedelta(days=keep_days):%Y-%m-%d}"


def expire(lake: Lake, policy: RetentionPolicy, now: datetime, progress: Progress | None = None) -> list[Expired]:
    """Delete the batches older than the policy keeps, commit rows first (see the module docstring)."""
    say = progress or (lambda message: log.info("%s", message))
    if now.tzinfo is None:
        raise LakeError(f"retention time {now.isoformat()} has no time zone")
    tables = lake_tables(lake)
    by_commit: dict[str, list[str]] = {}
    for table in tables:
        by_commit.setdefault(commit_table_of(table), []).append(table)
    order = [*_COMMIT_ORDER, *sorted(set(by_commit) - set(_COMMIT_ORDER))]
    expired = []
    for commit_table in order:
        days = policy.keep_days(commit_table)
        if days is None or commit_table not in by_commit:
            continue
        cutoff = cutoff_of(now, days)
        store = _DeltaDays(lake) if isinstance(lake, DeltaLake) else _ParquetDays(lake)
        fresh = store.days(commit_table, cutoff)  # their commit rows go now, their data rows next run
        if commit_table in tables:
            expired.append(_said(store.delete(commit_table, commit_table, cutoff, fresh), say))
        for table in by_commit[commit_table]:
            if table != commit_table:
                days_gone = store.days(table, cutoff) - fresh
                expired.append(_said(store.delete(table, commit_table, cutoff, days_gone), say))
    if commit_tables_kept := sorted(c for c in by_commit if c in COMMIT_TABLES and policy.keep_days(c) is None):
        say(f"kept forever: {', '.join(commit_tables_kept)}")
    expired.append(expire_reports(lake, policy.keep_reports_days, now, say))
    return [e for e in expired if e.rows or e.files]


def expire_reports(lake: Lake, keep_days: int | None, now: datetime, progress: Progress | None = None) -> Expired:
    """Delete the HTML reports written before `cutoff_of(now, keep_days)` (None: none), every
    cluster's, except `latest.html`; `files` counts them, `days` are the days they were written."""
    say = progress or (lambda message: log.info("%s", message))
    if keep_days is None:
        say(f"kept forever: {REPORTS_DIR}")
        return Expired(REPORTS_DIR, REPORTS_DIR, "", (), 0, 0)
    cutoff = cutoff_of(now, keep_days)
    days: set[str] = set()
    files = 0
    selector = pafs.FileSelector(f"{lake.base}/{REPORTS_DIR}", allow_not_found=True, recursive=True)
    try:
        for info in lake.fs.get_file_info(selector):
            if info.type != pafs.FileType.File or info.base_name == "latest.html" or info.mtime is None:
                continue
            written = f"{info.mtime:%Y-%m-%d}"
            if written < cutoff:
                lake.fs.delete_file(info.path)
                days.add(written)
                files += 1
    except OSError as e:
        raise LakeError(f"cannot expire the reports under {lake.root}/{REPORTS_DIR}: {e}") from e
    if files:
        say(f"expired {REPORTS_DIR}: {files} reports written on days {', '.join(sorted(days))} (before {cutoff})")
    return Expired(REPORTS_DIR, REPORTS_DIR, cutoff, tuple(sorted(days)), 0, files)


def _said(expired: Expired, say: Progress) -> Expired:
    if expired.rows or expired.files:
        kind = "commit rows" if expired.commit else "rows"
        say(
            f"expired {expired.table}: {expired.rows} {kind} in {expired.files} files of days "
            f"{', '.join(expired.days)} (before {expired.cutoff})"
        )
    return expired


class _DeltaDays:
    def __init__(self, lake: DeltaLake) -> None:
        self.lake = lake

    def days(self, table: str, cutoff: str) -> set[str]:
        delta = self.lake.open_table(table)
        if delta is None:
            return set()
        return {str(d) for d in delta.get_add_actions(flatten=True).column("partition.dt").to_pylist() if d < cutoff}

    def delete(self, table: str, commit_table: str, cutoff: str, days: set[str]) -> Expired:
        delta = self.lake.open_table(table)
        if delta is None or not days:
            return Expired(table, commit_table, cutoff, (), 0, 0)
        listed = ", ".join(f"'{d}'" for d in sorted(days))  # formatted dates: no quotes to escape
        metrics = delta.delete(f"dt IN ({listed})")
        return Expired(
            table, commit_table, cutoff, tuple(sorted(days)), metrics["num_deleted_rows"], metrics["num_removed_files"]
        )


class _ParquetDays:
    def __init__(self, lake: Lake) -> None:
        self.lake = lake

    def _folders(self, table: str, cutoff: str) -> Iterable[pafs.FileInfo]:
        selector = pafs.FileSelector(f"{self.lake.base}/{table}", allow_not_found=True)
        for cluster in self.lake.fs.get_file_info(selector):
            if cluster.type != pafs.FileType.Directory or not cluster.base_name.startswith("cluster="):
                continue
            for day in self.lake.fs.get_file_info(pafs.FileSelector(cluster.path)):
                dt = day.base_name.removeprefix("dt=")
                if day.type == pafs.FileType.Directory and day.base_name.startswith("dt=") and dt < cutoff:
                    yield day

    def days(self, table: str, cutoff: str) -> set[str]:
        return {f.base_name.removeprefix("dt=") for f in self._folders(table, cutoff)}

    def delete(self, table: str, commit_table: str, cutoff: str, days: set[str]) -> Expired:
        rows = files = 0
        for folder in list(self._folders(table, cutoff)):
            if folder.base_name.removeprefix("dt=") not in days:
                continue
            for info in self.lake.fs.get_file_info(pafs.FileSelector(folder.path)):
                if info.type != pafs.FileType.File:
                    continue
                if info.base_name.endswith(".parquet"):
                    rows += self._rows(info.path)
                self.lake.fs.delete_file(info.path)  # one commit row file: one batch gone, whole
                files += 1
            self.lake.fs.delete_dir(folder.path)
        return Expired(table, commit_table, cutoff, tuple(sorted(days)), rows, files)

    def _rows(self, path: str) -> int:
        """Rows in an expiring file, for the log; an unreadable file is deleted all the same."""
        try:
            with self.lake.fs.open_input_file(path) as f:
                return int(pq.read_metadata(f).num_rows)
        except (OSError, pa.ArrowInvalid) as e:
            log.warning("expiring %s, whose rows cannot be counted: %s", path, e)
            return 0
