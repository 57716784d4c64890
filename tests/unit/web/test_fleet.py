"""The fleet page (`GET /ui`), from a lake written by the real writers at `lakes.NOW`:

* c1 (tier "2", payments): the report scenario on ZooKeeper, fresh; a critical incident open, a warning one
  silenced (its title full of markup); three plans: one awaiting approval, one approved, one executing;
* c2 (tier "10"): KRaft at metadata.version 21 (Kafka 3.9), snapshot fresh, its group collection 2 h old;
  nothing open: healthy;
* c3: its latest group analysis is not Parquet: unreadable;
* c4 (tier "gold"): a ZooKeeper cluster migrating to KRaft whose latest snapshot is 3 h old, nothing open.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kafka_ops.alerting.dispatch import dispatch
from kafka_ops.alerting.log_sink import LogNotifier
from kafka_ops.alerting.silence_store import add_silence
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import MigrationZnode
from kafka_ops.remediation.progress import Progress
from kafka_ops.remediation.store import AuditLog, save_plan, write_progress
from kafka_ops.settings import ClusterConfig, Settings
from kafka_ops.silences import new_silence
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.web.app import build_app
from tests.unit.alerting.alerts import broker_down, lagging_group
from tests.unit.remediation.clusters import rf2_plan
from tests.unit.report import scenario
from tests.unit.web import lakes

NOW = lakes.NOW
AWAITING, APPROVED, RUNNING = rf2_plan("awaiting"), rf2_plan("approved"), rf2_plan("running")
MARKUP = '<script>alert("lag")</script> & more'
CLUSTERS = (
    ClusterConfig("c1", tier="2", owner="payments"),
    ClusterConfig("c2", tier="10", owner="<b>analytics</b>"),
    ClusterConfig("c3"),
    ClusterConfig("c4", tier="gold", owner="platform"),
)


def build(root: Path) -> Lake:
    lake = lakes.build(root)
    kraft = dataclasses.replace(scenario.snapshot("s4"), cluster="c2", source="kraft", metadata_version=21)
    lake.publish(snapshot_batch(kraft))
    lake.publish(group_batch(dataclasses.replace(scenario.collection("g2"), cluster="c2")))
    scenario.publish_findings(lake, "g4", "group_snapshots", lakes.group_findings(), cluster="c3")
    (analysis,) = Path(lake.base, "analysis_runs", "cluster=c3").rglob("g4.analysis.parquet")
    analysis.write_bytes(b"not parquet")
    migration = MigrationZnode(3000, 5, 120, 2, modified_ms=int(NOW.timestamp() * 1000) - 10_800_000)
    lake.publish(snapshot_batch(dataclasses.replace(scenario.snapshot("s1"), cluster="c4", migration=migration)))
    return lake


def incidents(root: Path, out: Path) -> None:
    """c1: broker 2 down (critical), group billing behind (warning) under a silence in force at `NOW`."""
    add_silence(root, new_silence("c1", starts_at=NOW - timedelta(hours=1), ends_at=NOW + timedelta(hours=1),
                                  reason="consumer redeploy", created_by="ana", groups=["billing"]), NOW)  # fmt: skip
    alerts = [broker_down("c1"), lagging_group("c1", title=MARKUP, details={"group_id": "billing"})]
    notifiers = [LogNotifier("log", out)]
    sent = dispatch("c1", alerts, NOW - timedelta(minutes=1), lake_root=str(root), notifiers=notifiers,
                    reminder=timedelta(hours=1))  # fmt: skip
    assert (sent.opened, sent.silenced) == (("under_replicated",), ("group_lag:billing",))


def plans(lake: Lake) -> None:
    for plan in (AWAITING, APPROVED, RUNNING):
        save_plan(lake, plan, created_by="ana (manual__x)")
    AuditLog(lake, AWAITING, "admin_api", "ana").record("approve", "requested")
    approved = AuditLog(lake, APPROVED, "admin_api", "ana")
    approved.record("approve", "requested")
    approved.record("approve", "approved")
    write_progress(lake, Progress(APPROVED.plan_id, "c1", "admin_api", [], [], status="done"))
    write_progress(lake, Progress(RUNNING.plan_id, "c1", "admin_api", [], [], status="running"))


def settings(root: Path, max_age: timedelta = timedelta(minutes=30)) -> Settings:
    return dataclasses.replace(lakes.settings(root, max_age=max_age), clusters=CLUSTERS)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fleet")
    lake = build(folder / "lake")
    incidents(folder / "lake", folder / "oncall.jsonl")
    plans(lake)
    return folder / "lake"


@pytest.fixture(scope="module")
def client(root: Path) -> TestClient:
    return TestClient(build_app(settings(root), clock=lambda: NOW))


def rows(html: str) -> dict[str, list[str]]:
    """The table's rows by cluster (the first cell), in the page's order: each cell's HTML."""
    out = {}
    for row in re.findall(r"<tr>(<td>.*?)</tr>", html):
        cells = re.findall(r"<td>(.*?)</td>", row)
        out[cells[0]] = cells
    return out


