"""`Refresher`: one lazily started daemon thread per owner, a failed cycle kept as `failure`, and an end
on `stop()` or after `idle_after` seconds without a request."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.web.refresher import Refresher


class Cycles:
    """A cycle that counts its runs and raises while `error` is set."""

    def __init__(self) -> None:
        self.runs = 0
        self.error: Exception | None = None

    def __call__(self) -> None:
        self.runs += 1
        if self.error is not None:
            raise self.error


@pytest.fixture
def cycles() -> Cycles:
    return Cycles()


@pytest.fixture
def refresher(cycles: Cycles) -> Iterator[Refresher]:
    refresher = Refresher(cycles, 0.01, name="test-refresher")
    yield refresher
    refresher.stop()


def test_nothing_runs_before_the_first_request_then_one_thread_cycles(refresher: Refresher, cycles: Cycles) -> None:
    assert refresher.thread is None and cycles.runs == 0
    assert refresher.ensure_running() is False  # started now: the caller refreshes inline this once
    assert refresher.ensure_running() is True
    thread = refresher.thread
    assert thread is not None and thread.daemon and thread.name == "test-refresher"
    assert refresher.refreshed(timeout=60) and refresher.refreshed(timeout=60)
    assert cycles.runs >= 2
    assert [t for t in threading.enumerate() if t.name == "test-refresher"] == [thread]
    refresher.stop()
    assert not thread.is_alive() and refresher.thread is None


def test_a_failed_cycle_is_kept_until_one_succeeds(refresher: Refresher, cycles: Cycles) -> None:
    refresher.ensure_running()
    cycles.error = RuntimeError("the lake's listing broke")
    assert refresher.refreshed(timeout=60)
    assert refresher.failure == "RuntimeError: the lake's listing broke"
    assert refresher.thread is not None  # the thread goes on
    cycles.error = None
    assert refresher.refreshed(timeout=60)
    assert refresher.failure is None


def test_it_stops_once_nobody_asks_and_starts_again_on_the_next_request(cycles: Cycles) -> None:
    ticks = [0.0]
    refresher = Refresher(cycles, 0.01, idle_after=600, monotonic=lambda: ticks[0])
    try:
        refresher.ensure_running()
        thread = refresher.thread
        assert thread is not None and refresher.refreshed(timeout=60)
        ticks[0] += 601  # ten minutes without a request
        thread.join(timeout=60)
        assert not thread.is_alive() and refresher.thread is None
        assert refresher.ensure_running() is False  # what it left is old: the caller refreshes inline
        assert refresher.thread is not None and refresher.thread is not thread
    finally:
        refresher.stop()


def test_a_stopped_refresher_stays_stopped(refresher: Refresher) -> None:
    refresher.ensure_running()
    refresher.stop()
    assert refresher.ensure_running() is False and refresher.thread is None
    assert refresher.refreshed(timeout=1) is False


def test_an_interval_must_be_positive(cycles: Cycles) -> None:
    with pytest.raises(ConfigError, match="interval must be above 0 seconds, got 0"):
        Refresher(cycles, 0)
