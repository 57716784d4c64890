"""kafka-ops inside the Airflow UI: the health reports, the remediation plans and their audit, as
pages the plugin's external views show (`kafka_ops_plugin.py`).

* `GET /ui`: the fleet on one page (`web.fleet`), every cluster linking to its latest report and its plans;
* `GET /ui/reports/<cluster>` (the latest) and `/ui/reports/<cluster>/<report id>`: the health report
  the analysis DAG published in the lake (`report.publish`), as it was written;
* `GET /ui/plans/<cluster>`: its plans, newest first, with each one's lifecycle state (`remediation.lifecycle`)
  and its execution's status;
* `GET /ui/plans/<cluster>/<plan id>`: one plan (what moves, per-broker before/after, goals,
  throttles, what was skipped and why), its lifecycle (who moved it to each state, when), its execution
  progress and its audit trail;
* `GET /ui/runs/<dag id>/<run id>`: what one DAG run did, shown as a tab of the run in the Airflow UI:
  the plans it made (their `created_by` names the run) and the audit events it wrote; for a
  snapshot or analysis run, the latest report of every cluster.

Every page reads the lake when asked (plans and audit are small, reports are files) and names what
is missing and why: an unknown cluster or plan is a 404 page that lists what exists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kafka_ops.errors import KafkaOpsError
from kafka_ops.lake.schema import REMEDIATION_PLANS_TABLE
from kafka_ops.lake.store import Lake
from kafka_ops.remediation.lifecycle import Lifecycle, lifecycles
from kafka_ops.remediation.store import read_audit, read_progress
from kafka_ops.report.plan_charts import plan_charts
from kafka_ops.report.publish import read_report

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.2em;color:#1d2433}
h1{font-size:1.35em}h2{font-size:1.1em;margin-top:1.4em}
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #d5dae3;padding:.25em .6em;text-align:left;
vertical-align:top}th{background:#f2f4f8}.muted{color:#5c6677}code{font-size:.95em}
"""
PLAN_COLUMNS = ["plan", "kind", "created", "by", "moves", "elections", "state", "execution"]
AUDIT_COLUMNS = ("at", "action", "batch", "outcome", "actor", "run_id", "detail")
ANALYSIS_DAGS = frozenset({"kafka_metadata_snapshot", "kafka_health_analysis"})


