"""Broker kills on the running topology, each timed from the kill to Kafka's own knowledge of it (the
floor), to kafka-ops' first page about the cluster and to the Prometheus baseline's (`stack.baseline`)
notification, then from the broker's restart to kafka-ops' resolve of that page; and an event storm (a
rolling restart) counted in snapshot runs. `bench/time_to_page.py` runs them on a stack of its own."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sandbox import KRaftSandbox, SandboxCluster
from stack import baseline, paging
from stack.airflow import AirflowApi
from stack.fleet import CLUSTERS
from stack.processes import poll
from stack.soak import ANALYSIS, SNAPSHOT
from stack.state import State
from stack.webhook import read_received

log = logging.getLogger(__name__)
NAMES = {c.mode: c.name for c in CLUSTERS}
"""The fleet's cluster names by sandbox mode ("zk", "kraft")."""
POLL_S = 0.25


def seconds(start: datetime, end: datetime | None) -> float | None:
    return None if end is None else round((end - start).total_seconds(), 1)


class TimedKills:
    """Kills on the stack in `state.root`, whose fleet is `zk` and `kraft`; a page or resolve waited for at
    most `timeout_s`. `with_baseline`: the baseline runs (its notifications are waited for too)."""

    def __init__(
        self,
        state: State,
        zk: SandboxCluster,
        kraft: KRaftSandbox,
        *,
        timeout_s: float,
        with_baseline: bool,
        api: AirflowApi | None = None,
    ) -> None:
        self.received = Path(state.root) / "webhook" / "received.jsonl"
        self.zk, self.kraft, self.timeout_s, self.with_baseline = zk, kraft, timeout_s, with_baseline
        self.api = api
        """Airflow's REST API, to say where a page's time went (`runs_behind`); None: not said."""

    def records(self) -> list[dict[str, Any]]:
        return read_received(self.received)

    def baseline_alert(self, name: str, status: str, after: datetime) -> datetime | None:
        if not self.with_baseline:
            return None
        return paging.first_alert(self.records(), baseline.RECEIVER, name, status, after)

    def dropped(self, mode: str, victim: int) -> bool:
        """The controller has dropped `victim`: Kafka's own knowledge that the broker is gone."""
        try:
            if mode == "zk":
                return victim not in self.zk.snapshot().brokers
            return victim in self.kraft.fenced_brokers() or victim not in _unfenced(self.kraft)
        except Exception:  # a cluster mid-change answers with any kind of error: not yet
            return False

    def kill(self, mode: str) -> dict[str, Any]:
        """SIGKILL a broker of the `mode` cluster (not the ZooKeeper-mode controller), wait for the page, start
        it again, wait for the resolve and a healthy cluster; the fault's figures (None: never came)."""
        name = NAMES[mode]
        if mode == "zk":
            controller = self.zk.controller_id()
            victim = max(b for b in self.zk.broker_ids() if b != controller)
        else:
            victim = max(self.kraft.broker_ids())
        sandbox: SandboxCluster | KRaftSandbox = self.zk if mode == "zk" else self.kraft
        start = datetime.now(UTC)
        log.info("time to page: SIGKILL to broker %s of %s at %s", victim, name, start.isoformat(timespec="seconds"))
        sandbox.kill_broker(victim)
        dropped = poll(lambda: datetime.now(UTC) if self.dropped(mode, victim) else None, 120, POLL_S)
        page = poll(lambda: paging.first_page(self.records(), name, start), self.timeout_s, 1)
        baseline_s = self.timeout_s if self.with_baseline else 0
        fired = poll(lambda: self.baseline_alert(name, "firing", start), baseline_s)
        restarted = datetime.now(UTC)
        sandbox.start_broker(victim)
        resolved = None
        if page is not None:
            resolved = poll(lambda: paging.first_resolve(self.records(), name, page, restarted), self.timeout_s)
        sandbox.wait_healthy(300)
        cleared = poll(lambda: self.baseline_alert(name, "resolved", restarted), baseline_s)
        fault = {
            "cluster": name,
            "kind": mode,
            "broker": victim,
            "killed_at": start.isoformat(timespec="seconds"),
            "floor_s": seconds(start, dropped),
            "page_s": seconds(start, page.at if page else None),
            "page": page.title if page else None,
            "baseline_s": seconds(start, fired),
            "resolve_s": seconds(restarted, resolved),
            "baseline_resolve_s": seconds(restarted, cleared),
        }
        if self.api is not None and page is not None:
            fault |= runs_behind(self.api, start, page.at)
        log.info("time to page: %s", json.dumps(fault))
        return fault


