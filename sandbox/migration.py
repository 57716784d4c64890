"""A Kafka 3.9 ZooKeeper cluster migrating to KRaft, on 127.0.0.1, step by step as an operator runs it.

The official 3.9 jars run everything: ZooKeeper, three brokers and `controllers` KRaft controllers
(one by default: a migration's monitoring needs a quorum to watch, not three JVMs more on 2 cores).
Each verb is one step of Kafka's documented migration, and leaves the cluster in that phase:

1. `start()`: ZooKeeper + brokers in ZooKeeper mode (`MigrationPhase.ZOOKEEPER`).
2. `start_controllers()`: KRaft controllers with `zookeeper.metadata.migration.enable=true`, formatted
   with the cluster's id from `/cluster/id`. They wait for every broker to register with them.
3. `enable_migration_on_brokers()`: a rolling restart of the brokers with the migration settings and
   the quorum's address. Once all are registered, the active controller takes `/controller`, copies
   the metadata into its log and writes `/migration`: dual-write, brokers still on ZooKeeper.
4. `move_brokers_to_kraft(ids)`: restarts brokers as KRaft brokers (`process.roles=broker`), still
   dual-writing to ZooKeeper.
5. `finalize()`: restarts the controllers without ZooKeeper; the migration is over.
"""

from __future__ import annotations

import json
import logging
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from kafka_ops.child_process import dying_with_parent
from kafka_ops.errors import SandboxError, ZooKeeperUnreachable
from kafka_ops.jars.fetch import ensure_jars
from kafka_ops.sources.zookeeper.session import ZkReadSession
from sandbox.cluster import SandboxCluster, _Node, free_port, read_state

log = logging.getLogger(__name__)

# Controller node ids 101.. (brokers keep 1, 2, 3): the ids of brokers and controllers never overlap.
CONTROLLER_ID_BASE = 100
CONTROLLER_SETTINGS = {"num.network.threads": "1", "num.io.threads": "1", "background.threads": "1"}
LISTENER_MAP = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"


