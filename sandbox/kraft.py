"""A real KRaft cluster on 127.0.0.1: three controllers in a quorum and three brokers with racks.

Kafka 4 removed ZooKeeper, so this sandbox runs the official Apache Kafka 4.4.0 jars (fetched by
Maven from `pom-kafka4.xml` into their own folder, `var/jars-kafka4`, so the 3.9 ZooKeeper sandbox
keeps its own). 4.4.0 is the newest 4.x release on Maven Central (4.0.0 to 4.4.0 are there), and
kafka-python 3.0.12 speaks to it: `KafkaAdminClient` (describe_cluster, create_topics,
describe_topics, list_groups, describe_metadata_quorum) and a `KafkaProducer`/`KafkaConsumer` round
trip with a committed group work against it, which `tests/integration/test_kraft_sandbox.py` checks.

Controllers and brokers are separate processes (not combined mode): six small JVMs start in about
15 s on a 2-core machine, and only separate roles let a test kill the active controller without
also killing a broker. The quorum is static (`controller.quorum.voters`), formatted with Kafka's own
`kafka.tools.StorageTool` and one cluster id. The verbs produce real failures: stop, kill -9 and
restart a broker or a controller. The active controller is read from the quorum
(DescribeQuorum's leader), never from DescribeCluster's `controller_id`, which a KRaft broker
fills with a random live broker.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_ops.child_process import dying_with_parent
from kafka_ops.errors import SandboxError
from kafka_ops.jars.fetch import ensure_kafka4_jars, var_dir
from sandbox.cluster import (
    BROKER_SETTINGS,
    DEFAULT_RACKS,
    JVM_FLAGS,
    _Node,
    _signal,
    free_port,
    launch,
    read_state,
    wait_exited,
)
from sandbox.metrics_agent import agent_options

if TYPE_CHECKING:
    from kafka import KafkaAdminClient

    from kafka_ops.model.cluster import Quorum

log = logging.getLogger(__name__)

LOG4J2 = Path(__file__).with_name("log4j2.properties")
KAFKA_VERSION = "4.4.0"
# Controller node ids: 101, 102, 103 (brokers keep 1, 2, 3, as in the ZooKeeper sandbox).
CONTROLLER_ID_BASE = 100

# The 3.9 sandbox's small settings, less ZooKeeper's; a broker that misses heartbeats for 6 s is
# fenced (Kafka's default is 9 s), as a ZooKeeper sandbox broker loses its session after 6 s.
KRAFT_BROKER_SETTINGS = {
    **{k: v for k, v in BROKER_SETTINGS.items() if not k.startswith("zookeeper.")},
    "broker.session.timeout.ms": "6000",
    "broker.heartbeat.interval.ms": "1000",
    # Share groups (KIP-932) and streams groups (KIP-1071) need nothing turned on in 4.4: a cluster
    # formatted at 4.4 finalizes share.version=2 and streams.version=1, and the default
    # group.coordinator.rebalance.protocols is classic,consumer,streams. The share-group state topic
    # would get 50 partitions (its default) on first use: 3 suit a sandbox. A streams group waits 3 s
    # for more members before its first assignment by default: the sandbox's one app need not.
    "share.coordinator.state.topic.num.partitions": "3",
    "group.streams.initial.rebalance.delay.ms": "0",
}
# A controller only serves the metadata log: one thread of each kind is plenty on 2 cores.
CONTROLLER_SETTINGS = {
    "num.network.threads": "1",
    "num.io.threads": "1",
    "background.threads": "1",
}


@dataclass
class KRaftSandbox:
    """`controllers` KRaft controllers and `brokers` brokers, with racks, in folder `root`.

    `die_with_parent` makes the JVMs die with this Python process (tests, demo); the CLI's
    `up` turns it off so the cluster outlives the command. `broker_heap` / `controller_heap` are
    each JVM's `-Xmx`: the defaults suit the tests' small clusters; a benchmark holding 10,000+
    partitions gives the brokers more. `broker_settings` / `controller_settings` are added to (or
    override) every broker's / controller's `server.properties`. `metrics_agent` attaches the
    Prometheus JMX exporter to every broker (`metrics_agent.py`), serving on `metrics_ports`.
    """

    root: Path | None = None
    brokers: int = 3
    controllers: int = 3
    racks: tuple[str, ...] = DEFAULT_RACKS
    die_with_parent: bool = True
    broker_settings: dict[str, str] = field(default_factory=dict)
    controller_settings: dict[str, str] = field(default_factory=dict)
    broker_heap: str = "384m"
    controller_heap: str = "256m"
    cluster_id: str = ""
    broker_ports: dict[int, int] = field(default_factory=dict)
    controller_ports: dict[int, int] = field(default_factory=dict)
    metrics_agent: bool = False
    metrics_ports: dict[int, int] = field(default_factory=dict)
    _owns_root: bool = False
    _classpath: str = ""
    _nodes: dict[int, _Node] = field(default_factory=dict)
    _controller_nodes: dict[int, _Node] = field(default_factory=dict)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self, timeout_s: float = 180.0) -> KRaftSandbox:
        self._classpath = f"{_kafka4_jars()}/*"
        if self.root is None:
            base = var_dir() / "sandbox"
            base.mkdir(parents=True, exist_ok=True)
            self.root = Path(tempfile.mkdtemp(prefix="kraft-", dir=base))
            self._owns_root = True
        self.root.mkdir(parents=True, exist_ok=True)
        self.cluster_id = self.cluster_id or random_cluster_id()
        for i in range(1, self.controllers + 1):
            self.controller_ports.setdefault(CONTROLLER_ID_BASE + i, free_port())
        for broker_id in range(1, self.brokers + 1):
            self.broker_ports.setdefault(broker_id, free_port())
            if self.metrics_agent:
                self.metrics_ports.setdefault(broker_id, free_port())
        try:
            self._build_nodes()
            self._format([*self._controller_nodes.values(), *self._nodes.values()])
            for node in [*self._controller_nodes.values(), *self._nodes.values()]:
                self._launch(node)
            self.wait_healthy(timeout_s)
        except BaseException:
            self.stop()
            raise
        self._save_state()
        return self

    def stop(self) -> None:
        """Stop every process this cluster started and remove owned data.

        Everything gets SIGTERM together and a few seconds to exit, then SIGKILL: a sandbox's
        data is thrown away, so its teardown does not wait for controlled shutdowns. Data this
        cluster owns (a root it made) is deleted next, so its processes get SIGKILL at once: with
        the controllers stopping too, a broker's controlled shutdown always outlasted the seconds.
        """
        nodes = [n for n in [*self._nodes.values(), *self._controller_nodes.values()] if n.running]
        for node in nodes:
            _signal(node, signal.SIGTERM)
        deadline = time.monotonic() + (0 if self._owns_root else 5)
        while any(n.running for n in nodes) and time.monotonic() < deadline:
            time.sleep(0.1)
        for node in nodes:
            _terminate(node, grace_s=0)
        if self._owns_root and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> KRaftSandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ------------------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.broker_ports.values())

    @property
    def quorum_voters(self) -> str:
        """`controller.quorum.voters`: id@host:port of every controller."""
        return ",".join(f"{c}@127.0.0.1:{p}" for c, p in sorted(self.controller_ports.items()))

    def broker_ids(self) -> list[int]:
        return sorted(self.broker_ports)

    def controller_ids(self) -> list[int]:
        return sorted(self.controller_ports)

    # -- fault verbs ------------------------------------------------------------------------------

    def stop_broker(self, broker_id: int) -> None:
        """Controlled shutdown (SIGTERM): leaders move away first, then the controller fences it."""
        _terminate(self._broker(broker_id), grace_s=60)

    def kill_broker(self, broker_id: int) -> None:
        """kill -9: the controller fences the broker when its heartbeats stop (6 s)."""
        _kill(self._broker(broker_id))

    def start_broker(self, broker_id: int) -> None:
        self._start(self._broker(broker_id))

    def restart_broker(self, broker_id: int) -> None:
        self.stop_broker(broker_id)
        self.start_broker(broker_id)

    def stop_controller(self, controller_id: int) -> None:
        _terminate(self._controller(controller_id), grace_s=30)

    def kill_controller(self, controller_id: int) -> None:
        """kill -9: if it led the quorum, the other voters elect a new leader at a higher epoch."""
        _kill(self._controller(controller_id))

    def start_controller(self, controller_id: int) -> None:
        self._start(self._controller(controller_id))

    def broker_running(self, broker_id: int) -> bool:
        return self._broker(broker_id).running

    def controller_running(self, controller_id: int) -> bool:
        return self._controller(controller_id).running

    # -- health ---------------------------------------------------------------------------------

    @contextmanager
    def admin(self, timeout_ms: int = 5000) -> Iterator[KafkaAdminClient]:
        """An admin client on the running brokers, closed on exit (`AdminClient`: it avoids a broker
        that refused it; a killed broker stays in the metadata until the controller fences it)."""
        from kafka_ops.sources.admin import AdminClient  # noqa: PLC0415 - kafka-python only when asked

        running = [b for b in self.broker_ids() if self._broker(b).running] or self.broker_ids()
        bootstrap = ",".join(f"127.0.0.1:{self.broker_ports[b]}" for b in running)
        client = AdminClient(bootstrap_servers=bootstrap, request_timeout_ms=timeout_ms)
        try:
            yield client
        finally:
            client.close()

    def quorum(self) -> Quorum:
        """The metadata quorum, asked through a running broker (DescribeQuorum is forwarded to the leader)."""
        from kafka_ops.sources.admin import past_refusals  # noqa: PLC0415 - kafka-python only when asked
        from kafka_ops.sources.kraft.quorum import parse_quorum  # noqa: PLC0415

        with self.admin() as admin:
            answer = past_refusals(admin.describe_metadata_quorum, "the KRaft sandbox")
        return parse_quorum(answer)

    def active_controller_id(self) -> int | None:
        """The quorum leader: the active controller."""
        return self.quorum().leader_id

    def fenced_brokers(self) -> set[int]:
        """Brokers registered with the controller but fenced (DescribeCluster with fenced brokers)."""
        from kafka_ops.sources.admin import past_refusals  # noqa: PLC0415 - kafka-python only when asked

        with self.admin() as admin:
            cluster = past_refusals(admin.describe_cluster, "the KRaft sandbox")
        return {b["broker_id"] for b in cluster["brokers"] if b.get("is_fenced")}

    def wait_for(self, check: Callable[[], bool], timeout_s: float, what: str) -> None:
        """Poll `check` (a Kafka error counts as not yet) until it holds; SandboxError on timeout."""
        from kafka.errors import KafkaError  # noqa: PLC0415

        last_error: list[str] = []

        def safe() -> bool:
            try:
                return check()
            except (KafkaError, SandboxError) as e:
                last_error[:] = [f"{type(e).__name__}: {e}"]
                return False

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if safe():
                return
            time.sleep(0.5)
        last = f" (last error: {last_error[0]})" if last_error else ""
        raise SandboxError(f"timed out after {timeout_s:g}s waiting for {what}{last}; logs under {self.root}")

    def wait_healthy(self, timeout_s: float = 180.0) -> Quorum:
        """Wait until a running controller leads the quorum with every running controller as a
        voter, every running broker is registered and unfenced (and no stopped one is) and answers a
        client of its own (an unfenced broker may not listen yet, and the first request a test sends
        may go to that one), and no partition is under-replicated or leaderless."""
        controllers = {c for c, n in self._controller_nodes.items() if n.running}
        brokers = {b for b, n in self._nodes.items() if n.running}
        found: list[Quorum] = []

        def healthy() -> bool:
            quorum = self.quorum()
            # a restarted voter reports log end offset -1 until it fetches from the leader again
            if quorum.leader_id not in controllers or any(quorum.voters.get(c, -1) < 0 for c in controllers):
                return False
            with self.admin() as admin:
                cluster = admin.describe_cluster()
                topics = admin.describe_topics()
            unfenced = {b["broker_id"] for b in cluster["brokers"] if not b.get("is_fenced")}
            if unfenced != brokers or not _partitions_healthy(topics) or not all(map(self._answers, brokers)):
                return False
            found.append(quorum)
            return True

        self.wait_for(
            healthy, timeout_s, f"controllers {sorted(controllers)} in quorum and brokers {sorted(brokers)} healthy"
        )
        return found[0]

    # -- internals ------------------------------------------------------------------------------

    def _answers(self, broker_id: int) -> bool:
        """A client bootstrapped on this broker alone connects (its ApiVersions answered)."""
        from kafka import KafkaAdminClient  # noqa: PLC0415 - kafka-python only when asked
        from kafka.errors import KafkaError  # noqa: PLC0415

        try:
            alone = f"127.0.0.1:{self.broker_ports[broker_id]}"
            KafkaAdminClient(bootstrap_servers=alone, request_timeout_ms=5000).close()
        except KafkaError:
            return False
        return True

    def _broker(self, broker_id: int) -> _Node:
        if broker_id not in self._nodes:
            raise SandboxError(f"no broker {broker_id} in this KRaft sandbox (brokers: {self.broker_ids()})")
        return self._nodes[broker_id]

    def _controller(self, controller_id: int) -> _Node:
        if controller_id not in self._controller_nodes:
            raise SandboxError(
                f"no controller {controller_id} in this KRaft sandbox (controllers: {self.controller_ids()})"
            )
        return self._controller_nodes[controller_id]

    def _start(self, node: _Node) -> None:
        if node.running:
            raise SandboxError(f"{node.name} is already running (pid {node.pid})")
        self._launch(node)

    def _home(self) -> Path:
        if self.root is None:
            raise SandboxError("the KRaft sandbox was never started")
        return self.root

    def _build_nodes(self) -> None:
        for controller_id in self.controller_ports:
            self._controller_nodes[controller_id] = self._controller_node(controller_id)
        for broker_id in self.broker_ports:
            self._nodes[broker_id] = self._broker_node(broker_id)

    def _common_settings(self, node_id: int, home: Path) -> dict[str, str]:
        return {
            "node.id": str(node_id),
            "controller.quorum.voters": self.quorum_voters,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(home / "data"),
        }

    def _controller_node(self, controller_id: int) -> _Node:
        home = self._home() / f"controller-{controller_id}"
        home.mkdir(parents=True, exist_ok=True)
        settings = {
            **self._common_settings(controller_id, home),
            "process.roles": "controller",
            "listeners": f"CONTROLLER://127.0.0.1:{self.controller_ports[controller_id]}",
            **CONTROLLER_SETTINGS,
            **self.controller_settings,
        }
        return self._node(f"controller-{controller_id}", home, settings, self.controller_heap)

    def _broker_node(self, broker_id: int) -> _Node:
        home = self._home() / f"broker-{broker_id}"
        home.mkdir(parents=True, exist_ok=True)
        port = self.broker_ports[broker_id]
        settings = {
            **self._common_settings(broker_id, home),
            "process.roles": "broker",
            "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "inter.broker.listener.name": "PLAINTEXT",
            "broker.rack": self.racks[(broker_id - 1) % len(self.racks)],
            **KRAFT_BROKER_SETTINGS,
            **self.broker_settings,
        }
        node = self._node(f"broker-{broker_id}", home, settings, self.broker_heap)
        if broker_id in self.metrics_ports:
            node.jvm_options = agent_options(self.metrics_ports[broker_id])
        return node

    @staticmethod
    def _node(name: str, home: Path, settings: dict[str, str], heap: str) -> _Node:
        config = home / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        return _Node(name, "kafka.Kafka", config, home, heap)

    def _java(self, node: _Node, heap: str) -> list[str]:
        return [
            shutil.which("java") or "java",
            f"-Xmx{heap}",
            *JVM_FLAGS,
            *node.jvm_options,
            f"-Dlog4j2.configurationFile={LOG4J2}",
            f"-Dkafka.logs.dir={node.home}",
            "-cp",
            self._classpath,
        ]

    def _format(self, nodes: list[_Node]) -> None:
        """`kafka-storage format` every node's log dir with the one cluster id, all at once."""
        running = [
            (
                node,
                subprocess.Popen(
                    dying_with_parent(
                        [
                            *self._java(node, "128m"),
                            "kafka.tools.StorageTool",
                            "format",
                            f"--cluster-id={self.cluster_id}",  # one word: an id may start with "-" (base64url)
                            "--config",
                            str(node.config),
                        ]
                    ),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                ),
            )
            for node in nodes
        ]
        failures = []
        for node, process in running:
            output, _ = process.communicate(timeout=120)
            if process.returncode != 0:
                failures.append(f"{node.name} (exit {process.returncode}): {output.decode(errors='replace')[-800:]}")
        if failures:
            raise SandboxError("kafka-storage format failed for " + "; ".join(failures))

    def _launch(self, node: _Node) -> None:
        launch(node, [*self._java(node, node.heap), node.main_class, str(node.config)], self.die_with_parent)
        if self.root is not None and (self.root / "state.json").exists():
            self._save_state()  # a restarted node's pid: `status` (and another `up`) must see it running

    # -- state for the CLI ------------------------------------------------------------------------

    def _save_state(self) -> None:
        nodes = [*self._controller_nodes.values(), *self._nodes.values()]
        state = {
            "mode": "kraft",
            "root": str(self._home()),
            "cluster_id": self.cluster_id,
            "controller_ports": self.controller_ports,
            "broker_ports": self.broker_ports,
            "metrics_ports": self.metrics_ports,
            "pids": {n.name: n.pid for n in nodes},
            "bootstrap_servers": self.bootstrap_servers,
            "quorum_voters": self.quorum_voters,
        }
        (self._home() / "state.json").write_text(json.dumps(state, indent=2))


