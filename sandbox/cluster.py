"""A real ZooKeeper and three real Kafka 3.9 brokers (ZooKeeper mode) on 127.0.0.1.

Used by `make demo`, the integration tests and the benchmarks. Everything runs from the
official jars (fetched by Maven, see `jars.py`), on free ports, with data under one folder.
The verbs produce real failures: stop, kill -9 and restart a broker; stop and start ZooKeeper.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_ops.child_process import dying_with_parent
from kafka_ops.errors import CollectionFailed, SandboxError, ZooKeeperUnreachable
from kafka_ops.jars.fetch import ensure_jars, var_dir
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.sources.zookeeper.collector import ZooKeeperCollector, ZooKeeperTarget
from kafka_ops.sources.zookeeper.session import ZkReadSession
from sandbox.metrics_agent import agent_options

log = logging.getLogger(__name__)

LOG4J = Path(__file__).with_name("log4j.properties")
DEFAULT_RACKS = ("rack-a", "rack-b", "rack-c")
CHROOT = "/kafka"

# Small, fast-reacting settings for a 2-core machine; each differs from Kafka's default on purpose.
BROKER_SETTINGS = {
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.replica.fetchers": "1",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "10",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "group.initial.rebalance.delay.ms": "0",
    "zookeeper.session.timeout.ms": "6000",
    "zookeeper.connection.timeout.ms": "15000",
    "replica.lag.time.max.ms": "10000",
    # Remediation is ours to test: the controller must not fix leader imbalance by itself.
    "auto.leader.rebalance.enable": "false",
    "log.segment.bytes": "16777216",
}
JVM_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.awt.headless=true"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class _Node:
    name: str
    main_class: str
    config: Path
    home: Path
    heap: str
    process: subprocess.Popen[bytes] | None = None
    pid: int | None = None
    jvm_options: list[str] = field(default_factory=list)
    """More JVM options (the metrics agent of a broker)."""

    @property
    def running(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return self.pid is not None and _pid_is_ours(self.pid, self.home)


def launch(node: _Node, command: list[str], with_parent: bool) -> None:
    """Start `node`'s JVM: its console in `console.log` of its home, a session of its own (a signal to the
    test run's group does not reach it), and killed with this process when `with_parent`."""
    with open(node.home / "console.log", "ab") as out:
        node.process = subprocess.Popen(
            dying_with_parent(command) if with_parent else command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=node.home,
            start_new_session=True,
        )
    node.pid = node.process.pid
    log.info("started %s (pid %s)", node.name, node.pid)


def _signal(node: _Node, sig: signal.Signals) -> None:
    pid = node.process.pid if node.process is not None else node.pid
    if pid is not None and node.running:
        os.kill(pid, sig)


def exited(pid: int) -> bool:
    """Whether process `pid` is gone or a zombie (it holds no port, file or memory any more). While a process
    exits, its `/proc/<pid>/cmdline` reads empty before it is gone, so `_pid_is_ours` says "not ours" (not
    running) a moment too early: teardown waits on this too."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    state = next((line.split()[1:2] for line in status.splitlines() if line.startswith("State:")), [])
    return state in (["Z"], ["X"])  # zombie, dead


def wait_exited(node: _Node, timeout_s: float = 10.0) -> None:
    """Wait, up to `timeout_s`, until a signalled node known by pid only (a CLI's `down`: its JVMs belong to
    the exited `up`) is no longer running and its process has exited."""
    deadline = time.monotonic() + timeout_s
    while (node.running or (node.pid is not None and not exited(node.pid))) and time.monotonic() < deadline:
        time.sleep(0.05)


def _pid_is_ours(pid: int, home: Path) -> bool:
    """True if `pid` is alive and is a JVM started for `home` (guards against pid reuse)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return str(home).encode() in cmdline


