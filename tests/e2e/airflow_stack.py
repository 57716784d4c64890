"""A real Airflow 3 for the UI test: api-server, scheduler and dag-processor as subprocesses.

`AirflowStack(home, env).start()` migrates a fresh SQLite DB under `home`, starts the three
components (LocalExecutor; each in its own process group, logging to `home/logs/<name>.log`) and
waits until the REST API answers. `stop()` ends them by process group (SIGTERM, then SIGKILL) and
is safe to call twice or after a failed start. `api()` speaks to the REST API with a JWT from
`/auth/token` (the simple auth manager, one admin whose password is written here).
`AirflowUI` is what the UI test's fixture hands to a test: the stack, its lake, cluster, artefact dir.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from kafka_ops.child_process import dying_with_parent
from sandbox.cluster import free_port
from stack.airflow import ADMIN, VIEWER, airflow_environment

T = TypeVar("T")
COMPONENTS = ("api-server", "scheduler", "dag-processor")
REQUEST_TIMEOUT_S = 60
"""A REST call's deadline: the one api-server worker can take more than 30 s on a loaded machine."""
USER = ADMIN
"""The admin; `VIEWER` is a read-only user when the env lists it in
AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS (`viewer_token`)."""


@dataclass(frozen=True)
class AirflowUI:
    """A running stack with the kafka-ops settings it was started with, and where screenshots go."""

    stack: AirflowStack
    cluster: str
    lake_root: Path
    artifacts: Path