def attach_kraft(root: Path) -> KRaftSandbox:
    """Rebuild a handle on a KRaft sandbox started by another process (the CLI's `up --mode kraft`)."""
    state = read_state(root, "KRaft sandbox", "kraft")
    cluster = KRaftSandbox(
        root=Path(state["root"]),
        cluster_id=state["cluster_id"],
        controller_ports={int(k): v for k, v in state["controller_ports"].items()},
        broker_ports={int(k): v for k, v in state["broker_ports"].items()},
        metrics_ports={int(k): v for k, v in state.get("metrics_ports", {}).items()},
        die_with_parent=False,
    )
    cluster._classpath = f"{_kafka4_jars()}/*"
    cluster._build_nodes()
    for node in [*cluster._controller_nodes.values(), *cluster._nodes.values()]:
        node.pid = state["pids"].get(node.name)
    return cluster


def _kafka4_jars() -> Path:
    """The Kafka 4 jar folder, refused if its cache holds another version than this module runs."""
    jars = ensure_kafka4_jars()
    if not (jars / f"kafka_2.13-{KAFKA_VERSION}.jar").exists():
        found = sorted(p.name for p in jars.glob("kafka_2.13-*.jar"))
        raise SandboxError(
            f"{jars} holds {found}, not kafka_2.13-{KAFKA_VERSION}.jar: delete that folder and run 'make jars'"
        )
    return jars


