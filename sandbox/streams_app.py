"""A real Kafka Streams app (kafka-streams 4.4) that forms a streams group (KIP-1071) on the KRaft sandbox.

`SandboxStreamsApp.java` runs one stateless subtopology (input topics, map, output topic) with
`group.protocol=streams`, so the broker's group coordinator assigns its tasks; tests pause it to
make the group lag and read back which tasks it holds.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafka_ops.jars.fetch import ensure_kafka4_jars, var_dir
from sandbox.java_client import JavaClient

SOURCE = Path(__file__).with_name("SandboxStreamsApp.java")
RUNNING = "RUNNING"


class JavaStreamsApp(JavaClient):
    """One instance of a Kafka Streams application (`app` is its application.id: the group id).

    `state` is its latest KafkaStreams state (`RUNNING` once it holds its tasks); `active` and
    `standby` the task ids (`subtopology_partition`, e.g. `0_1`) it holds now.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        app: str,
        input_topics: Iterable[str],
        output_topic: str,
        *,
        client_id: str | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self.state = ""
        self.paused = False
        self.active: tuple[str, ...] = ()
        self.standby: tuple[str, ...] = ()
        base = var_dir() / "streams-state"
        base.mkdir(parents=True, exist_ok=True)
        self.state_dir = Path(tempfile.mkdtemp(prefix=f"{app}-", dir=base))
        args = {
            "bootstrap": bootstrap_servers,
            "app": app,
            "input": ",".join(input_topics),
            "output": output_topic,
            "state": str(self.state_dir),
            "client": client_id,
        }
        super().__init__(SOURCE, "SandboxStreamsApp", client_id or app, args, log_dir, jars=ensure_kafka4_jars())

    def on_event(self, event: dict[str, Any]) -> None:
        if event["event"] == "state":
            self.state = event["state"]
        elif event["event"] == "paused":
            self.paused = event["paused"]
        elif event["event"] == "tasks":
            self.active, self.standby = tuple(event["active"]), tuple(event["standby"])

    def wait_running(self, tasks: int, timeout_s: float = 90) -> None:
        """Until it is RUNNING and holds `tasks` active tasks."""
        self.wait_until(lambda a: a.state == RUNNING and len(a.active) == tasks, timeout_s, f"{tasks} active tasks")

    def _finish(self) -> None:
        super()._finish()
        shutil.rmtree(self.state_dir, ignore_errors=True)  # the app's local state dies with it

    def pause(self, timeout_s: float = 30) -> None:
        """Stay in the group holding its tasks, but process and commit nothing (returns once paused)."""
        self.send("pause")
        self.wait_until(lambda a: a.paused, timeout_s, "pause")

    def resume(self, timeout_s: float = 30) -> None:
        self.send("resume")
        self.wait_until(lambda a: not a.paused, timeout_s, "resume")