class Pages:
    """Renders the pages from the lake for the configured clusters."""

    def __init__(self, lake: Lake, clusters: Sequence[str]) -> None:
        self.lake = lake
        self.clusters = list(clusters)

    # -- pages -----------------------------------------------------------------------------------

    def report(self, cluster: str, report_id: str | None = None) -> HTMLResponse:
        missing = self._unknown_cluster(cluster)
        if missing is not None:
            return missing
        try:
            page = read_report(self.lake, cluster, report_id)
        except KafkaOpsError as e:
            return render_page("No such report", f"<p>{escape(str(e))}</p>", 404)
        if page is None:
            what = "no health report yet" if report_id is None else f"no report {report_id!r}"
            return render_page(
                f"{cluster}: {what}",
                f"<p>Cluster {escape(cluster)} has {escape(what)} in the lake. The analysis DAG "
                "(<code>kafka_health_analysis</code>) writes one after each analysed snapshot.</p>",
                404,
            )
        return HTMLResponse(page)

    def plans(self, root: str, cluster: str) -> HTMLResponse:
        missing = self._unknown_cluster(cluster)
        if missing is not None:
            return missing
        states = self._lifecycles(cluster)
        rows = [self._plan_row(root, cluster, plan, states) for plan in self._plans(cluster)]
        body = (
            _table(PLAN_COLUMNS, rows, raw=True)
            if rows
            else "<p>No plan yet: trigger a remediation DAG (dry run by default) to make one.</p>"
        )
        return render_page(f"{cluster}: remediation plans", body)

    def _plan_row(self, root: str, cluster: str, plan: Mapping[str, Any], states: Mapping[str, Lifecycle]) -> list[str]:
        href = f"{root}/plans/{quote(cluster)}/{quote(plan['plan_id'])}"
        cells = [plan["kind"], plan["created_at"], plan["created_by"], plan["moves"], plan["elections"]]
        found = states.get(plan["plan_id"])
        state = f"{found.state} since {found.since:%Y-%m-%d %H:%M:%S} UTC" if found is not None else "unknown"
        return [link(href, plan["plan_id"]), *map(_cell, cells), _cell(state),
                _cell(self._progress(cluster, plan["plan_id"]))]  # fmt: skip

    def plan(self, cluster: str, plan_id: str) -> HTMLResponse:
        missing = self._unknown_cluster(cluster)
        if missing is not None:
            return missing
        row = next((p for p in self._plans(cluster) if p["plan_id"] == plan_id), None)
        if row is None:
            known = ", ".join(p["plan_id"] for p in self._plans(cluster)[:20]) or "none"
            return render_page("No such plan", f"<p>Cluster {escape(cluster)} has no plan {escape(repr(plan_id))} "
                         f"(latest: {escape(known)}).</p>", 404)  # fmt: skip
        doc = json.loads(row["document"])
        parts = [_summary(doc), _moves(doc), _brokers(doc), _rows_section("Goals", doc.get("goals", ())),
                 _rows_section("Throttles", _throttle_rows(doc.get("throttles"))),
                 _rows_section("Skipped partitions", doc.get("skipped", ())),
                 _rows_section("Lifecycle", _steps(self._lifecycles(cluster).get(plan_id))),
                 f"<h2>Execution</h2><p>{escape(self._progress(cluster, plan_id))}</p>",
                 _rows_section("Audit trail", _audit_rows(read_audit(self.lake, cluster, plan_id)))]  # fmt: skip
        return render_page(f"{cluster}: plan {plan_id}", "".join(parts))

    def run(self, root: str, dag_id: str, run_id: str) -> HTMLResponse:
        title = f"{dag_id} / {run_id}"
        if dag_id in ANALYSIS_DAGS:
            items = [link(f"{root}/reports/{quote(c)}", f"{c}: latest health report") for c in self.clusters]
            return render_page(title, "<p>The health reports this DAG keeps current:</p>" + _list(items))
        made, events = [], []
        for cluster in self.clusters:
            mine = [p for p in self._plans(cluster) if str(p["created_by"] or "").endswith(f"({run_id})")]
            states = self._lifecycles(cluster) if mine else {}
            made += [self._plan_row(root, cluster, p, states) for p in mine]
            events += [{"cluster": cluster, **r} for r in read_audit(self.lake, cluster) if r["run_id"] == run_id]
        body = "<h2>Plans this run made</h2>" + (_table(PLAN_COLUMNS, made, raw=True) if made else "<p>none</p>")
        body += (
            _rows_section("Audit events of this run", _audit_rows(events, ("cluster", "plan_id", *AUDIT_COLUMNS)))
            if events
            else "<p>This run wrote nothing to a cluster (no audit event).</p>"
        )
        return render_page(title, body)

    # -- reads -----------------------------------------------------------------------------------

    def _unknown_cluster(self, cluster: str) -> HTMLResponse | None:
        if cluster in self.clusters:
            return None
        known = ", ".join(self.clusters)
        return render_page("No such cluster", f"<p>No cluster named {escape(repr(cluster))} in the kafka-ops settings "
                     f"(have: {escape(known)}).</p>", 404)  # fmt: skip

    def _plans(self, cluster: str) -> list[dict[str, Any]]:
        rows = self.lake.commit_log(REMEDIATION_PLANS_TABLE, cluster).to_pylist()
        return sorted(rows, key=lambda r: (r["created_at"], r["plan_id"]), reverse=True)

    def _lifecycles(self, cluster: str) -> dict[str, Lifecycle]:
        return {c.plan_id: c for c in lifecycles(self.lake, cluster)}

    def _progress(self, cluster: str, plan_id: str) -> str:
        try:
            progress = read_progress(self.lake, cluster, plan_id)
        except KafkaOpsError as e:
            return f"unreadable progress: {e}"
        if progress is None:
            return "not executed"
        return progress.status + (f": {progress.message}" if progress.message else "")


