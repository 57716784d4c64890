"""The analysis task: one analysis job, on the Spark its connection names.

* a `spark` connection (the provider's spark-submit type): `SparkSubmitOperator` unchanged, a new
  Spark driver per run (a standalone, YARN or Kubernetes master, or `local[*]`);
* a `spark_connect` connection: the same job (`spark_jobs/*.py`'s `main`) runs in this task's
  process, on a session of the warm Spark Connect server the connection points at
  (`kafka_ops.lake.spark_connect`); no JVM starts, so a small snapshot is analysed in seconds.

A Connect server that does not answer fails the task at once with one line naming the connection
and its endpoint: never a spark-submit instead, never the previous findings kept as if new.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from kafka_ops.errors import ConfigError, KafkaOpsError
from kafka_ops.lake.spark_connect import check_server

if TYPE_CHECKING:
    from airflow.sdk import Context

SPARK_SUBMIT = "spark"
SPARK_CONNECT = "spark_connect"


class AnalysisFailed(KafkaOpsError):
    """An analysis job run over Spark Connect exited with an error (its message is in the log above)."""


class SparkAnalysisOperator(SparkSubmitOperator):
    """`SparkSubmitOperator` for the analysis jobs, or the same job over Spark Connect when the
    connection `conn_id` is of type `spark_connect` (see the module's doc)."""

    def execute(self, context: Context) -> Any:
        from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook  # noqa: PLC0415

        conn_type = SparkConnectHook.get_connection(self._conn_id).conn_type
        if conn_type == SPARK_SUBMIT:
            return super().execute(context)
        if conn_type != SPARK_CONNECT:
            raise ConfigError(
                f"connection {self._conn_id!r} is of type {conn_type!r}: the analysis runs on a 'spark' connection "
                "(spark-submit) or a 'spark_connect' one (a Spark Connect server)"
            )
        url = SparkConnectHook(self._conn_id).get_connection_url()
        check_server(url, self._conn_id)  # the task's error names the connection, not a job's exit code
        code = run_job_file(self.application, list(self.application_args or []), url, self._conn_id)
        if code != 0:
            raise AnalysisFailed(
                f"{os.path.basename(self.application)} on Spark Connect (connection {self._conn_id!r}) exited "
                f"{code}: its message is above"
            )
        return None


def run_job_file(application: str, argv: list[str], remote: str, conn_id: str) -> int:
    """`main(argv, remote=..., conn_id=...)` of the analysis job file `application` (`spark_jobs/*.py`)."""
    spec = importlib.util.spec_from_file_location(f"kafka_ops_job_{os.path.basename(application)[:-3]}", application)
    if spec is None or spec.loader is None or not application.endswith(".py"):
        raise ConfigError(f"analysis job {application!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code: int = module.main(argv, remote=remote, conn_id=conn_id)
    return code
