"""The soak's faults: kill a service of the stack or a node of a sandbox cluster, and bring it back.

A stack service comes back the way `up` started it: its launch recipe (`processes.Recipe`, saved by
`up`: command line, environment, working directory, user) relaunched by `processes.launch` in a new
session with its log appended to, its new pid and start time saved in `state.json` (so `down` stops the
new one). PostgreSQL gets its fast shutdown (SIGINT). The object store is
frozen (SIGSTOP, then SIGCONT) rather than killed: moto keeps its buckets in memory, so a restart would
be a lost lake, not an outage. A sandbox's node is killed and started through the sandbox's own verbs.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kafka import KafkaAdminClient

from sandbox import KRaftSandbox, SandboxCluster, var_dir
from sandbox.cluster import attach
from sandbox.kraft import attach_kraft
from stack.processes import Recipe, StackError, launch, load_recipe, start_time, stop, wait_until
from stack.state import State

log = logging.getLogger(__name__)
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b:? ")


class StackFaults:
    """Kill and restart the services of the stack in `state.root`. A service killed here is held (the
    supervisor leaves it down) until `start` brings it back."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.logs = Path(state.root) / "logs"
        self.held: set[str] = set()
        self.lock = threading.RLock()

    def pid(self, name: str) -> int:
        if not self.state.running(name):
            raise StackError(f"{name} is not running (state.json pid {self.state.pids.get(name)})")
        return self.state.pids[name]

    def kill(self, name: str, sig: signal.Signals = signal.SIGKILL) -> Recipe:
        """`sig` to the service's process group (SIGKILL: no goodbye); how to start it again."""
        with self.lock:
            self.held.add(name)
            pid = self.pid(name)
        stop(pid, sig, grace_s=60)
        return load_recipe(Path(self.state.root), name)

    def start(self, name: str, how: Recipe) -> int:
        """Launch `name` again as `how` says; its new pid, recorded in state.json."""
        with self.lock:
            pid, started = launch(how.argv, how.env, self.logs / f"{name}.log", how.cwd, user=how.user)
            self.state.pids[name], self.state.started[name] = pid, started
            self.state.save()
            self.held.discard(name)
        return pid

    def restart(self, name: str, sig: signal.Signals = signal.SIGKILL) -> int:
        return self.start(name, self.kill(name, sig))

    def freeze(self, name: str) -> None:
        """SIGSTOP: the process holds its state and answers nothing (connections hang, then time out)."""
        os.kill(self.pid(name), signal.SIGSTOP)

    def thaw(self, name: str) -> None:
        os.kill(self.state.pids[name], signal.SIGCONT)

    def alive(self, name: str) -> bool:
        pid = self.state.pids.get(name)
        return pid is not None and start_time(pid) == self.state.started.get(name)


@dataclass(frozen=True)
class Revival:
    service: str
    at: str
    why: str
    """The last error line of its log when it was found gone."""


class Supervisor:
    """What compose's `restart: unless-stopped` (or systemd's `Restart=always`) does on real hosts: a
    service that exited on its own (Airflow's scheduler, dag-processor and triggerer exit when their
    database goes away) is started again from its recipe, every `every_s`, and each revival recorded."""

    def __init__(self, faults: StackFaults, every_s: float = 5.0) -> None:
        self.faults, self.every_s = faults, every_s
        self.revivals: list[Revival] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="soak-supervisor", daemon=True)

    def __enter__(self) -> Supervisor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(120)

    def _watch(self) -> None:
        while not self._stop.wait(self.every_s):
            self.revive()

    def revive(self) -> None:
        for name in list(self.faults.state.pids):
            with self.faults.lock:
                if name in self.faults.held or self.faults.alive(name):
                    continue
                why = last_error(self.faults.logs / f"{name}.log")
                try:
                    self.faults.start(name, load_recipe(Path(self.faults.state.root), name))
                except (StackError, OSError) as e:
                    why += f" (restart failed: {e})"
            log.warning("soak: %s had exited (%s); restarted", name, why)
            self.revivals.append(Revival(name, datetime.now(UTC).isoformat(timespec="seconds"), why))


