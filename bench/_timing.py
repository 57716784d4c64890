"""Shared by the benchmarks (not one itself: `make bench` skips `_*.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_of(runs: int, fn: Callable[[], T]) -> tuple[float, T]:
    """The fastest of `runs` calls of `fn` (seconds) and the last result: the least disturbed run."""
    times: list[float] = []
    result: T | None = None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    assert result is not None, "best_of needs at least one run"
    return min(times), result
