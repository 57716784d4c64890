"""Shared by the benchmarks (not one itself: `make bench` skips `_*.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_of(runs: int, fn: Callable[[], T]) -> tuple[float, T]:
    """The fastest of `runs` calls of `fn` (seconds) and the last result: the least disturbed run."""
    if runs < 1:
        raise SystemExit(f"--runs must be at least 1, got {runs}")
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()  # may be None: a timed step need not return anything
        times.append(time.perf_counter() - start)
    return min(times), result