def router(pages: Pages, dependencies: Sequence[Any]) -> APIRouter:
    """The pages under `/ui`; links are absolute, from the prefix the app is mounted at."""
    api = APIRouter(prefix="/ui", dependencies=list(dependencies), include_in_schema=False)

    def root(request: Request) -> str:
        return f"{request.scope.get('root_path', '')}/ui"

    @api.get("/reports/{cluster}", response_class=HTMLResponse)
    def latest_report(cluster: str) -> HTMLResponse:
        return pages.report(cluster)

    @api.get("/reports/{cluster}/{report_id}", response_class=HTMLResponse)
    def report(cluster: str, report_id: str) -> HTMLResponse:
        return pages.report(cluster, report_id)

    @api.get("/plans/{cluster}", response_class=HTMLResponse)
    def plans(request: Request, cluster: str) -> HTMLResponse:
        return pages.plans(root(request), cluster)

    @api.get("/plans/{cluster}/{plan_id}", response_class=HTMLResponse)
    def plan(cluster: str, plan_id: str) -> HTMLResponse:
        return pages.plan(cluster, plan_id)

    @api.get("/runs/{dag_id}/{run_id}", response_class=HTMLResponse)
    def run(request: Request, dag_id: str, run_id: str) -> HTMLResponse:
        return pages.run(root(request), dag_id, run_id)

    return api


# -- rendering ------------------------------------------------------------------------------------


def render_page(title: str, body: str, status: int = 200, *, style: str = "") -> HTMLResponse:
    """A page of the plugin: `title` (escaped) as its title and heading, `body` as given (HTML), `style`
    added to the pages' own."""
    return HTMLResponse(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{STYLE}{style}</style></head><body><h1>{escape(title)}</h1>{body}</body></html>",
        status,
    )


def _list(items: Iterable[str]) -> str:
    return "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"


def link(href: str, text: str) -> str:
    """An anchor, `href` and `text` escaped."""
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def _cell(value: object) -> str:
    if isinstance(value, list | tuple):
        return escape(", ".join(map(str, value)))
    return "" if value is None else escape(str(value))


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]], raw: bool = False) -> str:
    """`header` all empty: a table without a heading row (name / value pairs)."""
    head = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>" if any(header) else ""
    body = "".join("<tr>" + "".join(f"<td>{c if raw else _cell(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table>{head}{body}</table>"


def _rows_section(title: str, rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    rows = list(rows)
    if not rows:
        return f"<h2>{escape(title)}</h2><p class='muted'>none</p>"
    names = list(columns or dict.fromkeys(k for r in rows for k in r))
    return f"<h2>{escape(title)}</h2>" + _table(names, ([r.get(n) for n in names] for r in rows))


def _summary(doc: Mapping[str, Any]) -> str:
    keep = {k: v for k, v in doc.items() if not isinstance(v, dict | list)}
    request = json.dumps(doc.get("request", {}), sort_keys=True)
    return _table(["", ""], [*keep.items(), ("request", request)])


def _moves(doc: Mapping[str, Any]) -> str:
    before = {(p["topic"], p["partition"]): p["replicas"] for p in doc.get("rollback", {}).get("partitions", [])}
    rows = [
        {"topic": p["topic"], "partition": p["partition"], "replicas now": before.get((p["topic"], p["partition"])),
         "target": p["replicas"]}
        for p in doc.get("reassignment", {}).get("partitions", [])
    ]  # fmt: skip
    elections = doc.get("election", {}).get("partitions", [])
    return _rows_section(f"Reassignments ({len(rows)})", rows) + _rows_section(
        f"Elections ({len(elections)})", elections
    )


def _brokers(doc: Mapping[str, Any]) -> str:
    rows = doc.get("brokers", ())
    figures = "".join(f"<figure>{drawing}<figcaption>{escape(caption)}</figcaption></figure>"
                      for caption, drawing in plan_charts(rows))  # fmt: skip
    return _rows_section("Per broker, before and after the plan", rows) + figures


def _throttle_rows(throttles: object) -> list[Mapping[str, Any]]:
    if isinstance(throttles, dict):
        return [{"throttle": k, "value": json.dumps(v, sort_keys=True)} for k, v in throttles.items()]
    return list(throttles) if isinstance(throttles, list) else []


def _steps(found: Lifecycle | None) -> list[dict[str, Any]]:
    """A plan's lifecycle steps (`remediation.lifecycle`), oldest first."""
    steps = found.steps if found is not None else ()
    return [{"state": s.state, "at": s.at, "by": s.by, "detail": s.detail} for s in steps]


def _audit_rows(rows: Iterable[Mapping[str, Any]], columns: Sequence[str] = AUDIT_COLUMNS) -> list[dict[str, Any]]:
    return [{c: r.get(c) for c in columns} for r in rows]
