"""`IncidentStore`: each cluster's incidents as one small JSON document under the lake root.

The document lives at `<lake_root>/_alerting/<cluster>.json` and goes through pyarrow's
filesystem, so a lake on `s3a://`, `gs://` or `hdfs://` keeps its alert state next to its data.
A save writes `<cluster>.json.tmp` and then moves it over the document: a single rename on a
local or HDFS filesystem, a whole-object write on object stores, so a reader (the next run) sees
the old state or the new one, never half of one. A writer that dies before the move leaves the
old document in place and a stale `.tmp` that the next save overwrites.

On a lake on S3 the document is written in place with a conditional write instead: `If-Match` on
the ETag `load` read (`If-None-Match: *` when there was none), so two runs dispatching for one
cluster at once cannot overwrite each other's deliveries (which would page again, or lose a
resolve): the one that loses re-reads the document and re-applies its changes (`save`'s `merge`),
or fails with `AlertError` when it has no merge.

Runs that alert for one cluster at once (the snapshot DAG paging from a snapshot while the analysis
DAG alerts from findings) take turns: `exclusive` holds the cluster's lock (`<cluster>.json.lock`: a
lock object on S3, an `fcntl` lock on a local disk) from `load` to `save`, so neither decides on a
state the other is about to change (two runs deciding the same open would page twice).

A document that cannot be parsed (edited by hand, a different tool) is moved aside to
`<cluster>.json.corrupt-<time>` and the cluster starts from no incidents: every firing alert is
sent again (PagerDuty folds it into the open incident by its dedup key), which is noisy but never
silent. The reason is returned so the dispatch reports it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pyarrow.fs as pafs

from kafka_ops import silences
from kafka_ops.alerting.alert import SEVERITIES, Severity, check_aware, check_key
from kafka_ops.alerting.incidents import ClusterState, Incident, SinkState
from kafka_ops.errors import AlertError, ConfigError, LakeError
from kafka_ops.lake.names import check_name
from kafka_ops.lake.object_store import conditional_store, exclusive
from kafka_ops.lake.store import lake_filesystem

log = logging.getLogger(__name__)

FORMAT = 1
DIRECTORY = "_alerting"
LOCK_TIMEOUT_S = 300.0
"""How long a run waits for another run's alerting of the same cluster (its deliveries time out sooner)."""
SAVE_ATTEMPTS = 8
"""Conditional saves tried (re-reading and merging after each lost race) before `save` fails."""


class IncidentStore:
    """Load and save `ClusterState` documents under a lake root (a local path or a filesystem URL)."""

    def __init__(self, lake_root: str | os.PathLike[str]) -> None:
        fs, base, self.root = lake_filesystem(lake_root)  # the lake's own URL handling; no I/O
        self.fs: pafs.FileSystem = fs
        self.directory = f"{base.rstrip('/')}/{DIRECTORY}"
        self.conditional = conditional_store(fs, self.root)
        self._etags: dict[str, str | None] = {}
        """On S3: the ETag of each cluster's document as `load` read it (None: there was none)."""

    def __repr__(self) -> str:
        return f"IncidentStore({self.root!r})"

    def path(self, cluster: str) -> str:
        return f"{self.directory}/{check_name('cluster name', cluster)}.json"

    @contextmanager
    def exclusive(self, cluster: str, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """Hold the cluster's alerting lock for the body of the `with` (module docstring); `LakeError`
        naming it after `timeout_s`."""
        with exclusive(self.fs, self.root, f"{self.path(cluster)}.lock", f"alerting of cluster {cluster}", timeout_s):
            yield

    def load(self, cluster: str) -> tuple[ClusterState, str | None]:
        """The cluster's state (empty if never saved) and, if the document was unreadable and set
        aside, why. A document written by a newer format is refused rather than overwritten."""
        path = self.path(cluster)
        if self.conditional is not None:
            current = self.conditional.read(path)
            self._etags[cluster] = None if current is None else current.etag
            if current is None:
                return ClusterState(cluster), None
            raw = current.content
        else:
            try:
                if self.fs.get_file_info(path).type == pafs.FileType.NotFound:
                    return ClusterState(cluster), None
                with self.fs.open_input_stream(path) as f:
                    raw = f.read()
            except OSError as e:
                raise LakeError(f"cannot read the alert state {path}: {e}") from e
        try:
            return _decode(cluster, raw), None
        except _Unreadable as e:
            aside = f"{path}.corrupt-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"  # wall clock: when it was set aside
            self.fs.move(path, aside)
            self._etags[cluster] = None
            reason = f"alert state {path} was unreadable ({e}); moved to {aside} and started afresh"
            log.error("%s", reason)
            return ClusterState(cluster), reason

    def save(self, state: ClusterState, merge: Callable[[ClusterState], ClusterState] | None = None) -> ClusterState:
        """Write the whole document atomically (temporary file, then move; on S3 a conditional write,
        see the module docstring). On S3, when another run saved since `load`: with `merge`, the latest
        state is read and `merge(latest)` saved instead, again conditionally; without, `AlertError`.
        Returns the state saved."""
        if self.conditional is not None:
            return self._save_conditionally(state, merge)
        path = self.path(state.cluster)
        tmp = f"{path}.tmp"
        content = json.dumps(_encode(state), indent=1, sort_keys=True).encode()
        try:
            self.fs.create_dir(self.directory, recursive=True)
            with self.fs.open_output_stream(tmp) as out:
                out.write(content)
            self._publish(tmp, path)
        except OSError as e:
            raise LakeError(f"cannot write the alert state {path}: {e}") from e
        return state

    def _save_conditionally(
        self, state: ClusterState, merge: Callable[[ClusterState], ClusterState] | None
    ) -> ClusterState:
        store, cluster = self.conditional, state.cluster
        if store is None:
            raise AlertError(f"{self}: no conditional writes on this store")
        path = self.path(cluster)
        if cluster not in self._etags:
            self.load(cluster)  # a save without a load: against the document as it is now
        for _ in range(SAVE_ATTEMPTS):
            content = json.dumps(_encode(state), indent=1, sort_keys=True).encode()
            etag = self._etags[cluster]
            saved = store.create(path, content) if etag is None else store.replace(path, content, etag)
            if saved is not None:
                self._etags[cluster] = saved
                return state
            if merge is None:
                raise AlertError(f"alert state {path}: another run saved it since this one read it; nothing was saved")
            log.info("alert state %s changed since it was read: merging into the latest", path)
            latest, _ = self.load(cluster)
            state = merge(latest)
        raise AlertError(f"alert state {path}: lost {SAVE_ATTEMPTS} races with other runs saving it; retry the run")

    def _publish(self, tmp: str, path: str) -> None:
        self.fs.move(tmp, path)


class _Unreadable(Exception):  # an internal signal: never escapes `load`
    pass


# -- the JSON document ----------------------------------------------------------------------------


def _encode(state: ClusterState) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "cluster": state.cluster,
        "incidents": [
            {
                "key": i.key,
                "severity": i.severity,
                "title": i.title,
                "since": i.since.isoformat(),
                "opened_at": i.opened_at.isoformat(),
                "cleared_at": _time_or_none(i.cleared_at),
                "silenced": i.silenced,
                "sinks": {
                    name: {
                        "notified_at": _time_or_none(s.notified_at),
                        "severity": s.severity,
                        "failures": s.failures,
                        "last_error": s.last_error,
                    }
                    for name, s in sorted(i.sinks.items())
                },
            }
            for _, i in sorted(state.incidents.items())
        ],
        "evidence": {key: at.isoformat() for key, at in sorted(state.evidence.items())},
        "silences": [silences.encode(s) for s in state.silences],
    }


