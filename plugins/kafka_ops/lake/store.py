"""The Parquet lake: atomic publish of a batch of tables, recovery, and committed reads.

Publishing a batch (one snapshot's tables) takes three steps:

1. stage: every table is written under `<root>/_staging/<batch>/`, then a manifest naming
   each file's destination is written last (its presence means "fully staged");
2. place: each staged file is moved to its final path, a single rename per table on a local
   or HDFS filesystem, so no reader ever sees half a file;
3. commit: the commit-table row (e.g. `snapshots`) is moved into place last.

A batch exists for `Lake` readers once its commit row does. A writer killed after staging is
rolled forward by `recover()` (run before every publish, on staging folders idle for
`STALE_STAGING_S`); one killed while staging leaves no manifest and its files are deleted.
On object stores (`s3a://`, `gs://`) moves are copies, and the commit row is still what makes
a batch visible.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from kafka_ops.errors import LakeError
from kafka_ops.lake.names import check_name
from kafka_ops.lake.object_store import error_line, is_s3, s3_filesystem, s3_location, store_error
from kafka_ops.lake.schema import COMMIT_TABLE, COMMIT_TABLES, TABLES, commit_table_of

log = logging.getLogger(__name__)

STAGING = "_staging"
MANIFEST = "_manifest.json"
STALE_STAGING_S = 300.0
"""A staging folder idle this long belongs to a dead writer (a live one writes every few seconds)."""
_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}


@dataclass(frozen=True)
class Batch:
    """One atomically published set of rows: a snapshot's tables, or a job's findings."""

    batch_id: str
    cluster: str
    captured_at: datetime
    tables: Mapping[str, pa.Table]
    commit_table: str = COMMIT_TABLE

    @property
    def dt(self) -> str:
        return f"{self.captured_at:%Y-%m-%d}"


class Lake:
    """A lake rooted at a local path or a filesystem URL."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.fs, self.base, self.root = lake_filesystem(root)

    def __repr__(self) -> str:
        return f"Lake({self.root!r})"

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Reads inside it see each table as it was when first read inside it, and do not look for it
        again: one consistent view, for a reader that reads several tables and days in a row. Parquet
        files are read as listed, so here it changes nothing; the Delta lake opens each table once."""
        yield

    def failure(self, action: str, error: BaseException, consequence: str = "") -> LakeError:
        """The `LakeError` of a failed `action` on this lake: on an object store one line naming the lake
        root, the endpoint and the setting it came from (`lake.object_store`), locally the cause."""
        tail = f"; {consequence}" if consequence else ""
        if is_s3(self.root):
            return LakeError(f"{store_error(s3_location(self.root), action, error)}{tail}")
        return LakeError(f"cannot {action}: {error_line(error)}{tail}")

    # -- writing ----------------------------------------------------------------------------------

    def final_path(self, table: str, cluster: str, dt: str, batch_id: str) -> str:
        return f"{self.base}/{table}/cluster={cluster}/dt={dt}/{batch_id}.parquet"

    def publish(self, batch: Batch) -> None:
        """Stage, place and commit every table of `batch` (see the module docstring)."""
        check_name("cluster", batch.cluster)
        check_name("batch id", batch.batch_id)
        if batch.commit_table not in batch.tables:
            raise LakeError(f"batch {batch.batch_id} has no {batch.commit_table!r} commit row")
        staging = f"{self.base}/{STAGING}/{batch.batch_id}"
        try:
            self.recover(older_than_s=STALE_STAGING_S)
            self._stage_and_place(batch, staging)
        except OSError as e:  # pyarrow's I/O errors: a path under a file, a read-only or full disk, ...
            self._discard_unstaged(staging)
            if is_s3(self.root):
                raise self.failure(f"write batch {batch.batch_id}", e, "nothing was published") from e
            raise LakeError(
                f"cannot write batch {batch.batch_id} to the lake at {self.root}: {_cause(e)}; nothing was published"
            ) from e

    def _stage_and_place(self, batch: Batch, staging: str) -> None:
        self.fs.create_dir(staging, recursive=True)
        moves = []
        # the commit table goes last: moving it is what publishes the batch
        names = sorted(batch.tables, key=lambda t: (t == batch.commit_table, t))
        for table in names:
            data = batch.tables[table]
            expected = TABLES.get(table, data.schema)
            if not data.schema.equals(expected):
                data = _conform(data, expected, table)
            staged = f"{staging}/{table}.parquet"
            with self.fs.open_output_stream(staged) as out:
                pq.write_table(data, out, compression="zstd")
            moves.append((staged, self.final_path(table, batch.cluster, batch.dt, batch.batch_id)))
        _write_atomically(self.fs, f"{staging}/{MANIFEST}", json.dumps({"moves": moves}).encode())
        self._place(staging, moves)

    def _discard_unstaged(self, staging: str) -> None:
        """After a failed publish: staged files without a manifest are deleted now (freeing a full disk);
        a manifest means the batch is committed-to and `recover()` rolls it forward later."""
        try:
            staged = self.fs.get_file_info(staging).type == pafs.FileType.Directory
            if staged and self.fs.get_file_info(f"{staging}/{MANIFEST}").type != pafs.FileType.File:
                self.fs.delete_dir(staging)
        except OSError as e:
            log.warning("could not remove the staging folder %s after a failed publish: %s", staging, _cause(e))

    def recover(self, older_than_s: float = 0.0) -> list[str]:
        """Finish publishes that were fully staged; delete ones that were not. Returns batch ids.

        Only staging folders untouched for `older_than_s` seconds are handled: `publish` passes
        `STALE_STAGING_S`, so a writer never takes over (or deletes) a batch another live writer
        is staging or placing at the same moment (the snapshot DAG, the group collection and the
        remediation audit publish concurrently)."""
        root = f"{self.base}/{STAGING}"
        if self.fs.get_file_info(root).type != pafs.FileType.Directory:
            return []
        handled = []
        now = datetime.now(UTC)
        for info in self.fs.get_file_info(pafs.FileSelector(root)):
            if info.type != pafs.FileType.Directory:
                continue
            if older_than_s > 0 and (now - self._last_touched(info)).total_seconds() < older_than_s:
                continue
            manifest = f"{info.path}/{MANIFEST}"
            if self.fs.get_file_info(manifest).type == pafs.FileType.File:
                with self.fs.open_input_stream(manifest) as f:
                    moves = json.loads(f.read())["moves"]
                log.warning("rolling forward an interrupted publish: %s", info.base_name)
                self._place(info.path, [tuple(m) for m in moves])
            else:
                log.warning("discarding a publish that never finished staging: %s", info.base_name)
                self.fs.delete_dir(info.path)
            handled.append(info.base_name)
        return handled

    def _last_touched(self, folder: pafs.FileInfo) -> datetime:
        """The newest modification time in a staging folder (now, when the store keeps none)."""
        times = [f.mtime for f in self.fs.get_file_info(pafs.FileSelector(folder.path, recursive=True))]
        known = [t for t in [*times, folder.mtime] if t is not None]
        if not known:
            return datetime.now(UTC)
        newest = max(known)
        return newest if newest.tzinfo else newest.replace(tzinfo=UTC)

    def _place(self, staging: str, moves: Iterable[tuple[str, str]]) -> None:
        for src, dst in moves:
            if self.fs.get_file_info(src).type != pafs.FileType.File:
                continue  # placed by an earlier, interrupted attempt
            self.fs.create_dir(dst.rsplit("/", 1)[0], recursive=True)
            self.fs.move(src, dst)
        self.fs.delete_dir(staging)

    # -- reading ----------------------------------------------------------------------------------

    def snapshots(self, cluster: str | None = None) -> pa.Table:
        """The commit log: one row per published snapshot (with `cluster` and `dt`)."""
        return self._read_raw(COMMIT_TABLE, cluster)

    def commit_log(self, table: str, cluster: str | None = None) -> pa.Table:
        """The rows of commit log `table` (`snapshots`, `group_snapshots`, `analysis_runs`)."""
        if table not in COMMIT_TABLES:
            raise LakeError(f"{table!r} is not a commit log (commit logs: {sorted(COMMIT_TABLES)})")
        return self._read_raw(table, cluster)

    def latest_snapshot_id(self, cluster: str, commit_table: str = COMMIT_TABLE) -> str | None:
        """The latest batch of `cluster` in `commit_table` (default: the ZooKeeper snapshots)."""
        row = self.latest_commit(cluster, commit_table)
        return None if row is None else str(row["snapshot_id"])

    def latest_commit(self, cluster: str, commit_table: str = COMMIT_TABLE) -> dict[str, object] | None:
        """The newest commit row of `cluster` in `commit_table`, with its `dt`, or None (see
        `latest_commits`)."""
        rows = self.latest_commits(cluster, commit_table)
        return rows[0] if rows else None

    def latest_commits(
        self,
        cluster: str,
        commit_table: str = COMMIT_TABLE,
        count: int = 1,
        keep: Callable[[dict[str, object]], bool] | None = None,
    ) -> list[dict[str, object]]:
        """The `count` newest commit rows of `cluster` in `commit_table` that `keep` accepts (all by
        default), newest first by (captured_at, snapshot_id), each with its `dt`. A batch's day is its
        capture date, so the days are read newest first until enough rows are found: a few days of
        the log, not all of it (seconds a call on a month of 5-minute batches)."""
        if commit_table not in COMMIT_TABLES:
            raise LakeError(f"{commit_table!r} is not a commit log (commit logs: {sorted(COMMIT_TABLES)})")
        found: list[dict[str, object]] = []
        for dt in self.days(commit_table, cluster):
            rows = self.read_day(commit_table, cluster, dt)
            day = [] if rows is None else [{**r, "dt": dt} for r in rows.to_pylist()]
            day.sort(key=lambda r: (r["captured_at"], r["snapshot_id"]), reverse=True)
            found += [r for r in day if keep is None or keep(r)][: count - len(found)]
            if len(found) >= count:
                break
        return found

    def read(self, table: str, cluster: str | None = None, snapshot_ids: Iterable[str] | None = None) -> pa.Table:
        """Rows of `table` from published batches only (optionally just `snapshot_ids`).

        Snapshot tables are published by the `snapshots` commit log, findings tables by
        `analysis_runs`; both are keyed by `snapshot_id`.
        """
        commits = self._read_raw(commit_table_of(table), cluster)
        committed = set(commits.column("snapshot_id").to_pylist())
        wanted = committed if snapshot_ids is None else committed & set(snapshot_ids)
        data = self._read_raw(table, cluster)
        if data.num_rows == 0 or not wanted:
            return data.slice(0, 0)
        return data.filter(ds.field("snapshot_id").isin(sorted(wanted)))

    def days(self, table: str, cluster: str) -> list[str]:
        """The `dt` partitions of `table` for `cluster`, newest first (none: []): one directory listing.
        A day may hold only uncommitted rows: a reader still goes through the commit table."""
        base = f"{self.base}/{table}/cluster={cluster}"
        try:
            if self.fs.get_file_info(base).type != pafs.FileType.Directory:
                return []
            infos = self.fs.get_file_info(pafs.FileSelector(base))
        except OSError as e:
            raise self.failure(f"list the days of {table!r} of cluster {cluster} under {self.root}", e) from e
        names = [i.base_name for i in infos if i.type == pafs.FileType.Directory and i.base_name.startswith("dt=")]
        return sorted((n.removeprefix("dt=") for n in names), reverse=True)

    def read_day(
        self,
        table: str,
        cluster: str,
        dt: str,
        *,
        columns: Sequence[str] | None = None,
        where: pc.Expression | None = None,
    ) -> pa.Table | None:
        """Rows of `table` in one day partition, committed or not, without `cluster` and `dt` (documented
        columns when the table is documented), or None when there is no such partition."""
        directory = f"{self.base}/{table}/cluster={cluster}/dt={dt}"
        try:
            if self.fs.get_file_info(directory).type != pafs.FileType.Directory:
                return None
            dataset = ds.dataset(directory, filesystem=self.fs, format="parquet", schema=TABLES.get(table))
            return dataset.to_table(columns=list(columns) if columns else None, filter=where)
        except (OSError, pa.ArrowInvalid) as e:
            raise self.failure(f"read {directory} of lake table {table!r}", e) from e

    def batch_commit(self, commit_table: str, cluster: str, dt: str, batch_id: str) -> dict[str, object] | None:
        """The commit row of batch `batch_id` in `commit_table` on day `dt`, or None: its file's, if any."""
        rows = self.read_batch(commit_table, cluster, dt, batch_id, {})
        return rows.to_pylist()[0] if rows is not None and rows.num_rows else None

    def read_batch(
        self, table: str, cluster: str, dt: str, batch_id: str, commit: Mapping[str, object]
    ) -> pa.Table | None:
        """`table`'s rows of batch `batch_id` (day `dt`, commit row `commit`), committed or not: only that
        batch's file is read. None when the batch wrote no such table (an empty table is still a table:
        rows = 0)."""
        path = self.final_path(table, cluster, dt, batch_id)
        try:
            if self.fs.get_file_info(path).type != pafs.FileType.File:
                return None
            data = pq.read_table(path, filesystem=self.fs)
        except (OSError, pa.ArrowInvalid) as e:
            raise self.failure(f"read {path} of lake table {table!r}", e) from e
        schema = TABLES.get(table)
        if schema is not None and not data.schema.equals(schema):
            data = _documented(data, schema)
        return data

    def _read_raw(self, table: str, cluster: str | None) -> pa.Table:
        """Every row under `<root>/<table>`, committed or not; documented schema when known."""
        known = TABLES.get(table)
        path = f"{self.base}/{table}"
        try:
            exists = self.fs.get_file_info(path).type == pafs.FileType.Directory
            if exists:
                dataset = ds.dataset(
                    path,
                    filesystem=self.fs,
                    format="parquet",
                    partitioning=ds.partitioning(
                        pa.schema([("cluster", pa.string()), ("dt", pa.string())]), flavor="hive"
                    ),
                    schema=_with_partitions(known) if known is not None else None,
                )
                return dataset.to_table(filter=ds.field("cluster") == cluster if cluster is not None else None)
        except OSError as e:
            raise self.failure(f"read lake table {table!r} under {self.root}", e) from e
        if known is None:
            raise LakeError(f"no lake table {table!r} under {self.root}")
        return _with_partitions(known).empty_table()


