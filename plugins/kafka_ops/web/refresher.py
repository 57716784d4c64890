"""One background thread that runs a refresh cycle every few seconds, so requests find its work done.

`Refresher(cycle, interval)` owns at most one daemon thread. Nothing starts at construction: the first
`ensure_running()` (a request) starts it, and it waits `interval` seconds between the end of one cycle and
the start of the next. It ends on `stop()` (the app's shutdown), or by itself once no request called
`ensure_running()` for `idle_after` seconds (an app nobody scrapes stops listing the lake); the next
request starts it again and, as the first one did, refreshes inline, since what the thread left is old.

A cycle that raises does not end the thread: the error is logged and kept in `failure` until a cycle
succeeds (`failed_at` says when), for the owner to show (the metrics endpoint answers 503 with it),
never hidden behind what the last good cycle left. `last_cycle_s` is how long the last cycle took,
`longest_cycle_s` the longest.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from kafka_ops.errors import ConfigError

log = logging.getLogger(__name__)

IDLE_AFTER_S = 600.0
"""A refresher nobody asked for in this long stops: ten minutes is 40 of Prometheus' 15 s scrapes."""


class Refresher:
    """Runs `cycle` on one lazily started daemon thread every `interval` seconds (see the module docstring)."""

    def __init__(
        self,
        cycle: Callable[[], object],
        interval: float,
        *,
        name: str = "kafka-ops-refresher",
        idle_after: float = IDLE_AFTER_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval <= 0:
            raise ConfigError(f"a refresher's interval must be above 0 seconds, got {interval}")
        self.cycle = cycle
        self.interval = interval
        self.name = name
        self.idle_after = idle_after
        self.monotonic = monotonic
        self.failure: str | None = None
        """Why the last cycle failed (None: it succeeded, or none ran yet)."""
        self.failed_at = 0.0
        """When (`monotonic`) the failed cycle began."""
        self.last_cycle_s = 0.0
        self.longest_cycle_s = 0.0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._wake = False
        self._used = monotonic()
        self._begun = 0
        self._done = 0

    @property
    def thread(self) -> threading.Thread | None:
        """The running thread, if any."""
        with self._cond:
            return self._thread

    def ensure_running(self) -> bool:
        """Note a request; True when the thread was running already (its cycles keep things current).
        Otherwise start it (unless stopped) and return False: the caller refreshes inline this once."""
        with self._cond:
            self._used = self.monotonic()
            if self._thread is not None and self._thread.is_alive():
                return True
            if not self._stopped:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            return False

    def refreshed(self, timeout: float) -> bool:
        """Wake the thread and wait until a cycle begun after this call has ended (tests, benchmarks);
        False when none ended within `timeout` or no thread runs."""
        with self._cond:
            thread = self._thread
            if thread is None or not thread.is_alive():
                return False
            target = self._begun + 1
            self._wake = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._done >= target or not thread.is_alive(), timeout) and (
                self._done >= target
            )

    def stop(self, timeout: float = 30.0) -> None:
        """End the thread (a cycle under way finishes first, for at most `timeout` seconds); it stays stopped."""
        with self._cond:
            self._stopped = True
            thread, self._thread = self._thread, None
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        me = threading.current_thread()
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._wake or self._stopped or self._thread is not me, self.interval)
                idle = self.monotonic() - self._used > self.idle_after
                if self._stopped or self._thread is not me or idle:
                    if self._thread is me:
                        self._thread = None
                    self._cond.notify_all()
                    return
                self._wake = False
                self._begun += 1
                number = self._begun
            self._one_cycle()
            with self._cond:
                self._done = number
                self._cond.notify_all()

    def _one_cycle(self) -> None:
        start = self.monotonic()
        try:
            self.cycle()
        # any error: kept for the owner to answer with (see the module docstring), and the next cycle tries again
        except Exception as e:
            log.exception("%s: the refresh cycle failed; retrying in %s s", self.name, self.interval)
            self.failure, self.failed_at = f"{type(e).__name__}: {e}", start
        else:
            self.failure = None
        self.last_cycle_s = self.monotonic() - start
        self.longest_cycle_s = max(self.longest_cycle_s, self.last_cycle_s)