def wait_until(check: Callable[[], T | None], timeout_s: float, what: str, *, every_s: float = 1.0) -> T:
    """Poll `check` until it returns something truthy; its value, or AssertionError naming `what`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what}")
        time.sleep(every_s)


@dataclass
class AirflowStack:
    """One throwaway Airflow: its home (DB, logs, passwords) under `home`, configured by `env`
    on top of this process's environment (the `AIRFLOW__*` and `AIRFLOW_CONN_*` of the test)."""

    home: Path
    env: Mapping[str, str]
    port: int = field(default_factory=free_port)
    password: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    jwt_secret: str = field(default_factory=lambda: secrets.token_hex(32))
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _token: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def logs(self) -> Path:
        return self.home / "logs"

    def environment(self) -> dict[str, str]:
        """The stack's Airflow configuration (`stack.airflow`, which `make stack-up` runs on PostgreSQL with
        Celery), here on SQLite with the LocalExecutor."""
        base = airflow_environment(
            self.home, self.port, self.jwt_secret, database=f"sqlite:///{self.home / 'airflow.db'}",
            executor="LocalExecutor",  # Airflow 3's default, SQLite included
            users=f"{USER}:admin", passwords=self.home / "passwords.json",
        )  # fmt: skip
        return {
            **os.environ,
            **base,
            "AIRFLOW__CORE__PARALLELISM": "2",  # two cores; a remediation DAG runs one task at a time
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",  # only the DAG under test is unpaused
            **self.env,
        }

    def start(self, timeout_s: float = 180) -> AirflowStack:
        self.logs.mkdir(parents=True, exist_ok=True)
        (self.home / "passwords.json").write_text(json.dumps({USER: self.password}))
        env = self.environment()
        migrate = subprocess.run(
            [sys.executable, "-m", "airflow", "db", "migrate"],
            env=env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        (self.logs / "db-migrate.log").write_text(migrate.stdout + migrate.stderr)
        if migrate.returncode != 0:
            raise AssertionError(f"airflow db migrate failed:\n{self.tail('db-migrate')}")
        for name in COMPONENTS:
            with (self.logs / f"{name}.log").open("ab") as out:
                self.processes[name] = subprocess.Popen(
                    dying_with_parent([sys.executable, "-m", "airflow", name]),
                    env=env,
                    cwd=self.home,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # its own process group: stop() ends its workers too
                )
        self.wait_for("the REST API to answer", self._healthy, timeout_s)
        return self

    def stop(self, grace_s: float = 15) -> None:
        """SIGTERM to each component's process group, SIGKILL after `grace_s`; reaps them."""
        for process in self.processes.values():
            if process.poll() is None:
                _killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _killpg(process.pid, signal.SIGKILL)
                process.wait()
            _killpg(process.pid, signal.SIGKILL)  # workers left behind by a parent that exited
        self.processes.clear()

    # -- waiting, with what went wrong ---------------------------------------------------------------

    def wait_for(self, what: str, check: Callable[[], T | None], timeout_s: float) -> T:
        """`wait_until`, failing at once (with its log) when a component died."""

        def checked() -> T | None:
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise AssertionError(
                        f"airflow {name} exited ({process.returncode}) while waiting for {what}:\n{self.tail(name)}"
                    )
            return check()

        try:
            return wait_until(checked, timeout_s, what)
        except AssertionError as e:
            if "timed out" in str(e):
                raise AssertionError(f"{e}\n{self.tails()}") from None
            raise

    def tail(self, name: str, lines: int = 40) -> str:
        path = self.logs / f"{name}.log"
        text = path.read_text(errors="replace").splitlines()[-lines:] if path.exists() else ["(no log)"]
        return f"--- {path} (last {lines} lines)\n" + "\n".join(text)

    def tails(self) -> str:
        return "\n".join(self.tail(name, 20) for name in COMPONENTS)

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/api/v2/monitor/health", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    # -- the REST API -----------------------------------------------------------------------------------

    def token(self) -> str:
        if self._token is None:
            response = httpx.post(
                f"{self.url}/auth/token", json={"username": USER, "password": self.password}, timeout=REQUEST_TIMEOUT_S
            )
            response.raise_for_status()
            self._token = str(response.json()["access_token"])
        return self._token

    def viewer_token(self) -> str:
        """A JWT of the read-only user `VIEWER`, whose password the auth manager generated at start."""
        password = json.loads((self.home / "passwords.json").read_text())[VIEWER]
        response = httpx.post(
            f"{self.url}/auth/token", json={"username": VIEWER, "password": password}, timeout=REQUEST_TIMEOUT_S
        )
        response.raise_for_status()
        return str(response.json()["access_token"])

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """`/api/v2/<path>` as the admin; the response, whatever its status."""
        headers = {"Authorization": f"Bearer {self.token()}", **kwargs.pop("headers", {})}
        return httpx.request(method, f"{self.url}/api/v2/{path}", headers=headers, timeout=REQUEST_TIMEOUT_S, **kwargs)

    def get_json(self, path: str) -> Any:
        response = self.api("GET", path)
        assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text[:500]}"
        return response.json()

    def wait_for_dag(self, dag_id: str, timeout_s: float = 180) -> dict[str, Any]:
        """The DAG once the dag-processor serialized it; fails at once on an import error of its file."""

        def parsed() -> dict[str, Any] | None:
            errors = self.get_json("importErrors")["import_errors"]
            broken = [e for e in errors if dag_id in str(e.get("filename", ""))]
            assert not broken, f"{dag_id} does not import:\n{broken[0]['stack_trace']}"
            response = self.api("GET", f"dags/{dag_id}")
            return response.json() if response.status_code == 200 else None

        return self.wait_for(f"the dag-processor to parse {dag_id}", parsed, timeout_s)

    def unpause(self, dag_id: str) -> None:
        response = self.api("PATCH", f"dags/{dag_id}", json={"is_paused": False})
        assert response.status_code == 200, f"unpause {dag_id}: {response.status_code} {response.text[:500]}"

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1) -> str:
        """The task's log as text (the API's structured lines, events joined)."""
        path = f"dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/logs/{try_number}"
        response = self.api("GET", path, params={"full_content": "true"}, headers={"Accept": "application/json"})
        assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text[:500]}"
        content = response.json()["content"]
        if isinstance(content, str):
            return content
        return "\n".join(
            line.get("event", "") + "".join(f" {k}={v}" for k, v in line.items() if k not in ("event", "timestamp"))
            if isinstance(line, dict)
            else str(line)
            for line in content
        )


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(pgid, sig)
