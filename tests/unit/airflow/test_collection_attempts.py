"""A collection attempt is recorded for "cannot see cluster" only while the task has its supervisor: a
task outliving its killed Celery worker fails on the broken channel to it, which is not the cluster's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kafka_ops.airflow import collection_attempts
from kafka_ops.airflow.collection_attempts import recorded
from kafka_ops.alerting.pipeline_status import PipelineStatus


def test_a_working_and_a_failing_attempt_are_recorded(tmp_path: Path) -> None:
    with recorded(str(tmp_path), "c1", "ZooKeeper", "zk"):
        pass
    assert PipelineStatus(str(tmp_path)).read("c1", "ZooKeeper").ok  # type: ignore[union-attr]
    with pytest.raises(ConnectionRefusedError), recorded(str(tmp_path), "c1", "ZooKeeper", "zk"):
        raise ConnectionRefusedError("127.0.0.1:2181")
    status = PipelineStatus(str(tmp_path)).read("c1", "ZooKeeper")
    assert status is not None
    assert not status.ok
    assert status.error == "ConnectionRefusedError: 127.0.0.1:2181"


def test_a_failure_after_the_supervisor_exited_is_not_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with recorded(str(tmp_path), "c1", "Kafka", "kafka"):
        pass
    parents = iter([4242, 1])  # the supervisor at the start; init once it died
    monkeypatch.setattr(collection_attempts.os, "getppid", lambda: next(parents))
    with pytest.raises(BrokenPipeError), recorded(str(tmp_path), "c1", "Kafka", "kafka"):
        raise BrokenPipeError(32, "Broken pipe")
    assert PipelineStatus(str(tmp_path)).read("c1", "Kafka").ok  # type: ignore[union-attr]


def test_a_real_orphan_records_nothing(tmp_path: Path) -> None:
    """A process whose parent is SIGKILLed while it collects: no failure recorded."""
    done = tmp_path / "done"
    script = textwrap.dedent(f"""
        import os, signal, sys, time
        from kafka_ops.airflow.collection_attempts import recorded
        if os.fork():
            os._exit(0)  # the test's child: lets the test wait for the supervisor only
        supervisor = os.getpid()
        if os.fork():  # the supervisor: waits to be killed
            time.sleep(60)
            os._exit(0)
        try:
            with recorded({str(tmp_path)!r}, "c1", "ZooKeeper", "zk"):
                os.kill(supervisor, signal.SIGKILL)
                while os.getppid() == supervisor:
                    time.sleep(0.01)
                raise BrokenPipeError(32, "Broken pipe")
        except BrokenPipeError:
            open({str(done)!r}, "w").close()
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=30, env={**os.environ})
    deadline = time.monotonic() + 30
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done.exists()
    assert PipelineStatus(str(tmp_path)).read("c1", "ZooKeeper") is None
