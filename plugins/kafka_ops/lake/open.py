"""One place that opens the lake in the format the settings choose (`lake_format`)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from kafka_ops.errors import LakeError
from kafka_ops.lake.names import DEFAULT_LAKE_FORMAT, LAKE_FORMATS

if TYPE_CHECKING:
    from kafka_ops.lake.store import Lake
    from kafka_ops.settings import Settings


def open_lake(root: str | os.PathLike[str], lake_format: str = DEFAULT_LAKE_FORMAT) -> Lake:
    """The lake at `root`: the Parquet `Lake`, or the Delta Lake `DeltaLake` (same API). A root whose
    tables are in the other format is refused (`lake.formats.check_format`)."""
    from kafka_ops.lake.formats import check_format  # noqa: PLC0415 - pyarrow only when a lake is opened

    lake: Lake
    if lake_format == "parquet":
        from kafka_ops.lake.store import Lake  # noqa: PLC0415 - pyarrow only when a lake is opened

        lake = Lake(root)
    elif lake_format == "delta":
        from kafka_ops.lake.delta_store import DeltaLake  # noqa: PLC0415 - deltalake only when chosen

        lake = DeltaLake(root)
    else:
        raise LakeError(f"unknown lake format {lake_format!r} for the lake at {root}: use 'parquet' or 'delta'")
    try:
        check_format(lake, lake_format)
    except OSError as e:  # the root cannot be listed: an object store down, a credential refused
        raise lake.failure(f"list the tables of the lake at {lake.root}", e) from e
    return lake


def lake_of(settings: Settings) -> Lake:
    """The lake the settings name, in their `lake_format`."""
    return open_lake(settings.lake_root, settings.lake_format)


def lake_at(root: str | os.PathLike[str], lake_format: str | None = None) -> Lake:
    """The lake at `root` (a command's --lake) in `lake_format` (its --lake-format); None: the
    settings' `lake_format` (`$KAFKA_OPS_CONFIG`, `$KAFKA_OPS_LAKE_FORMAT`)."""
    return open_lake(root, lake_format_or_settings(lake_format))


def lake_format_or_settings(lake_format: str | None) -> str:
    """A command's --lake-format, or when it gave none the settings' `lake_format`."""
    if lake_format is not None:
        return lake_format
    from kafka_ops.settings import load_settings  # noqa: PLC0415 - settings only when not given

    return load_settings().lake_format


def add_lake_format_argument(parser: argparse.ArgumentParser) -> None:
    """--lake-format for a command that takes --lake (`lake_at` or `lake_format_or_settings` reads it)."""
    parser.add_argument(
        "--lake-format",
        choices=LAKE_FORMATS,
        default=None,
        help=f"the lake's table format (default: the settings' lake_format, $KAFKA_OPS_LAKE_FORMAT, "
        f"else {DEFAULT_LAKE_FORMAT})",
    )