@dataclass
class MigrationSandbox(SandboxCluster):
    """`SandboxCluster` plus KRaft controllers that migrate it; see the module doc for the steps."""

    controllers: int = 1
    controller_ports: dict[int, int] = field(default_factory=dict)
    broker_modes: dict[int, str] = field(default_factory=dict)
    """Each broker's mode: "zk", "migrating" (ZooKeeper mode, registered with the quorum) or "kraft"."""
    controllers_migrating: bool = True
    _controller_nodes: dict[int, _Node] = field(default_factory=dict)

    # -- steps ----------------------------------------------------------------------------------

    def start_controllers(self, timeout_s: float = 60.0) -> None:
        """Step 2: format and start the KRaft controllers, in migration mode, with the cluster's id."""
        cluster_id = self.cluster_id()
        for i in range(1, self.controllers + 1):
            self.controller_ports.setdefault(CONTROLLER_ID_BASE + i, free_port())
        for controller_id in self.controller_ports:
            self._controller_nodes[controller_id] = self._controller_node(controller_id)
        for node in self._controller_nodes.values():
            self._format(node, cluster_id)
        for node in self._controller_nodes.values():
            self._launch(node)
        self._save_state()
        self._wait(self._controllers_listen, timeout_s, "the KRaft controllers to listen")

    def enable_migration_on_brokers(self, broker_ids: list[int] | None = None, timeout_s: float = 180.0) -> None:
        """Step 3: restart brokers (default: all) with the migration settings. Once every broker has, wait
        for the controller to copy the metadata (`/migration` filled) and the brokers to be healthy."""
        for broker_id in broker_ids or self.broker_ids():
            self._restart_as(broker_id, "migrating")
        self._save_state()
        if all(mode == "migrating" for mode in self.broker_modes.values()):
            self._wait(self._metadata_migrated, timeout_s, "the controller to migrate the metadata (/migration)")
            self.wait_healthy(timeout_s)

    def move_brokers_to_kraft(self, broker_ids: list[int] | None = None, timeout_s: float = 180.0) -> None:
        """Step 4: restart brokers (default: all) as KRaft brokers."""
        for broker_id in broker_ids or self.broker_ids():
            self._restart_as(broker_id, "kraft")
        self._save_state()

    def finalize(self, timeout_s: float = 120.0) -> None:
        """Step 5: restart the controllers without ZooKeeper (every broker must be a KRaft broker)."""
        if any(mode != "kraft" for mode in self.broker_modes.values()):
            raise SandboxError(f"finalize needs every broker in KRaft mode first (modes: {self.broker_modes})")
        self.controllers_migrating = False
        for controller_id, node in self._controller_nodes.items():
            self._terminate(node, grace_s=30)
            self._controller_nodes[controller_id] = self._controller_node(controller_id)
            self._launch(self._controller_nodes[controller_id])
        self._save_state()
        self._wait(self._controllers_listen, timeout_s, "the KRaft controllers to listen")

    def stop(self) -> None:
        for node in self._controller_nodes.values():
            self._terminate(node, grace_s=self._teardown_grace_s())
        super().stop()

    # -- facts ----------------------------------------------------------------------------------

    @property
    def quorum_voters(self) -> str:
        return ",".join(f"{c}@127.0.0.1:{p}" for c, p in sorted(self.controller_ports.items()))

    @property
    def controller_bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for _, p in sorted(self.controller_ports.items()))

    def cluster_id(self) -> str:
        found = self._read_znode("/cluster/id")
        if found is None:
            raise SandboxError("no /cluster/id znode: start the ZooKeeper cluster first")
        return str(json.loads(found)["id"])

    def migration_znode(self) -> dict[str, object] | None:
        found = self._read_znode("/migration")
        return None if found is None else dict(json.loads(found))

    def _read_znode(self, path: str) -> bytes | None:
        with ZkReadSession(self.zookeeper_hosts, self.chroot, timeout_s=5) as session:
            answer = session.get(path)
        return None if answer is None else answer[0]

    def controller_running(self, controller_id: int) -> bool:
        return controller_id in self._controller_nodes and self._controller_nodes[controller_id].running

    # -- internals ------------------------------------------------------------------------------

    def _save_state(self) -> None:
        super()._save_state()
        state_file = self._home() / "state.json"
        state = json.loads(state_file.read_text())
        state |= {
            "mode": "migration",
            "controller_ports": self.controller_ports,
            "controller_bootstrap": self.controller_bootstrap,
            "broker_modes": self.broker_modes,
            "controllers_migrating": self.controllers_migrating,
        }
        state["pids"] |= {n.name: n.pid for n in self._controller_nodes.values()}
        state_file.write_text(json.dumps(state, indent=2))

    def _restart_as(self, broker_id: int, mode: str) -> None:
        self.stop_broker(broker_id)
        self.broker_modes[broker_id] = mode
        node = self._broker_node(broker_id)
        self._nodes[broker_id] = node
        self._launch(node)
        if mode != "kraft":
            self._wait(lambda: self._registered(broker_id), 60, f"broker {broker_id} to register in ZooKeeper")

    def _broker_node(self, broker_id: int) -> _Node:
        node = super()._broker_node(broker_id)
        mode = self.broker_modes.setdefault(broker_id, "zk")
        if mode == "zk":
            return node
        settings = dict(line.split("=", 1) for line in node.config.read_text().splitlines() if "=" in line)
        quorum = {
            "controller.quorum.voters": self.quorum_voters,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": LISTENER_MAP,
        }
        if mode == "migrating":
            migrating = {"zookeeper.metadata.migration.enable": "true", "inter.broker.protocol.version": "3.9"}
            settings |= {**quorum, **migrating}
        else:
            settings = {k: v for k, v in settings.items() if not k.startswith("zookeeper.") and k != "broker.id"}
            settings |= {**quorum, "process.roles": "broker", "node.id": str(broker_id)}
            settings.setdefault("inter.broker.listener.name", "PLAINTEXT")
        node.config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        return node

    def _controller_node(self, controller_id: int) -> _Node:
        home = self._home() / f"controller-{controller_id}"
        (home / "data").mkdir(parents=True, exist_ok=True)
        settings = {
            "process.roles": "controller",
            "node.id": str(controller_id),
            "controller.quorum.voters": self.quorum_voters,
            "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://127.0.0.1:{self.controller_ports[controller_id]}",
            "listener.security.protocol.map": LISTENER_MAP,
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(home / "data"),
            **CONTROLLER_SETTINGS,
        }
        if self.controllers_migrating:
            settings |= {"zookeeper.metadata.migration.enable": "true", "zookeeper.connect": self.zookeeper_connect}
        config = home / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        return _Node(f"controller-{controller_id}", "kafka.Kafka", config, home, "256m")

    def _format(self, node: _Node, cluster_id: str) -> None:
        command = [
            shutil.which("java") or "java",
            "-Xmx128m",
            "-cp",
            self._classpath,
            "kafka.tools.StorageTool",
            "format",
            f"--cluster-id={cluster_id}",  # one word: an id may start with "-" (base64url), not an option
            "--config",
            str(node.config),
        ]
        done = subprocess.run(dying_with_parent(command), capture_output=True, timeout=120, check=False)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")[-800:]
            raise SandboxError(f"kafka-storage format failed for {node.name} (exit {done.returncode}): {output}")

    def _controllers_listen(self) -> bool:
        for port in self.controller_ports.values():
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                return False
        return True

    def _metadata_migrated(self) -> bool:
        try:
            znode = self.migration_znode()
        except ZooKeeperUnreachable:  # ZooKeeper restarting: not yet
            return False
        return znode is not None and int(str(znode["kraft_metadata_offset"])) >= 0

    def _registered(self, broker_id: int) -> bool:
        try:
            return self._read_znode(f"/brokers/ids/{broker_id}") is not None
        except ZooKeeperUnreachable:
            return False


def attach_migration(root: Path) -> MigrationSandbox:
    """Rebuild a handle on a migration sandbox started by another process (the CLI's `up --mode migration`)."""
    state = read_state(root, "migration sandbox", "migration")
    cluster = MigrationSandbox(
        root=Path(state["root"]),
        chroot=state["chroot"],
        zk_port=state["zk_port"],
        broker_ports={int(k): v for k, v in state["broker_ports"].items()},
        controller_ports={int(k): v for k, v in state["controller_ports"].items()},
        broker_modes={int(k): v for k, v in state["broker_modes"].items()},
        controllers_migrating=state["controllers_migrating"],
        die_with_parent=False,
    )
    cluster._classpath = f"{ensure_jars()}/*"
    cluster._zk = cluster._zookeeper_node()
    cluster._zk.pid = state["pids"].get("zookeeper")
    for broker_id in cluster.broker_ports:
        cluster._nodes[broker_id] = node = cluster._broker_node(broker_id)
        node.pid = state["pids"].get(node.name)
    for controller_id in cluster.controller_ports:
        cluster._controller_nodes[controller_id] = node = cluster._controller_node(controller_id)
        node.pid = state["pids"].get(node.name)
    return cluster
