"""Prometheus and Alertmanager (Debian's packages) for the stack, configured from docker/'s files.

Prometheus' scrape jobs and rules, and Alertmanager's routes, are docker/prometheus/prometheus.yml,
docker/prometheus/rules/ and docker/alertmanager/alertmanager.yml, with the compose host names
replaced by the stack's loopback ports, scrapes every 15 s instead of every minute (so a scrape is
seen soon after `up`), and every Alertmanager receiver sending to the stack's webhook receiver.
The read-only user's token comes from docker/prometheus/airflow_token.py, run as a service.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
DOCKER = REPO / "docker"
TOKEN_SCRIPT = DOCKER / "prometheus" / "airflow_token.py"
SCRAPE_INTERVAL = "15s"


def prometheus_binary() -> str:
    binary = shutil.which("prometheus")
    if binary is None:
        raise FileNotFoundError("no prometheus on PATH: `make prometheus` installs Debian's package")
    return binary


def alertmanager_binary() -> str:
    binary = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    if binary is None:
        raise FileNotFoundError("no alertmanager on PATH: `make prometheus` installs Debian's package")
    return binary


def prometheus_argv(config: Path, storage: Path, port: int) -> list[str]:
    """Prometheus serving on loopback `port`, its data in `storage`."""
    return [prometheus_binary(), f"--config.file={config}", f"--storage.tsdb.path={storage}",
            f"--web.listen-address=127.0.0.1:{port}"]  # fmt: skip


def alertmanager_argv(config: Path, storage: Path, port: int) -> list[str]:
    """One Alertmanager serving on loopback `port`, its data in `storage`; no gossip (cluster) port."""
    return [alertmanager_binary(), f"--config.file={config}", f"--storage.path={storage}",
            f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="]  # fmt: skip


def prometheus_config(api_port: int, prometheus_port: int, alertmanager_port: int, token_file: Path) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((DOCKER / "prometheus" / "prometheus.yml").read_text())
    config["global"].update(scrape_interval=SCRAPE_INTERVAL, scrape_timeout="10s", evaluation_interval=SCRAPE_INTERVAL)
    config["rule_files"] = [str(DOCKER / "prometheus" / "rules" / "*.yml")]
    config["alerting"]["alertmanagers"] = [{"static_configs": [{"targets": [f"127.0.0.1:{alertmanager_port}"]}]}]
    targets = {"kafka-ops": f"127.0.0.1:{api_port}", "prometheus": f"127.0.0.1:{prometheus_port}"}
    for job in config["scrape_configs"]:
        job["static_configs"] = [{"targets": [targets[job["job_name"]]]}]
        if "authorization" in job:
            job["authorization"]["credentials_file"] = str(token_file)
    return config


def alertmanager_config(webhook_port: int) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((DOCKER / "alertmanager" / "alertmanager.yml").read_text())
    for receiver in config["receivers"]:
        url = f"http://127.0.0.1:{webhook_port}/alertmanager/{receiver['name']}"
        receiver["webhook_configs"] = [{"url": url, "send_resolved": True}]
    return config


def write_json_yaml(path: Path, config: dict[str, Any]) -> Path:
    """JSON is YAML: both servers read it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path
