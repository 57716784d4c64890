"""Kafka's own command-line tools (the ground truth), and Kafka 4's output on the KRaft sandbox parsed."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from kafka_ops.sandbox import ensure_kafka4_jars


def kafka_tool(jars: Path, main_class: str, *args: str) -> str:
    """One of Kafka's command-line tools, from the jar folder of the Kafka it speaks to; its stdout."""
    done = subprocess.run(
        ["java", "-cp", f"{jars}/*", main_class, *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{main_class} {args}: {done.stdout[-500:]} {done.stderr[-1500:]}"
    return done.stdout


def kafka4_tool(main_class: str, *args: str) -> str:
    return kafka_tool(ensure_kafka4_jars(), main_class, *args)


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(b) for b in text.split(",") if b.strip())


def topics_described(bootstrap: str, *topics: str) -> dict[tuple[str, int], dict[str, Any]]:
    """`kafka-topics --describe`: each partition's leader, replicas, ISR, ELR and last known ELR."""
    out = kafka4_tool(
        "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap, "--describe",
        "--topic", "|".join(topics),
    )  # fmt: skip
    row = re.compile(
        r"Topic: (\S+)\s+Partition: (\d+)\s+Leader: (-?\d+|none)\s+Replicas: ([\d,]*)\s+Isr: ([\d,]*)"
        r"(?:\s+Elr: ([\d,]*))?(?:\s+LastKnownElr: ([\d,]*))?"
    )
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for m in row.finditer(out):
        leader = -1 if m.group(3) == "none" else int(m.group(3))
        found[(m.group(1), int(m.group(2)))] = {
            "leader": leader,
            "replicas": _ids(m.group(4)),
            "isr": _ids(m.group(5)),
            "elr": _ids(m.group(6) or ""),
            "last_known_elr": _ids(m.group(7) or ""),
        }
    return found


def quorum_status(bootstrap: str, option: str = "--bootstrap-server") -> dict[str, str]:
    """`kafka-metadata-quorum describe --status`: LeaderId, LeaderEpoch, CurrentVoters, ...
    (`option` "--bootstrap-controller" asks the controllers' own listener)."""
    out = kafka4_tool("org.apache.kafka.tools.MetadataQuorumCommand", option, bootstrap, "describe",
                      "--status")  # fmt: skip
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines()) if v}


def quorum_replication(bootstrap: str) -> dict[int, dict[str, str]]:
    """`kafka-metadata-quorum describe --replication`: per replica id, its directory id and status."""
    out = kafka4_tool("org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", bootstrap, "describe",
                      "--replication")  # fmt: skip
    lines = [line.split() for line in out.splitlines() if line.strip()]
    header, rows = lines[0], lines[1:]
    return {int(r[0]): dict(zip(header, r, strict=True)) for r in rows}
