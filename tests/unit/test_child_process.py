"""`dying_with_parent`: a child that dies with the process that started it, and whose start runs no Python
code between the fork and the exec, where a process with threads (a test run's Kafka clients, Spark's
gateway) may have left a lock held that the child would wait on for ever."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_ops.child_process import dying_with_parent

HELD_LOCK_AT_FORK = """
import os, subprocess, sys, threading
from kafka_ops.child_process import dying_with_parent

lock, taken = threading.Lock(), threading.Event()
def holder():
    with lock:
        taken.set()
        threading.Event().wait(60)  # another thread's lock, held across the fork
threading.Thread(target=holder, daemon=True).start()
taken.wait()
os.register_at_fork(after_in_child=lock.acquire)  # what an after-fork hook holding such a lock does
subprocess.run(dying_with_parent(["true"]), check=True, timeout=20)
print("started", flush=True)
"""


def test_a_lock_held_by_another_thread_at_the_fork_does_not_hang_the_start() -> None:
    """The interpreter's after-fork hooks (here one that takes a lock another thread holds) never run in
    the child: it execs at once."""
    done = subprocess.run(
        [sys.executable, "-c", HELD_LOCK_AT_FORK], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "started", done.stderr[-2000:]


def test_the_child_dies_with_its_parent() -> None:
    """A parent that starts a sleeping child through `dying_with_parent`, then exits: the child is gone too."""
    parent = (
        "import subprocess\n"
        "from kafka_ops.child_process import dying_with_parent\n"
        "child = subprocess.Popen(dying_with_parent(['sleep', '60']))\n"
        "print(child.pid, flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, check=True, timeout=60)
    pid = int(done.stdout.strip())
    deadline = time.monotonic() + 10
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(pid), f"child {pid} outlived its parent"


def test_a_program_not_on_the_path_is_refused_as_popen_refuses_it() -> None:
    with pytest.raises(FileNotFoundError, match="no-such-program"):
        dying_with_parent(["no-such-program", "--version"])


def running(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except FileNotFoundError:
        return False
