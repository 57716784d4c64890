"""Which notifier an Airflow connection means, by its `conn_type`. Adding a service: a module with
a `Notifier` and a `from_connection`, and a line in `BUILDERS`.

A cluster's notifiers are the connections named in its settings (`alert_conn_ids`); with none,
the log sink alone (`default_notifier`), so an unconfigured cluster still leaves a trail.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kafka_ops.alerting import log_sink, mail, pagerduty, slack
from kafka_ops.alerting.log_sink import LogNotifier
from kafka_ops.alerting.notifier import Notifier
from kafka_ops.errors import ConfigError
from kafka_ops.owners import Owner

if TYPE_CHECKING:
    from airflow.sdk import Connection

    from kafka_ops.settings import ClusterConfig

BUILDERS: Mapping[str, Callable[[Connection], Notifier]] = {
    "slack_webhook": slack.from_connection,
    "slackwebhook": slack.from_connection,  # how a `slack-webhook://` URI's scheme arrives
    "http": slack.from_connection,
    "https": slack.from_connection,
    "pagerduty": pagerduty.from_connection,
    "pagerduty_events": pagerduty.from_connection,
    "smtp": mail.from_connection,
    "email": mail.from_connection,
    "kafka_ops_log": log_sink.from_connection,
    "fs": log_sink.from_connection,
}


def notifier_for(conn: Connection) -> Notifier:
    """The notifier for `conn`, named after its connection id; `ConfigError` naming the
    connection for an unknown type or a bad field (never echoing a secret)."""
    conn_type = (conn.conn_type or "").strip().lower().replace("-", "_")
    builder = BUILDERS.get(conn_type)
    if builder is None:
        raise ConfigError(
            f"connection {conn.conn_id!r}: conn_type {conn.conn_type!r} is not an alert sink; "
            f"use one of {sorted(BUILDERS)}"
        )
    return builder(conn)


def notifiers_for_cluster(config: ClusterConfig, lake_root: str, owners: Sequence[Owner] = ()) -> list[Notifier]:
    """The notifiers of `config.alert_conn_ids` (fetched from Airflow now), or the default sink; then each
    owner's (`owners`, those of this cluster), named `<owner>/<connection id>` and marked with the owner.

    Connections are fetched here, at run time, never at DAG parse time. Every missing or invalid
    connection is named in one `ConfigError` with the setting that names it, so a typo is fixed in one round.
    """
    problems: list[str] = []
    own = _connected(config.alert_conn_ids, f"cluster {config.name!r} alert_conn_ids", problems)
    notifiers: list[Notifier] = own if config.alert_conn_ids else [default_notifier(config.name, lake_root)]
    for owner in owners:
        for notifier in _connected(owner.alert_conn_ids, f"owner {owner.name!r} alert_conn_ids", problems):
            notifier.name, notifier.owner = f"{owner.name}/{notifier.name}", owner.name
            notifiers.append(notifier)
    if problems:
        raise ConfigError(f"cluster {config.name!r}: alert connection(s) unusable: " + "; ".join(problems))
    return notifiers


def _connected(conn_ids: Sequence[str], where: str, problems: list[str]) -> list[Notifier]:
    """The notifiers of `conn_ids`; what is wrong with the others goes to `problems`, naming `where`."""
    if not conn_ids:
        return []
    from airflow.sdk.bases.hook import BaseHook  # noqa: PLC0415 - only when a task sends alerts
    from airflow.sdk.exceptions import AirflowException  # noqa: PLC0415

    notifiers = []
    for conn_id in conn_ids:
        try:
            notifiers.append(notifier_for(BaseHook.get_connection(conn_id)))
        except ConfigError as e:
            problems.append(f"{where}: {e}")
        except AirflowException as e:  # not found: Airflow's message names the connection id
            problems.append(f"{where}: connection {conn_id!r}: {type(e).__name__}: {e}")
    return notifiers


def default_notifier(cluster: str, lake_root: str) -> LogNotifier:
    """The log sink, appending to `<lake_root>/_alerting/<cluster>.alerts.jsonl` when the lake is
    local (object stores cannot append), else the Python log only."""
    scheme, sep, path = lake_root.partition("://")
    if sep and scheme != "file":
        return LogNotifier("log")
    root = path if sep else lake_root
    return LogNotifier("log", os.path.join(os.path.abspath(root), "_alerting", f"{cluster}.alerts.jsonl"))
