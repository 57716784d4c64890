"""Fetch the official Apache Kafka 3.9 jars from Maven Central, once, into a cache folder."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

from kafka_ops.errors import SandboxError

log = logging.getLogger(__name__)

POM = Path(__file__).with_name("pom.xml")
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
    """Return a folder holding Kafka's runtime jars, running Maven only on the first call."""
    target = cache or var_dir() / "jars"
    if (target / _MARKER).exists():
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SandboxError("Maven ('mvn') is not on PATH: it is needed once to fetch Kafka's jars")
    target.mkdir(parents=True, exist_ok=True)
    log.info("fetching Kafka jars with Maven into %s", target)
    result = subprocess.run(
        [mvn, "-q", "-B", "-f", str(POM), "dependency:copy-dependencies", f"-Djars.dir={target}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SandboxError(
            f"Maven could not fetch Kafka's jars (exit {result.returncode}): {(result.stdout + result.stderr)[-2000:]}"
        )
    if not any(target.glob("kafka_2.13-*.jar")):
        raise SandboxError(f"Maven finished but no kafka_2.13 jar is in {target}")
    (target / _MARKER).touch()
    return target
