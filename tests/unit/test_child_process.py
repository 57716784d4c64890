"""`die_with_parent` runs in a forked child between the fork and the exec, where a process with threads
(a test run's Kafka clients, Spark's gateway) may have left a C lock held: it must load no library there
(a `dlopen` in that child once waited for ever, and the test that started a JVM hung until its timeout)."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_ops.child_process import die_with_parent


def test_the_child_loads_no_library_between_fork_and_exec(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dlopen(*args: object, **kwargs: object) -> None:
        raise AssertionError("die_with_parent loaded a library in the forked child")

    monkeypatch.setattr(ctypes, "CDLL", no_dlopen)  # the child inherits this process's modules as they are
    done = subprocess.run([sys.executable, "-c", "pass"], preexec_fn=die_with_parent, check=False)
    assert done.returncode == 0


def test_the_child_dies_with_its_parent() -> None:
    """A parent that starts a sleeping child with `die_with_parent`, then exits: the child is gone too."""
    parent = (
        "import subprocess, sys\n"
        "from kafka_ops.child_process import die_with_parent\n"
        "child = subprocess.Popen(['sleep', '60'], preexec_fn=die_with_parent)\n"
        "print(child.pid, flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, check=True, timeout=60)
    pid = int(done.stdout.strip())
    deadline = time.monotonic() + 10
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(pid), f"child {pid} outlived its parent"


def running(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except FileNotFoundError:
        return False
