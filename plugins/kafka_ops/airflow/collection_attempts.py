"""Each collection attempt of a snapshot run, recorded for `report_blind_spots` ("cannot see cluster X").

An attempt is the cluster's only when the task still has its supervisor: the process that started it,
which serves its Airflow connections and takes its logs. When a Celery worker is killed, the task can
outlive its supervisor for a moment, and its next call through it (the connection lookup a collector
starts with) fails with a broken pipe. That is the worker's failure, not the cluster's: the scheduler
retries the task once it misses its heartbeats, and recording it would page "cannot see cluster" for a
cluster that answers (it did, in an hour-long soak with a worker killed mid-task).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from kafka_ops.alerting.pipeline_status import PipelineStatus, Stage

log = logging.getLogger(__name__)


@contextmanager
def recorded(lake_root: str, cluster: str, stage: Stage, conn_id: str) -> Iterator[None]:
    """Record whether the collection inside worked (any exception: it failed, and goes on up), unless
    the task's supervisor died meanwhile."""
    supervisor = os.getppid()
    try:
        yield
    except Exception as e:
        if os.getppid() == supervisor:
            PipelineStatus(lake_root).record(cluster, stage, datetime.now(UTC), e, conn_id)
        else:
            log.warning(
                "%s collection of %s failed after this task's supervisor (pid %d) exited: not recorded as the "
                "cluster's (%s)", stage, cluster, supervisor, type(e).__name__,
            )  # fmt: skip
        raise
    PipelineStatus(lake_root).record(cluster, stage, datetime.now(UTC), None, conn_id)
