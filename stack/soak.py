"""The soak: the stack runs unattended (snapshot every minute, Asset-triggered analyses) while a fixed
fault schedule breaks it, then a report says what the pipeline made of it (docs/operations.md, "The
soak").

The faults, one at a time, each cleared by this code (never by hand): a broker killed and restarted on
each cluster; the KRaft active controller killed and restarted; a Spark worker killed while an analysis
runs an application on it; a Celery worker killed while it runs a task; the scheduler SIGKILLed and
restarted; PostgreSQL restarted; the object store frozen (only with `--lake s3`: with the local lake
nothing of the pipeline uses it, and the fault is reported as not applicable); a consumer group stopped
and restarted. A fault that waits for its moment (a running analysis, a running task) and does not see
it in time is reported as not exercised, with why.

`run_soak` takes a running stack and the clusters' handles; `python -m stack soak` brings the stack up,
runs it, brings it down and prints the report (text, then one JSON line).
"""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from stack.airflow import ADMIN, AirflowApi
from stack.faults import Clusters, Revival, StackFaults, Supervisor, active_controller
from stack.fleet import CLUSTERS, FLEET_TOPIC
from stack.paging import first_page
from stack.processes import StackError, poll, wait_until
from stack.services import AIRFLOW_WORKERS, SPARK_WORKERS
from stack.soak_report import read_lake, read_pages, read_runs
from stack.state import State
from stack.topology import object_store_environment
from stack.webhook import read_received

log = logging.getLogger(__name__)

SNAPSHOT, ANALYSIS = "kafka_metadata_snapshot", "kafka_health_analysis"
SPARK_TASKS = ("analyse_cluster", "analyse_groups")
SOAK_GROUP = "kafka-ops-soak"
"""The consumer group the soak runs on the ZooKeeper cluster, stopped and restarted by its fault."""
BROKER_FAULTS = {f"{c.mode}-broker": c.name for c in CLUSTERS}
"""The broker faults and the fleet cluster each one hits: their outage should page."""
KINDS = ("spark-worker", "celery-worker", "zk-broker", "kraft-broker", "kraft-controller", "consumer-group",
         "scheduler", "redis", "postgres", "object-store")  # fmt: skip


@dataclass(frozen=True)
class Timing:
    outage_s: float
    """How long a killed thing stays down (the object store frozen, a broker dead)."""
    moment_s: float
    """How long a fault waits for its moment (an analysis on a Spark worker, a task on a Celery worker)."""
    settle_s: float
    """After the last fault: how long the pipeline gets to recover and resolve what it paged."""


SHORT = Timing(outage_s=20, moment_s=240, settle_s=300)
LONG = Timing(outage_s=120, moment_s=600, settle_s=900)


@dataclass
class Outcome:
    kind: str
    exercised: bool
    detail: str
    started_at: str = ""
    cleared_at: str = ""


