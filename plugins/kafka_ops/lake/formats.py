"""Which table format a lake root holds, and the guard that refuses to open it in the other one.

A lake table is a folder `<root>/<table>` (not starting with `_` or `.`): a Delta table when it has
a `_delta_log`, a Parquet table when it holds only `cluster=` partition folders. Opening a root in
one format while its tables are in the other would go wrong quietly: a Delta writer would start a
Delta log next to Parquet files it does not know (they would vanish for its readers), a Parquet
writer would drop files into a Delta table that its log never adds (invisible to Delta readers,
and deleted by its next vacuum), and a Parquet reader of a Delta table would read files a
compaction or retention already replaced. `check_format` fails instead, naming the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import pyarrow.fs as pafs

from kafka_ops.errors import LakeError

if TYPE_CHECKING:
    from kafka_ops.lake.store import Lake

DELTA_LOG = "_delta_log"


def table_formats(lake: Lake) -> dict[str, Literal["parquet", "delta"]]:
    """Every table under the lake's root and its format (empty when the root does not exist yet)."""
    if lake.fs.get_file_info(lake.base).type != pafs.FileType.Directory:
        return {}
    found: dict[str, Literal["parquet", "delta"]] = {}
    for info in lake.fs.get_file_info(pafs.FileSelector(lake.base)):
        if info.type != pafs.FileType.Directory or info.base_name.startswith(("_", ".")):
            continue
        entries = lake.fs.get_file_info(pafs.FileSelector(info.path))
        if any(e.base_name == DELTA_LOG and e.type == pafs.FileType.Directory for e in entries):
            found[info.base_name] = "delta"
        elif entries and all(e.type == pafs.FileType.Directory and e.base_name.startswith("cluster=") for e in entries):
            found[info.base_name] = "parquet"
    return found


def check_format(lake: Lake, lake_format: str) -> None:
    """Refuse to open `lake` as `lake_format` when any of its tables is in the other format."""
    formats = table_formats(lake)
    others = sorted(t for t, f in formats.items() if f != lake_format)
    if lake_format == "delta":
        others = [t for t in others if not _failed_first_commit(lake, t)]
    if not others:
        return
    if lake_format == "delta":
        raise LakeError(
            f"the lake at {lake.root} holds Parquet tables without a Delta log ({_names(others)}) but "
            f"lake_format is 'delta': convert the lake with `kafka-ops lake migrate --lake {lake.root}` "
            '(DAGs paused), or set lake_format = "parquet" (or $KAFKA_OPS_LAKE_FORMAT=parquet) to keep it Parquet'
        )
    raise LakeError(
        f"the lake at {lake.root} holds Delta tables ({_names(others)}) but lake_format is "
        f'{lake_format!r}: set lake_format = "delta" (or $KAFKA_OPS_LAKE_FORMAT=delta); a Parquet writer '
        "would add files its Delta log never sees"
    )


def _failed_first_commit(lake: Lake, table: str) -> bool:
    """True when `table`, a folder without a Delta log, holds no file or only data files of a Delta
    writer (delta-rs names them `part-...`; the Parquet lake, `<batch id>.parquet`): what a Delta
    writer leaves when a table's first commit fails (a full disk), with nothing committed. Read as
    Delta, the folder is a table not created yet, and the next commit creates it over the orphans
    (which the vacuum deletes). Only its first partition folders are listed, and only on the way to
    a refusal."""
    path = f"{lake.base}/{table}"
    for _ in range(2):  # cluster=..., then dt=...
        folders = [e for e in lake.fs.get_file_info(pafs.FileSelector(path)) if e.type == pafs.FileType.Directory]
        if not folders:
            return True
        path = folders[0].path
    files = [e.base_name for e in lake.fs.get_file_info(pafs.FileSelector(path)) if e.type == pafs.FileType.File]
    return all(name.startswith("part-") for name in files)


def _names(tables: list[str], shown: int = 4) -> str:
    more = f" and {len(tables) - shown} more" if len(tables) > shown else ""
    return ", ".join(tables[:shown]) + more
