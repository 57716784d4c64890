"""Child processes (JVMs, Airflow servers in tests) that must not outlive the Python process that started them."""

from __future__ import annotations

import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Child-side (`preexec_fn`): ask the kernel (Linux `prctl`) to SIGKILL this process if the one
    that started it dies, so a crashed test run or demo leaves nothing running."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
