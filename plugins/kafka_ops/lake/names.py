"""Names that become lake directory names (cluster names, batch ids). No heavy imports: the
settings module, which DAG files import at parse time, uses this."""

from __future__ import annotations

import re
from typing import Literal, get_args

from kafka_ops.errors import LakeError

LakeFormat = Literal["parquet", "delta"]
LAKE_FORMATS: tuple[str, ...] = get_args(LakeFormat)
DEFAULT_LAKE_FORMAT: LakeFormat = "delta"
"""The table format of a lake whose settings name none. Lakes written by Parquet-only versions are
refused at open (`lake.formats.check_format`) until migrated (`kafka-ops lake migrate`) or their
settings say `lake_format = "parquet"`."""
REPORTS_DIR = "_reports"
"""The side folder of the HTML health reports (`report.publish`), expired by `lake.retention`."""
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def check_name(kind: str, value: str) -> str:
    """Return `value` if it is safe as a directory name, else raise `LakeError` naming it."""
    if not isinstance(value, str) or not _SAFE_NAME.fullmatch(value):  # match() would take "a\n"
        raise LakeError(f"{kind} {value!r} cannot be used in lake paths: use letters, digits, '.', '_' or '-'")
    return value
