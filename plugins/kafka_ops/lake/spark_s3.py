"""Spark's settings for a lake on an S3-compatible store: Hadoop's S3A filesystem, configured from the
same standard AWS variables as every other client (`lake.object_store`), and one-line errors.

`spark_s3_conf` maps a lake root and an environment to the Spark conf a session needs to read it, and
nothing for a lake that is not on S3. It never copies a credential into the conf (Spark's UI and
event log show every conf): the keys stay in the environment, where the AWS SDK's
`EnvironmentVariableCredentialsProvider` reads them, on the driver and on each executor (whose
environment is its host's or pod's, not the driver's: a real cluster gives its executors the
variables, or a role, itself). Without `AWS_ACCESS_KEY_ID` the conf names no provider, and S3A's own
chain applies (its environment and the instance's or container's role).

S3A's retries are cut to fail fast, as the other clients do: a store that does not answer fails the
read in seconds instead of S3A's default of minutes (7 retries of 5 SDK attempts each, 200 s socket
timeouts).

Spark's jars for it are `kafka_ops.jars.fetch.ensure_spark_s3_jars` (hadoop-aws 3.4.2, pyspark's
Hadoop, and its AWS SDK v2 bundle).
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_ops.errors import LakeError
from kafka_ops.lake.object_store import (
    REQUEST_TIMEOUT_S,
    RETRIES,
    is_s3,
    s3_location,
    store_hint,
)

S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"
ENV_CREDENTIALS = "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider"
EXECUTOR_VARS = ("AWS_ENDPOINT_URL", "AWS_REGION")
"""The variables the executors get from the driver (`spark.executorEnv.*`): never a credential."""
S3A_MIN_TIMEOUT_S = 15
"""S3A's floor for its connection timeouts: a lower value is raised to it, with a warning."""


def spark_s3_conf(root: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The Spark conf (`spark.hadoop.fs.s3a.*` and `spark.executorEnv.*`) that reads lake root `root`
    (`s3://`, `s3a://` or `s3n://`) with S3A, from the AWS variables in `environ`; {} for another root.
    `LakeError` for an endpoint that is not a URL, or plain HTTP without `AWS_ALLOW_HTTP=true`."""
    if not is_s3(root):
        return {}
    location = s3_location(root, environ)
    conf = {
        # the lake root says s3:// (or s3n://): Hadoop has no such filesystem, S3A serves them
        "spark.hadoop.fs.s3.impl": S3A_FILESYSTEM,
        "spark.hadoop.fs.s3n.impl": S3A_FILESYSTEM,
        "spark.hadoop.fs.AbstractFileSystem.s3.impl": "org.apache.hadoop.fs.s3a.S3A",
        "spark.hadoop.fs.s3a.endpoint.region": location.region,
        "spark.hadoop.fs.s3a.attempts.maximum": str(RETRIES),
        "spark.hadoop.fs.s3a.retry.limit": str(RETRIES),
        "spark.hadoop.fs.s3a.retry.interval": "500ms",
        "spark.hadoop.fs.s3a.connection.establish.timeout": f"{S3A_MIN_TIMEOUT_S}s",
        "spark.hadoop.fs.s3a.connection.timeout": f"{REQUEST_TIMEOUT_S}s",
        "spark.executorEnv.AWS_REGION": location.region,
    }
    if environ.get("AWS_ACCESS_KEY_ID"):
        conf["spark.hadoop.fs.s3a.aws.credentials.provider"] = ENV_CREDENTIALS
    if location.endpoint:
        conf["spark.hadoop.fs.s3a.endpoint"] = location.endpoint
        conf["spark.hadoop.fs.s3a.path.style.access"] = "true"  # a local server has no bucket host names
        conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] = "false" if location.scheme == "http" else "true"
        conf["spark.executorEnv.AWS_ENDPOINT_URL"] = location.endpoint
    return conf


STORE_FAILURES = ("org.apache.hadoop.fs.s3a.", "software.amazon.awssdk.", "java.net.ConnectException")
"""What names a failure of the object store in a Spark error's text (S3A's and the AWS SDK's exceptions)."""


def spark_store_error(root: str, endpoint: str | None, error: BaseException) -> LakeError | None:
    """One line for a Spark read of lake root `root` that failed on the object store (S3A's `endpoint`,
    None: AWS S3): what, where and the store's first reason; None when `error` is no store failure."""
    text = str(error)
    if not is_s3(root) or not any(marker in text for marker in STORE_FAILURES):
        return None
    reason = next((line.strip() for line in text.splitlines() if any(m in line for m in STORE_FAILURES)), text)
    where = f"S3A endpoint {endpoint} (spark.hadoop.fs.s3a.endpoint)" if endpoint else "AWS S3"
    reason = store_hint(" ".join(reason.split()).removeprefix(": ")[:400])  # py4j's ": " before the Java error
    return LakeError(f"Spark cannot read the lake at {root} through {where}: {reason}")
