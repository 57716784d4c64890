"""The incident state document: round trip, atomic replace (even across a crash), bad documents."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from kafka_ops.alerting.incidents import ClusterState, Incident, SinkState
from kafka_ops.alerting.state_store import IncidentStore
from kafka_ops.errors import AlertError, LakeError
from tests.unit.alerting.alerts import T0


def state(title: str = "40 partitions under-replicated") -> ClusterState:
    incident = Incident(
        key="group_err:billing",
        severity="critical",
        title=title,
        since=T0,
        opened_at=T0 + timedelta(minutes=1),
        cleared_at=None,
        sinks={
            "slack": SinkState(notified_at=T0 + timedelta(minutes=1), severity="critical"),
            "pagerduty": SinkState(failures=2, last_error="pagerduty notifier 'pd': HTTP 500"),
        },
    )
    return ClusterState("payments", {incident.key: incident}, {"no_broker_down": T0 - timedelta(minutes=3)})


def test_round_trip_and_location(tmp_path: Path) -> None:
    store = IncidentStore(tmp_path / "lake")
    assert store.load("payments") == (ClusterState("payments"), None)  # never saved: no incidents
    store.save(state())
    assert store.load("payments") == (state(), None)
    path = tmp_path / "lake" / "_alerting" / "payments.json"
    doc = json.loads(path.read_text())
    assert doc["format"] == 1 and doc["cluster"] == "payments" and len(doc["incidents"]) == 1
    assert not path.with_name("payments.json.tmp").exists()


def test_file_uri_lake_root(tmp_path: Path) -> None:
    store = IncidentStore(f"file://{tmp_path}/lake")
    store.save(state())
    assert (tmp_path / "lake" / "_alerting" / "payments.json").is_file()
    assert store.load("payments")[0] == state()


def test_a_crash_between_write_and_rename_leaves_the_old_state(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    IncidentStore(root).save(state("old"))
    # a real process dies right after writing the temporary file, before moving it into place
    script = textwrap.dedent(
        f"""
        import os
        from kafka_ops.alerting.state_store import IncidentStore
        from kafka_ops.alerting.incidents import ClusterState

        store = IncidentStore({str(root)!r})
        store._publish = lambda tmp, path: os._exit(9)
        store.save(ClusterState("payments"))
        """
    )
    crashed = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, timeout=60)
    assert crashed.returncode == 9, crashed.stderr.decode()
    assert (root / "_alerting" / "payments.json.tmp").exists()  # the new state, never published
    loaded, reset = IncidentStore(root).load("payments")
    assert reset is None and loaded.incidents["group_err:billing"].title == "old"
    IncidentStore(root).save(state("new"))  # the next save overwrites the stale temporary file
    assert IncidentStore(root).load("payments")[0].incidents["group_err:billing"].title == "new"
    assert not (root / "_alerting" / "payments.json.tmp").exists()


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[]",
        json.dumps({"format": 1, "cluster": "logs", "incidents": []}).encode(),
        json.dumps({"format": 1, "cluster": "payments", "incidents": [{"key": "x"}]}).encode(),
        json.dumps(
            {
                "format": 1,
                "cluster": "payments",
                "incidents": [
                    {
                        "key": "x",
                        "severity": "fatal",
                        "title": "t",
                        "since": T0.isoformat(),
                        "opened_at": T0.isoformat(),
                    }
                ],
            }
        ).encode(),
    ],
)
def test_unreadable_state_is_set_aside_and_reported(tmp_path: Path, content: bytes) -> None:
    store = IncidentStore(tmp_path)
    (tmp_path / "_alerting").mkdir()
    (tmp_path / "_alerting" / "payments.json").write_bytes(content)
    loaded, reset = store.load("payments")
    assert loaded == ClusterState("payments")
    assert reset is not None and "unreadable" in reset and "started afresh" in reset
    aside = list((tmp_path / "_alerting").glob("payments.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == content
    assert not (tmp_path / "_alerting" / "payments.json").exists()


def test_newer_format_is_refused_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "_alerting").mkdir()
    (tmp_path / "_alerting" / "payments.json").write_text('{"format": 2, "cluster": "payments", "incidents": []}')
    with pytest.raises(AlertError, match="format 2, newer than this code"):
        IncidentStore(tmp_path).load("payments")
    assert (tmp_path / "_alerting" / "payments.json").exists()


def test_a_second_alerting_run_waits_for_the_first(tmp_path: Path) -> None:
    """The cluster's alerting lock: held by one run (here another process), a second one waits, then
    fails naming the lock after its timeout; another cluster's lock is free."""
    store = IncidentStore(tmp_path / "lake")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from kafka_ops.alerting.state_store import IncidentStore
            with IncidentStore({str(tmp_path / "lake")!r}).exclusive("payments"):
                print("held", flush=True)
                time.sleep(30)
        """)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LakeError, match=r"alerting of cluster payments: the lock .*payments\.json\.lock"):
            with store.exclusive("payments", timeout_s=0.5):
                pass
        with store.exclusive("billing", timeout_s=0.5):
            pass
    finally:
        holder.kill()
        holder.wait()
    with store.exclusive("payments", timeout_s=5):  # released with its holder
        pass
