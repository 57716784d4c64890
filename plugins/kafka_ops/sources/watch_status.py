"""What each cluster's change watch (the snapshot DAG's asset watcher, in Airflow's triggerer) is doing:
one small JSON document per cluster, `<lake_root>/_watch/<cluster>.json`, rewritten atomically when the
watch connects, fails, backs off, emits an event or meets an issue. The metrics page reads it
(`kafka_ops_watch_*`), so a watch that cannot see its cluster, and is retrying ever more slowly, shows
beside the snapshots instead of only in the triggerer's log.

Fields: `state` ("watching" or "backing_off"), `since` (ISO time of the last state change),
`failures` (consecutive failed connections), `backoff_s` (the wait before the next try), `error`,
`events` (events emitted since the watch started), `last_event_at`, `issues` (collection issues met
since the watch started), `updated_at`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import Any, Literal

import pyarrow.fs as pafs

from kafka_ops.errors import LakeError
from kafka_ops.lake.names import check_name
from kafka_ops.lake.store import lake_filesystem

DIRECTORY = "_watch"
WatchState = Literal["watching", "backing_off"]


@dataclass(frozen=True)
class WatchStatus:
    state: WatchState
    since: str
    failures: int = 0
    backoff_s: float = 0.0
    error: str | None = None
    events: int = 0
    last_event_at: str | None = None
    issues: int = 0
    updated_at: str | None = None


class WatchStatusStore:
    """The watch documents under one lake root."""

    def __init__(self, lake_root: str | os.PathLike[str]) -> None:
        fs, base, _ = lake_filesystem(lake_root)
        self.fs: pafs.FileSystem = fs
        self.directory = f"{base.rstrip('/')}/{DIRECTORY}"

    def path(self, cluster: str) -> str:
        return f"{self.directory}/{check_name('cluster name', cluster)}.json"

    def write(self, cluster: str, status: WatchStatus) -> None:
        path = self.path(cluster)
        try:
            self.fs.create_dir(self.directory, recursive=True)
            with self.fs.open_output_stream(f"{path}.tmp") as f:
                f.write(json.dumps(asdict(status), sort_keys=True).encode())
            self.fs.move(f"{path}.tmp", path)
        except OSError as e:
            raise LakeError(f"cannot write the watch status {path}: {e}") from e

    def read(self, cluster: str) -> WatchStatus | None:
        """None when the cluster has no watch document (no watch ran yet)."""
        path = self.path(cluster)
        try:
            if self.fs.get_file_info(path).type == pafs.FileType.NotFound:
                return None
            with self.fs.open_input_stream(path) as f:
                raw: dict[str, Any] = json.loads(f.read())
            return WatchStatus(**raw)
        except (OSError, ValueError, TypeError) as e:
            raise LakeError(f"cannot read the watch status {path}: {e}") from e
