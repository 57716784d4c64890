"""`kafka_ops_watch_*`: what each cluster's change watch (the snapshot DAG's asset watcher, in Airflow's
triggerer) last recorded in the lake (`sources.watch_status`). A cluster without a document (no triggerer
ran its watch yet) has no sample; a document that cannot be read is `kafka_ops_watch_status_error_info`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from prometheus_client.core import Metric

from kafka_ops.errors import LakeError
from kafka_ops.sources.watch_status import WatchStatusStore
from kafka_ops.web.profiles import gauge


def watch_metrics(store: WatchStatusStore, clusters: Sequence[str]) -> list[Metric]:
    c_ = ["cluster"]
    up = gauge("kafka_ops_watch_up", "1 while the cluster's change watch sees its cluster, 0 while it backs off.", c_)
    failures = gauge("kafka_ops_watch_failures", "Consecutive failed attempts of the change watch to reach its "
                     "cluster (0 while it watches).", c_)  # fmt: skip
    backoff = gauge("kafka_ops_watch_backoff_seconds", "How long the change watch waits before its next attempt "
                    "(exponential, capped; 0 while it watches).", c_)  # fmt: skip
    events = gauge("kafka_ops_watch_events", "Change events the watch emitted since it (re)started.", c_)
    issues = gauge("kafka_ops_watch_issues", "Collection issues (unparseable znodes or answers) the watch met "
                   "since it (re)started.", c_)  # fmt: skip
    last_event = gauge("kafka_ops_watch_last_event_timestamp_seconds", "When the watch last emitted an event.", c_)
    errors = gauge("kafka_ops_watch_status_error_info", "1 for each cluster whose watch status cannot be read.",
                   ["cluster", "reason"])  # fmt: skip
    for cluster in clusters:
        try:
            status = store.read(cluster)
        except LakeError as e:
            errors.add_metric([cluster, str(e)[:300]], 1)
            continue
        if status is None:
            continue
        up.add_metric([cluster], 1 if status.state == "watching" else 0)
        failures.add_metric([cluster], status.failures)
        backoff.add_metric([cluster], status.backoff_s)
        events.add_metric([cluster], status.events)
        issues.add_metric([cluster], status.issues)
        if status.last_event_at:
            last_event.add_metric([cluster], datetime.fromisoformat(status.last_event_at).timestamp())
    return [up, failures, backoff, events, issues, last_event, errors]
