"""Whether each collection stage (ZooKeeper or KRaft metadata, Kafka groups) of a cluster is currently
failing, and since when.

The snapshot DAG's collection tasks record every attempt here (one small JSON document per
cluster and stage, `<lake_root>/_alerting/<cluster>.pipeline-<stage>.json`, written atomically);
both DAGs' alert tasks turn a failing stage into a `cannot_see_cluster` alert. A stage that
failed on its last attempt keeps firing until an attempt succeeds, so the on-call engineer
hears "cannot see cluster X" and never silence, and the incident resolves when a snapshot
succeeds again. One document per stage: the two collection tasks of a run never write the same
file, and two runs' attempts at one stage each stage their own copy (the last to finish is the latest).
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import pyarrow.fs as pafs

from kafka_ops.alerting.alert import PIPELINE_STAGES, Alert, Links, cannot_see_cluster, check_aware
from kafka_ops.errors import AlertError, LakeError
from kafka_ops.lake.names import check_name
from kafka_ops.lake.store import lake_filesystem

Stage = Literal["ZooKeeper", "KRaft", "Kafka"]
DIRECTORY = "_alerting"


@dataclass(frozen=True)
class StageStatus:
    stage: Stage
    ok: bool
    at: datetime
    """The latest attempt."""
    failing_since: datetime | None
    """The first failed attempt of the current failing streak (None when the last attempt worked)."""
    error: str | None
    conn_id: str | None


class PipelineStatus:
    """Attempts of each cluster's collection stages, under a lake root."""

    def __init__(self, lake_root: str | os.PathLike[str]) -> None:
        fs, base, _ = lake_filesystem(lake_root)
        self.fs: pafs.FileSystem = fs
        self.directory = f"{base.rstrip('/')}/{DIRECTORY}"

    def path(self, cluster: str, stage: Stage) -> str:
        if stage not in PIPELINE_STAGES:
            raise AlertError(f"pipeline stage must be one of {list(PIPELINE_STAGES)}, got {stage!r}")
        return f"{self.directory}/{check_name('cluster name', cluster)}.pipeline-{stage.lower()}.json"

    def read(self, cluster: str, stage: Stage) -> StageStatus | None:
        path = self.path(cluster, stage)
        try:
            if self.fs.get_file_info(path).type == pafs.FileType.NotFound:
                return None
            with self.fs.open_input_stream(path) as f:
                raw = json.loads(f.read())
            since = raw["failing_since"]
            return StageStatus(
                stage,
                bool(raw["ok"]),
                datetime.fromisoformat(raw["at"]),
                datetime.fromisoformat(since) if since else None,
                raw.get("error"),
                raw.get("conn_id"),
            )
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise LakeError(f"cannot read the pipeline status {path}: {e}") from e

    def record(
        self, cluster: str, stage: Stage, at: datetime, error: BaseException | None = None, conn_id: str | None = None
    ) -> StageStatus:
        """Record one attempt: `error` None means it worked. Returns the new status."""
        check_aware(at, f"pipeline attempt of {cluster} ({stage})")
        previous = self.read(cluster, stage)
        failing_since = None
        message = None
        if error is not None:
            failing_since = previous.failing_since if previous and previous.failing_since else at
            message = " ".join(f"{type(error).__name__}: {error}".split())[:500]
        status = StageStatus(stage, error is None, at, failing_since, message, conn_id)
        document = {
            "ok": status.ok, "at": at.isoformat(), "error": message, "conn_id": conn_id,
            "failing_since": failing_since.isoformat() if failing_since else None,
        }  # fmt: skip
        path = self.path(cluster, stage)
        staged = f"{path}.{secrets.token_hex(4)}.tmp"  # two snapshot runs may record the same stage at once
        self.fs.create_dir(self.directory, recursive=True)
        with self.fs.open_output_stream(staged) as f:
            f.write(json.dumps(document, sort_keys=True).encode())
        self.fs.move(staged, path)
        return status

    def blind_alerts(self, cluster: str, links: Links | None = None) -> list[Alert]:
        """A `cannot_see_cluster` alert for each stage whose latest attempt failed."""
        alerts = []
        for stage in PIPELINE_STAGES:
            status = self.read(cluster, stage)  # type: ignore[arg-type]
            if status is not None and not status.ok and status.failing_since is not None:
                alerts.append(
                    cannot_see_cluster(
                        cluster,
                        status.stage,
                        status.error or "failed",
                        status.failing_since,
                        links=links,
                        conn_id=status.conn_id,
                    )
                )
        return alerts