def cell(html: str, cluster: str, column: int) -> str:
    return rows(html)[cluster][column]


CLUSTER, TIER, OWNER, KIND, HEALTH, SNAPSHOT, ANALYSIS, INCIDENTS, SILENCES, PLANS, LAG = range(11)


def test_every_cluster_is_a_row_with_its_settings_kind_and_links(client: TestClient) -> None:
    page = client.get("/ui")
    assert page.status_code == 200
    table = rows(page.text)
    assert list(table) == ["c1", "c2", "c3", "c4"]  # the settings' order
    assert table["c1"][:KIND + 1] == ["c1", "2", "payments", "ZooKeeper"]  # fmt: skip
    assert table["c2"][:KIND + 1] == ["c2", "10", "&lt;b&gt;analytics&lt;/b&gt;", "KRaft, Kafka 3.9"]  # fmt: skip
    assert table["c4"][KIND] == "migrating to KRaft (dual_write)"
    for name in table:
        assert f'<a href="/ui/reports/{name}">latest report</a>' in table[name][HEALTH]
        assert f'<a href="/ui/plans/{name}">' in table[name][PLANS]
    assert '<a href="/ui/plans/c1">3 plan(s)</a>' in table["c1"][PLANS]


def test_health_is_the_worst_open_incident_else_healthy_and_counts_what_is_silenced(client: TestClient) -> None:
    page = client.get("/ui").text
    assert "<span class='critical'>40 partitions under-replicated</span>" in cell(page, "c1", HEALTH)
    assert (cell(page, "c1", INCIDENTS), cell(page, "c1", SILENCES)) == ("2 open, 1 silenced", "1")
    assert "<span class='healthy'>healthy</span>" in cell(page, "c2", HEALTH)
    assert (cell(page, "c2", INCIDENTS), cell(page, "c2", SILENCES)) == ("none", "0")
    # nothing open, but nothing looked lately either: not "healthy"
    assert "<span class='unknown'>no open incident, but the latest snapshot is stale</span>" in cell(page, "c4", HEALTH)


def test_what_comes_from_the_lake_or_the_settings_is_escaped(tmp_path: Path) -> None:
    """Only the silenced warning open, its title full of markup: it is the health, escaped."""
    root = tmp_path / "lake"
    lakes.build(root)
    add_silence(root, new_silence("c1", starts_at=NOW, ends_at=NOW + timedelta(hours=1), reason="x", created_by="ana",
                                  groups=["billing"]), NOW)  # fmt: skip
    alert = lagging_group("c1", title=MARKUP, details={"group_id": "billing"})
    dispatch("c1", [alert], NOW, lake_root=str(root), notifiers=[LogNotifier("log", tmp_path / "oncall.jsonl")],
             reminder=timedelta(hours=1))  # fmt: skip
    marked = dataclasses.replace(settings(root), clusters=(ClusterConfig("c1", owner="<b>ops</b>"),))
    page = TestClient(build_app(marked, clock=lambda: NOW)).get("/ui").text
    assert "<script" not in page and "<b>" not in page
    title = "&lt;script&gt;alert(&quot;lag&quot;)&lt;/script&gt; &amp; more (silenced)"
    assert f"<span class='warning'>{title}</span>" in cell(page, "c1", HEALTH)
    assert cell(page, "c1", OWNER) == "&lt;b&gt;ops&lt;/b&gt;"


