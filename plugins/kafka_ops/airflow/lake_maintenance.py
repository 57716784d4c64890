"""The maintenance DAG's task bodies (`kafka_lake_maintenance`): retention, then Delta tidying.

Each task opens the lake the settings name (`lake_of`), with the `[lake]` policy, at the run's
logical time (never the wall clock), and writes its progress to the task log through this
module's logger: per table, the rows expired and the days; per partition, files and bytes before
and after compaction; files vacuumed and the version checkpointed. Only counts go to XCom.

* `expire_task(now)`: `kafka_ops.lake.retention.expire`, on the Parquet or the Delta lake;
* `tidy_task(now)`: `kafka_ops.lake.maintenance.tidy`, compaction, vacuum, checkpoint and log
  cleanup of every Delta table; on the Parquet lake it says there is nothing to do and skips.

Both are idempotent: a retry or a rerun does only what is left.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from kafka_ops.settings import Settings, load_settings

log = logging.getLogger(__name__)

DAG_ID = "kafka_lake_maintenance"


def _progress(message: str) -> None:
    log.info("%s", message)


def expire_task(now: datetime, settings: Settings | None = None) -> dict[str, Any]:
    """Expire the batches older than `[lake]` keeps; returns the rows and files deleted per table."""
    from kafka_ops.lake.open import lake_of  # noqa: PLC0415 - pyarrow and deltalake at run time only
    from kafka_ops.lake.retention import expire  # noqa: PLC0415

    settings = settings or load_settings()
    lake = lake_of(settings)
    log.info("retention of the %s lake at %s as of %s: %s", settings.lake_format, lake.root, now, settings.lake)
    expired = expire(lake, settings.lake, now, _progress)
    if not expired:
        log.info("nothing to expire")
    return {e.table: {"rows": e.rows, "files": e.files, "days": list(e.days)} for e in expired}


def tidy_task(now: datetime, settings: Settings | None = None) -> dict[str, Any]:
    """Compact, vacuum, checkpoint and clean the log of every Delta table; returns counts per table.
    Raises `AirflowSkipException` on the Parquet lake, which has nothing of the kind to do."""
    from airflow.sdk.exceptions import AirflowSkipException  # noqa: PLC0415

    from kafka_ops.lake.maintenance import tidy  # noqa: PLC0415 - deltalake at run time only
    from kafka_ops.lake.open import lake_of  # noqa: PLC0415

    settings = settings or load_settings()
    if settings.lake_format != "delta":
        raise AirflowSkipException(
            f"the lake at {settings.lake_root} is Parquet: one file per batch and no log, so nothing to compact "
            "or vacuum (retention ran in task expire)"
        )
    tables = tidy(lake_of(settings), settings.lake, now, _progress)
    return {
        t.table: {
            "partitions_compacted": len(t.compactions),
            "files_vacuumed": t.files_vacuumed,
            "files": t.files,
            "bytes": t.bytes,
            "most_files_in_a_closed_day": t.most_files_in_a_closed_day,
        }
        for t in tables
    }
