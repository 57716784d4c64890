"""A warm Spark for the analysis: the Spark Connect server that serves it, and the client session.

The server is one long-lived Spark driver (`SparkConnectServer`, shipped with pyspark as
`spark-connect_2.13-<version>.jar`) that keeps its JVM, its loaded classes and Delta's connector
warm between analyses; each analysis opens its own Connect session on it (`connect_session`), so
its SQL settings and cached inputs stay its own and go when it stops.

`server_argv` is the one place the server's command is written: the sandbox tests, the benchmark
and the production topology start it from here, on `local[N]` or a standalone master.

Delta: plain `spark.read.format("delta")` and `versionAsOf` reads, which are all the analysis does
(it publishes through delta-rs on the client), need only Delta's Spark connector jars and its SQL
extension and catalog on the server (`DELTA_SPARK_CONF`). Delta's Connect plugin
(`io.delta:delta-connect-server`) is for `DeltaTable` APIs (merge, history, vacuum) called over
Connect, which the analysis never makes."""

from __future__ import annotations

import socket
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kafka_ops.errors import ConfigError
from kafka_ops.lake.spark import DELTA_SPARK_CONF

if TYPE_CHECKING:
    from os import PathLike

    from pyspark.sql import SparkSession

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DRIVER_MEMORY = "2g"
"""The server's driver heap: an analysis reads a day of one cluster's snapshots, ~1M rows a table."""

SERVER_CONF = {
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",
    "spark.ui.enabled": "false",
    "spark.log.level": "WARN",  # INFO logs ~250 lines per Spark job, a few hundred jobs an analysis
    "spark.databricks.delta.snapshotPartitions": "8",
    # an analysis builds ~30 findings from the same few cached inputs: keep their resolved plans
    # (Spark Connect re-resolves every plan a client sends; the default keeps 16 a session)
    "spark.connect.session.planCache.maxSize": "256",
    # a session left by a client that died (a killed task) is released after this idle time
    "spark.connect.session.manager.defaultSessionTimeout": "30m",
}
"""The server's defaults; each session sets its SQL settings again (`SESSION_CONF`)."""

SESSION_CONF = {
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    "spark.databricks.delta.snapshotPartitions": "8",
}
"""What an analysis session sets on itself: runtime SQL settings (the analysis runner's defaults)."""

PROBE_TIMEOUT_S = 5.0


def server_argv(
    master: str,
    port: int,
    delta_jars: Sequence[str | PathLike[str]],
    *,
    host: str = "127.0.0.1",
    spark_submit: str = "spark-submit",
    driver_memory: str = DRIVER_MEMORY,
    extra_conf: Mapping[str, str] | None = None,
) -> list[str]:
    """The command that starts a Spark Connect server on `master` (`local[2]`, `spark://host:7077`),
    listening on `host:port`, able to read Parquet and Delta lakes (`delta_jars`: Delta's Spark
    connector, `kafka_ops.sandbox.jars.ensure_delta_spark_jars()`; empty for a Parquet-only lake).
    The lake root is not the server's: each analysis names the tables it reads."""
    if not 0 < port < 65536:
        raise ConfigError(f"Spark Connect server port {port} is not a TCP port (1-65535)")
    conf = {
        **SERVER_CONF,
        "spark.connect.grpc.binding.host": host,
        "spark.connect.grpc.binding.port": str(port),
        "spark.app.name": "kafka-ops analysis (Spark Connect)",
        **(DELTA_SPARK_CONF if delta_jars else {}),
        **(extra_conf or {}),
    }
    argv = [spark_submit, "--class", SERVER_CLASS, "--master", master, "--driver-memory", driver_memory]
    if delta_jars:
        argv += ["--jars", ",".join(str(j) for j in delta_jars)]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    return [*argv, "spark-internal"]


def remote_url(host: str, port: int) -> str:
    """The client's address of a Connect server (`sc://host:port`)."""
    return f"sc://{host}:{port}"


def connect_session(url: str, conn_id: str | None = None) -> SparkSession:
    """A new Connect session on the server at `url` (`sc://host:port`), with the analysis's SQL settings.
    A server that does not accept a connection fails at once with a `SparkConnectUnavailable` naming
    `conn_id` (the Airflow connection, when there is one) and the endpoint: never a wait through
    the client's retries, never another Spark instead."""
    from pyspark.sql import SparkSession  # noqa: PLC0415 - only Spark callers import pyspark

    check_server(url, conn_id)
    # the detectors order a window's few hundred snapshots without a partition key, on purpose (a
    # classic session quiets Spark's WindowExec logger for the same warning: `analysis.runner`)
    warnings.filterwarnings("ignore", message="WARN WindowExpression: No Partition Defined", category=UserWarning)
    spark = SparkSession.builder.remote(url).create()
    for key, value in SESSION_CONF.items():
        spark.conf.set(key, value)
    return spark


CONNECT_MODE_VARIABLES = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
"""What pyspark sets in `os.environ` once a process has a Connect session (`SPARK_CONNECT_MODE_ENABLED`)
or reads to make one: a classic driver started from such a process (spark-submit) must not inherit them,
or its `getOrCreate` asks for a Connect URL (`CONNECT_URL_NOT_SET`)."""


def classic_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` for a child that starts a classic Spark driver (spark-submit): without `CONNECT_MODE_VARIABLES`."""
    return {k: v for k, v in environ.items() if k not in CONNECT_MODE_VARIABLES}


def _endpoint(url: str) -> tuple[str, int]:
    rest = url.removeprefix("sc://").split("/", 1)[0].split(";", 1)[0]
    host, _, port = rest.rpartition(":")
    if not url.startswith("sc://") or not host or not port.isdigit():
        raise ConfigError(f"Spark Connect address {url!r} is not sc://host:port")
    return host, int(port)


def check_server(url: str, conn_id: str | None = None) -> None:
    """Raise `SparkConnectUnavailable` (one line: the connection `conn_id`, the endpoint, why) unless
    the Connect server at `url` accepts a TCP connection within `PROBE_TIMEOUT_S`."""
    host, port = _endpoint(url)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as e:
        by = f" (connection {conn_id!r})" if conn_id else ""
        raise SparkConnectUnavailable(
            f"Spark Connect server sc://{host}:{port}{by} is down: {e.strerror or e}; start it "
            "(kafka_ops.lake.spark_connect.server_argv) or point the connection at a running one"
        ) from None


class SparkConnectUnavailable(ConfigError):
    """No Spark Connect server answers at the configured endpoint."""