@dataclass
class SandboxCluster:
    """A ZooKeeper plus `brokers` Kafka brokers, with racks, in folder `root`.

    `die_with_parent` makes the JVMs die with this Python process (tests, demo); the CLI's
    `up` turns it off so the cluster outlives the command. `metrics_agent` attaches the Prometheus JMX
    exporter to every broker (`metrics_agent.py`), serving on `metrics_ports`.
    """

    root: Path | None = None
    brokers: int = 3
    racks: tuple[str, ...] = DEFAULT_RACKS
    chroot: str = CHROOT
    die_with_parent: bool = True
    broker_settings: dict[str, str] = field(default_factory=dict)
    zk_port: int = 0
    broker_ports: dict[int, int] = field(default_factory=dict)
    metrics_agent: bool = False
    metrics_ports: dict[int, int] = field(default_factory=dict)
    _owns_root: bool = False
    _classpath: str = ""
    _zk: _Node | None = None
    _nodes: dict[int, _Node] = field(default_factory=dict)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self, timeout_s: float = 120.0) -> SandboxCluster:
        jars = ensure_jars()
        if self.root is None:
            base = var_dir() / "sandbox"
            base.mkdir(parents=True, exist_ok=True)
            self.root = Path(tempfile.mkdtemp(prefix="cluster-", dir=base))
            self._owns_root = True
        self.root.mkdir(parents=True, exist_ok=True)
        self._classpath = f"{jars}/*"
        self.zk_port = self.zk_port or free_port()
        for broker_id in range(1, self.brokers + 1):
            self.broker_ports.setdefault(broker_id, free_port())
            if self.metrics_agent:
                self.metrics_ports.setdefault(broker_id, free_port())
        try:
            self._zk = self._zookeeper_node()
            self._launch(self._zk)
            self._wait(self._zookeeper_serving, 30, "ZooKeeper to serve sessions")
            for broker_id in self.broker_ports:
                self._nodes[broker_id] = self._broker_node(broker_id)
                self._launch(self._nodes[broker_id])
            if self._nodes:
                self.wait_healthy(timeout_s)
        except BaseException:
            self.stop()
            raise
        self._save_state()
        return self

    def stop(self) -> None:
        """Stop every process this cluster started and remove owned data.

        Brokers get SIGTERM together and a few seconds to exit, then SIGKILL: a sandbox's data
        is thrown away, so its teardown does not wait for controlled shutdowns. Data this cluster
        owns (a root it made) is deleted next, so its processes get SIGKILL at once: the few
        seconds were always spent (a broker's controlled shutdown outlasts them).
        """
        grace_s = self._teardown_grace_s()
        brokers = [n for n in self._nodes.values() if n.running]
        for node in brokers:
            _signal(node, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while any(n.running for n in brokers) and time.monotonic() < deadline:
            time.sleep(0.1)
        for node in brokers:
            self._terminate(node, grace_s=0)
        if self._zk is not None:
            self._terminate(self._zk, grace_s=grace_s)
        if self._owns_root and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    def _teardown_grace_s(self) -> float:
        """Seconds a process gets to exit on SIGTERM when the cluster stops: none when its data is
        deleted right after, a few when its root outlives it (the CLI's `down`, a test's root)."""
        return 0.0 if self._owns_root else 5.0

    def __enter__(self) -> SandboxCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ------------------------------------------------------------------------------

    @property
    def zookeeper_hosts(self) -> str:
        return f"127.0.0.1:{self.zk_port}"

    @property
    def zookeeper_connect(self) -> str:
        return self.zookeeper_hosts + self.chroot

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.broker_ports.values())

    def broker_ids(self) -> list[int]:
        return sorted(self.broker_ports)

    # -- fault verbs ------------------------------------------------------------------------------

    def stop_broker(self, broker_id: int) -> None:
        """Controlled shutdown (SIGTERM): leaders move away first."""
        self._terminate(self._node(broker_id), grace_s=60)

    def kill_broker(self, broker_id: int) -> None:
        """kill -9: no controlled shutdown; ZooKeeper notices when the session expires."""
        node = self._node(broker_id)
        _signal(node, signal.SIGKILL)
        if node.process is not None:
            node.process.wait()

    def start_broker(self, broker_id: int) -> None:
        node = self._node(broker_id)
        if node.running:
            raise SandboxError(f"broker {broker_id} is already running (pid {node.process and node.process.pid})")
        self._launch(node)

    def restart_broker(self, broker_id: int) -> None:
        self.stop_broker(broker_id)
        self.start_broker(broker_id)

    def stop_zookeeper(self) -> None:
        if self._zk is not None:
            self._terminate(self._zk, grace_s=10)

    def start_zookeeper(self) -> None:
        if self._zk is None:
            raise SandboxError("the sandbox was never started")
        if not self._zk.running:
            self._launch(self._zk)
            self._wait(self._zookeeper_serving, 30, "ZooKeeper to serve sessions")

    def broker_running(self, broker_id: int) -> bool:
        return self._node(broker_id).running

    # -- health ---------------------------------------------------------------------------------

    def snapshot(self) -> ClusterSnapshot:
        """Collect a snapshot of the sandbox's metadata."""
        target = ZooKeeperTarget(self.zookeeper_hosts, self.chroot, timeout_s=5)
        return ZooKeeperCollector("sandbox", target).collect()

    def controller_id(self) -> int | None:
        controller = self.snapshot().controller
        return controller.broker_id if controller else None

    def wait_for(self, condition: Callable[[ClusterSnapshot], bool], timeout_s: float, what: str) -> ClusterSnapshot:
        """Poll snapshots until `condition(snapshot)` holds; return that snapshot."""
        found: list[ClusterSnapshot] = []

        def check() -> bool:
            try:
                snap = self.snapshot()
            except CollectionFailed:
                return False
            if condition(snap):
                found.append(snap)
                return True
            return False

        self._wait(check, timeout_s, what)
        return found[0]

    def wait_healthy(self, timeout_s: float = 120.0) -> ClusterSnapshot:
        """Wait until every running broker is registered, a controller is elected, no partition
        is under-replicated or offline, and the brokers' own metadata lists every running broker
        (the controller learns of a broker a moment after it registers in ZooKeeper)."""
        expected = {b for b, node in self._nodes.items() if node.running}

        def healthy(snap: ClusterSnapshot) -> bool:
            return (
                set(snap.brokers) == expected
                and snap.controller is not None
                and not snap.under_replicated()
                and not snap.offline()
            )

        snap = self.wait_for(healthy, timeout_s, f"brokers {sorted(expected)} healthy")
        self._wait(
            lambda: self._kafka_sees(expected),
            timeout_s,
            f"Kafka metadata to list brokers {sorted(expected)}",
        )
        return snap

    def _kafka_sees(self, expected: set[int]) -> bool:
        """True when every running broker accepts a client and its metadata lists exactly `expected`
        (each one is asked: a broker registered in ZooKeeper may not listen yet, and the first request a
        test sends may go to that one)."""
        return all(self._broker_sees(b, expected) for b in sorted(expected))

    def _broker_sees(self, broker_id: int, expected: set[int]) -> bool:
        from kafka import KafkaAdminClient  # noqa: PLC0415 - only the sandbox needs a Kafka client
        from kafka.errors import KafkaError  # noqa: PLC0415

        try:
            admin = KafkaAdminClient(
                bootstrap_servers=f"127.0.0.1:{self.broker_ports[broker_id]}", request_timeout_ms=5000
            )
        except KafkaError:
            return False
        try:
            cluster = admin.describe_cluster()
        except KafkaError:
            return False
        finally:
            admin.close()
        return {b["broker_id"] for b in cluster["brokers"]} == expected and cluster["controller_id"] in expected

    # -- internals ------------------------------------------------------------------------------

    def _node(self, broker_id: int) -> _Node:
        if broker_id not in self._nodes:
            raise SandboxError(f"no broker {broker_id} in this sandbox (brokers: {self.broker_ids()})")
        return self._nodes[broker_id]

    def _zookeeper_node(self) -> _Node:
        home = self._home() / "zookeeper"
        (home / "data").mkdir(parents=True, exist_ok=True)
        config = home / "zoo.cfg"
        config.write_text(
            f"dataDir={home / 'data'}\nclientPort={self.zk_port}\nclientPortAddress=127.0.0.1\n"
            "tickTime=500\nmaxClientCnxns=0\nadmin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr,mntr\nminSessionTimeout=1000\n"
            # a throwaway sandbox: skip fsync so seeding 100k+ znodes takes seconds
            "forceSync=no\n"
        )
        return _Node("zookeeper", "org.apache.zookeeper.server.ZooKeeperServerMain", config, home, "768m")

    def _broker_node(self, broker_id: int) -> _Node:
        home = self._home() / f"broker-{broker_id}"
        (home / "data").mkdir(parents=True, exist_ok=True)
        port = self.broker_ports[broker_id]
        settings = {
            "broker.id": str(broker_id),
            "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "log.dirs": str(home / "data"),
            "zookeeper.connect": self.zookeeper_connect,
            "broker.rack": self.racks[(broker_id - 1) % len(self.racks)],
            **BROKER_SETTINGS,
            **self.broker_settings,
        }
        config = home / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        node = _Node(f"broker-{broker_id}", "kafka.Kafka", config, home, "384m")
        if broker_id in self.metrics_ports:
            node.jvm_options = agent_options(self.metrics_ports[broker_id])
        return node

    def _launch(self, node: _Node) -> None:
        command = [
            shutil.which("java") or "java",
            f"-Xmx{node.heap}",
            *JVM_FLAGS,
            *node.jvm_options,
            f"-Dlog4j.configuration=file:{LOG4J}",
            f"-Dkafka.logs.dir={node.home}",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-cp",
            self._classpath,
            node.main_class,
            str(node.config),
        ]
        launch(node, command, self.die_with_parent)
        if self.root is not None and (self.root / "state.json").exists():
            self._save_state()  # a restarted node's pid: `status` (and another `up`) must see it running

    def _terminate(self, node: _Node, grace_s: float) -> None:
        """SIGTERM, up to `grace_s` seconds to exit, then SIGKILL; reaps the process."""
        if node.running:
            _signal(node, signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            while node.running and time.monotonic() < deadline:
                time.sleep(0.1)
            if node.running:
                log.info("%s did not stop in %ss: killing it", node.name, grace_s)
                _signal(node, signal.SIGKILL)
        if node.process is not None:
            node.process.wait()
        else:
            wait_exited(node)

    def _wait(self, check: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if check():
                return
            time.sleep(0.5)
        raise SandboxError(f"timed out after {timeout_s:g}s waiting for {what}; logs under {self.root}")

    def _zookeeper_serving(self) -> bool:
        """True once ZooKeeper opens a session (a listening port is not enough after a restart)."""
        try:
            ZkReadSession(self.zookeeper_hosts, timeout_s=2).open().close()
        except ZooKeeperUnreachable:
            return False
        return True

    def _home(self) -> Path:
        if self.root is None:
            raise SandboxError("the sandbox was never started")
        return self.root

    # -- state for the CLI ------------------------------------------------------------------------

    def _save_state(self) -> None:
        state = {
            "root": str(self._home()),
            "chroot": self.chroot,
            "zk_port": self.zk_port,
            "broker_ports": self.broker_ports,
            "metrics_ports": self.metrics_ports,
            "pids": {n.name: n.pid for n in [self._zk, *self._nodes.values()] if n is not None},
            "zookeeper_connect": self.zookeeper_connect,
            "bootstrap_servers": self.bootstrap_servers,
        }
        (self._home() / "state.json").write_text(json.dumps(state, indent=2))


def read_state(root: Path, what: str, mode: str | None = None) -> dict[str, Any]:
    """The `state.json` a sandbox started by another process left in `root` (`what` names the kind
    of sandbox in errors); with `mode`, it must be that mode's (`kraft`, `migration`)."""
    state_file = root / "state.json"
    try:
        state: dict[str, Any] = json.loads(state_file.read_text())
    except FileNotFoundError as e:
        raise SandboxError(f"no sandbox state at {state_file}: is a {what} up?") from e
    if mode is not None and state.get("mode") != mode:
        raise SandboxError(f"the sandbox in {root} is not a {what} (mode {state.get('mode', 'zk')!r})")
    return state


def attach(root: Path) -> SandboxCluster:
    """Rebuild a handle on a cluster started by another process (the CLI's `up`)."""
    state = read_state(root, "sandbox")
    cluster = SandboxCluster(
        root=Path(state["root"]),
        chroot=state["chroot"],
        zk_port=state["zk_port"],
        broker_ports={int(k): v for k, v in state["broker_ports"].items()},
        metrics_ports={int(k): v for k, v in state.get("metrics_ports", {}).items()},
        die_with_parent=False,
    )
    cluster._classpath = f"{ensure_jars()}/*"
    cluster._zk = cluster._zookeeper_node()
    cluster._zk.pid = state["pids"].get("zookeeper")
    for broker_id in cluster.broker_ports:
        node = cluster._broker_node(broker_id)
        node.pid = state["pids"].get(node.name)
        cluster._nodes[broker_id] = node
    return cluster
