"""Real Java consumers (kafka-clients, the client most production groups run) for the sandbox.

`SandboxConsumer.java` is compiled once against the same jars as the brokers and driven line
by line: tests and the demo stage lagging, stalled, rewinding and departed consumers with it,
and read back what each one really holds and has committed. By default it is Kafka 3.9's client
in the classic protocol; `jars=ensure_kafka4_jars()` runs Kafka 4's, and `protocol="consumer"`
joins with the consumer protocol of KIP-848 (the broker assigns, with `remote_assignor`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from kafka_ops.errors import SandboxError
from sandbox.java_client import JavaClient

SOURCE = Path(__file__).with_name("SandboxConsumer.java")
TopicPartition = tuple[str, int]


class JavaConsumer(JavaClient):
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
        self.assignment: tuple[TopicPartition, ...] | None = None
        self.committed: dict[TopicPartition, int] = {}
        self.rebalances = 0
        super().__init__(SOURCE, "SandboxConsumer", client_id or instance_id or group, args, log_dir, jars=jars,
                         heap="128m")  # fmt: skip

    def on_event(self, event: dict[str, Any]) -> None:
        if event["event"] == "assigned":
            self.assignment = tuple(sorted((t, p) for t, p in event["partitions"]))
            self.rebalances += 1
        elif event["event"] == "committed":
            self.committed.update({(t, p): o for t, p, o in event["offsets"]})

    def wait_committed(self, offsets: dict[TopicPartition, int], timeout_s: float = 60) -> None:
        """Until it has committed at least `offsets` (e.g. everything produced)."""
        self.wait_until(
            lambda c: all(c.committed.get(tp, -1) >= o for tp, o in offsets.items()), timeout_s, f"commits {offsets}"
        )

    def pause(self) -> None:
        """Stay in the group, holding its partitions, but consume and commit nothing."""
        self.send("pause")

    def stall(self) -> None:
        """Stay in the group, consume nothing, and commit the same offsets again every second: a consumer
        stuck on a record while its auto-commit goes on (Burrow's STALL; `pause` is its STOP)."""
        self.send("stall")

    def resume(self) -> None:
        self.send("resume")

    def set_rate(self, records_per_second: float) -> None:
        self.send(f"rate {records_per_second}")

    def take(self, records: int) -> None:
        """Consume and commit `records` more records, then pause: a consumer whose progress a test
        stages exactly, however long each of its steps takes on a busy machine."""
        self.send(f"take {records}")

    def seek(self, topic: str, partition: int, offset: int) -> None:
        """Move its position to `offset` and commit it (a rewind when `offset` is behind)."""
        self.send(f"seek {topic} {partition} {offset}")
