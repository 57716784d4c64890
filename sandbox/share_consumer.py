"""A real share consumer (KIP-932, Kafka 4's `KafkaShareConsumer`) for the KRaft sandbox.

`SandboxShareConsumer.java` joins a share group, fetches, acknowledges (implicitly) and commits
its acknowledgements; tests stop it to make the share group lag and read back how far it got.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from kafka_ops.jars.fetch import ensure_kafka4_jars
from sandbox.java_client import JavaClient

SOURCE = Path(__file__).with_name("SandboxShareConsumer.java")
TopicPartition = tuple[str, int]


class JavaShareConsumer(JavaClient):
    """One member of a share group. Use as a context manager, or `close()` it.

    `reset` sets the group's `share.auto.offset.reset` (a group config, through the Admin API)
    before joining: Kafka's default, latest, skips what was produced before the group first read.
    `consumed` is, per partition, the offset after the last record it acknowledged.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        group: str,
        topics: Iterable[str],
        *,
        reset: Literal["earliest", "latest"] | None = "earliest",
        client_id: str | None = None,
        rack: str | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self.consumed: dict[TopicPartition, int] = {}
        args = {
            "bootstrap": bootstrap_servers,
            "group": group,
            "topics": ",".join(topics),
            "reset": reset,
            "client": client_id,
            "rack": rack,
        }
        super().__init__(SOURCE, "SandboxShareConsumer", client_id or group, args, log_dir, jars=ensure_kafka4_jars())

    def on_event(self, event: dict[str, Any]) -> None:
        if event["event"] == "consumed":
            for topic, partition, offset in event["offsets"]:
                self.consumed[(topic, partition)] = max(offset, self.consumed.get((topic, partition), 0))

    def wait_consumed(self, offsets: dict[TopicPartition, int], timeout_s: float = 60) -> None:
        """Until it has acknowledged every record below `offsets` (e.g. everything produced)."""
        self.wait_until(
            lambda c: all(c.consumed.get(tp, -1) >= o for tp, o in offsets.items()), timeout_s, f"records to {offsets}"
        )

    def stop(self) -> None:
        """Stay in the group (its heartbeats go on) but fetch nothing: the share group falls behind."""
        self.send("stop")

    def resume(self) -> None:
        self.send("resume")
