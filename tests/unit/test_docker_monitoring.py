"""docker/'s monitoring files: Prometheus' config and rules checked and unit-tested by Debian's
`promtool`, Alertmanager's config by `amtool` (`make prometheus` installs both), every metric name
the rules and the dashboard query is one `/kafka-ops/metrics` really exposes, and the dashboard's
panels, datasource and variables."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from kafka_ops.web.app import build_app
from tests.unit.web import lakes

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
PROMETHEUS = DOCKER / "prometheus"
RULES = PROMETHEUS / "rules" / "kafka-ops.yml"
DASHBOARD = DOCKER / "grafana" / "dashboards" / "kafka-ops.json"
DATASOURCES = DOCKER / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
# series Prometheus makes itself for every scrape target
SYNTHETIC = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
    "sum", "min", "max", "avg", "count", "count_values", "stddev", "stdvar", "topk", "bottomk", "quantile",
    "label_values", "inf", "nan",
}  # fmt: skip


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"no {name} on PATH: `make prometheus` installs Debian's prometheus and prometheus-alertmanager")
    return path


def run(*command: str, cwd: Path | None = None) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: identifiers that are not functions (followed by
    `(`), label names (inside `{...}` or after by/without/on), strings, durations or keywords."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings
    expr = re.sub(r"\{[^}]*\}", "{}", expr)  # label matchers
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)  # label lists
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges
    names = set()
    for match in re.finditer(r"(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?", expr):
        word, call = match.group(1), match.group(2)
        if not call and word.lower() not in PROMQL_WORDS and not re.fullmatch(r"\d+[smhdwy]", word):
            names.add(word)
    return names


def test_metric_names_parser() -> None:
    expr = 'max by (cluster, group) (rate(kafka_x_total{cluster=~"$cluster", a="b"}[5m])) > on (cluster) kafka_y'
    assert metric_names(expr) == {"kafka_x_total", "kafka_y"}
    assert metric_names("label_values(kafka_ops_cluster_up, cluster)") == {"kafka_ops_cluster_up", "cluster"}
    assert metric_names("count by (cluster) (kafka_ops_group_status_code{} > 1) == 1") == {
        "kafka_ops_group_status_code"
    }


def rule_exprs() -> list[tuple[str, str]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [(r["alert"], r["expr"]) for g in groups for r in g["rules"]]


def dashboard() -> dict[str, Any]:
    data = json.loads(DASHBOARD.read_text())
    assert isinstance(data, dict)
    return data


def panels(dash: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for p in dash["panels"]:
        out.append(p)
        out.extend(p.get("panels", []))  # collapsed rows hold theirs
    return out


def dashboard_exprs(dash: dict[str, Any]) -> list[tuple[str, str]]:
    exprs = [(p["title"], t["expr"]) for p in panels(dash) for t in p.get("targets", [])]
    for var in dash["templating"]["list"]:
        query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
        # label_values(metric, label): the metric only
        exprs.append((f"${var['name']}", re.sub(r",\s*\w+\)\s*$", ")", query)))
    return exprs


# -- promtool and amtool --------------------------------------------------------------------------


def test_prometheus_config_checks_with_its_mounts(tmp_path: Path) -> None:
    """`promtool check config` opens the rule files and the token file: lay them out as the compose
    file mounts them, under a temporary root."""
    compose = yaml.safe_load((DOCKER / "docker-compose.yml").read_text())["services"]
    root = tmp_path / "root"
    for entry in compose["prometheus"]["volumes"]:
        source, target, *_ = entry.split(":")
        dest = root / target.lstrip("/")
        if source.startswith("./"):
            src = DOCKER / source
            dest.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if src.is_dir() else shutil.copy)(src, dest)
        elif source == "prometheus-token":
            token_file = Path(compose["prometheus-token"]["environment"]["AIRFLOW_JWT_FILE"])
            dest.mkdir(parents=True)
            (dest / token_file.name).write_text("not-a-real-token")
    config = root / "etc" / "prometheus" / "prometheus.yml"
    config.write_text(config.read_text().replace("/etc/prometheus/", f"{root}/etc/prometheus/"))
    out = run(tool("promtool"), "check", "config", str(config))
    assert "SUCCESS: 1 rule files found" in out, out


def test_rules_check() -> None:
    out = run(tool("promtool"), "check", "rules", str(RULES))
    assert f"SUCCESS: {len(rule_exprs())} rules found" in out


def test_rules_unit_tests_cover_every_rule() -> None:
    tests = sorted((PROMETHEUS / "tests").glob("*.yml"))
    assert tests
    out = run(tool("promtool"), "test", "rules", *[str(t.relative_to(PROMETHEUS)) for t in tests], cwd=PROMETHEUS)
    assert "SUCCESS" in out and "FAILED" not in out
    tested = {
        (case["alertname"], alert["exp_labels"].get("severity"))
        for t in tests
        for group in yaml.safe_load(t.read_text())["tests"]
        for case in group["alert_rule_test"]
        for alert in case["exp_alerts"]
    }
    groups = yaml.safe_load(RULES.read_text())["groups"]
    for rule in (r for g in groups for r in g["rules"]):
        severity = rule["labels"]["severity"]
        if "{{" in severity:  # taken from the series: any tested severity will do
            assert any(name == rule["alert"] for name, _ in tested), rule["alert"]
        else:
            assert (rule["alert"], severity) in tested, f"no unit test fires {rule['alert']} ({severity})"


def test_every_rule_says_what_where_and_what_to_do() -> None:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    for rule in (r for g in groups for r in g["rules"]):
        name = rule["alert"]
        assert rule.get("for"), f"{name} has no for:"
        assert rule["labels"]["severity"] in ("critical", "warning", "info", "{{ $labels.severity }}"), name
        annotations = rule["annotations"]
        assert {"summary", "description", "runbook"} <= set(annotations), name
        assert "{{ $labels." in annotations["summary"] or name.startswith("KafkaOpsLake"), f"{name}: where?"
        runbook = annotations["runbook"].removeprefix("docs/operations.md, ")
        assert runbook in (REPO / "docs" / "operations.md").read_text(), f"{name}: no section {runbook!r}"


def test_alertmanager_config_checks() -> None:
    config = DOCKER / "alertmanager" / "alertmanager.yml"
    run(tool("amtool"), "check-config", str(config))
    data = yaml.safe_load(config.read_text())
    routed = {m for r in data["route"]["routes"] for m in r["matchers"]}
    assert routed == {'severity="critical"', 'severity="warning"', 'severity="info"'}
    for receiver in data["receivers"]:  # the stack's webhook receiver only: no secret in the repository
        assert set(receiver) == {"name", "webhook_configs"}, receiver
        (hook,) = receiver["webhook_configs"]
        assert hook == {"url": f"http://webhook:8090/alertmanager/{receiver['name']}", "send_resolved": True}


# -- names: what the rules and the dashboard query is what the plugin exposes -------------------------


@pytest.fixture(scope="module")
def exposed(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Every family name of a real `/kafka-ops/metrics` (the default profile) on a lake written by
    the real writers; families the lake has no sample for still carry their HELP and TYPE."""
    root = tmp_path_factory.mktemp("lake")
    lakes.build(root)
    client = TestClient(build_app(lakes.settings(root), clock=lambda: lakes.NOW))
    response = client.get("/metrics")
    assert response.status_code == 200, response.text
    names = {family.name for family in text_string_to_metric_families(response.text)}
    assert "kafka_consumergroup_group_lag" in names and "kafka_ops_up" in names
    return names


