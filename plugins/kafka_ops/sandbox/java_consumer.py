"""Real Java consumers (kafka-clients, the client most production groups run) for the sandbox.

`SandboxConsumer.java` is compiled once against the same jars as the brokers and driven line
by line: tests and the demo stage lagging, stalled, rewinding and departed consumers with it,
and read back what each one really holds and has committed. By default it is Kafka 3.9's client
in the classic protocol; `jars=ensure_kafka4_jars()` runs Kafka 4's, and `protocol="consumer"`
joins with the consumer protocol of KIP-848 (the broker assigns, with `remote_assignor`).
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, Literal

from kafka_ops.child_process import die_with_parent
from kafka_ops.errors import SandboxError
from kafka_ops.jvm import compile_java, java_command

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("SandboxConsumer.java")
LOG4J = Path(__file__).with_name("log4j.properties")
TopicPartition = tuple[str, int]


class JavaConsumer:
    """One consumer process in a group. Use as a context manager, or `close()` it.

    `assignment` is what it holds after its latest rebalance; `committed` the last offset it
    committed per partition (the next offset it will read).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        group: str,
        topics: Iterable[str],
        assignor: str = "range",
        *,
        instance_id: str | None = None,
        rack: str | None = None,
        client_id: str | None = None,
        rate: float = 0.0,
        log_dir: Path | None = None,
        protocol: Literal["classic", "consumer"] = "classic",
        remote_assignor: Literal["uniform", "range"] | None = None,
        jars: Path | None = None,
    ) -> None:
        if remote_assignor is not None and protocol != "consumer":
            raise SandboxError(f"remote assignor {remote_assignor!r} needs protocol='consumer', not {protocol!r}")
        args = {
            "bootstrap": bootstrap_servers,
            "group": group,
            "topics": ",".join(topics),
            "assignor": assignor,
            "instance": instance_id,
            "rack": rack,
            "client": client_id,
            "rate": str(rate),
            "protocol": protocol,
            "remote": remote_assignor,
        }
        command = java_command(
            compile_java([SOURCE], jars=jars),
            "SandboxConsumer",
            *(f"{k}={v}" for k, v in args.items() if v is not None),
            heap="128m",
            jvm_flags=["-XX:TieredStopAtLevel=1", f"-Dlog4j.configuration=file:{LOG4J}"],
            jars=jars,
        )
        self.name = client_id or instance_id or group
        self.assignment: tuple[TopicPartition, ...] | None = None
        self.committed: dict[TopicPartition, int] = {}
        self.rebalances = 0
        self._changed = threading.Condition()
        self._stderr: IO[bytes] | int = subprocess.DEVNULL
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
            self._stderr = open(log_dir / f"consumer-{self.name}.log", "ab")  # noqa: SIM115 - handed to the child
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            preexec_fn=die_with_parent,  # noqa: PLW1509
        )
        self._reader = threading.Thread(target=self._read, name=f"consumer-{self.name}", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            try:
                event: dict[str, Any] = json.loads(line)
            except ValueError:
                log.warning("consumer %s printed %r", self.name, line)
                continue
            with self._changed:
                if event["event"] == "assigned":
                    self.assignment = tuple(sorted((t, p) for t, p in event["partitions"]))
                    self.rebalances += 1
                elif event["event"] == "committed":
                    self.committed.update({(t, p): o for t, p, o in event["offsets"]})
                elif event["event"] == "error":
                    log.error("consumer %s: %s", self.name, event["message"])
                self._changed.notify_all()

    def wait_until(self, condition: Callable[[JavaConsumer], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not condition(self):
                left = deadline - time.monotonic()
                if left <= 0 or self._process.poll() is not None:
                    state = "exited" if self._process.poll() is not None else "timed out"
                    raise SandboxError(f"consumer {self.name} {state} waiting for {what}")
                self._changed.wait(min(left, 0.5))

    def wait_committed(self, offsets: dict[TopicPartition, int], timeout_s: float = 60) -> None:
        """Until it has committed at least `offsets` (e.g. everything produced)."""
        self.wait_until(
            lambda c: all(c.committed.get(tp, -1) >= o for tp, o in offsets.items()), timeout_s, f"commits {offsets}"
        )

    def _send(self, command: str) -> None:
        if self._process.stdin is None or self._process.poll() is not None:
            raise SandboxError(f"consumer {self.name} is not running")
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()

    def pause(self) -> None:
        """Stay in the group, holding its partitions, but consume and commit nothing."""
        self._send("pause")

    def resume(self) -> None:
        self._send("resume")

    def set_rate(self, records_per_second: float) -> None:
        self._send(f"rate {records_per_second}")

    def seek(self, topic: str, partition: int, offset: int) -> None:
        """Move its position to `offset` and commit it (a rewind when `offset` is behind)."""
        self._send(f"seek {topic} {partition} {offset}")

    def close(self, timeout_s: float = 30) -> None:
        """Leave the group cleanly (a rebalance follows for the others)."""
        if self._process.poll() is None:
            try:
                self._send("exit")
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

    def __enter__(self) -> JavaConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
