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
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from kafka_ops.jars.fetch import ensure_delta_spark_jars, ensure_spark_s3_jars
from kafka_ops.lake.spark import DELTA_SPARK_CONF
from kafka_ops.lake.spark_s3 import spark_s3_conf

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
"""What Spark's `sbin/start-connect-server.sh` runs."""
DEFAULT_PORT = 15002
"""Spark Connect's own default."""


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
    spark_submit = Path(sys.executable).parent / "spark-submit"
    command = server_command(
        spark_submit, args.master, lake_root, host=args.host, port=args.port, environ=os.environ, conf=conf
    )
    os.execv(command[0], command)  # noqa: S606 - replaces this process: signals reach the server itself


if __name__ == "__main__":
    sys.exit(main())
