"""The page: self-contained, escaped, in reading order; written atomically into the lake."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.store import Lake
from kafka_ops.report import ReportLinks, report_url, write_report
from kafka_ops.report.data import gather
from kafka_ops.report.html import CSP, render
from kafka_ops.report.svg import nice_ticks, time_ticks
from kafka_ops.validation.gates import GateReport, GateResult
from tests.unit.report import scenario
from tests.unit.report.scenario import NOW
from tests.unit.validation.docs import table_rows


def sections(page: str) -> list[str]:
    return re.findall(r"<h2>(.*?)</h2>", page)


def test_the_page_reads_verdict_gates_problems_charts_offenders(lake: Lake) -> None:
    page = render(gather(scenario.build(lake), "c1", now=NOW))
    assert "<h1>Kafka health report: c1</h1>" in page
    assert '<strong id="status">CRITICAL</strong> — Broker 3 is down; 1 partition offline (no leader)' in page
    assert sections(page) == ["About the data", "Health gates", "Top problems", "Charts", "Top offenders"]
    assert "The health gates were not run for this report" in page
    charts = re.findall(r'<figure class="chart-box" id="chart-([a-z-]+)"><h3>(.*?)</h3>', page)
    assert charts == [
        ("leaders-replicas", "Leaders and replicas per broker"),
        ("under-replicated", "Under-replicated partitions over the last day"),
        ("isr-shrinks", "ISR shrink events per broker"),
        ("group-lag", "Lag per consumer group over the last day"),
        ("skewed-groups", "Partitions per member of skewed groups"),
        ("disk-used", "Disk used and capacity per broker"),
        ("days-to-full", "Days until the disk is full, per broker"),
        ("broker-traffic", "Bytes in and out per broker"),
    ]
    assert page.count("<svg ") == 8
    assert "broker 2: days to full 10</title>" in page and "broker 1: days to full" not in page  # not filling
    assert "broker 2: used by replicas 0.9</title>" in page and "broker 2: capacity 1</title>" in page  # in TB
    assert "with cooperative-sticky: 1-2 per member" in page  # the what-if's band beside the bars


def test_tables_show_cause_action_and_the_worst_offenders(lake: Lake, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(render(gather(scenario.build(lake), "c1", now=NOW)))
    rows = table_rows(page)
    assert [
        "critical",
        "Broker 3 is down broker_attribution",
        "broker 3 is down: 2 partitions under-replicated",
        "bring broker 3 back (restart it, or replace it keeping broker id 3)",
        "2026-11-21 04:00:00 UTC",
    ] in rows
    assert ["solo-0", "offline", "none", "[3]", "[3]", "1", "—"] in rows
    assert [
        "stable",
        "classic",
        "Stable",
        "ERR",
        "280",
        "orders-0",
        "~2 h 00 min (extrapolated)",
        "1 partition STOP: no new commit for 2 h",
    ] in rows
    assert ["fresh", "consumer", "Reconciling", "6", "6", "1", "2"] in rows  # members still reconciling
    assert "3 groups (classic 2, consumer 1), 6 members (1 still reconciling)" in page.read_text()


def test_missing_inputs_are_said_on_the_page(lake: Lake) -> None:
    scenario.build(lake, analyse=False, groups=False)
    page = render(gather(lake, "c1", now=NOW))
    assert '<strong id="status">UNKNOWN</strong>' in page
    assert page.count("ZooKeeper snapshot s4 is not analysed yet") == 7  # notes, problems, five charts
    assert page.count("no consumer-group collection of cluster c1 is in the lake yet") == 3  # notes, two charts
    assert page.count("<svg ") == 1  # under-replication comes from the snapshots themselves
    assert "Top offenders" not in page


def test_everything_from_the_lake_is_escaped_and_nothing_is_fetched(lake: Lake) -> None:
    scenario.build(lake)
    evil = '<script>alert("x")</script>'
    scenario.publish_findings(lake, "g4", "group_snapshots", scenario.group_findings(evil_group=evil))
    links = ReportLinks(data_docs="javascript:alert(1)", airflow_run="http://127.0.0.1:8080/dags/x/runs/r?a=1&b=2")
    page = render(gather(lake, "c1", links=links, now=NOW))
    assert "<script" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP.replace(chr(39), "&#x27;")}">' in page
    assert "Data Docs: <code>javascript:alert(1)</code>" in page  # shown, never a link
    assert '<a href="http://127.0.0.1:8080/dags/x/runs/r?a=1&amp;b=2">Airflow run</a>' in page
    assert not re.search(r'(src|href)="(?!http://127\.0\.0\.1:8080/|file:///)', page)


def test_gate_results_come_first_with_a_link_to_their_data_docs(lake: Lake) -> None:
    scenario.build(lake)
    failed = GateResult("no_offline_partitions", "critical", False, 1, (), "1 partition offline: broker 3 is down",
                        "bring broker 3 back", NOW - timedelta(hours=2), "no partition without a leader", "c1", "s4",
                        "/lake/_data_docs/c1/gates.html")  # fmt: skip
    passed = dataclasses.replace(failed, name="controller_elections_within_threshold", severity="warning",
                                 passed=True, count=0, cause=None, action=None, since=None, data_docs=None,
                                 meaning="few controller elections")  # fmt: skip
    report = GateReport("c1", "s4", "g4", (passed, failed), "/lake/_data_docs/c1/index.html", 0.5)
    page = render(gather(lake, "c1", gates=report, now=NOW))
    gates = page[page.index('<section id="gates">') : page.index('<section id="problems">')]
    assert "1 of 2 failed on snapshot s4, group collection g4." in gates
    assert '<td><code title="no partition without a leader">no_offline_partitions</code></td>' in gates
    assert "<td>1 partition offline: broker 3 is down</td><td>bring broker 3 back</td>" in gates
    assert (
        '<span class="sev passed">passed</span> <code title="few controller elections">'
        "controller_elections_within_threshold</code>"
    ) in gates
    assert '<a href="file:///lake/_data_docs/c1/gates.html">Data Docs</a>' in gates
    assert '<a href="file:///lake/_data_docs/c1/index.html">Data Docs</a>' in page  # in the header


def test_write_report_publishes_the_batch_and_latest(lake: Lake) -> None:
    scenario.build(lake)
    path = write_report(lake, "c1", now=NOW)
    folder = Path(lake.base) / "_reports" / "c1"
    assert path == str(folder / "s4.html") == report_url(lake, "c1", "s4")
    assert sorted(p.name for p in folder.iterdir()) == ["latest.html", "s4.html"]
    assert (folder / "latest.html").read_text() == (folder / "s4.html").read_text()

    # a report re-made for an older snapshot does not move latest.html back
    older = write_report(lake, "c1", snapshot_id="s3", now=NOW)
    assert Path(older).name == "s3.html"
    assert sorted(p.name for p in folder.iterdir()) == ["latest.html", "s3.html", "s4.html"]
    assert (folder / "latest.html").read_text() == (folder / "s4.html").read_text()


def test_a_report_as_of_a_past_time_says_so_and_is_never_latest(lake: Lake) -> None:
    scenario.build(lake)
    path = write_report(lake, "c1", snapshot_id="s3", now=NOW, as_of=NOW - timedelta(hours=2))
    assert sorted(p.name for p in (Path(lake.base) / "_reports" / "c1").iterdir()) == ["s3.html"]
    assert "<dt>As of</dt><dd>as of 2026-11-21 04:00:00 UTC: snapshot s3 captured" in Path(path).read_text()


def test_report_url_refuses_unsafe_names(lake: Lake) -> None:
    with pytest.raises(LakeError, match=r"report id '\.\./x' cannot be used in lake paths"):
        report_url(lake, "c1", "../x")


def test_axis_ticks_are_round() -> None:
    assert nice_ticks(0) == [0, 1]
    assert nice_ticks(33) == [0, 10, 20, 30, 40]
    assert nice_ticks(15_900) == [0, 5000, 10000, 15000, 20000]
    start = datetime(2026, 11, 21, 5, 58, tzinfo=UTC)
    assert time_ticks(start - timedelta(hours=24), start) == [
        datetime(2026, 11, 20, 6, 0, tzinfo=UTC) + timedelta(hours=3 * k) for k in range(8)
    ]
    assert time_ticks(start, start + timedelta(minutes=5)) == [
        datetime(2026, 11, 21, 5, 58, tzinfo=UTC),
        datetime(2026, 11, 21, 5, 59, tzinfo=UTC),
        datetime(2026, 11, 21, 6, 0, tzinfo=UTC),
        datetime(2026, 11, 21, 6, 1, tzinfo=UTC),
        datetime(2026, 11, 21, 6, 2, tzinfo=UTC),
        datetime(2026, 11, 21, 6, 3, tzinfo=UTC),
    ]


def test_a_silenced_problem_is_shown_silenced_with_the_silences_reason_and_end(lake: Lake, tmp_path: Path) -> None:
    from kafka_ops.silences import new_silence  # noqa: PLC0415

    window = new_silence("c1", starts_at=NOW - timedelta(hours=1), ends_at=NOW + timedelta(hours=1),
                         reason="disk swap on broker 3, ask ops", created_by="ana", brokers=[3])  # fmt: skip
    over = new_silence("c1", starts_at=NOW - timedelta(hours=3), ends_at=NOW - timedelta(hours=2), reason="old",
                       created_by="ana")  # fmt: skip
    page = tmp_path / "page.html"
    page.write_text(render(gather(scenario.build(lake), "c1", now=NOW, silences=[window, over])))
    text = page.read_text()
    assert text.count("disk swap on broker 3, ask ops") == 2  # in the list of silences and on its problem
    assert "old" not in re.findall(r'<div class="silences">.*?</div>', text)[0]  # over: not in force
    (broker_row,) = [r for r in table_rows(page) if r[1].startswith("Broker 3 is down")]
    assert "silenced silenced until" in broker_row[1] and "by ana" in broker_row[1]
    assert not [r for r in table_rows(page) if "offline" in r[1].lower() and "silenced" in r[1]]  # still pages
    past = render(gather(scenario.build(lake), "c1", now=NOW, silences=[window], as_of=NOW - timedelta(hours=1)))
    assert "Silences in force" not in past  # a report of the past shows no silence of now
