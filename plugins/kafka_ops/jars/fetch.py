"""Fetch the official Apache Kafka jars from Maven Central, once, into a cache folder.

Two sets, each from its own pom and in its own folder so neither changes the other: Kafka 3.9
(`pom.xml`, `var/jars`: the Java helpers of `kafka_ops.jvm` and the ZooKeeper sandbox) and Kafka 4.x
(`pom-kafka4.xml`, `var/jars-kafka4`: the assignor bridge and the KRaft sandbox). A third,
`pom-delta-spark.xml` (`var/jars-delta-spark`), is Delta Lake's Spark connector, which Spark loads
with `spark.jars` (never `--packages`); a fourth, `pom-spark-s3.xml` (`var/jars-spark-s3`), is
Hadoop's S3A filesystem (`hadoop-aws` and the AWS SDK v2 bundle, 642 MB) for a Spark analysis of a
lake on S3 (`kafka_ops.lake.spark_s3`). `pom-tiered-storage.xml` (`var/jars-tiered-storage`) is Kafka's
own local remote-storage plugin, from kafka-storage's test fixtures, for the tiered-storage sandbox.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
from pathlib import Path

from kafka_ops.errors import JavaToolError

log = logging.getLogger(__name__)

POM = Path(__file__).with_name("pom.xml")
KAFKA4_POM = Path(__file__).with_name("pom-kafka4.xml")
DELTA_SPARK_POM = Path(__file__).with_name("pom-delta-spark.xml")
SPARK_S3_POM = Path(__file__).with_name("pom-spark-s3.xml")
JMX_EXPORTER_POM = Path(__file__).with_name("pom-jmx-exporter.xml")
TIERED_STORAGE_POM = Path(__file__).with_name("pom-tiered-storage.xml")
_MARKER = ".complete"


def var_dir() -> Path:
    """The git-ignored working folder: `$KAFKA_OPS_VAR`, else `var/` in the checkout."""
    configured = os.environ.get("KAFKA_OPS_VAR")
    if configured:
        return Path(configured).resolve()
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").exists():
        return checkout / "var"
    return Path.home() / ".cache" / "kafka-ops"


def ensure_jars(cache: Path | None = None) -> Path:
    """Return a folder holding Kafka 3.9's runtime jars, running Maven only on the first call."""
    return _ensure(POM, cache or var_dir() / "jars")


def ensure_kafka4_jars(cache: Path | None = None) -> Path:
    """Return a folder holding Kafka 4.x's runtime jars (the KRaft sandbox), Maven on the first call only."""
    return _ensure(KAFKA4_POM, cache or var_dir() / "jars-kafka4")


def ensure_delta_spark_jars(cache: Path | None = None) -> list[Path]:
    """Delta Lake's Spark connector jars for pyspark 4.1 (for `spark.jars`), Maven on the first call only."""
    folder = _ensure(DELTA_SPARK_POM, cache or var_dir() / "jars-delta-spark", expect="delta-spark_4.1_2.13-*.jar")
    return sorted(folder.glob("*.jar"))


def ensure_spark_s3_jars(cache: Path | None = None) -> list[Path]:
    """Hadoop's S3A filesystem for pyspark 4.1.3's Hadoop 3.4.2 (`hadoop-aws` and the AWS SDK v2 bundle
    its pom names, for `spark.jars`), Maven on the first call only (a 642 MB download)."""
    folder = _ensure(SPARK_S3_POM, cache or var_dir() / "jars-spark-s3", expect="hadoop-aws-*.jar")
    return sorted(folder.glob("*.jar"))


def ensure_jmx_exporter_jar(cache: Path | None = None) -> Path:
    """The Prometheus JMX exporter's Java agent jar (for `-javaagent:`), Maven on the first call only."""
    jar = "jmx_prometheus_javaagent-*.jar"
    folder = _ensure(JMX_EXPORTER_POM, cache or var_dir() / "jars-jmx-exporter", expect=jar)
    return sorted(folder.glob(jar))[-1]


def ensure_tiered_storage_jar(cache: Path | None = None) -> Path:
    """Kafka 4's `LocalTieredStorage` (a RemoteStorageManager keeping remote segments in a local folder),
    from kafka-storage's test fixtures, for a broker's `remote.log.storage.manager.class.path`; Maven on
    the first call only."""
    jar = "kafka-storage-*-test-fixtures.jar"
    folder = _ensure(TIERED_STORAGE_POM, cache or var_dir() / "jars-tiered-storage", expect=jar)
    return sorted(folder.glob(jar))[-1]


def _ensure(pom: Path, target: Path, expect: str = "kafka_2.13-*.jar") -> Path:
    """Maven once per version of the pom: the marker holds the pom's hash, so a jar added to it is
    fetched into an existing folder too, and the jars of its earlier version are deleted first."""
    fingerprint = hashlib.sha256(pom.read_bytes()).hexdigest()
    marker = target / _MARKER
    if marker.exists() and marker.read_text().strip() == fingerprint:
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JavaToolError(f"Maven ('mvn') is not on PATH: it is needed once to fetch the jars of {pom.name}")
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.jar"):  # a version the pom no longer names must not stay on the classpath
        stale.unlink()
    log.info("fetching jars (%s) with Maven into %s", pom.name, target)
    result = subprocess.run(
        [mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies", f"-Djars.dir={target}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise JavaToolError(
            f"Maven could not fetch the jars of {pom.name} (exit {result.returncode}): "
            f"{(result.stdout + result.stderr)[-2000:]}"
        )
    if not any(target.glob(expect)):
        raise JavaToolError(f"Maven finished but no {expect} is in {target}")
    marker.write_text(fingerprint + "\n")
    return target
