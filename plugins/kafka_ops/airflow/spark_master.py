"""Whether spark-submit can reach the Spark master of its Airflow connection, asked before any analysis
job is submitted: a standalone master that is down (or a wrong host or port in the connection) fails
the run's first Spark task at once, with one line naming the connection and the endpoints, instead of
each job's spark-submit retrying its master for a minute and failing with a page of JVM logs. The task
is retried as the DAG's tasks are, so the analysis runs again on its own once the master is back.

Only `spark://` masters are checked (standalone, with high-availability lists `spark://h1:p1,h2:p2`);
`local[*]`, `yarn` and `k8s://` are left to spark-submit.
"""

from __future__ import annotations

import socket

from kafka_ops.errors import ConfigError, SparkUnreachable

DEFAULT_PORT = 7077
"""A standalone master's port when the URL and the connection give none (Spark's default)."""


def master_endpoints(host: str, port: int | None) -> list[tuple[str, int]] | None:
    """The (host, port) pairs of a `spark://` master URL (`port`: the connection's, for a host without
    one), or None for a master that is not standalone."""
    if not host.startswith("spark://"):
        return None
    endpoints = []
    for part in host.removeprefix("spark://").rstrip("/").split(","):
        name, colon, given = part.strip().partition(":")
        if not name or (colon and not given.isdigit()):
            raise ConfigError(f"Spark master URL {host!r}: {part!r} is not host[:port]")
        endpoints.append((name, int(given) if colon else port or DEFAULT_PORT))
    return endpoints


def check_connection(conn_id: str) -> None:
    """`check_master` on Airflow connection `conn_id`; nothing when it is not defined (spark-submit then
    falls back to its own default master, as before)."""
    from airflow.exceptions import AirflowNotFoundException  # noqa: PLC0415 - Airflow only in its tasks
    from airflow.sdk.bases.hook import BaseHook  # noqa: PLC0415

    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return
    check_master(conn_id, conn.host or "", conn.port)


def check_master(conn_id: str, host: str, port: int | None, timeout_s: float = 5.0) -> None:
    """Raise `SparkUnreachable` unless one master of connection `conn_id` (its `host` and `port`) accepts
    a TCP connection within `timeout_s`."""
    endpoints = master_endpoints(host, port)
    if endpoints is None:
        return
    failures = []
    for name, number in endpoints:
        try:
            with socket.create_connection((name, number), timeout=timeout_s):
                return
        except OSError as e:
            failures.append(f"{name}:{number} ({type(e).__name__}: {e})")
    raise SparkUnreachable(
        f"Airflow connection {conn_id!r}: no Spark master answers at {', '.join(failures)}; the analysis is "
        "retried, and runs once the master is back (or fix the connection's host and port)"
    )