def test_the_rules_query_only_exposed_metrics(exposed: set[str]) -> None:
    for alert, expr in rule_exprs():
        unknown = metric_names(expr) - exposed - SYNTHETIC
        assert not unknown, f"rule {alert} queries {unknown}, which /kafka-ops/metrics does not expose"


def test_the_dashboard_queries_only_exposed_metrics(exposed: set[str]) -> None:
    dash = dashboard()
    used = set()
    for where, expr in dashboard_exprs(dash):
        names = metric_names(expr)
        unknown = names - exposed
        assert not unknown, f"dashboard {where!r} queries {unknown}, which /kafka-ops/metrics does not expose"
        used |= names
    lag = {n for n in used if n.startswith("kafka_consumergroup_")}
    assert lag, "the lag panels use Kafka Lag Exporter's names (the default profile)"
    assert used - lag <= {n for n in exposed if n.startswith("kafka_ops_")}, "everything else is kafka_ops_*"


# -- the dashboard ----------------------------------------------------------------------------------


def test_dashboard_panels_and_datasource() -> None:
    dash = dashboard()
    provisioned = yaml.safe_load(DATASOURCES.read_text())["datasources"]
    uids = {d["uid"] for d in provisioned if d["type"] == "prometheus"}
    (prometheus,) = [d for d in provisioned if d["type"] == "prometheus"]
    assert prometheus["url"] == "http://prometheus:9090"
    all_panels = panels(dash)
    ids = [p["id"] for p in all_panels]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    queried = [p for p in all_panels if p["type"] != "row"]
    assert len(queried) >= 15
    for p in queried:
        assert p["datasource"]["uid"] in uids, f"panel {p['title']!r}: datasource {p['datasource']}"
        assert p["targets"], f"panel {p['title']!r} has no query"
        for t in p["targets"]:
            assert t["datasource"]["uid"] in uids and t["expr"].strip(), p["title"]
        grid = p["gridPos"]
        assert grid["x"] + grid["w"] <= 24, p["title"]


def test_dashboard_variables_are_defined_and_used() -> None:
    dash = dashboard()
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert set(variables) == {"cluster", "group"}
    for v in variables.values():
        assert v["datasource"]["uid"] == "kafka-ops-prometheus"
    exprs = [t["expr"] for p in panels(dash) for t in p.get("targets", [])]
    used = {m for e in exprs for m in re.findall(r"\$(\w+)", e)}
    assert used == set(variables), f"variables used in the panels: {used}"
    assert any('group=~"$group"' in e for e in exprs) and any('cluster_name=~"$cluster"' in e for e in exprs)
