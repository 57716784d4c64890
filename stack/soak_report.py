"""What a soak saw, read from where an operator would look: the runs from Airflow's REST API, the pages
and resolves from the webhook receiver's records, torn batches from the lake's commit logs checked
against the rows they commit, and the lake's size from its filesystem.

Pages: a kafka-ops notification (path `/chat`, the Slack-style body: `render.headline` is its `text`)
opens, escalates, reminds or resolves an incident named by (cluster, problem key: the body's "Problem"
field; its title in bodies without one), whatever its title says by then; an Alertmanager
notification (`/alertmanager/<receiver>`) fires or resolves each alert it lists, named by its
fingerprint (the hash of its labels). A *duplicate page* is an open (not a reminder, not an
escalation, not Alertmanager's repeat) of an incident that is already open. An incident is
*unresolved* when it opened during the soak and no resolve followed it; one already open before
the first fault is *standing*.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow.fs as pafs

from kafka_ops.environment import restored
from kafka_ops.lake.delta_store import PENDING
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.schema import COMMIT_TABLE, GROUP_COMMIT_TABLE
from stack.airflow import AirflowApi

OPEN = re.compile(
    r"^(?P<reminder>REMINDER )?(?P<level>[A-Z]+)(?P<escalated> \(was \w+\))? (?P<cluster>[^:\s]+): (?P<title>.*)$"
)
RESOLVED = re.compile(r"^RESOLVED (?P<cluster>[^:\s]+): (?P<title>.*) \(was \w+ for [^)]*\)$")
COUNTED = {
    # commit log: (its count column, the data table whose rows of the batch it counts)
    COMMIT_TABLE: ("partition_count", "partitions"),
    GROUP_COMMIT_TABLE: ("group_count", "consumer_groups"),
}


@dataclass
class Pages:
    pages: int = 0
    resolves: int = 0
    reminders: int = 0
    escalations: int = 0
    duplicates: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    """Incidents opened during the soak."""
    unresolved: list[str] = field(default_factory=list)
    standing: list[str] = field(default_factory=list)
    """Open before the soak began and still open at its end."""


def read_pages(records: list[dict[str, Any]], since: datetime) -> Pages:
    """The incidents in the receiver's `records`; those opened before `since` are the baseline."""
    out = Pages()
    open_at: dict[str, datetime] = {}
    for record in records:
        at = datetime.fromisoformat(record["received_at"])
        for name, action in _notifications(record):
            during = at >= since
            if action == "resolve":
                out.resolves += during
                open_at.pop(name, None)
            elif action == "remind":
                out.reminders += during
            elif action == "escalate":
                out.escalations += during
                open_at.setdefault(name, at)
            else:
                if name in open_at and action == "open":
                    out.duplicates.append(f"{name} (open since {open_at[name].isoformat()}, again {at.isoformat()})")
                if during and name not in open_at:
                    out.pages += 1
                    out.opened.append(name)
                open_at.setdefault(name, at)
    for name, at in open_at.items():
        (out.unresolved if at >= since else out.standing).append(name)
    return out