@dataclass
class Soak:
    state: State
    clusters: Clusters
    timing: Timing
    outcomes: list[Outcome] = field(default_factory=list)
    revivals: list[Revival] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = StackFaults(self.state)
        password = json.loads((Path(self.state.root) / "airflow" / "passwords.json").read_text())[ADMIN]
        self.api = AirflowApi(self.state.urls["airflow"], ADMIN, password)
        self.group = GroupConsumer(self.clusters.zk.bootstrap_servers)

    # -- the faults ---------------------------------------------------------------------------------

    def inject(self, kind: str) -> Outcome:
        started = _now()
        log.info("soak: %s", kind)
        try:
            exercised, detail = getattr(self, "_" + kind.replace("-", "_"))()
        except (StackError, OSError, RuntimeError, httpx.HTTPError) as e:
            exercised, detail = False, f"the fault itself failed: {e}"
        outcome = Outcome(kind, exercised, detail, started, _now())
        log.info("soak: %s -> %s", kind, detail)
        self.outcomes.append(outcome)
        return outcome

    def _spark_worker(self) -> tuple[bool, str]:
        def busy() -> str | None:
            if not self._running_tasks(ANALYSIS, SPARK_TASKS):
                return None
            for name in SPARK_WORKERS:
                ui = f"http://127.0.0.1:{self.state.ports[f'{name}-ui']}/json/"
                try:
                    if httpx.get(ui, timeout=5).json().get("executors"):
                        return name
                except (httpx.HTTPError, ValueError):
                    continue
            return None

        name = poll(busy, self.timing.moment_s)
        if name is None:
            return False, f"no analysis ran an executor on a Spark worker within {self.timing.moment_s:g}s"
        how = self.faults.kill(name)
        time.sleep(self.timing.outage_s)
        self.faults.start(name, how)
        return True, f"SIGKILLed {name} while an analysis ran its executor; restarted after {self.timing.outage_s:g}s"

    def _celery_worker(self) -> tuple[bool, str]:
        logs = Path(self.state.root) / "logs"

        def busy() -> tuple[str, str] | None:
            for ti in self._running_tasks(SNAPSHOT, ()) + self._running_tasks(ANALYSIS, ()):
                for name in AIRFLOW_WORKERS:
                    if f"workload_id={ti['id']}" in (logs / f"{name}.log").read_text(errors="replace"):
                        return name, f"{ti['dag_id']}.{ti['task_id']}[{ti['map_index']}]"
            return None

        found = poll(busy, self.timing.moment_s)
        if found is None:
            return False, f"no task was running on a Celery worker within {self.timing.moment_s:g}s"
        name, task = found
        self.faults.restart(name)
        return True, f"SIGKILLed {name} while it ran {task}; restarted at once"

    def _zk_broker(self) -> tuple[bool, str]:
        broker = max(self.clusters.zk.broker_ids())
        self.clusters.zk.kill_broker(broker)
        time.sleep(self.timing.outage_s)
        self.clusters.zk.start_broker(broker)
        self.clusters.saved()
        return True, f"SIGKILLed ZooKeeper-cluster broker {broker}; restarted after {self.timing.outage_s:g}s"

    def _kraft_broker(self) -> tuple[bool, str]:
        broker = max(self.clusters.kraft.broker_ids())
        self.clusters.kraft.kill_broker(broker)
        time.sleep(self.timing.outage_s)
        self.clusters.kraft.start_broker(broker)
        self.clusters.saved()
        return True, f"SIGKILLed KRaft-cluster broker {broker}; restarted after {self.timing.outage_s:g}s"

    def _kraft_controller(self) -> tuple[bool, str]:
        self.clusters.kraft.wait_healthy(180)  # the broker of the previous fault is back
        leader = active_controller(self.clusters.kraft, 60)
        self.clusters.kraft.kill_controller(leader)
        new = poll(lambda: _other_leader(self.clusters, leader), 60)
        time.sleep(self.timing.outage_s)
        self.clusters.kraft.start_controller(leader)
        self.clusters.saved()
        return True, (f"SIGKILLed the active controller {leader} (new leader: {new}); "
                      f"restarted after {self.timing.outage_s:g}s")  # fmt: skip

    def _consumer_group(self) -> tuple[bool, str]:
        if not self.group.running:
            return False, f"the soak's consumer group {SOAK_GROUP} never started: {self.group.error}"
        self.group.stop()
        time.sleep(self.timing.outage_s)
        self.group.start()
        return True, f"stopped consumer group {SOAK_GROUP}; restarted after {self.timing.outage_s:g}s"

    def _scheduler(self) -> tuple[bool, str]:
        how = self.faults.kill("airflow-scheduler", signal.SIGKILL)
        time.sleep(min(self.timing.outage_s, 10))
        self.faults.start("airflow-scheduler", how)
        return True, "SIGKILLed airflow-scheduler; restarted after 10s"

    def _redis(self) -> tuple[bool, str]:
        how = self.faults.kill("redis")  # a crash: its append-only file keeps what was queued
        time.sleep(min(self.timing.outage_s, 10))
        self.faults.start("redis", how)
        return True, "SIGKILLed Redis, the Celery broker; restarted after 10s"

    def _postgres(self) -> tuple[bool, str]:
        how = self.faults.kill("postgres", signal.SIGINT)  # a fast shutdown: every backend is cut
        time.sleep(min(self.timing.outage_s, 10))
        self.faults.start("postgres", how)
        return True, "stopped PostgreSQL (fast shutdown, every connection cut); restarted after 10s"

    def _object_store(self) -> tuple[bool, str]:
        if self.state.lake != "s3":
            return False, "not applicable: the lake is local (`--lake s3` puts it in the object store)"
        self.faults.freeze("object-store")
        try:
            time.sleep(self.timing.outage_s)
        finally:
            self.faults.thaw("object-store")
        return True, f"froze the object store (SIGSTOP) for {self.timing.outage_s:g}s"

    def _running_tasks(self, dag_id: str, task_ids: tuple[str, ...]) -> list[dict[str, Any]]:
        try:
            runs = self.api.get(f"dags/{dag_id}/dagRuns", state="running", limit=5)["dag_runs"]
            tis = [ti for r in runs for ti in self.api.get(f"dags/{dag_id}/dagRuns/{r['dag_run_id']}/taskInstances",
                   state="running", limit=100)["task_instances"]]  # fmt: skip
        except (RuntimeError, httpx.HTTPError):
            return []
        return [ti for ti in tis if not task_ids or ti["task_id"] in task_ids]

    # -- recovery -----------------------------------------------------------------------------------

    def recovered(self, after: datetime) -> str | None:
        """The first scheduled snapshot run queued after `after` that succeeded, failing on none."""
        runs = self.api.get(f"dags/{SNAPSHOT}/dagRuns", run_after_gte=after.isoformat(), order_by="run_after",
                            limit=20)["dag_runs"]  # fmt: skip
        done = [r for r in runs if r["run_type"] == "scheduled" and r["state"] == "success"]
        return str(done[0]["dag_run_id"]) if done else None


