"""Run small Java programs of ours against Kafka's own jars: compile once, launch tied to us.

Kafka's Java client is the reference for some behaviour (its assignors, its consumer), so a
few tools call it rather than imitate it. Their sources ship in this package; `compile_java`
builds them with `javac` into a cache folder keyed by the sources' hash, on first use only.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kafka_ops.errors import JavaToolError
from kafka_ops.jars.fetch import ensure_jars, var_dir


def kafka_classpath(jars: Path | None = None) -> str:
    """Kafka's jars (kafka-clients, Jackson, slf4j, ...): the folder `jars` (e.g. Kafka 4's, from
    `ensure_kafka4_jars`), else Kafka 3.9's, fetched by Maven on first use."""
    return f"{jars or ensure_jars()}/*"


def compile_java(sources: Sequence[Path], cache: Path | None = None, jars: Path | None = None) -> Path:
    """A folder of classes compiled from `sources` against Kafka's jars (`jars` as in
    `kafka_classpath`), cached by content and jar folder."""
    digest = hashlib.sha256()
    if jars is not None:
        digest.update(str(jars.resolve()).encode() + b"\0")
    for source in sorted(sources):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    target = (cache or var_dir() / "classes") / digest.hexdigest()[:16]
    if (target / ".complete").exists():
        return target
    javac = shutil.which("javac")
    if javac is None:
        raise JavaToolError(
            "'javac' (a JDK, 17 or newer) is not on PATH: it is needed to build kafka-ops' Java helpers"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
    command = [javac, "-nowarn", "-encoding", "UTF-8", "-cp", kafka_classpath(jars), "-d", str(building)]
    result = subprocess.run([*command, *map(str, sources)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        shutil.rmtree(building, ignore_errors=True)
        names = ", ".join(s.name for s in sources)
        raise JavaToolError(f"javac could not compile {names}: {(result.stdout + result.stderr)[-2000:]}")
    (building / ".complete").touch()
    try:
        building.rename(target)
    except OSError:  # another process built the same classes first
        shutil.rmtree(building, ignore_errors=True)
    return target


def java_command(
    classes: Path,
    main_class: str,
    *args: str,
    heap: str = "256m",
    jvm_flags: Sequence[str] = (),
    jars: Path | None = None,
) -> list[str]:
    """The command line that runs `main_class` from `classes` with Kafka's jars (`jars` as in
    `kafka_classpath`) on the classpath."""
    java = shutil.which("java") or "java"
    flags = ["-XX:+UseSerialGC", "-Djava.awt.headless=true", f"-Xmx{heap}", *jvm_flags]
    return [java, *flags, "-cp", f"{classes}:{kafka_classpath(jars)}", main_class, *args]
