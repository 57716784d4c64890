"""The analysis on a warm Spark: a session of a long-lived Spark Connect server (`sc://host:port`).

`spark-submit` starts a JVM, fetches the jars and warms the JIT for every analysis (a minute on a busy
two-core machine before the first detector runs); a Spark Connect server does that once and keeps its
executors. The jobs run unchanged on either: `run_job` takes the session from `connect_session`
instead of `build_session`.

The server owns what a client cannot change: its jars (Delta's connector for a Delta lake), its master,
and the object store's settings for a lake on S3 (`python -m kafka_ops.analysis.connect_server` starts
one with all three). A session checks the server before any read: unreachable, or
without Delta's extension for a Delta lake, is one `ConfigError` line naming the server (never its
token) and the setting, and never a fallback to a slower or older analysis.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from kafka_ops.analysis.runner import LOCAL_SPARK_DEFAULTS
from kafka_ops.environment import restored
from kafka_ops.errors import ConfigError
from kafka_ops.lake.spark import DELTA_SPARK_CONF

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_PORT = 15002
"""Spark Connect's own default."""

SESSION_SQL_CONF = {k: v for k, v in LOCAL_SPARK_DEFAULTS.items() if k.startswith(("spark.sql.", "spark.databricks."))}
"""The analysis' settings of `runner.LOCAL_SPARK_DEFAULTS` that a session may set (its SQL and Delta ones), per
session: another client of the same server keeps its own. Delta's `snapshotPartitions` of 8 matters most here:
Delta's default of 50 took 5-11 s per table to rebuild its state on a one-core server."""

CONNECT_TIMEOUT_S = 5.0
"""How long the server's port may take to accept a connection before the analysis fails naming it."""

RETRIES = 4
"""Retries of a request the server refused as unavailable (50 ms to 3.2 s apart, about 4 s in all);
Spark Connect's own default waits up to 10 minutes for a server that is down."""


CONNECT_SWITCHES = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
"""The environment variables by which a Spark Connect session switches every `pyspark.sql.functions` call of
its process to Connect's columns (and a classic session's frames then refuse them)."""


@contextmanager
def connect_mode_restored() -> Iterator[None]:
    """Run a block that opens Spark Connect sessions and leave pyspark's process-wide Connect switches as they
    were before it: a process that analyses on a server and then on a local Spark (a `dags test`, a benchmark)
    keeps both working."""
    with restored(CONNECT_SWITCHES):
        yield


def server_address(url: str) -> tuple[str, int]:
    """`sc://host:port/;token=...` → (host, port), `DEFAULT_PORT` when the URL names none."""
    parts = urlsplit(url)
    if parts.scheme != "sc" or not parts.hostname:
        raise ConfigError(f"a Spark Connect URL is sc://host:port, not {parts.scheme}://{parts.hostname or ''}")
    return parts.hostname, parts.port or DEFAULT_PORT


def connect_session(url: str, where: str, lake_format: str) -> SparkSession:
    """A new session on the Spark Connect server at `url` (`where` names its setting in errors), with
    the analysis' SQL settings; refused at once, naming `where`, when the server does not answer or
    cannot read a `lake_format` lake."""
    from pyspark.errors import PySparkException  # noqa: PLC0415 - only jobs need Spark
    from pyspark.sql import SparkSession  # noqa: PLC0415
    from pyspark.sql.connect.client.retries import DefaultPolicy  # noqa: PLC0415

    host, port = server_address(url)
    named = f"the Spark Connect server {host}:{port} ({where})"
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise ConfigError(f"{named} does not answer: {e.strerror or e}") from None
    spark = SparkSession.builder.remote(url).create()
    spark.client.set_retry_policies([DefaultPolicy(max_retries=RETRIES)])
    try:
        for key, value in SESSION_SQL_CONF.items():
            spark.conf.set(key, value)
        extensions = spark.conf.get("spark.sql.extensions", "") or ""
    except PySparkException as e:
        raise ConfigError(f"{named} refused a session: {str(e).splitlines()[0]}") from None
    if lake_format == "delta" and DELTA_SPARK_CONF["spark.sql.extensions"] not in extensions:
        spark.stop()
        raise ConfigError(
            f"{named} cannot read a Delta lake: start it with Delta's Spark connector on its class path (--jars "
            "<kafka_ops.jars.fetch.ensure_delta_spark_jars()>) and --conf "
            + " --conf ".join(f"{k}={v}" for k, v in DELTA_SPARK_CONF.items())
        )
    return spark
