"""Spark's S3A settings for a lake on S3 (`lake.spark_s3`): the exact conf for the topology's moto
server and for AWS, nothing for a local lake, never a credential; hadoop-aws at pyspark's Hadoop version;
the one-line error for a Spark read that failed on the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.errors import LakeError
from kafka_ops.jars.fetch import SPARK_S3_POM
from kafka_ops.lake.spark_s3 import spark_s3_conf, spark_store_error

MOTO = {
    "AWS_ENDPOINT_URL": "http://127.0.0.1:5000/",
    "AWS_REGION": "eu-west-1",
    "AWS_ACCESS_KEY_ID": "the-key-id",
    "AWS_SECRET_ACCESS_KEY": "the-secret",
    "AWS_SESSION_TOKEN": "the-token",
    "AWS_ALLOW_HTTP": "true",
}

FAIL_FAST = {
    "spark.hadoop.fs.s3a.attempts.maximum": "2",
    "spark.hadoop.fs.s3a.retry.limit": "2",
    "spark.hadoop.fs.s3a.retry.interval": "500ms",
    "spark.hadoop.fs.s3a.connection.establish.timeout": "15s",
    "spark.hadoop.fs.s3a.connection.timeout": "60s",
}


def test_a_local_lake_needs_no_s3_settings() -> None:
    assert spark_s3_conf("/var/lake", MOTO) == {}
    assert spark_s3_conf("file:///var/lake", MOTO) == {}
    assert spark_s3_conf("gs://bucket/lake", MOTO) == {}


@pytest.mark.parametrize("root", ["s3://bucket/lake", "s3a://bucket/lake"])
def test_an_s3_compatible_server_over_http(root: str) -> None:
    assert spark_s3_conf(root, MOTO) == {
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.s3n.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.AbstractFileSystem.s3.impl": "org.apache.hadoop.fs.s3a.S3A",
        "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1",
        "spark.hadoop.fs.s3a.aws.credentials.provider": (
            "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider"
        ),
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:5000",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.executorEnv.AWS_ENDPOINT_URL": "http://127.0.0.1:5000",
        "spark.executorEnv.AWS_REGION": "eu-west-1",
        **FAIL_FAST,
    }


def test_aws_with_a_role_names_no_endpoint_and_no_provider() -> None:
    """No endpoint: AWS's own (virtual-host style, https); no key in the environment: S3A's own chain
    (its environment, the instance's or container's role) finds the credentials."""
    assert spark_s3_conf("s3://bucket/lake", {"AWS_DEFAULT_REGION": "us-west-2"}) == {
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.s3n.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.AbstractFileSystem.s3.impl": "org.apache.hadoop.fs.s3a.S3A",
        "spark.hadoop.fs.s3a.endpoint.region": "us-west-2",
        "spark.executorEnv.AWS_REGION": "us-west-2",
        **FAIL_FAST,
    }


def test_an_https_endpoint_keeps_ssl_and_the_s3_specific_variable_wins() -> None:
    env = {"AWS_ENDPOINT_URL_S3": "https://minio.example.com", "AWS_ENDPOINT_URL": "http://other:1"}
    conf = spark_s3_conf("s3a://bucket/lake", env)
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "https://minio.example.com"
    assert conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "true"
    assert conf["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert conf["spark.hadoop.fs.s3a.endpoint.region"] == "us-east-1"  # AWS's default, as every client's


def test_no_credential_is_ever_in_the_conf() -> None:
    """Spark's UI and event log show every conf: the keys stay in the environment."""
    shown = repr(spark_s3_conf("s3://bucket/lake", MOTO))
    assert "the-key-id" not in shown and "the-secret" not in shown and "the-token" not in shown


def test_a_plain_http_endpoint_needs_aws_allow_http_as_for_every_client() -> None:
    env = {**MOTO, "AWS_ALLOW_HTTP": ""}
    with pytest.raises(LakeError, match=r"AWS_ENDPOINT_URL=http://127.0.0.1:5000 for lake root s3://b/lake is plain"):
        spark_s3_conf("s3://b/lake", env)


def test_hadoop_aws_matches_pysparks_hadoop() -> None:
    """S3A must be the version of the hadoop-common it runs in: pyspark's bundled Hadoop client."""
    import pyspark  # noqa: PLC0415

    [client] = (Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar")
    version = client.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    assert f"<hadoop.version>{version}</hadoop.version>" in SPARK_S3_POM.read_text()


def test_a_store_failure_in_a_spark_read_is_one_line() -> None:
    java = (
        "An error occurred while calling o123.load.\n"
        ": org.apache.hadoop.fs.s3a.AWSClientIOException: getFileStatus on s3a://b/lake/partition_states/_delta_log: "
        "software.amazon.awssdk.core.exception.SdkClientException: Unable to execute HTTP request: Connection "
        "refused: Connect to 127.0.0.1:9 [/127.0.0.1] failed: Connection refused\n"
        "\tat org.apache.hadoop.fs.s3a.S3AUtils.translateException(S3AUtils.java:215)\n"
    )
    error = spark_store_error("s3://b/lake", "http://127.0.0.1:9", RuntimeError(java))
    assert error is not None
    message = str(error)
    assert "\n" not in message
    assert message.startswith(
        "Spark cannot read the lake at s3://b/lake through S3A endpoint http://127.0.0.1:9 "
        "(spark.hadoop.fs.s3a.endpoint): the object store does not answer: is it running, is the endpoint right? "
        "(org.apache.hadoop.fs.s3a.AWSClientIOException: getFileStatus on s3a://b/lake/partition_states"
    )
    assert "S3AUtils.java" not in message
    aws = spark_store_error("s3://b/lake", None, RuntimeError(java))
    assert aws is not None and "through AWS S3:" in str(aws)


def test_other_spark_errors_are_not_store_failures() -> None:
    assert spark_store_error("s3://b/lake", None, RuntimeError("[UNRESOLVED_COLUMN] `x` cannot be resolved")) is None
    local = RuntimeError("org.apache.hadoop.fs.s3a.AWSClientIOException: something")
    assert spark_store_error("/var/lake", None, local) is None