def _notifications(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(incident, open|escalate|remind|resolve|repeat) of each notification in one received request."""
    body, path = record.get("body"), str(record.get("path", ""))
    if not isinstance(body, dict):
        return []
    if path.startswith("/alertmanager/"):
        notes = []
        for alert in body.get("alerts", []):
            name = f"alertmanager alert {alert.get('fingerprint', '?')}"  # its labels' hash: the same on resolve
            notes.append((name, "resolve" if alert.get("status") == "resolved" else "repeat"))
        return notes
    text = str(body.get("text", ""))
    resolved = RESOLVED.match(text)
    if resolved:
        return [(f"{resolved['cluster']}: {problem_key(body) or resolved['title']}", "resolve")]
    opened = OPEN.match(text)
    if opened is None:
        return []
    name = f"{opened['cluster']}: {problem_key(body) or opened['title']}"
    return [(name, "remind" if opened["reminder"] else "escalate" if opened["escalated"] else "open")]


def problem_key(body: dict[str, Any]) -> str | None:
    """The incident's key in a kafka-ops Slack-style body (its "Problem" field), None when it has none."""
    for block in body.get("blocks") or []:
        for field_ in block.get("fields") or [] if isinstance(block, dict) else []:
            label, _, value = str(field_.get("text", "")).partition("\n")
            if label == "*Problem*":
                return value.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return None


def read_runs(api: AirflowApi, since: datetime) -> tuple[Counter[str], list[dict[str, str]]]:
    """Runs of every kafka-ops DAG that started after `since`, counted by state; each failed one with a
    one-line reason (its failed tasks and the last error its log shows)."""
    states: Counter[str] = Counter()
    failed: list[dict[str, str]] = []
    dags = api.get("dags", tags="kafka-ops", limit=100)["dags"]
    for dag in dags:
        dag_id = dag["dag_id"]
        runs = api.get(f"dags/{dag_id}/dagRuns", run_after_gte=since.isoformat(), limit=1000)["dag_runs"]
        for run in runs:
            states[run["state"]] += 1
            if run["state"] == "failed":
                failed.append({"dag_id": dag_id, "run_id": run["dag_run_id"], "reason": _reason(api, dag_id, run)})
    return states, failed


def _reason(api: AirflowApi, dag_id: str, run: dict[str, Any]) -> str:
    tis = api.get(f"dags/{dag_id}/dagRuns/{run['dag_run_id']}/taskInstances", limit=100)["task_instances"]
    broken = [t for t in tis if t["state"] in ("failed", "upstream_failed")]
    first = next((t for t in broken if t["state"] == "failed"), None)
    if first is None:
        return f"no task failed (tasks: {dict(Counter(t['state'] for t in tis))})"
    where = f"{first['task_id']}[{first['map_index']}]" if first["map_index"] >= 0 else first["task_id"]
    return f"{where} failed on try {first['try_number']}: {_last_error(api, dag_id, run['dag_run_id'], first)}"


def _last_error(api: AirflowApi, dag_id: str, run_id: str, ti: dict[str, Any]) -> str:
    path = f"dags/{dag_id}/dagRuns/{run_id}/taskInstances/{ti['task_id']}/logs/{max(1, ti['try_number'])}"
    response = api.request("GET", path, params={"map_index": ti["map_index"], "full_content": True})
    if response.status_code != 200:
        return f"(its log: HTTP {response.status_code})"
    content = response.json().get("content", [])
    errors = [c for c in content if isinstance(c, dict) and str(c.get("level", "")).lower() in ("error", "critical")]
    if not errors:
        return "(no error in its log: killed, or timed out by the scheduler)"
    last = errors[-1]
    return " ".join(str(last.get("event", "")).split())[:300]


@dataclass
class LakeFacts:
    files: int
    bytes: int
    batches: int
    torn: list[str]
    pending_intents: int


def read_lake(lake_root: str, environment: Mapping[str, str] | None = None) -> LakeFacts:
    """Torn batches: a committed batch whose commit row's count differs from the rows its data table
    holds for it (the commit row is written last, so a torn publish shows here). Pending intents: publishes
    not yet committed nor undone (`DeltaLake.recover` undoes them on a later publish). `environment`: the
    variables the lake's store is reached with (the stack's object store), set while it is read."""
    variables = environment or {}
    with restored(variables):
        os.environ.update(variables)
        return _read_lake(lake_root)


def _read_lake(lake_root: str) -> LakeFacts:
    lake = open_lake(lake_root)
    torn, batches = [], 0
    for commit_table, (column, table) in COUNTED.items():
        commits = lake.commit_log(commit_table)
        if commits.num_rows == 0:
            continue
        rows = lake.read(table)
        counts = Counter(zip(rows.column("cluster").to_pylist(), rows.column("snapshot_id").to_pylist(), strict=True))
        for row in commits.select(["cluster", "snapshot_id", column]).to_pylist():
            batches += 1
            have = counts.get((row["cluster"], row["snapshot_id"]), 0)
            if row[column] is not None and have != row[column]:
                batch = f"{commit_table} {row['cluster']} {row['snapshot_id']}"
                torn.append(f"{batch}: {column}={row[column]}, {table} has {have}")
    infos = lake.fs.get_file_info(pafs.FileSelector(lake.base, recursive=True, allow_not_found=True))
    files = [i for i in infos if i.type == pafs.FileType.File]
    pending = sum(1 for i in files if f"/{PENDING}/" in i.path and i.path.endswith(".json"))
    return LakeFacts(len(files), sum(i.size or 0 for i in files), batches, torn, pending)
