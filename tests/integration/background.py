"""A call running in a daemon thread while the test acts on the cluster (e.g. an execution to cancel)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Background:
    def __init__(self, call: Callable[[], object]) -> None:
        self._call = call
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._call()
        except BaseException as e:  # handed to the test thread by `error`
            self._error = e

    def error(self, timeout_s: float) -> BaseException | None:
        """What the call raised (None when it returned); fails the test if it is still running."""
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            raise AssertionError(f"the background call is still running after {timeout_s}s")
        return self._error
