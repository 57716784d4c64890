"""The health report page: one self-contained HTML file (inline CSS and SVG, no script).

Top to bottom, in the order someone paged at night reads: the verdict (cluster, batch, capture
time, overall status and why), remarks about the data itself (missing, untrusted, stale), the health
gates, the top problems with cause and suggested action, the charts, the top offenders, and links
to Data Docs and the Airflow run. Every text from the lake is escaped; links are kept only for
http(s) and file URLs (a local path becomes a file URL). A Content-Security-Policy forbids the page
any request: whatever a browser shows comes from the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from kafka_ops import __version__
from kafka_ops.problems.words import duration, when
from kafka_ops.report.charts import Chart, charts
from kafka_ops.report.model import Cell, Collected, OffenderTable, Problem, ReportData
from kafka_ops.silences import Silence

if TYPE_CHECKING:
    from kafka_ops.validation.gates import GateReport

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_SAFE_SCHEMES = frozenset({"http", "https", "file"})

CSS = """
:root { --critical:#b71c1c; --warning:#b45f06; --ok:#1b5e20; --unknown:#455a64; --info:#1f5f8b;
        --line:#d9dde3; --muted:#5f6b7a; --bg:#f6f7f9; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif;
       color:#1d232b; background:var(--bg); }
header { padding:18px 28px 14px; color:#fff; }
header.critical { background:var(--critical); } header.warning { background:var(--warning); }
header.ok { background:var(--ok); } header.unknown { background:var(--unknown); }
header h1 { margin:0 0 4px; font-size:22px; font-weight:600; }
header .verdict { margin:0 0 10px; font-size:16px; }
header .verdict strong { letter-spacing:.04em; }
header dl { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; margin:0; font-size:13px; }
header dt { opacity:.8; } header dd { margin:0; }
header a { color:#fff; }
main { padding:8px 28px 28px; }
section { margin-top:18px; }
h2 { font-size:17px; margin:0 0 8px; border-bottom:1px solid var(--line); padding-bottom:4px; }
h3 { font-size:15px; margin:0 0 2px; }
h4 { font-size:13px; margin:8px 0 0; }
.notes li { color:var(--warning); }
table { border-collapse:collapse; width:100%; background:#fff; font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:4px 8px; text-align:left; vertical-align:top; }
th { background:#eef0f3; font-weight:600; }
td.num { text-align:right; font-variant-numeric:tabular-nums; }
td.when { white-space:nowrap; }
p.passed { margin:6px 0 0; }
.sev { display:inline-block; min-width:64px; padding:1px 6px; border-radius:3px; color:#fff; font-size:11px;
       font-weight:600; text-align:center; text-transform:uppercase; }
.sev.critical { background:var(--critical); } .sev.warning { background:var(--warning); }
.sev.ok, .sev.passed { background:var(--ok); } .sev.info { background:var(--info); }
.sev.unknown { background:var(--unknown); }
.problem td:first-child { width:80px; }
.silenced, .silences { color:#555; font-size:90%; }
.muted, .empty, figcaption, .question, .source { color:var(--muted); }
.question { margin:0 0 6px; font-style:italic; }
.empty { padding:28px 12px; border:1px dashed var(--line); background:#fff; text-align:center; }
.charts { display:grid; grid-template-columns:repeat(auto-fit, minmax(540px, 1fr)); gap:14px; }
figure.chart-box { margin:0; padding:12px 14px; background:#fff; border:1px solid var(--line); border-radius:4px; }
svg.chart { width:100%; height:auto; display:block; font-family:inherit; }
svg .tick, svg .legend, svg .value { font-size:11px; fill:#333; }
svg .axis { font-size:11px; fill:#5f6b7a; }
svg .grid { stroke:#e6e8ec; } svg .baseline { stroke:#8a939e; }
figcaption { font-size:12px; margin-top:4px; }
.source { font-size:11px; margin-top:2px; }
.offenders table { margin-bottom:4px; }
footer { padding:12px 28px 24px; color:var(--muted); font-size:12px; }
"""


def render(data: ReportData) -> str:
    """The whole page for `data`."""
    title = f"Kafka health: {data.cluster} — {data.status.upper()}"
    body = [
        _header(data),
        "<main>",
        _notes(data.notes),
        _gates(data.gates, data.snapshot),
        _problems(data),
        _charts(charts(data)),
        _offenders(data.offenders),
        "</main>",
        _footer(data),
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(CSP, quote=True)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="kafka-ops-report" content="{escape(_report_meta(data), quote=True)}">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n"
        f'<body class="{data.status}">\n' + "\n".join(part for part in body if part) + "\n</body></html>\n"
    )


def _report_meta(data: ReportData) -> str:
    """Machine-readable: which batch the page shows (write_report keeps latest.html the newest)."""
    batch = data.snapshot or data.groups
    captured = batch.captured_at.isoformat() if batch else ""
    return f"cluster={data.cluster};report={data.report_id};captured_at={captured};status={data.status}"


def _header(data: ReportData) -> str:
    facts: list[tuple[str, str]] = []
    if data.as_of is not None:
        facts.append(("As of", escape(as_of_sentence(data))))
    seen_at = data.as_of or data.generated_at
    if data.snapshot is not None:
        facts.append(("Snapshot", _batch(data.snapshot, seen_at)))
        facts.append(("Cluster", _zk_figures(data.snapshot.figures)))
    else:
        facts.append(("Snapshot", "none yet"))
    if data.groups is not None:
        facts.append(("Groups", _batch(data.groups, seen_at) + " · " + _group_figures(data.groups.figures)))
    else:
        facts.append(("Groups", "no consumer-group collection yet"))
    facts.append(("Generated", f"{_when(data.generated_at)} by kafka-ops {__version__}"))
    links = _links(data)
    dl = "".join(f"<dt>{escape(k)}</dt><dd>{v}</dd>" for k, v in facts)
    nav = f"<dt>Links</dt><dd>{' · '.join(links)}</dd>" if links else ""
    return (
        f'<header class="{data.status}" id="summary">'
        f"<h1>Kafka health report: {escape(data.cluster)}</h1>"
        f'<p class="verdict"><strong id="status">{escape(data.status.upper())}</strong> — '
        f"{escape(data.status_reason)}</p>"
        f"<dl>{dl}{nav}</dl></header>"
    )


def as_of_sentence(data: ReportData) -> str:
    """What a report of an analysis as of a past time shows: the time asked for and the batch then."""
    batch, what = (data.snapshot, "snapshot") if data.snapshot is not None else (data.groups, "group collection")
    shown = f"{what} {batch.snapshot_id} captured {_when(batch.captured_at)}" if batch else "no batch"
    return f"as of {_when(data.as_of) if data.as_of else '?'}: {shown} (the cluster as it was then, not now)"


def _batch(batch: Collected, now: datetime) -> str:
    analysed = f"analysed {_when(batch.analysed_at)}" if batch.analysed_at else "<strong>not analysed yet</strong>"
    trust = {True: "trusted", False: "<strong>UNTRUSTED</strong>", None: "not validated"}[batch.trusted]
    return (
        f"<code>{escape(batch.snapshot_id)}</code> captured {escape(_when(batch.captured_at))} "
        f"({escape(duration((now - batch.captured_at).total_seconds()))} ago) · {analysed} · {trust}"
    )


def _zk_figures(figures: Mapping[str, int | str | None]) -> str:
    def f(key: str) -> str:
        value = figures.get(key)
        return "?" if value is None else f"{value:,}"

    controller = figures.get("controller_id")
    kraft = figures.get("source") == "kraft"
    kind = f"KRaft cluster (metadata.version {f('metadata_version')})" if kraft else "ZooKeeper cluster"
    leader = "quorum leader: controller" if kraft else "controller broker"
    parts = [
        kind,
        f"{f('broker_count')} brokers {'unfenced' if kraft else 'registered'}",
        f"{f('partition_count')} partitions in {f('topic_count')} topics",
        f"{f('under_replicated_count')} under-replicated",
        f"{f('offline_count')} offline",
        "no controller" if controller is None else f"{leader} {controller} (epoch {f('controller_epoch')})",
    ]
    return escape(" · ".join(parts))


def _group_figures(figures: Mapping[str, int | str | None]) -> str:
    groups, members, lag = figures.get("group_count"), figures.get("member_count"), figures.get("total_lag")
    types, reconciling = figures.get("group_types"), figures.get("reconciling_member_count")
    text = f"{groups or 0} groups"
    text += f" ({types})" if types else ""
    text += f", {members or 0} members"
    text += f" ({reconciling} still reconciling)" if reconciling else ""
    return escape(f"{text}, total lag {lag or 0:,} messages")


def _links(data: ReportData) -> list[str]:
    docs = data.links.data_docs or (data.gates.data_docs if data.gates else None)
    docs = docs or (data.snapshot.data_docs if data.snapshot else None)
    out = []
    for label, url in (("Data Docs", docs), ("Airflow run", data.links.airflow_run)):
        link = _link(url, label)
        if link:
            out.append(link)
    return out


def _link(url: str | None, label: str) -> str | None:
    """An anchor for http(s)/file URLs and local paths; anything else (javascript:, data:) is shown
    as text, never as a link."""
    if not url:
        return None
    href = _href(url)
    if href is None:
        return f"{escape(label)}: <code>{escape(url)}</code>"
    return f'<a href="{escape(href, quote=True)}">{escape(label)}</a>'


def _href(url: str) -> str | None:
    if os.path.isabs(url):
        return Path(url).as_uri()
    scheme = urlparse(url).scheme.lower()
    return url if scheme in _SAFE_SCHEMES else None


def _notes(notes: Iterable[str]) -> str:
    items = [f"<li>{escape(n)}</li>" for n in notes]
    if not items:
        return ""
    return f'<section id="notes" class="notes"><h2>About the data</h2><ul>{"".join(items)}</ul></section>'


def _gates(gates: GateReport | None, snapshot: Collected | None) -> str:
    if gates is None:
        return (
            '<section id="gates"><h2>Health gates</h2><p class="empty">The health gates were not run for this '
            "report; the status comes from the findings below.</p></section>"
        )
    failed = sorted((r for r in gates.results if not r.passed), key=lambda r: (r.severity != "critical", r.name))
    passed = [r for r in gates.results if r.passed]
    judged = f"snapshot {gates.snapshot_id}" + (
        f", group collection {gates.group_snapshot_id}" if gates.group_snapshot_id else ", no group collection"
    )
    parts = [
        '<section id="gates"><h2>Health gates</h2>',
        f'<p class="muted">{len(failed)} of {len(gates.results)} failed on {escape(judged)}.</p>',
    ]
    if failed:
        rows = "".join(
            f"<tr><td>{_severity(str(r.severity))}</td>"
            f'<td><code title="{escape(r.meaning, quote=True)}">{escape(r.name)}</code></td>'
            f'<td class="num">{r.count:,}</td><td>{escape(r.cause or "")}</td><td>{escape(r.action or "")}</td>'
            f'<td class="when">{escape(_when(r.since))}</td><td>{_link(r.data_docs, "Data Docs") or ""}</td></tr>'
            for r in failed
        )
        parts.append(
            "<table><thead><tr><th>Severity</th><th>Gate</th><th>Failing</th><th>Cause</th>"
            f"<th>Suggested action</th><th>Since</th><th></th></tr></thead><tbody>{rows}</tbody></table>"
        )
    if passed:
        names = ", ".join(f'<code title="{escape(r.meaning, quote=True)}">{escape(r.name)}</code>' for r in passed)
        parts.append(f'<p class="passed"><span class="sev passed">passed</span> {names}</p>')
    parts.append("</section>")
    return "".join(parts)


def _problems(data: ReportData) -> str:
    head = '<section id="problems"><h2>Top problems</h2>'
    if data.problems.missing:
        return head + f'<p class="empty">{escape(data.problems.missing)}</p></section>'
    if not data.problems.items:
        return head + _silences(data) + '<p class="empty">No finding needs attention.</p></section>'
    rows = "".join(_problem(p, data.silence_of(p)) for p in data.problems.items)
    return (
        head
        + _silences(data)
        + "<table><thead><tr><th>Severity</th><th>Problem</th><th>Likely cause</th><th>Suggested action</th>"
        f"<th>Since</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _silences(data: ReportData) -> str:
    """The silences in force: what each keeps from paging, until when, who set it and why."""
    if not data.silences:
        return ""
    items = "".join(f"<li>{escape(s.describe())}</li>" for s in data.silences)
    head = "<p><strong>Silences in force</strong> (these problems do not page):</p>"
    return f'<div class="silences">{head}<ul>{items}</ul></div>'


def _problem(p: Problem, silence: Silence | None) -> str:
    silenced = (
        f'<div class="silenced"><span class="sev silenced">silenced</span> {escape(silence.describe())}</div>'
        if silence is not None
        else ""
    )
    return (
        f'<tr class="problem"><td>{_severity(p.severity)}</td><td><strong>{escape(p.title)}</strong> '
        f'<div class="source">{escape(p.source)}</div>{silenced}</td><td>{escape(p.cause)}</td>'
        f'<td>{escape(p.action or "")}</td><td class="when">{escape(_when(p.since))}</td></tr>'
    )


def _charts(items: list[Chart]) -> str:
    boxes = []
    for c in items:
        inner = [f"<h3>{escape(c.title)}</h3>", f'<p class="question">{escape(c.question)}</p>']
        if c.empty is not None:
            inner.append(f'<p class="empty">{escape(c.empty)}</p>')
        for panel in c.panels:
            if panel.heading:
                inner.append(f"<h4>{escape(panel.heading)}</h4>")
            inner.append(panel.svg)
            if panel.caption:
                inner.append(f"<figcaption>{escape(panel.caption)}</figcaption>")
        inner.append(f'<div class="source">from {escape(c.source)}</div>')
        boxes.append(f'<figure class="chart-box" id="chart-{escape(c.key, quote=True)}">{"".join(inner)}</figure>')
    return f'<section id="charts"><h2>Charts</h2><div class="charts">{"".join(boxes)}</div></section>'


def _offenders(tables: Iterable[OffenderTable]) -> str:
    parts = []
    for t in tables:
        parts.append(f"<h3>{escape(t.title)}</h3>")
        if t.missing:
            parts.append(f'<p class="empty">{escape(t.missing)}</p>')
            continue
        if not t.rows:
            parts.append(f'<p class="muted">None: {escape(t.none)}.</p>')
            continue
        head = "".join(f"<th>{escape(c)}</th>" for c in t.columns)
        body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in t.rows)
        more = f" Showing the worst {len(t.rows)} of {t.total}." if t.total > len(t.rows) else ""
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        parts.append(f'<div class="source">from {escape(t.source)}.{escape(more)}</div>')
    if not parts:
        return ""
    return f'<section id="offenders" class="offenders"><h2>Top offenders</h2>{"".join(parts)}</section>'


def _cell(value: Cell) -> str:
    if value is None:
        return '<td class="muted">—</td>'
    if isinstance(value, datetime):
        return f'<td class="when">{escape(_when(value))}</td>'
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, int | float):
        text = f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"
        return f'<td class="num">{text}</td>'
    return f"<td>{escape(value)}</td>"


def _severity(severity: str) -> str:
    return f'<span class="sev {escape(severity, quote=True)}">{escape(severity)}</span>'


def _footer(data: ReportData) -> str:
    return (
        f"<footer>History charts: the last {data.window.total_seconds() / 3600:g} h before each batch's capture "
        "time. Findings come from the analysis of each batch (commit log analysis_runs); times are UTC. "
        "Hover a bar or a point for its exact value.</footer>"
    )


def _when(moment: datetime | None) -> str:
    """`2026-11-21 08:47:01 UTC`; empty for None."""
    if moment is None:
        return ""
    return when(moment)