def random_cluster_id() -> str:
    """A cluster id as `kafka-storage random-uuid` prints it: 16 random bytes, URL-safe base64, no padding.

    Like Kafka's `Uuid.randomUuid`, never one starting with '-' (a command line would take it for an option).
    """
    while True:
        text = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _partitions_healthy(topics: list[dict[str, Any]]) -> bool:
    """True when every partition has a leader and its full replica set in sync."""
    for topic in topics:
        for partition in topic["partitions"]:
            if partition["leader_id"] < 0 or set(partition["isr_nodes"]) != set(partition["replica_nodes"]):
                return False
    return True


def _terminate(node: _Node, grace_s: float) -> None:
    """SIGTERM, up to `grace_s` seconds to exit, then SIGKILL; reaps the process."""
    if node.running:
        _signal(node, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while node.running and time.monotonic() < deadline:
            time.sleep(0.1)
        if node.running:
            log.info("%s did not stop in %ss: killing it", node.name, grace_s)
            _signal(node, signal.SIGKILL)
    _reap(node)


def _kill(node: _Node) -> None:
    _signal(node, signal.SIGKILL)
    _reap(node)


def _reap(node: _Node) -> None:
    """Wait for a signalled node to be gone: our child is reaped; a node known by pid only (the CLI's
    `down`, whose JVMs belong to the exited `up`) is polled until its process has vanished."""
    if node.process is not None:
        node.process.wait()
        return
    wait_exited(node)
