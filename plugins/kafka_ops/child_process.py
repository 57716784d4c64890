"""Child processes (JVMs, Airflow servers in tests) that must not outlive the Python process that started them."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

SETPRIV = "setpriv"
"""util-linux's, on every Debian (an Essential package)."""


def dying_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv` started through util-linux's `setpriv --pdeathsig KILL`, which asks the kernel (`prctl
    PR_SET_PDEATHSIG`) to SIGKILL it when the thread that started it ends, then execs it: a crashed test
    run or demo leaves nothing running.

    Not a `preexec_fn`: Python code between the fork and the exec runs the interpreter's after-fork
    hooks in the child of a process with threads (a test run's Kafka clients, Spark's gateway), where a
    lock another thread held at the fork is held for ever; such a child once hung before its exec, its
    parent blocked in `Popen` until the test's timeout, and the child, its death signal never set,
    outlived the run. Without one, `Popen` runs no Python in the child (and can use vfork).

    FileNotFoundError, as `Popen` raises it, when `argv[0]` is not found."""
    program = shutil.which(argv[0])
    if program is None:
        raise FileNotFoundError(2, "No such file or directory", argv[0])
    return [SETPRIV, "--pdeathsig", "KILL", "--", program, *argv[1:]]


def kill_when_gone(child_pid: int, parent_pid: int | None = None) -> subprocess.Popen[bytes]:
    """Start a watcher that SIGKILLs `child_pid` once `parent_pid` (default: this process) is gone.

    For a child whose starter sets its own `preexec_fn` (PySpark's JVM gateway does), so
    `dying_with_parent` cannot be asked for; stop the returned watcher once the child has ended
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
