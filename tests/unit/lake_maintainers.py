"""Maintenance run in a subprocess for the kill tests: `python -m tests.unit.lake_maintainers ROOT NOW KEEP_DAYS`.

Runs `maintain` on the Delta lake at ROOT as of NOW (ISO time) keeping KEEP_DAYS days of snapshots,
vacuuming at 0 hours, and prints each progress line as it happens, so that the test can SIGKILL it
right after any step.
"""

from __future__ import annotations

import sys
from datetime import datetime

from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.maintenance import maintain
from kafka_ops.lake.policy import RetentionPolicy


def policy(keep_days: int) -> RetentionPolicy:
    """Snapshots kept `keep_days`, files vacuumed and log entries cleaned at once (tests only)."""
    return RetentionPolicy(
        keep_snapshots_days=keep_days,
        keep_groups_days=keep_days,
        keep_validations_days=keep_days,
        vacuum_retention_hours=0,
        log_retention_hours=0,
    )


if __name__ == "__main__":
    root, now, keep_days = sys.argv[1], datetime.fromisoformat(sys.argv[2]), int(sys.argv[3])
    maintain(DeltaLake(root), policy(keep_days), now, log=lambda line: print(line, flush=True))
