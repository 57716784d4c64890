"""A real Prometheus (Debian's `prometheus` package, `make prometheus`) for the metrics test.

`PrometheusServer(home, jobs, token).start()` writes a scrape config (one job per metrics profile,
every second, `Authorization: Bearer` from a credentials file), starts Prometheus on loopback with
its TSDB under `home` and waits until it answers; `query()` runs PromQL over its HTTP API;
`stop()` ends it (SIGTERM, then SIGKILL) and is safe to call twice.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from kafka_ops.child_process import dying_with_parent
from sandbox.cluster import free_port
from tests.e2e.airflow_stack import wait_until

BINARY = os.environ.get("KAFKA_OPS_PROMETHEUS") or shutil.which("prometheus")


@dataclass(frozen=True)
class ScrapeJob:
    name: str
    target: str
    """host:port of the api-server."""
    path: str
    params: dict[str, list[str]]


@dataclass
class PrometheusServer:
    home: Path
    jobs: list[ScrapeJob]
    token: str
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> dict[str, Any]:
        token_file = self.home / "token"
        token_file.write_text(self.token)
        token_file.chmod(0o600)
        jobs = [
            {"job_name": j.name, "metrics_path": j.path, "params": j.params, "scrape_interval": "1s",
             "scrape_timeout": "1s", "authorization": {"type": "Bearer", "credentials_file": str(token_file)},
             "static_configs": [{"targets": [j.target]}]}
            for j in self.jobs
        ]  # fmt: skip
        return {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"}, "scrape_configs": jobs}

    def start(self, timeout_s: float = 60) -> PrometheusServer:
        if BINARY is None:
            raise AssertionError("no prometheus on PATH: `make prometheus` installs Debian's package")
        self.home.mkdir(parents=True, exist_ok=True)
        config = self.home / "prometheus.yml"
        config.write_text(json.dumps(self.config(), indent=2))  # JSON is YAML
        log = (self.home / "prometheus.log").open("ab")
        self.process = subprocess.Popen(
            dying_with_parent([BINARY, f"--config.file={config}", f"--storage.tsdb.path={self.home / 'tsdb'}",
                               f"--web.listen-address=127.0.0.1:{self.port}"]),
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        wait_until(self._ready, timeout_s, "Prometheus to answer")
        return self

    def _ready(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"prometheus exited ({self.process.returncode}):\n{self.log()}")
        try:
            return httpx.get(f"{self.url}/-/ready", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def log(self) -> str:
        path = self.home / "prometheus.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"

    def query(self, promql: str) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=10)
        body = response.json()
        assert body["status"] == "success", f"{promql}: {body}"
        return list(body["data"]["result"])

    def targets(self) -> list[dict[str, Any]]:
        return list(httpx.get(f"{self.url}/api/v1/targets", timeout=10).json()["data"]["activeTargets"])

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None
