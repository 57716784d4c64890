"""A real Java Kafka client of ours run as a child process, driven line by line.

The sandbox's Java clients (`SandboxConsumer.java`, `SandboxShareConsumer.java`,
`SandboxStreamsApp.java`) share one shape: `key=value` arguments, commands on stdin, one JSON event
per line on stdout. This class runs one (against Kafka 4's jars unless told otherwise), folds its
events into state with `on_event`, and lets tests wait for that state.
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, Self

from kafka_ops.child_process import dying_with_parent
from kafka_ops.errors import SandboxError
from kafka_ops.jvm import compile_java, java_command

log = logging.getLogger(__name__)

LINES = Path(__file__).with_name("SandboxLines.java")
"""The line protocol's Java side, compiled with every client."""
LOG4J2 = Path(__file__).with_name("log4j2-client.properties")
LOG4J = Path(__file__).with_name("log4j.properties")
"""Kafka 3.9's clients log through log4j 1 (`log4j.properties`), Kafka 4's through log4j2: both to
stderr, since stdout carries the events."""


class JavaClient:
    """One client process: `main_class` from `source`, compiled once against `jars`: Kafka 4's
    folder (`ensure_kafka4_jars()`), or None for the 3.9 sandbox's."""

    def __init__(
        self,
        source: Path,
        main_class: str,
        name: str,
        args: Mapping[str, str | None],
        log_dir: Path | None = None,
        *,
        jars: Path | None = None,
        heap: str = "160m",
    ) -> None:
        logging_flag = f"-Dlog4j.configuration=file:{LOG4J}" if jars is None else f"-Dlog4j2.configurationFile={LOG4J2}"
        command = java_command(
            compile_java([source, LINES], jars=jars),
            main_class,
            *(f"{k}={v}" for k, v in args.items() if v is not None),
            heap=heap,
            jvm_flags=["-XX:TieredStopAtLevel=1", logging_flag],
            jars=jars,
        )
        self.name = name
        self._changed = threading.Condition()
        self._stderr: IO[bytes] | int = subprocess.DEVNULL
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
            self._stderr = open(log_dir / f"{main_class}-{name}.log", "ab")  # noqa: SIM115 - handed to the child
        self._process = subprocess.Popen(
            dying_with_parent(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, name=f"{main_class}-{name}", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def on_event(self, event: dict[str, Any]) -> None:
        """Fold one event into the client's state (called with the lock held)."""

    def _read(self) -> None:
        for line in self._process.stdout or ():  # a pipe: stdout=PIPE above
            try:
                event: dict[str, Any] = json.loads(line)
            except ValueError:
                log.warning("%s printed %r", self.name, line)
                continue
            with self._changed:
                if event["event"] == "error":
                    log.error("%s: %s", self.name, event["message"])
                self.on_event(event)
                self._changed.notify_all()

    def wait_until(self, condition: Callable[[Self], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not condition(self):
                left = deadline - time.monotonic()
                if left <= 0 or self._process.poll() is not None:
                    state = "exited" if self._process.poll() is not None else "timed out"
                    raise SandboxError(f"{self.name} {state} waiting for {what}")
                self._changed.wait(min(left, 0.5))

    def send(self, command: str) -> None:
        if self._process.stdin is None or self._process.poll() is not None:
            raise SandboxError(f"{self.name} is not running")
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()

    def close(self, timeout_s: float = 30) -> None:
        """Leave the group cleanly."""
        if self._process.poll() is None:
            try:
                self.send("exit")
                self._process.wait(timeout_s)
            except (SandboxError, OSError, subprocess.TimeoutExpired):
                self.kill()
        self._finish()

    def kill(self) -> None:
        """SIGKILL: the group keeps the member until its session times out."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait(10)
        self._finish()

    def _finish(self) -> None:
        self._reader.join(5)
        if not isinstance(self._stderr, int):
            self._stderr.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
