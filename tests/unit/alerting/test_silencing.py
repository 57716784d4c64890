"""Silences in the dispatch: a silenced problem is recorded, not sent; it pages if it outlives the silence;
its resolve still reaches the sinks that heard it open before; anything the silence does not cover pages."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from kafka_ops import cli
from kafka_ops.alerting.dispatch import dispatch
from kafka_ops.alerting.log_sink import LogNotifier
from kafka_ops.alerting.silence_store import add_silence, end_silence, silences_of
from kafka_ops.alerting.state_store import IncidentStore
from kafka_ops.errors import ConfigError
from kafka_ops.silences import new_silence
from tests.unit.alerting.alerts import HOUR, T0, broker_down, lagging_group

MINUTE = timedelta(minutes=1)


def events(path: Path) -> list[tuple[str, str]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [(e["event"], e["key"]) for e in lines]


def test_a_silenced_problem_is_recorded_not_sent_and_pages_if_it_outlives_the_silence(tmp_path: Path) -> None:
    lake, out = str(tmp_path / "lake"), tmp_path / "oncall.jsonl"

    def run(at, alerts):  # type: ignore[no-untyped-def]
        return dispatch("payments", alerts, at, lake_root=lake, notifiers=[LogNotifier("log", out)], reminder=HOUR)

    add_silence(lake, new_silence("payments", starts_at=T0, ends_at=T0 + 30 * MINUTE, reason="rolling restart",
                                  created_by="ana", brokers=[2]), T0)  # fmt: skip
    down = broker_down(key="no_broker_down", brokers=(2,))
    other = broker_down(key="no_broker_down_3", brokers=(2, 3))  # about a broker the silence does not name
    sent = run(T0 + MINUTE, [down, other])
    assert (sent.opened, sent.silenced) == (("no_broker_down_3",), ("no_broker_down",))
    state, _ = IncidentStore(lake).load("payments")
    assert "silenced until" in (state.incidents["no_broker_down"].silenced or "")
    assert "rolling restart" in (state.incidents["no_broker_down"].silenced or "")
    assert state.incidents["no_broker_down_3"].silenced is None
    assert run(T0 + 20 * MINUTE, [down, other]).silenced == ("no_broker_down",)
    assert events(out) == [("open", "no_broker_down_3")]
    # the silence ends and the broker is still down: it pages now, as a new problem would
    later = run(T0 + 31 * MINUTE, [down, other])
    assert later.opened == ("no_broker_down",) and later.silenced == ()
    assert events(out)[-1] == ("open", "no_broker_down")


def test_a_problem_that_clears_while_silenced_resolves_quietly_unless_a_sink_heard_it_open(tmp_path: Path) -> None:
    lake, out = str(tmp_path / "lake"), tmp_path / "oncall.jsonl"

    def run(at, alerts):  # type: ignore[no-untyped-def]
        return dispatch("payments", alerts, at, lake_root=lake, notifiers=[LogNotifier("log", out)], reminder=HOUR)

    heard = lagging_group(details={"group_id": "billing"})
    run(T0, [heard])  # paged before the window
    add_silence(lake, new_silence("payments", starts_at=T0, ends_at=T0 + 2 * HOUR, reason="maintenance",
                                  created_by="ana"), T0)  # fmt: skip
    quiet = lagging_group(key="group_lag:search", details={"group_id": "search"})
    assert run(T0 + 70 * MINUTE, [heard, quiet]).reminded == ()  # no reminder while silenced
    cleared = run(T0 + 80 * MINUTE, [])
    assert cleared.resolved == ("group_lag:billing",)  # its sink heard it open: it hears it resolved
    assert events(out) == [("open", "group_lag:billing"), ("resolve", "group_lag:billing")]
    assert IncidentStore(lake).load("payments")[0].incidents == {}


def test_an_escalation_inside_a_silence_waits_for_its_end(tmp_path: Path) -> None:
    lake, out = str(tmp_path / "lake"), tmp_path / "oncall.jsonl"
    add_silence(lake, new_silence("payments", starts_at=T0, ends_at=T0 + HOUR, reason="load test", created_by="ana",
                                  groups=["billing"]), T0)  # fmt: skip
    warning = lagging_group(details={"group_id": "billing"})
    for at, alert in (
        (T0, warning),
        (T0 + MINUTE, lagging_group(severity="critical", details={"group_id": "billing"})),
    ):
        dispatch("payments", [alert], at, lake_root=lake, notifiers=[LogNotifier("log", out)], reminder=HOUR)
    assert events(out) == []


def test_silences_are_set_listed_and_ended_under_the_alert_states_lock(tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    s = add_silence(lake, new_silence("payments", starts_at=T0, ends_at=T0 + HOUR, reason="r", created_by="a"), T0)
    dispatch("payments", [broker_down()], T0, lake_root=lake, notifiers=[LogNotifier("log", tmp_path / "o")],
             reminder=HOUR)  # fmt: skip
    assert silences_of(lake, "payments") == (s,)  # a dispatch keeps them
    ended = end_silence(lake, "payments", s.id, T0 + MINUTE, "bo")
    assert silences_of(lake, "payments") == (ended,) and ended.ended_by == "bo"
    with pytest.raises(ConfigError, match=f"cluster 'payments' has no silence 's-nope' \\(its silences: {s.id}\\)"):
        end_silence(lake, "payments", "s-nope", T0, "bo")


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    lake = tmp_path / "lake"
    path = tmp_path / "kafka-ops.toml"
    path.write_text(f'lake_root = "{lake}"\n[[clusters]]\nname = "payments"\n')
    monkeypatch.setenv("KAFKA_OPS_CONFIG", str(path))
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    return lake


def test_the_command_line_sets_lists_and_ends_silences(settings: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["silence", "add", "--cluster", "payments", "--broker", "2", "--topic", "orders", "--for", "2h",
                     "--reason", "disk swap on broker 2, ask ops", "--by", "ana"]) == 0  # fmt: skip
    assert "silenced until" in capsys.readouterr().out
    assert cli.main(["silence", "list", "--cluster", "payments", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert (listed["brokers"], listed["topics"], listed["created_by"]) == ([2], ["orders"], "ana")
    assert cli.main(["silence", "list", "--cluster", "payments"]) == 0
    assert capsys.readouterr().out.startswith("active ")
    assert cli.main(["silence", "end", "--cluster", "payments", "--id", listed["id"], "--by", "bo"]) == 0
    capsys.readouterr()
    assert cli.main(["silence", "list", "--cluster", "payments"]) == 0
    assert capsys.readouterr().out.startswith("ended ")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--for", "2h"], "give a reason"),
        (["--reason", "x"], "needs an end"),
        (["--reason", "x", "--for", "2h", "--until", "2030-01-01T00:00Z"], "--for or --until, not both"),
        (["--reason", "x", "--until", "2030-01-01T00:00"], "--until: '2030-01-01T00:00' has no time zone"),
        (["--reason", "x", "--for", "2 weeks"], "--for: '2 weeks' is not a duration"),
        (["--reason", "x", "--for", "40d"], "longer than the longest silence"),
    ],
)
def test_the_command_line_refuses_a_silence_without_an_end_or_a_reason(
    settings: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    assert cli.main(["silence", "add", "--cluster", "payments", *args]) == 2
    assert says in capsys.readouterr().err
    assert cli.main(["silence", "add", "--cluster", "nope", "--for", "1h", "--reason", "x"]) == 2
    assert "nope" in capsys.readouterr().err