def _decode(cluster: str, raw: bytes) -> ClusterState:
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _Unreadable(f"not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise _Unreadable("not a JSON object")
    if isinstance(doc.get("format"), int) and doc["format"] > FORMAT:
        raise AlertError(
            f"alert state for cluster {cluster!r} has format {doc['format']}, newer than this code ({FORMAT}); "
            "upgrade kafka-ops on every worker"
        )
    if doc.get("format") != FORMAT or doc.get("cluster") != cluster or not isinstance(doc.get("incidents"), list):
        raise _Unreadable(f"expected format {FORMAT} for cluster {cluster!r} with a list of incidents")
    try:
        incidents = [_incident(entry) for entry in doc["incidents"]]
    except (KeyError, TypeError, ValueError, AlertError) as e:
        raise _Unreadable(f"bad incident: {type(e).__name__}: {e}") from None
    try:  # absent from documents of before the snapshot's own pages: no evidence yet
        evidence = {check_key(k, "stored evidence"): _time(at) for k, at in dict(doc.get("evidence") or {}).items()}
    except (TypeError, ValueError, AlertError) as e:
        raise _Unreadable(f"bad evidence: {type(e).__name__}: {e}") from None
    try:  # absent from documents of before silences
        stored = tuple(silences.decode(entry) for entry in doc.get("silences") or ())
    except (KeyError, TypeError, ValueError, ConfigError) as e:
        raise _Unreadable(f"bad silence: {type(e).__name__}: {e}") from None
    return ClusterState(cluster, {i.key: i for i in incidents}, evidence, stored)


def _incident(entry: Mapping[str, Any]) -> Incident:
    key = check_key(entry["key"], "stored incident")
    title = entry["title"]
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"incident {key!r} has no title")
    return Incident(
        key=key,
        severity=_severity(entry["severity"]),
        title=title,
        since=_time(entry["since"]),
        opened_at=_time(entry["opened_at"]),
        cleared_at=_time(entry["cleared_at"]) if entry.get("cleared_at") else None,
        sinks={str(name): _sink(s) for name, s in dict(entry.get("sinks") or {}).items()},
        silenced=str(entry["silenced"]) if entry.get("silenced") else None,
    )


def _sink(entry: Mapping[str, Any]) -> SinkState:
    failures = entry.get("failures", 0)
    if not isinstance(failures, int) or failures < 0:
        raise ValueError(f"failures {failures!r}")
    return SinkState(
        notified_at=_time(entry["notified_at"]) if entry.get("notified_at") else None,
        severity=_severity(entry["severity"]) if entry.get("severity") else None,
        failures=failures,
        last_error=str(entry["last_error"]) if entry.get("last_error") else None,
    )


def _severity(value: Any) -> Severity:
    for severity in SEVERITIES:
        if value == severity:
            return severity
    raise ValueError(f"severity {value!r}")


def _time(value: Any) -> datetime:
    return check_aware(datetime.fromisoformat(value), "stored time")


def _time_or_none(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