class GroupConsumer:
    """A consumer in group `SOAK_GROUP` on the fleet's topic (`stack.fleet.ensure_topic`), polling in a
    thread until stopped."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.error = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._consume, name="soak-consumer-group", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(60)

    def _consume(self) -> None:
        from kafka import KafkaConsumer  # noqa: PLC0415
        from kafka.errors import KafkaError  # noqa: PLC0415

        try:
            consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=SOAK_GROUP,
                                     auto_offset_reset="earliest", request_timeout_ms=30000)  # fmt: skip
            consumer.subscribe([FLEET_TOPIC])
            while not self._stop.is_set():
                consumer.poll(timeout_ms=500)
            consumer.close()
        except KafkaError as e:
            self.error = str(e)


def _other_leader(clusters: Clusters, old: int) -> int | None:
    try:
        leader = clusters.kraft.active_controller_id()
    except Exception:  # a quorum mid-election answers with any kind of error
        return None
    return leader if leader not in (None, old) else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def schedule(minutes: float, short: bool) -> list[tuple[float, str]]:
    """(seconds after the start, fault kind): one of each kind when short, else a round of every kind
    each 15 minutes, spread evenly over `minutes`."""
    rounds = 1 if short else max(1, int(minutes // 15))
    span = minutes * 60 / (len(KINDS) * rounds)
    return [(i * span, kind) for i, kind in enumerate(k for _ in range(rounds) for k in KINDS)]


def run_soak(state: State, clusters: Clusters, minutes: float, short: bool) -> dict[str, Any]:
    """Run the fault schedule on the running stack, let it settle, and read what happened: the report
    without `leftover_processes` (known only after `down`)."""
    timing = SHORT if short else LONG
    soak = Soak(state, clusters, timing)
    began, start = datetime.now(UTC), time.monotonic()
    soak.group.start()
    try:
        with Supervisor(soak.faults) as supervisor:
            for at_s, kind in schedule(minutes, short):
                time.sleep(max(0.0, at_s - (time.monotonic() - start)))
                soak.inject(kind)
            cleared = datetime.now(UTC)
            clusters.wait_healthy(300)
            recovery = poll(lambda: soak.recovered(cleared), timing.settle_s, 5)

            def settled() -> bool:
                received = read_received(Path(state.root) / "webhook" / "received.jsonl")
                return not read_pages(received, began).unresolved

            poll(settled, max(0.0, timing.settle_s - (datetime.now(UTC) - cleared).total_seconds()), 10)
    finally:
        soak.group.stop()
    soak.revivals = supervisor.revivals
    return report(soak, began, recovery)


def report(soak: Soak, began: datetime, recovery: str | None) -> dict[str, Any]:
    states, failed = read_runs(soak.api, began)
    received = read_received(Path(soak.state.root) / "webhook" / "received.jsonl")
    pages = read_pages(received, began)
    lake = read_lake(soak.state.lake_root, object_store_environment(soak.state))
    return {
        "minutes": round((datetime.now(UTC) - began).total_seconds() / 60, 1),
        "lake": soak.state.lake,
        "runs": sum(states.values()),
        "runs_by_state": dict(states),
        "failed_runs": failed,
        "recovered_by": recovery,
        "pages": pages.pages,
        "resolves": pages.resolves,
        "reminders": pages.reminders,
        "duplicate_pages": len(pages.duplicates),
        "duplicates": pages.duplicates,
        "incidents": len(pages.opened),
        "opened": pages.opened,
        "unresolved_incidents": len(pages.unresolved),
        "unresolved": pages.unresolved,
        "standing_incidents": pages.standing,
        "torn_batches": len(lake.torn),
        "torn": lake.torn,
        "committed_batches": lake.batches,
        "pending_intents": lake.pending_intents,
        "lake_files": lake.files,
        "lake_bytes": lake.bytes,
        "faults": [asdict(o) | outage_page(o, received) for o in soak.outcomes],
        "faults_exercised": sum(o.exercised for o in soak.outcomes),
        "restarted_after_exit": [asdict(r) for r in soak.revivals],
    }


def outage_page(outcome: Outcome, received: list[dict[str, Any]]) -> dict[str, Any]:
    """For a broker's outage: the first page about its cluster while it lasted (`page`, `page_s` after the
    kill), or None for both when none came; nothing for the other faults."""
    cluster = BROKER_FAULTS.get(outcome.kind)
    if cluster is None or not outcome.exercised:
        return {}
    began, cleared = datetime.fromisoformat(outcome.started_at), datetime.fromisoformat(outcome.cleared_at)
    page = first_page(received, cluster, began)
    if page is None or page.at > cleared:
        return {"page": None, "page_s": None}
    return {"page": page.title, "page_s": round((page.at - began).total_seconds(), 1)}


def failures(report: dict[str, Any]) -> list[str]:
    """What makes a soak fail: duplicate pages, unresolved incidents, torn batches, leftover processes,
    a pipeline that did not recover."""
    bad = [f"{k} = {report[k]}" for k in ("duplicate_pages", "unresolved_incidents", "torn_batches",
                                          "leftover_processes") if report.get(k)]  # fmt: skip
    if report.get("recovered_by") is None:
        bad.append("no scheduled snapshot succeeded after the last fault")
    return bad


def text(report: dict[str, Any]) -> str:
    """The report for a person: one line per fact, each failed run and fault on its own line."""
    lines = [
        f"soak: {report['minutes']} minutes, lake {report['lake']}",
        f"runs: {report['runs']} {report['runs_by_state']}; recovered by {report['recovered_by']}",
        *(f"  failed {f['dag_id']} {f['run_id']}: {f['reason']}" for f in report["failed_runs"]),
        f"faults: {report['faults_exercised']} of {len(report['faults'])} exercised; "
        f"{len(report['restarted_after_exit'])} services exited on their own and were restarted",
        *(fault_line(f) for f in report["faults"]),
        f"pages: {report['pages']} (resolves {report['resolves']}, reminders {report['reminders']}), "
        f"duplicate pages: {report['duplicate_pages']}",
        f"incidents opened: {report['incidents']}, unresolved: {report['unresolved_incidents']} "
        f"{report['unresolved']}; standing from before the soak: {report['standing_incidents']}",
        f"lake: {report['committed_batches']} committed batches, torn {report['torn_batches']} {report['torn']}, "
        f"pending intents {report['pending_intents']}; {report['lake_files']} files, {report['lake_bytes']} bytes",
        *(f"  restarted {r['service']} at {r['at']}, found exited: {r['why']}" for r in report["restarted_after_exit"]),
        f"leftover processes after down: {report.get('leftover_processes', 'n/a')}",
    ]
    return "\n".join(lines)


def fault_line(fault: dict[str, Any]) -> str:
    mark = "x" if fault["exercised"] else "-"
    line = f"  {mark} {fault['kind']} {fault['started_at']}..{fault['cleared_at']}: {fault['detail']}"
    if "page" not in fault:
        return line
    paged = f"paged {fault['page']!r} after {fault['page_s']:g}s" if fault["page"] else "no page while it lasted"
    return f"{line}; {paged}"


def one_line(report: dict[str, Any]) -> str:
    keys = ("minutes", "runs", "failed_runs", "pages", "duplicate_pages", "incidents", "unresolved_incidents",
            "torn_batches", "leftover_processes", "lake_files", "lake_bytes", "faults_exercised")  # fmt: skip
    return json.dumps({"soak": {k: report.get(k) for k in keys}}, separators=(",", ":"))


def wait_for_first_snapshot(state: State, timeout_s: float) -> str:
    """The first scheduled snapshot run's id once it succeeded: the baseline the faults break."""
    soak_api = AirflowApi(state.urls["airflow"], ADMIN,
                          json.loads((Path(state.root) / "airflow" / "passwords.json").read_text())[ADMIN])  # fmt: skip

    def first() -> str | None:
        runs = soak_api.get(f"dags/{SNAPSHOT}/dagRuns", order_by="-run_after", limit=20)["dag_runs"]
        done = [r for r in runs if r["run_type"] == "scheduled" and r["state"] == "success"]
        return str(done[0]["dag_run_id"]) if done else None

    return str(wait_until(first, timeout_s, "a scheduled snapshot run to succeed", every_s=5))