def last_error(log_file: Path) -> str:
    """The last exception line of `log_file` (`pkg.SomeError: message`), else its last line naming an
    error, cut to one line of 200 characters."""
    try:
        lines = log_file.read_text(errors="replace").splitlines()[-400:]
    except OSError:
        return "(no log)"
    raised = [ln for ln in lines if EXCEPTION_LINE.match(ln)]
    errors = raised or [ln for ln in lines if "error" in ln.lower() or "FATAL" in ln] or lines or ["(empty log)"]
    return " ".join(errors[-1].split())[:200]


@dataclass
class Clusters:
    """Handles on the fleet's two sandbox clusters; `attached` ones were started by another process (the
    sandbox CLI), whose `state.json` must name a restarted node's new pid."""

    zk: SandboxCluster
    kraft: KRaftSandbox
    attached: bool

    @classmethod
    def of_stack(cls, state: State) -> Clusters:
        """The sandboxes `state.json` names (a root of "" is the sandbox CLI's default folder)."""
        zk_root, kraft_root = state.sandboxes["zk"].root, state.sandboxes["kraft"].root
        zk = attach(Path(zk_root) if zk_root else var_dir() / "sandbox" / "cli")
        kraft = attach_kraft(Path(kraft_root) if kraft_root else var_dir() / "sandbox" / "cli-kraft")
        return cls(zk, kraft, attached=True)

    def saved(self) -> None:
        if self.attached:
            self.zk._save_state()
            self.kraft._save_state()

    def wait_healthy(self, timeout_s: float) -> None:
        """Every node running again and no partition under-replicated, on both clusters."""
        for broker_id in self.zk.broker_ids():
            if not self.zk.broker_running(broker_id):
                self.zk.start_broker(broker_id)
        for controller_id in self.kraft.controller_ids():
            if not self.kraft.controller_running(controller_id):
                self.kraft.start_controller(controller_id)
        for broker_id in self.kraft.broker_ids():
            if not self.kraft.broker_running(broker_id):
                self.kraft.start_broker(broker_id)
        self.saved()
        self.zk.wait_healthy(timeout_s)
        self.kraft.wait_healthy(timeout_s)
        self.elect_preferred_leaders()

    def elect_preferred_leaders(self) -> None:
        """What Kafka's automatic leader rebalance does after a broker comes back (the sandboxes turn it
        off, their remediation being ours to test): every partition led by its preferred replica again, so
        an imbalance the soak's broker kills made is cleared with them."""
        for cluster in (self.zk, self.kraft):
            with _admin(cluster.bootstrap_servers) as admin:
                admin.elect_leaders(PREFERRED, None, timeout_ms=30_000, raise_errors=False)

    def tidy(self) -> list[str]:
        """Start from clusters no earlier user left in a state that pages: the consumer groups with no
        member (left by tests that ran before, some in ERR) deleted, leaders on their preferred replicas.
        The groups deleted, as `cluster: group`."""
        deleted = []
        for name, cluster in (("zk", self.zk), ("kraft", self.kraft)):
            with _admin(cluster.bootstrap_servers) as admin:
                idle = [g["group_id"] for g in admin.list_groups() if g.get("group_state") in ("Empty", "Dead")]
                if idle:
                    answers = admin.delete_groups(idle)
                    deleted += [f"{name}: {group}" for group, error in answers.items() if error == "OK"]
        self.elect_preferred_leaders()
        return deleted


PREFERRED = 0
"""ElectLeaders' election type for the preferred replica."""


@contextmanager
def _admin(bootstrap: str) -> Iterator[KafkaAdminClient]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
    try:
        yield admin
    finally:
        admin.close()


def active_controller(kraft: KRaftSandbox, timeout_s: float) -> int:
    def leader() -> int | None:
        try:
            return kraft.active_controller_id()
        except Exception:  # a quorum mid-election answers with any kind of error
            return None

    return int(str(wait_until(leader, timeout_s, "the KRaft quorum to have a leader", every_s=2)))
