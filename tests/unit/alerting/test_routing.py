"""Pages to the team that owns the problem: a page about a group or about one owner's topics goes to
that owner's sinks and says whose it is; anything else, to the cluster's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_ops.alerting.dispatch import dispatch
from kafka_ops.alerting.log_sink import LogNotifier
from kafka_ops.alerting.notifier import Notifier
from kafka_ops.alerting.registry import notifiers_for_cluster
from kafka_ops.errors import ConfigError
from kafka_ops.owners import Owner
from kafka_ops.settings import ClusterConfig
from tests.unit.alerting.alerts import HOUR, T0, broker_down, lagging_group

PAYMENTS = Owner("payments", ("payments_log",), topics=("orders",), groups=("billing",))
SEARCH = Owner("search", ("search_log",), topics=("search-.*",))


def owned(owner: str, path: Path) -> Notifier:
    sink = LogNotifier(f"{owner}/{owner}_log", path)
    sink.owner = owner
    return sink


def events(path: Path) -> list[tuple[str, str, str | None]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [(e["event"], e["key"], e["owner"]) for e in lines]


def test_each_page_goes_to_its_owner_or_else_to_the_cluster(tmp_path: Path) -> None:
    notifiers = [LogNotifier("log", tmp_path / "oncall.jsonl"), owned("payments", tmp_path / "payments.jsonl")]
    alerts = [
        lagging_group(details={"group_id": "billing"}),  # the group's owner
        broker_down(key="under_min_isr", topics=("orders",)),  # one owner's topic
        broker_down(key="offline", topics=("orders", "audit")),  # a topic nobody owns: the cluster's
        broker_down(key="broker_down"),  # a broker: the cluster's
        broker_down(key="search_lag", topics=("search-idx",)),  # an owner without a sink here: the cluster's
    ]
    sent = dispatch("payments", alerts, T0, lake_root=str(tmp_path / "lake"), notifiers=notifiers,
                    reminder=HOUR, owners=(PAYMENTS, SEARCH))  # fmt: skip
    assert sorted(sent.opened) == sorted(a.key for a in alerts)
    assert sorted(events(tmp_path / "payments.jsonl")) == [
        ("open", "group_lag:billing", "payments"), ("open", "under_min_isr", "payments"),
    ]  # fmt: skip
    assert sorted(events(tmp_path / "oncall.jsonl")) == [
        ("open", "broker_down", None), ("open", "offline", None), ("open", "search_lag", None),
    ]  # fmt: skip
    text = next(json.loads(line) for line in (tmp_path / "payments.jsonl").read_text().splitlines())
    assert text["owner"] == "payments"

    # cleared: each resolve goes where its open went
    cleared = dispatch("payments", [], T0 + HOUR, lake_root=str(tmp_path / "lake"), notifiers=notifiers,
                       reminder=HOUR, owners=(PAYMENTS, SEARCH))  # fmt: skip
    assert len(cleared.resolved) == 5
    assert sorted(e for e in events(tmp_path / "payments.jsonl") if e[0] == "resolve") == [
        ("resolve", "group_lag:billing", "payments"), ("resolve", "under_min_isr", "payments"),
    ]  # fmt: skip
    assert len([e for e in events(tmp_path / "oncall.jsonl") if e[0] == "resolve"]) == 3


def test_the_message_says_whose_page_it_is(tmp_path: Path) -> None:
    from kafka_ops.alerting import render  # noqa: PLC0415
    from kafka_ops.alerting.incidents import Notification  # noqa: PLC0415

    mine = Notification("open", "payments/payments_log", broker_down(topics=("orders",), owner="payments"), T0, T0)
    theirs = Notification("open", "log", broker_down(), T0, T0)
    group = Notification("open", "x", lagging_group(details={"group_id": "billing"}, owner="payments"), T0, T0)
    assert "Owner:    payments (owns orders)" in render.plain_text(mine)
    assert "Owner:    payments's on-call (no owner of its topics or group)" in render.plain_text(theirs)
    assert render.owner_text(group) == "payments (owns group billing)"


def test_an_owners_sinks_are_its_connections_named_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PAYMENTS_LOG", json.dumps({"conn_type": "fs", "extra": {"path": "/tmp/p.jsonl"}}))
    cluster, owner = notifiers_for_cluster(ClusterConfig("c1"), str(tmp_path), (PAYMENTS,))
    assert (cluster.name, cluster.owner) == ("log", None)
    assert (owner.name, owner.owner) == ("payments/payments_log", "payments")
    with pytest.raises(ConfigError, match="owner 'search' alert_conn_ids: connection 'search_log'"):
        notifiers_for_cluster(ClusterConfig("c1"), str(tmp_path), (SEARCH,))
