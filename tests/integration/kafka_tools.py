"""Kafka's own command-line tools (the ground truth), and Kafka 4's output on the KRaft sandbox parsed."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox import ensure_kafka4_jars


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


CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


def _partitions(text: str) -> tuple[tuple[str, int], ...]:
    """`t1:0,1;t2:0` (ConsumerGroupCommand's assignment column) as sorted (topic, partition)s; `-` is none."""
    if text in ("", "-"):
        return ()
    found = []
    for part in text.split(";"):
        topic, _, partitions = part.rpartition(":")
        found += [(topic, int(p)) for p in partitions.split(",")]
    return tuple(sorted(found))


def group_members(bootstrap: str, group: str) -> dict[str, dict[str, Any]]:
    """`kafka-consumer-groups --describe --members --verbose`: per client id, member id, epoch,
    current assignment, target epoch and target assignment (None for a classic group's member)."""
    out = kafka4_tool(CONSUMER_GROUPS, "--bootstrap-server", bootstrap, "--group", group, "--describe", "--members",
                      "--verbose")  # fmt: skip
    members: dict[str, dict[str, Any]] = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) != 9 or cols[0] != group:
            continue
        _, member_id, _, client_id, _, epoch, current, target_epoch, target = cols
        members[client_id] = {
            "member_id": member_id,
            "epoch": None if epoch == "-" else int(epoch),
            "assignment": _partitions(current),
            "target_epoch": None if target_epoch == "-" else int(target_epoch),
            "target": None if target_epoch == "-" else _partitions(target),
        }
    return members


def group_state(bootstrap: str, group: str) -> dict[str, Any]:
    """`kafka-consumer-groups --describe --state --verbose`: assignor, state, group epoch, target
    assignment epoch (None for a classic group) and member count."""
    out = kafka4_tool(CONSUMER_GROUPS, "--bootstrap-server", bootstrap, "--group", group, "--describe", "--state",
                      "--verbose")  # fmt: skip
    row = re.compile(rf"^{re.escape(group)}\s+\S+\s+\(\d+\)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s*$", re.M)
    found = row.search(out)
    assert found is not None, out
    assignor, state, epoch, target_epoch, members = found.groups()
    return {
        "assignor": assignor,
        "state": state,
        "group_epoch": None if epoch == "-" else int(epoch),
        "assignment_epoch": None if target_epoch == "-" else int(target_epoch),
        "members": int(members),
    }


def group_lags(bootstrap: str, group: str) -> dict[tuple[str, int], dict[str, int | None]]:
    """`kafka-consumer-groups --describe`: per partition, committed offset, log end offset and lag
    (None where the tool prints `-`)."""
    out = kafka4_tool(CONSUMER_GROUPS, "--bootstrap-server", bootstrap, "--group", group, "--describe")
    rows: dict[tuple[str, int], dict[str, int | None]] = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) < 6 or cols[0] != group or not cols[2].isdigit():
            continue
        committed, end, lag = (None if c == "-" else int(c) for c in cols[3:6])
        rows[(cols[1], int(cols[2]))] = {"committed": committed, "end": end, "lag": lag}
    return rows


LogDirsView = dict[str, dict[tuple[Any, ...], Any]]


def log_dirs_described(bootstrap: str, brokers: list[int]) -> LogDirsView:
    """`kafka-log-dirs --describe` (Kafka 4's tool; it speaks to 3.9 brokers too): "dirs" maps
    (broker, log dir) to its error (None when healthy), "replicas" maps (broker, log dir, topic,
    partition, is future) to (size, offset lag)."""
    out = kafka4_tool(
        "org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", bootstrap, "--describe",
        "--broker-list", ",".join(str(b) for b in brokers),
    )  # fmt: skip
    (line,) = [line for line in out.splitlines() if line.startswith("{")]
    view: LogDirsView = {"dirs": {}, "replicas": {}}
    for b in json.loads(line)["brokers"]:
        for d in b["logDirs"]:
            view["dirs"][(b["broker"], d["logDir"])] = d["error"]
            for p in d["partitions"]:
                topic, _, partition = p["partition"].rpartition("-")
                key = (b["broker"], d["logDir"], topic, int(partition), p["isFuture"])
                view["replicas"][key] = (p["size"], p["offsetLag"])
    return view


def jmx_gauge(metrics_port: int, name: str) -> float:
    """A broker's own JMX gauge as the Prometheus JMX exporter agent on it serves it (`metrics_agent`)."""
    import httpx  # noqa: PLC0415 - only the tests that scrape an agent

    body = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).text
    values = [float(line.split()[-1]) for line in body.splitlines() if line.split(" ")[0] == name]
    assert len(values) == 1, f"{name} on the agent at port {metrics_port}: {values}"
    return values[0]


def jmx_gauge_total(ports: list[int], name: str, holds: Callable[[float], bool], timeout_s: float = 30) -> float:
    """A gauge summed over brokers' agents, once `holds` says the sum is as expected (a broker applies the
    controller's change a moment after the cluster's metadata shows it); the last sum past `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        total = sum(jmx_gauge(port, name) for port in ports)
        if holds(total) or time.monotonic() > deadline:
            return total
        time.sleep(0.5)
