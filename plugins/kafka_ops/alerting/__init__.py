"""Alerts: from a health gate's firing problems to Slack, PagerDuty, e-mail and the log, without storms.

* `alert`: the typed `Alert` (and `cannot_see_cluster` for a snapshot that failed);
* `incidents`: the send-once / remind / send-close state machine, pure;
* `state_store`: each cluster's incidents as one JSON document under the lake root;
* `notifier` + `slack`, `pagerduty`, `mail`, `log_sink`: one sink each, `registry` maps an
  Airflow connection's type to one;
* `dispatch`: the one call a DAG task makes per cluster and run
  (`from kafka_ops.alerting.dispatch import dispatch`).

The names below are imported lazily, so importing the package (e.g. for `Alert` in a DAG file)
loads neither pyarrow nor Airflow's providers.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {
    "Affected": "alert",
    "Alert": "alert",
    "Links": "alert",
    "cannot_see_cluster": "alert",
    "DispatchReport": "dispatch",
    "Notifier": "notifier",
    "default_notifier": "registry",
    "notifier_for": "registry",
    "notifiers_for_cluster": "registry",
}
__all__ = [
    "Affected",
    "Alert",
    "DispatchReport",
    "Links",
    "Notifier",
    "cannot_see_cluster",
    "default_notifier",
    "notifier_for",
    "notifiers_for_cluster",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"kafka_ops.alerting.{_HOMES[name]}"), name)
    raise AttributeError(name)