def rolling_restart(api: AirflowApi, sandbox: SandboxCluster | KRaftSandbox, mode: str) -> dict[str, Any]:
    """An event storm: every broker of the `mode` cluster restarted in turn (controlled shutdown, start,
    healthy again), as an upgrade does; the snapshot runs it caused (coalesced by the watchers' 5 s gap and
    the DAG's one run at a time) counted until the runs settle. `bound`: one run per watcher event at
    most, (storm seconds / 5) + 1."""
    start = datetime.now(UTC)
    log.info("event storm: rolling restart of every broker of %s", NAMES[mode])
    for broker in sandbox.broker_ids():
        sandbox.restart_broker(broker)
        sandbox.wait_healthy(300)
    storm_s = (datetime.now(UTC) - start).total_seconds()

    def settled() -> list[dict[str, Any]] | None:
        found = api.get(f"dags/{SNAPSHOT}/dagRuns", start_date_gte=start.isoformat(), limit=100)["dag_runs"]
        return None if any(not r.get("end_date") for r in found) else found

    runs = poll(settled, 600, 5) or []
    return {
        "cluster": NAMES[mode],
        "brokers": len(sandbox.broker_ids()),
        "storm_s": round(storm_s, 1),
        "snapshot_runs": len(runs),
        "failed_runs": sum(r["state"] == "failed" for r in runs),
        "bound": int(storm_s // 5) + 1,
    }


def _unfenced(kraft: KRaftSandbox) -> set[int]:
    with kraft.admin() as admin:
        return {b["broker_id"] for b in admin.describe_cluster()["brokers"]}


def ended_runs(api: AirflowApi, dag_id: str, start: datetime) -> list[dict[str, Any]]:
    """`dag_id`'s runs that started at or after `start` and have ended, in the order they started."""
    found = api.get(f"dags/{dag_id}/dagRuns", start_date_gte=start.isoformat(), order_by="start_date", limit=100)
    return [r for r in found["dag_runs"] if r.get("end_date")]


def at(value: str) -> datetime:
    """An Airflow API time (ISO 8601)."""
    return datetime.fromisoformat(value)


def runs_behind(api: AirflowApi, start: datetime, paged: datetime) -> dict[str, float | None]:
    """Where a page's time went, in seconds from the fault: the end of the first snapshot run that started
    after it, and the start and end of the analysis run that sent the page (the first to end after it)."""

    snapshot = next((r for r in ended_runs(api, SNAPSHOT, start) if r["state"] == "success"), None)
    analysis = next((r for r in ended_runs(api, ANALYSIS, start) if at(r["end_date"]) >= paged), None)
    return {
        "snapshot_done_s": seconds(start, at(snapshot["end_date"]) if snapshot else None),
        "paging_analysis_started_s": seconds(start, at(analysis["start_date"]) if analysis else None),
        "paging_analysis_ended_s": seconds(start, at(analysis["end_date"]) if analysis else None),
    }


def analysed(api: AirflowApi) -> str | None:
    runs = api.get(f"dags/{ANALYSIS}/dagRuns", state="success", order_by="-run_after", limit=1)["dag_runs"]
    return str(runs[0]["dag_run_id"]) if runs else None
