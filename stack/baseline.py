"""The Prometheus baseline the time to page is measured against: what most Kafka deployments page on.

Each broker serves its own JMX gauges through the Prometheus JMX exporter's Java agent (the sandboxes'
`metrics_agent`); a Prometheus of its own scrapes them every 30 s and evaluates, every 30 s, the
common rule: the cluster's under-replicated partition count above 0 `for: 1m`. Its Alertmanager groups
by alert and cluster with the default `group_wait` (30 s) and sends to the stack's webhook receiver,
path `/alertmanager/baseline`, firing and resolved. `group_interval` is 1 m (the default is 5 m) only so
that a resolve arrives soon enough for the next fault; it does not touch the time to the first page.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from kafka_ops.child_process import dying_with_parent
from sandbox.cluster import free_port
from sandbox.metrics_agent import URP_GAUGE
from stack.monitoring import alertmanager_argv, prometheus_argv, write_json_yaml
from stack.processes import wait_until

RECEIVER = "baseline"
ALERT = "KafkaUnderReplicatedPartitions"
SCRAPE_INTERVAL = "30s"
FOR = "1m"


def prometheus_config(targets: dict[str, list[int]], alertmanager_port: int, rules: Path) -> dict[str, object]:
    """Scrape every broker's agent port (`targets`: cluster name -> ports), labelled with its cluster."""
    return {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "scrape_timeout": "10s", "evaluation_interval": SCRAPE_INTERVAL},
        "rule_files": [str(rules)],
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{alertmanager_port}"]}]}]},
        "scrape_configs": [
            {
                "job_name": "kafka-brokers",
                "static_configs": [
                    {"targets": [f"127.0.0.1:{p}" for p in ports], "labels": {"cluster": cluster}}
                    for cluster, ports in sorted(targets.items())
                ],
            }
        ],
    }


def rules() -> dict[str, object]:
    return {
        "groups": [
            {
                "name": "kafka-baseline",
                "rules": [
                    {
                        "alert": ALERT,
                        "expr": f"sum by (cluster) ({URP_GAUGE}) > 0",
                        "for": FOR,
                        "labels": {"severity": "critical"},
                        "annotations": {"summary": "{{ $labels.cluster }}: {{ $value }} under-replicated partitions"},
                    }
                ],
            }
        ]
    }


def alertmanager_config(webhook_port: int) -> dict[str, object]:
    return {
        "route": {
            "receiver": RECEIVER,
            "group_by": ["alertname", "cluster"],
            "group_wait": "30s",
            "group_interval": "1m",
            "repeat_interval": "4h",
        },
        "receivers": [
            {
                "name": RECEIVER,
                "webhook_configs": [
                    {"url": f"http://127.0.0.1:{webhook_port}/alertmanager/{RECEIVER}", "send_resolved": True}
                ],
            }
        ],
    }


@dataclass
class Baseline:
    """Prometheus and Alertmanager for the baseline, in `home`; both die with this process."""

    home: Path
    targets: dict[str, list[int]]
    webhook_port: int
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self) -> Baseline:
        self.home.mkdir(parents=True, exist_ok=True)
        prometheus_port, alertmanager_port = free_port(), free_port()
        rules_file = write_json_yaml(self.home / "rules.yml", rules())
        prometheus = write_json_yaml(
            self.home / "prometheus.yml", prometheus_config(self.targets, alertmanager_port, rules_file)
        )
        alertmanager = write_json_yaml(self.home / "alertmanager.yml", alertmanager_config(self.webhook_port))
        home = self.home
        self._launch("alertmanager", alertmanager_argv(alertmanager, home / "alertmanager-data", alertmanager_port))
        self._launch("prometheus", prometheus_argv(prometheus, home / "prometheus-data", prometheus_port))
        self.prometheus_url = f"http://127.0.0.1:{prometheus_port}"
        wait_until(self._scraping, 120, "the baseline Prometheus to scrape every broker's agent", every_s=2)
        return self

    def _launch(self, name: str, argv: list[str]) -> None:
        with open(self.home / f"{name}.log", "ab") as out:
            process = subprocess.Popen(
                dying_with_parent(argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.home,
            )  # fmt: skip
        self.processes[name] = process

    def _scraping(self) -> bool:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise RuntimeError(f"the baseline's {name} exited ({process.returncode}); see {self.home / name}.log")
        try:
            active = httpx.get(f"{self.prometheus_url}/api/v1/targets", timeout=5).json()["data"]["activeTargets"]
        except (httpx.HTTPError, ValueError, KeyError):
            return False
        want = sum(len(p) for p in self.targets.values())
        return len(active) == want and all(t.get("health") == "up" for t in active)

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
