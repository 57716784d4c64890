"""A Spark Connect server that reads the kafka-ops lake: the warm Spark of the analysis DAG.

    python -m kafka_ops.analysis.connect_server --master spark://spark-master:7077 --port 15002
    python -m kafka_ops.analysis.connect_server --help

Runs spark-submit's SparkConnectServer (its jar ships with pyspark) in the foreground, with Delta's
connector and SQL extension, and for a lake root on S3 Hadoop's S3A configured from this process's AWS
variables (`lake.spark_s3`: never a credential on the command line). The lake root is the settings'
(`KAFKA_OPS_LAKE`, the settings file) unless --lake names one. Point the analysis DAG at it with an
Airflow connection of type `spark_connect` (host `sc://<host>`, this port) named by
`KAFKA_OPS_SPARK_CONNECT_CONN_ID`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from kafka_ops.analysis.connect import DEFAULT_PORT
from kafka_ops.child_process import dying_with_parent
from kafka_ops.errors import ConfigError
from kafka_ops.jars.fetch import ensure_delta_spark_jars, ensure_spark_s3_jars
from kafka_ops.lake.spark import DELTA_SPARK_CONF
from kafka_ops.lake.spark_s3 import spark_s3_conf

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
"""What Spark's `sbin/start-connect-server.sh` runs."""
STARTED = "Spark Connect server started"
"""What the server logs once it accepts sessions."""
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"


def server_command(
    spark_submit: Path, master: str, lake_root: str, *, host: str, port: int, environ: Mapping[str, str],
    conf: Mapping[str, str],
) -> list[str]:  # fmt: skip
    """spark-submit's command line for a Spark Connect server on `host`:`port` that reads the lake at
    `lake_root` on `master`; `conf` adds the deployment's own settings (memory, cores)."""
    s3 = spark_s3_conf(lake_root, environ)
    jars = [*ensure_delta_spark_jars(), *(ensure_spark_s3_jars() if s3 else [])]
    settings = {
        "spark.connect.grpc.binding.address": host,
        "spark.connect.grpc.binding.port": str(port),
        **DELTA_SPARK_CONF,
        **s3,
        **conf,
    }
    command = [str(spark_submit), "--class", SERVER_CLASS, "--name", "kafka-ops Spark Connect", "--master", master]
    command += ["--jars", ",".join(str(j) for j in jars)]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    return command


@contextmanager
def local_server(
    log: Path, port: int, *, master: str = "local[2]", conf: Mapping[str, str], timeout_s: float = 300
) -> Iterator[str]:
    """A Spark Connect server on loopback `port` for this process (a child that dies with it), its output in
    `log`; yields its `sc://` URL once it accepts sessions, stops it on exit. `ConfigError` with the log's
    tail when it exits or does not start within `timeout_s`. For tests and benchmarks: a deployment runs
    `main` as a service."""
    command = server_command(SPARK_SUBMIT, master, "local-lake", host="127.0.0.1", port=port, environ=os.environ,
                             conf=conf)  # fmt: skip
    with log.open("wb") as out:
        server = subprocess.Popen(dying_with_parent(command), stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout_s
        while STARTED not in log.read_text(errors="replace"):
            if server.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:]
                raise ConfigError(f"no Spark Connect server on port {port} within {timeout_s:g}s:\n{tail}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--master", default="local[2]", help="Spark master URL (default: local[2])")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"gRPC port (default: {DEFAULT_PORT})")
    parser.add_argument("--lake", default=None, help="lake root (default: the kafka-ops settings')")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="more Spark settings")
    args = parser.parse_args(argv)
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--conf {item!r} is not KEY=VALUE")
        conf[key] = value
    lake_root = args.lake
    if lake_root is None:
        from kafka_ops.settings import load_settings  # noqa: PLC0415 - only without --lake

        lake_root = load_settings().lake_root
    command = server_command(
        SPARK_SUBMIT, args.master, lake_root, host=args.host, port=args.port, environ=os.environ, conf=conf
    )
    os.execv(command[0], command)  # noqa: S606 - replaces this process: signals reach the server itself


if __name__ == "__main__":
    sys.exit(main())