def test_a_stale_snapshot_stands_out_by_the_metrics_rule(client: TestClient, root: Path) -> None:
    page = client.get("/ui").text
    assert cell(page, "c1", SNAPSHOT) == "<small>metadata: 2 min ago</small><small>groups: 1 min ago</small>"
    assert cell(page, "c4", SNAPSHOT) == (
        "<small class='stale'>metadata: 3 h 00 min ago (stale)</small><small>groups: none</small>"
    )
    assert cell(page, "c2", SNAPSHOT) == (
        "<small>metadata: 2 min ago</small><small class='stale'>groups: 2 h 00 min ago (stale)</small>"
    )
    assert cell(page, "c1", ANALYSIS) == "<small>metadata: 2 min ago</small><small>groups: 1 min ago</small>"
    # `[web] metrics_max_age_minutes` decides: four hours and nothing is stale
    patient = TestClient(build_app(settings(root, max_age=timedelta(hours=4)), clock=lambda: NOW)).get("/ui").text
    assert "stale" not in cell(patient, "c4", SNAPSHOT) and "Data older than 4 h 00 min is stale" in patient


def test_the_worst_lagging_groups_come_from_a_fresh_group_analysis(client: TestClient) -> None:
    page = client.get("/ui").text
    assert cell(page, "c1", LAG) == "<small>stable: ERR, 2 h 00 min behind</small>"  # analytics is caught up
    assert cell(page, "c2", LAG) == "<small class='muted'>not analysed yet</small>"


def test_plans_awaiting_approval_or_executing_are_listed(client: TestClient) -> None:
    plans_cell = cell(client.get("/ui").text, "c1", PLANS)
    awaiting = re.search(r"<small>awaiting approval: (.*?)</small>", plans_cell)
    assert awaiting and re.fullmatch(
        rf'<a href="/ui/plans/c1/{AWAITING.plan_id}">{AWAITING.plan_id}</a> \(requested .* ago\)', awaiting[1]
    ), plans_cell
    running = f'<a href="/ui/plans/c1/{RUNNING.plan_id}">{RUNNING.plan_id}</a> (executing)'
    assert f"<small>in flight: {running}</small>" in plans_cell
    assert APPROVED.plan_id not in plans_cell  # approved, then done


def test_an_unreadable_cluster_shows_why_in_its_row(client: TestClient) -> None:
    page = client.get("/ui")
    assert page.status_code == 200
    row = rows(page.text)["c3"]
    assert row[HEALTH].startswith("<span class='unreadable'>cannot read cluster &#x27;c3&#x27; from the lake")
    assert "g4.analysis.parquet" in row[HEALTH]
    assert row[KIND] == row[SNAPSHOT] == row[LAG] == ""
    assert '<a href="/ui/plans/c3">0 plan(s)</a>' in row[PLANS]


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        ("tier", ["c1", "c2", "c4", "c3"]),  # "2" before "10": tiers that are numbers sort as numbers
        ("-tier", ["c4", "c2", "c1", "c3"]),  # no tier: last either way
        ("health", ["c3", "c1", "c4", "c2"]),  # unreadable, critical, unknown, healthy
        ("-health", ["c2", "c4", "c1", "c3"]),
        ("owner", ["c2", "c1", "c4", "c3"]),
        ("snapshot", ["c4", "c2", "c1", "c3"]),  # by its oldest part, the oldest first; the unreadable one: last
        ("-snapshot", ["c1", "c2", "c4", "c3"]),
        ("plans", ["c1", "c2", "c3", "c4"]),  # one awaiting approval; then none (the settings' order)
        ("-incidents", ["c2", "c4", "c1", "c3"]),
    ],
)
def test_the_rows_sort_by_a_column(client: TestClient, sort: str, order: list[str]) -> None:
    assert list(rows(client.get(f"/ui?sort={sort}").text)) == order


def test_a_heading_sorts_by_its_column_then_reverses(client: TestClient) -> None:
    page = client.get("/ui?sort=tier").text
    assert '<th aria-sort="ascending"><a href="/ui?sort=-tier">tier</a> ▲</th>' in page
    assert '<th aria-sort="none"><a href="/ui?sort=health">health</a></th>' in page
    assert '<th aria-sort="descending"><a href="/ui?sort=tier">tier</a> ▼</th>' in client.get("/ui?sort=-tier").text


def test_an_unknown_sort_column_is_refused_naming_the_columns(client: TestClient) -> None:
    page = client.get("/ui?sort=colour")
    assert page.status_code == 400
    assert "Cannot sort by &#x27;colour&#x27;: sort by one of cluster, tier, owner, kind, health" in page.text
