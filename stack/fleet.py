"""The fleet the stack watches: both sandbox clusters (ZooKeeper 3.9 and KRaft 4.4) as one kafka-ops
settings file, and the Airflow connections that reach them and the alert receiver.

The cluster names, connection ids and settings keys are declared once here; `docker/config/kafka-ops.toml`
names the same clusters and connections (tests/unit/test_docker_stack.py checks it against
`settings_toml`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_ops.child_process import dying_with_parent
from stack.processes import StackError
from stack.state import Sandbox

REPO = Path(__file__).resolve().parents[1]  # `sandbox` is a package beside `kafka_ops` in the checkout

SNAPSHOT_SCHEDULE = "* * * * *"
"""Every minute, so a scheduled run is seen within a minute or two of `up`."""
BUCKET = "kafka-ops-lake"
SPARK_CONN = "spark_default"
SPARK_CONNECT_CONN = "spark_connect_default"
FLEET_TOPIC = "kafka-ops-stack"
"""The topic `ensure_topic` makes on each cluster: 6 partitions of 3 replicas, so every broker holds
replicas and a broker's death is under-replicated partitions and a page (a cluster without partitions
pages nothing when a broker dies: nothing is at risk)."""
FLEET_TOPIC_PARTITIONS = 6
ALERT_CONN = "alerts_webhook"
"""A Slack-style webhook connection (`conn_type` http) to the stack's webhook receiver, which records what
kafka-ops pages and resolves (a PagerDuty connection needs a routing key: a credential, kept out of here)."""


@dataclass(frozen=True)
class FleetCluster:
    name: str
    mode: str
    """The sandbox's `--mode`."""
    metadata_source: str
    kafka_conn_id: str
    zookeeper_conn_id: str | None


CLUSTERS: tuple[FleetCluster, ...] = (
    FleetCluster("sandbox-zk", "zk", "zookeeper", "kafka_sandbox_zk", "zookeeper_sandbox_zk"),
    FleetCluster("sandbox-kraft", "kraft", "kraft", "kafka_sandbox_kraft", None),
)


def lake_root(kind: str, local: Path) -> str:
    return f"s3://{BUCKET}/lake" if kind == "s3" else str(local)


def settings_toml(root: str) -> str:
    """The kafka-ops settings file of the fleet (format: plugins/kafka_ops/settings.py)."""
    lines = [
        "# kafka-ops settings of the running topology (python -m stack up; docker/docker-compose.yml):",
        "# both sandbox clusters as one fleet. Endpoints are the AIRFLOW_CONN_* connections named here.",
        f"lake_root = {json.dumps(root)}",
    ]
    for c in CLUSTERS:
        lines += ["", "[[clusters]]", f'name = "{c.name}"', f'metadata_source = "{c.metadata_source}"',
                  f'kafka_conn_id = "{c.kafka_conn_id}"']  # fmt: skip
        if c.zookeeper_conn_id is not None:
            lines.append(f'zookeeper_conn_id = "{c.zookeeper_conn_id}"')
        lines += [
            f'alert_conn_ids = ["{ALERT_CONN}"]',
            "writes_enabled = false                   # dry-run: the remediation executor refuses to write",
        ]
    return "\n".join(lines) + "\n"


def ensure_sandbox(mode: str, root: Path | None, env: Mapping[str, str], log: Path) -> Sandbox:
    """Attach to the `--mode` sandbox if it is up (in `root`, else the CLI's default folder), else start it."""
    where = [] if root is None else ["--root", str(root)]
    status = _sandbox("status", mode, where, env, log)
    if status is not None and _running(status):
        return Sandbox(mode, str(root or ""), started=False, summary=status)
    up = _sandbox("up", mode, where, env, log)
    if up is None:
        raise StackError(f"the {mode} sandbox did not start; see {log}")
    return Sandbox(mode, str(root or ""), started=True, summary=up)


def ensure_topic(sandbox: Sandbox) -> None:
    """`FLEET_TOPIC` on the sandbox's cluster, made unless it is there already."""
    from kafka.errors import KafkaError, TopicAlreadyExistsError  # noqa: PLC0415

    from kafka_ops.sources.admin import AdminClient, past_refusals  # noqa: PLC0415

    bootstrap = str(sandbox.summary["bootstrap_servers"])
    try:
        admin = AdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    except KafkaError as e:
        raise StackError(f"the {sandbox.mode} sandbox at {bootstrap} did not answer: {e}") from e
    try:
        topic = {FLEET_TOPIC: {"num_partitions": FLEET_TOPIC_PARTITIONS, "replication_factor": 3}}
        past_refusals(lambda: admin.create_topics(topic, timeout_ms=30000, wait_for_metadata=True), bootstrap)
    except TopicAlreadyExistsError:
        pass
    except KafkaError as e:
        where = f"the {sandbox.mode} sandbox at {bootstrap}"
        raise StackError(f"could not create topic {FLEET_TOPIC} on {where}: {e}") from e
    finally:
        admin.close()


def stop_sandbox(sandbox: Sandbox, env: Mapping[str, str], log: Path) -> None:
    if sandbox.started:
        where = ["--root", sandbox.root] if sandbox.root else []
        _sandbox("down", sandbox.mode, where, env, log)


def _running(status: Mapping[str, Any]) -> bool:
    return any(status.get("brokers_running", {}).values())


def _sandbox(verb: str, mode: str, where: list[str], env: Mapping[str, str], log: Path) -> dict[str, Any] | None:
    """`python -m sandbox VERB --mode MODE`: its JSON answer, or None when it failed."""
    argv = [sys.executable, "-m", "sandbox", verb, "--mode", mode, *where]
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        done = subprocess.run(
            dying_with_parent(argv), env=dict(env), cwd=REPO, capture_output=True, text=True, timeout=600,
            check=False,
        )  # fmt: skip
        out.write(done.stdout + done.stderr)
    if done.returncode != 0:
        return None
    last = done.stdout.strip().splitlines()[-1:] or [""]
    try:
        answer = json.loads(last[0])
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def connections(
    sandboxes: Mapping[str, Sandbox], webhook_port: int, spark_master_port: int, spark_connect_port: int
) -> dict[str, str]:
    """`AIRFLOW_CONN_*` variables: each cluster's connections, the alert receiver's, Spark's master and
    Spark Connect server."""
    conns: dict[str, dict[str, Any]] = {}
    for c in CLUSTERS:
        summary = sandboxes[c.mode].summary
        conns[c.kafka_conn_id] = {"conn_type": "kafka_admin", "host": summary["bootstrap_servers"]}
        if c.zookeeper_conn_id is not None:
            hosts, _, chroot = str(summary["zookeeper"]).partition("/")
            extra: dict[str, Any] = {"timeout_s": 10, **({"chroot": f"/{chroot}"} if chroot else {})}
            conns[c.zookeeper_conn_id] = {"conn_type": "zookeeper", "host": hosts, "extra": extra}
    receiver = f"http://127.0.0.1:{webhook_port}"
    conns[ALERT_CONN] = {"conn_type": "http", "host": f"{receiver}/chat"}
    conns[SPARK_CONN] = {"conn_type": "spark", "host": "spark://127.0.0.1", "port": spark_master_port,
                         "extra": {"deploy-mode": "client"}}  # fmt: skip
    conns[SPARK_CONNECT_CONN] = {"conn_type": "spark_connect", "host": "sc://127.0.0.1", "port": spark_connect_port}
    return {f"AIRFLOW_CONN_{k.upper()}": json.dumps(v) for k, v in conns.items()}