def lake_filesystem(root: str | os.PathLike[str]) -> tuple[pafs.FileSystem, str, str]:
    """The filesystem, base path and normalised root (s3a:// → s3://) of a lake root; no I/O.
    For the lake's own files beside its tables (alert state, plans, reports), whatever its format."""
    root = str(root)
    scheme, sep, rest = root.partition("://")
    if sep and scheme in _SCHEME_ALIASES:
        root = f"{_SCHEME_ALIASES[scheme]}://{rest}"
    try:
        if sep and is_s3(root):  # the endpoint, region and timeouts of `lake.object_store`
            fs, base = s3_filesystem(s3_location(root)), rest.rstrip("/")
        elif sep:
            fs, base = pafs.FileSystem.from_uri(root)
        else:
            fs, base = pafs.LocalFileSystem(), os.path.abspath(root)
    except (pa.ArrowInvalid, OSError) as e:
        raise LakeError(f"cannot open the lake at {root!r}: {e}") from e
    return fs, base, root


def _with_partitions(schema: pa.Schema) -> pa.Schema:
    return schema.append(pa.field("cluster", pa.string())).append(pa.field("dt", pa.string()))


def _documented(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """`rows` with exactly the documented columns: a column added since a row was written reads as null."""
    columns = [
        rows.column(f.name).cast(f.type) if f.name in rows.column_names else pa.nulls(rows.num_rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _conform(data: pa.Table, schema: pa.Schema, table: str) -> pa.Table:
    try:
        return data.select(schema.names).cast(schema)
    except (KeyError, pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise LakeError(f"rows for lake table {table!r} do not fit its schema: {e}") from e


def _cause(error: OSError) -> str:
    """The operating system's reason, without pyarrow's call-site prefix."""
    if error.strerror:
        where = f" ({error.filename})" if error.filename else ""
        return f"{error.strerror}{where}"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _write_atomically(fs: pafs.FileSystem, path: str, content: bytes) -> None:
    tmp = path + ".tmp"
    with fs.open_output_stream(tmp) as f:
        f.write(content)
    fs.move(tmp, path)
