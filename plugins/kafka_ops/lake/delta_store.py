"""The lake on Delta Lake: the same API as the Parquet `Lake`, each table a Delta table.

Every lake table is a Delta table at `<root>/<table>`, partitioned by (`cluster`, `dt`), written
with delta-rs (no Spark in the collection path). A Delta commit is atomic for one table only; a
batch spans several tables, so it is made atomic the way the Parquet lake does it, by the commit
table, whose row is written last:

1. intent: `<root>/_delta_pending/<cluster>/<batch>.json` names the batch's partition and tables;
2. data: each data table gets the batch's rows in its own Delta commit (the data tables at once,
   in threads), as an overwrite of the rows `cluster = C AND dt = D AND <key> = K`
   (delete-then-append in one transaction), so a retried batch replaces its earlier attempt's
   rows instead of duplicating them (a plain append when the batch is new saves only ~5 ms of a
   publish's 90: not worth a second write path). The key is the
   commit row's column holding the batch id (`snapshot_id` of a snapshot, `plan_id` of a plan,
   `event_id` of an audit event), or `snapshot_id` for a batch `<snapshot_id>.analysis` /
   `.validation`, of which there is one per snapshot (`batch_key`): the rows a Parquet batch's
   file `<batch>.parquet` held;
3. commit: the commit-table row, written the same way, last; then the intent file is removed.

Readers go through the commit table (`read`, `commit_log`, Spark's `read_table`), so a batch whose
commit row is missing is invisible even though some of its data commits exist. `recover()` (run
by every publish on intents idle for `STALE_STAGING_S`) deletes the rows of a batch whose writer
died before its commit row, or just drops the intent of one that died after it.

Tables use only features both delta-rs and Delta Spark write: protocol reader 1 / writer 2, no
deletion vectors, no column mapping; `publish` refuses a table whose protocol asks for more. They
are checkpointed every `CHECKPOINT_INTERVAL` commits, which keeps a publish's cost flat through a day.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs
from deltalake import CommitProperties, DeltaTable, WriterProperties, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from kafka_ops.errors import LakeError
from kafka_ops.lake.names import check_name
from kafka_ops.lake.object_store import is_s3, s3_location
from kafka_ops.lake.schema import TABLES
from kafka_ops.lake.store import STALE_STAGING_S, Batch, Lake, _conform, _documented, _with_partitions

log = logging.getLogger(__name__)

PENDING = "_delta_pending"
PARTITION_BY = ["cluster", "dt"]
MAX_READER_VERSION = 1
MAX_WRITER_VERSION = 2
COMMIT_ATTEMPTS = 8
"""Delta commits retried after a conflict with a concurrent writer before the publish fails."""
WRITER_THREADS = 4
"""Data tables of a batch written at once (delta-rs releases the GIL); the commit table waits for them."""
CHECKPOINT_INTERVAL = 10
"""A checkpoint every this many commits of a table (Delta's default is 100): opening a table replays
the log since its last checkpoint, 0.2 ms a commit, and a publish opens every table of the batch
(bench/delta_publish.py: at the end of a day of 288 publishes, 0.25 s a publish with 100, 0.09 s
with 10). Set when a table is created or migrated, and by the maintenance on older tables."""
TABLE_PROPERTIES = {"delta.checkpointInterval": str(CHECKPOINT_INTERVAL)}


class DeltaLake(Lake):
    """A lake of Delta tables rooted at a local path or a filesystem URL (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        super().__init__(root)
        location = s3_location(self.root) if is_s3(self.root) else None
        self.storage_options: dict[str, str] | None = location.storage_options() if location else None
        """delta-rs's options for a lake on S3 (`lake.object_store`: endpoint, conditional puts); None locally."""
        self._pinned: dict[str, tuple[DeltaTable, ds.Dataset] | None] | None = None

    def __repr__(self) -> str:
        return f"DeltaLake({self.root!r})"

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Each table opened once inside it (its log replayed and its files listed once), at the version
        current when first read: a reader of several tables and days in a row (the group paging's window)
        spent two thirds of its time opening the same tables again."""
        outer = self._pinned
        self._pinned = {} if outer is None else outer
        try:
            yield
        finally:
            self._pinned = outer

    def _read_view(self, table: str) -> tuple[DeltaTable, ds.Dataset] | None:
        """`table` opened and as a pyarrow dataset, from the pinned view when inside `pinned`."""
        if self._pinned is not None and table in self._pinned:
            return self._pinned[table]
        delta = self.open_table(table)
        view = None if delta is None else (delta, self.dataset(delta, table))
        if self._pinned is not None:
            self._pinned[table] = view
        return view

    def table_uri(self, table: str) -> str:
        """Where delta-rs finds `table`: a local path, or the lake's URL scheme and path."""
        scheme = self.root.partition("://")[0] if "://" in self.root else ""
        return f"{scheme}://{self.base}/{table}" if scheme else f"{self.base}/{table}"

    # -- writing ----------------------------------------------------------------------------------

    def publish(self, batch: Batch) -> None:
        """Write every data table of `batch`, then its commit row (see the module docstring)."""
        check_name("cluster", batch.cluster)
        check_name("batch id", batch.batch_id)
        if batch.commit_table not in batch.tables:
            raise LakeError(f"batch {batch.batch_id} has no {batch.commit_table!r} commit row")
        names = sorted(batch.tables, key=lambda t: (t == batch.commit_table, t))
        rows = {name: self._with_partition(batch, name) for name in names}  # schema errors before any write
        _key_of(batch)  # a batch whose rows cannot be told apart is refused before any write
        try:
            self.recover(older_than_s=STALE_STAGING_S)
            self._write_intent(batch, names)
            data_tables = names[:-1]
            with ThreadPoolExecutor(max_workers=WRITER_THREADS) as pool:  # delta-rs writes without the GIL
                for done in [pool.submit(self._replace_batch_rows, n, batch, rows[n]) for n in data_tables]:
                    done.result()
            self._replace_batch_rows(batch.commit_table, batch, rows[batch.commit_table])  # last: publishes it
        except (OSError, DeltaError) as e:
            raise self.failure(
                f"write batch {batch.batch_id} to the Delta lake at {self.root}",
                e,
                "it is not published (its commit row is missing); recover() removes its partial rows",
            ) from e
        intent = self._intent_path(batch.cluster, batch.batch_id)
        try:
            self.fs.delete_file(intent)
        except OSError as e:  # published all the same: recover() drops an intent whose commit row exists
            log.warning("batch %s is published but its intent %s stays: %s", batch.batch_id, intent, e)

    def _with_partition(self, batch: Batch, table: str) -> pa.Table:
        data = batch.tables[table]
        expected = TABLES.get(table, data.schema)
        if not data.schema.equals(expected):
            data = _conform(data, expected, table)
        n = data.num_rows
        data = data.append_column("cluster", pa.array([batch.cluster] * n, pa.string()))
        return data.append_column("dt", pa.array([batch.dt] * n, pa.string()))

    def _replace_batch_rows(self, table: str, batch: Batch, data: pa.Table) -> None:
        """One Delta commit replacing this batch's rows of `table`, retried on a concurrent commit."""
        where = _batch_predicate(batch.cluster, batch.dt, _key_of(batch))
        props = CommitProperties(custom_metadata={"kafka_ops.batch": batch.batch_id}, max_commit_retries=0)
        for attempt in range(1, COMMIT_ATTEMPTS + 1):
            target = self.open_table(table)
            if target is None and data.num_rows == 0 and table in TABLES:
                return  # nothing to write or replace; a documented table never written reads as empty
            # an undocumented (findings) table is created even empty: it exists, as its Parquet file would
            try:
                write_deltalake(
                    target if target is not None else self.table_uri(table),
                    data,
                    storage_options=None if target is not None else self.storage_options,
                    partition_by=PARTITION_BY,
                    mode="overwrite",
                    configuration=None if target is not None else TABLE_PROPERTIES,
                    predicate=where,
                    schema_mode="merge",
                    commit_properties=props,
                    writer_properties=WriterProperties(compression="ZSTD"),  # as the Parquet lake
                )
                return
            except CommitFailedError as e:
                if attempt == COMMIT_ATTEMPTS:
                    raise LakeError(
                        f"lost {COMMIT_ATTEMPTS} Delta commit races on {self.table_uri(table)} writing batch "
                        f"{batch.batch_id}: another writer keeps committing; retry the publish ({e})"
                    ) from e
                log.info("lost a commit race on %s (attempt %s), retrying: %s", table, attempt, e)
                time.sleep(random.uniform(0.01, 0.05) * attempt)  # noqa: S311 - jitter, not security

    def open_table(self, table: str) -> DeltaTable | None:
        """The Delta table `table`, checked for features delta-rs and Delta Spark both support."""
        delta = self.table_at(table)
        if delta is not None:
            check_protocol(delta, self.table_uri(table))
        return delta

    def table_at(self, table: str, version: int | None = None) -> DeltaTable | None:
        """The Delta table `table` at `version` (None: the latest), not checked for its features; None when
        it does not exist (yet)."""
        try:
            return DeltaTable(self.table_uri(table), version=version, storage_options=self.storage_options)
        except TableNotFoundError:
            return None
        except (DeltaError, OSError) as e:
            raise self.failure(f"open the Delta table {self.table_uri(table)}", e) from e

    def dataset(self, delta: DeltaTable, table: str) -> ds.Dataset:
        """`delta`'s files as a pyarrow dataset. On an object store they are read through the lake's own
        filesystem: delta-rs's Python file handler aborts the process at exit after an S3 read
        (delta-rs 1.6.6), and this one has the lake's endpoint and timeouts."""
        if isinstance(self.fs, pafs.LocalFileSystem):
            return delta.to_pyarrow_dataset()
        return delta.to_pyarrow_dataset(filesystem=pafs.SubTreeFileSystem(f"{self.base}/{table}", self.fs))

    def _intent_path(self, cluster: str, batch_id: str) -> str:
        return f"{self.base}/{PENDING}/{cluster}/{batch_id}.json"

    def _write_intent(self, batch: Batch, tables: list[str]) -> None:
        path = self._intent_path(batch.cluster, batch.batch_id)
        self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        intent = {"cluster": batch.cluster, "dt": batch.dt, "commit_table": batch.commit_table, "tables": tables,
                  "key": list(_key_of(batch))}  # fmt: skip
        tmp = path + ".tmp"
        with self.fs.open_output_stream(tmp) as out:
            out.write(json.dumps(intent).encode())
        self.fs.move(tmp, path)

    def recover(self, older_than_s: float = 0.0) -> list[str]:
        """Undo publishes whose writer died before their commit row. Returns their batch ids.

        Only intents untouched for `older_than_s` seconds are handled, so a publish never deletes
        the rows of a batch another live writer is writing at the same moment. A batch whose commit
        row exists was published: only its leftover intent is removed."""
        root = f"{self.base}/{PENDING}"
        if self.fs.get_file_info(root).type != pafs.FileType.Directory:
            return []
        now = datetime.now(UTC)
        handled = []
        for info in self.fs.get_file_info(pafs.FileSelector(root, recursive=True)):
            if info.type != pafs.FileType.File or not info.path.endswith(".json"):
                continue
            touched = info.mtime if info.mtime is not None else now
            touched = touched if touched.tzinfo else touched.replace(tzinfo=UTC)
            if older_than_s > 0 and (now - touched).total_seconds() < older_than_s:
                continue
            batch_id = info.base_name.removesuffix(".json")
            with self.fs.open_input_stream(info.path) as f:
                intent = json.loads(f.read())
            self._undo_unless_committed(batch_id, intent)
            self.fs.delete_file(info.path)
            handled.append(batch_id)
        return handled

    def _undo_unless_committed(self, batch_id: str, intent: Mapping[str, object]) -> None:
        cluster, dt, commit_table = str(intent["cluster"]), str(intent["dt"]), str(intent["commit_table"])
        stored = intent.get("key")
        key = (str(stored[0]), str(stored[1])) if isinstance(stored, list) else ("snapshot_id", batch_id)
        commits = self._read_raw(commit_table, cluster)
        if key[1] in commits.column(key[0]).to_pylist():
            return
        log.warning("removing the rows of batch %s of %s: its writer died before committing it", batch_id, cluster)
        tables = intent["tables"]
        for table in tables if isinstance(tables, list) else []:
            delta = self.open_table(str(table))
            if delta is not None:
                delta.delete(_batch_predicate(cluster, dt, key))

    # -- reading ----------------------------------------------------------------------------------

    def read_day(
        self,
        table: str,
        cluster: str,
        dt: str,
        *,
        columns: Sequence[str] | None = None,
        where: pc.Expression | None = None,
    ) -> pa.Table | None:
        """Rows of `table` in one day partition at its latest version, committed batch or not, without
        `cluster` and `dt` (documented columns when documented); None when there is no such table.
        Only the partition's files are read (the Delta log names each file's partition)."""
        view = self._read_view(table)
        if view is None:
            return None
        dataset = view[1]
        known = TABLES.get(table)
        wanted = list(columns) if columns else [n for n in (known or dataset.schema).names if n not in PARTITION_BY]
        present = [c for c in wanted if c in dataset.schema.names]
        filt = (ds.field("cluster") == cluster) & (ds.field("dt") == dt)
        try:
            rows = dataset.to_table(columns=present, filter=filt if where is None else filt & where)
        except (OSError, pa.ArrowInvalid) as e:
            part = f"dt={dt} of cluster {cluster} of the Delta table {self.table_uri(table)}"
            raise self.failure(f"read {part}", e) from e
        if known is None:
            return rows
        return _documented(rows, pa.schema([known.field(c) for c in wanted if c in known.names]))

    def batch_commit(self, commit_table: str, cluster: str, dt: str, batch_id: str) -> dict[str, object] | None:
        """The commit row of batch `batch_id` in `commit_table` on day `dt` (see `batch_key`), or None."""
        rows = self.read_day(commit_table, cluster, dt)
        for row in [] if rows is None else rows.to_pylist():
            if _is_key_of(batch_id, row):
                return row
        return None

    def read_batch(
        self, table: str, cluster: str, dt: str, batch_id: str, commit: Mapping[str, object]
    ) -> pa.Table | None:
        """`table`'s rows of batch `batch_id` (day `dt`, commit row `commit`), committed or not. A Delta
        commit of no rows adds no file, so an empty table and one the batch did not write read alike:
        rows = 0 for a documented table, None for an undocumented one that does not exist."""
        column, value = batch_key(batch_id, commit)
        rows = self.read_day(table, cluster, dt, where=ds.field(column) == value)
        if rows is None and table in TABLES:
            return TABLES[table].empty_table()
        return rows

    def _read_raw(self, table: str, cluster: str | None) -> pa.Table:
        """Every row of Delta table `table` at its latest version, committed batch or not."""
        known = TABLES.get(table)
        delta = self.open_table(table)
        if delta is None:
            if known is None:
                raise LakeError(f"no lake table {table!r} under {self.root}")
            return _with_partitions(known).empty_table()
        dataset = self.dataset(delta, table)
        filt = ds.field("cluster") == cluster if cluster is not None else None
        try:
            rows = dataset.to_table(filter=filt)
        except (OSError, pa.ArrowInvalid) as e:
            raise self.failure(f"read the Delta table {self.table_uri(table)}", e) from e
        if known is None:
            return rows
        return _documented(rows, _with_partitions(known))


def check_protocol(delta: DeltaTable, where: str) -> None:
    """Refuse a table that needs features beyond reader 1 / writer 2 (deletion vectors, column mapping, ...)."""
    protocol = delta.protocol()
    features = sorted({*(protocol.reader_features or []), *(protocol.writer_features or [])})
    if protocol.min_reader_version > MAX_READER_VERSION or protocol.min_writer_version > MAX_WRITER_VERSION:
        raise LakeError(
            f"Delta table {where} needs reader {protocol.min_reader_version} / writer "
            f"{protocol.min_writer_version} (features {features}); the lake writes only reader "
            f"{MAX_READER_VERSION} / writer {MAX_WRITER_VERSION} tables, which delta-rs and Delta Spark both support"
        )


BATCH_KEY_COLUMNS = ("snapshot_id", "plan_id", "event_id")


def batch_key(batch_id: str, commit: Mapping[str, object]) -> tuple[str, str]:
    """The column and value that pick batch `batch_id`'s rows out of a Delta table, from its commit
    row: the column holding the batch id, else `snapshot_id` for a batch `<snapshot_id>.<kind>` (an
    analysis or a validation, one per snapshot: a new one replaces the last, as its Parquet file did)."""
    for column in BATCH_KEY_COLUMNS:
        if commit.get(column) == batch_id:
            return column, batch_id
    snapshot_id = commit.get("snapshot_id")
    if isinstance(snapshot_id, str) and batch_id.rsplit(".", 1)[0] == snapshot_id:
        return "snapshot_id", check_name("snapshot id", snapshot_id)
    raise LakeError(
        f"batch {batch_id!r}: its commit row holds it in none of {list(BATCH_KEY_COLUMNS)}, nor is it "
        f"'<snapshot_id>.<kind>' of its snapshot_id {snapshot_id!r}: its rows cannot be told apart in a Delta table"
    )


def _key_of(batch: Batch) -> tuple[str, str]:
    commit = batch.tables[batch.commit_table]
    if commit.num_rows != 1:
        raise LakeError(f"batch {batch.batch_id}: its {batch.commit_table!r} table must hold one commit row")
    return batch_key(batch.batch_id, commit.to_pylist()[0])


def _is_key_of(batch_id: str, commit: Mapping[str, object]) -> bool:
    try:
        batch_key(batch_id, commit)
    except LakeError:
        return False
    return True


def _batch_predicate(cluster: str, dt: str, key: tuple[str, str]) -> str:
    # the values passed check_name or are formatted dates, the column is one of BATCH_KEY_COLUMNS:
    # no quotes to escape
    column, value = key
    return f"cluster = '{cluster}' AND dt = '{dt}' AND {column} = '{value}'"
