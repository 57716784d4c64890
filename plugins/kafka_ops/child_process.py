"""Child processes (JVMs, Airflow servers in tests) that must not outlive the Python process that started them."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess

_PR_SET_PDEATHSIG = 1
_SIGKILL = int(signal.SIGKILL)
_prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
"""Looked up here, in the parent: a forked child of a process with threads must not `dlopen` (another
thread may have held the loader's lock at the fork, and the child would wait on it for ever, with its
parent blocked in `Popen` until a test's timeout)."""


def die_with_parent() -> None:
    """Child-side (`preexec_fn`): ask the kernel (Linux `prctl`) to SIGKILL this process if the one
    that started it dies, so a crashed test run or demo leaves nothing running. Between the fork and
    the exec it only calls the C function bound at import: no library loaded, no lock taken."""
    _prctl(_PR_SET_PDEATHSIG, _SIGKILL)


def kill_when_gone(child_pid: int, parent_pid: int | None = None) -> subprocess.Popen[bytes]:
    """Start a watcher that SIGKILLs `child_pid` once `parent_pid` (default: this process) is gone.

    For a child whose starter sets its own `preexec_fn` (PySpark's JVM gateway does), so
    `die_with_parent` cannot be asked for; stop the returned watcher once the child has ended
    normally, so it never signals a reused pid."""
    parent = os.getpid() if parent_pid is None else parent_pid
    script = 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -9 "$2" 2>/dev/null; exit 0'
    return subprocess.Popen(
        ["/bin/sh", "-c", script, "kill_when_gone", str(parent), str(child_pid)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not in the test run's process group: it must outlive a SIGKILL of it
    )
