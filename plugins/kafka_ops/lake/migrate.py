"""Turn a Parquet lake into a Delta lake in place, one table at a time, without copying data.

Each table folder `<root>/<table>` (hive-partitioned `cluster=/dt=` Parquet files) gets a Delta log
whose first version adds the files already there (Delta's "convert to Delta"): the same paths,
the same files. A table that already has a Delta log is left as it is, so running the migration
again, or after it stopped half-way, finishes the job and changes nothing else. Plain files under
the root (reports, plans, alert state) are not tables and are not touched.

Stop the writers first (pause the DAGs): a Parquet publish still staging would land files the
Delta log does not know. The migration refuses while a staging folder is less than
`STALE_STAGING_S` old, and first rolls forward or discards older ones (`Lake.recover`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import DeltaTable, Schema, convert_to_deltalake
from deltalake.exceptions import DeltaError

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import TABLE_PROPERTIES, DeltaLake, check_protocol
from kafka_ops.lake.formats import table_formats
from kafka_ops.lake.store import STAGING, STALE_STAGING_S, Lake

log = logging.getLogger(__name__)

PARTITIONS = pa.schema([("cluster", pa.string()), ("dt", pa.string())])


@dataclass(frozen=True)
class Migrated:
    table: str
    outcome: str  # "converted" or "already Delta"


def migrate_to_delta(root: str | os.PathLike[str]) -> list[Migrated]:
    """Give every Parquet lake table under `root` a Delta log (see the module docstring)."""
    parquet = Lake(root)
    parquet.recover(older_than_s=STALE_STAGING_S)
    staging = f"{parquet.base}/{STAGING}"
    if parquet.fs.get_file_info(staging).type == pafs.FileType.Directory and parquet.fs.get_file_info(
        pafs.FileSelector(staging)
    ):
        raise LakeError(
            f"a Parquet publish is in progress under {staging} (or stopped less than {STALE_STAGING_S:.0f} s ago): "
            "pause the DAGs that write the lake, then run the migration again"
        )
    delta = DeltaLake(root)
    done = []
    if parquet.fs.get_file_info(parquet.base).type != pafs.FileType.Directory:
        raise LakeError(f"no lake at {parquet.root}")
    formats = table_formats(parquet)
    for table in sorted(formats):
        uri = delta.table_uri(table)
        if formats[table] == "delta":
            done.append(Migrated(table, "already Delta"))
            continue
        log.info("converting %s to Delta", uri)
        try:
            convert_to_deltalake(
                uri,
                mode="ignore",
                partition_by=Schema.from_arrow(PARTITIONS),
                partition_strategy="hive",
                configuration=TABLE_PROPERTIES,
            )
            check_protocol(DeltaTable(uri), uri)
        except DeltaError as e:
            raise LakeError(f"cannot convert lake table {uri} to Delta: {e}; the tables before it are converted") from e
        done.append(Migrated(table, "converted"))
    return done
