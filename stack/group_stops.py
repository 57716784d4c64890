"""Consumer groups stopped on the running topology, each timed from the stop to kafka-ops' page that the
group is in ERR (Burrow's STOP: no commit for longer than its window of commits spans, while a producer
goes on), and from the consumer's return to the resolve; `bench/time_to_page.py` runs them.

Each group is one consumer of Kafka's own Java client on a topic a producer writes steadily to, so it
commits several times a second while it runs. A stop is either a clean exit (the member leaves: the
group is Empty at once) or SIGKILL (the member stays until its 10 s session times out), taking turns.
Either way the change watch sees the group without members within a poll or two and the snapshot DAG
collects the groups at once and rates them by Burrow's rules as it commits them (the analysis that
follows rates them again). Burrow's rule that a consumer at the head within the last 100 s is not STOP
(#303) can hold the page back to a later collection; the figures say which collection paged and how
(`collection_behind`)."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient, KafkaProducer

from sandbox import KRaftSandbox, SandboxCluster
from sandbox.java_consumer import JavaConsumer
from stack import paging
from stack.airflow import AirflowApi
from stack.processes import poll
from stack.soak import ANALYSIS, SNAPSHOT
from stack.state import State
from stack.time_to_page import NAMES, at, ended_runs, seconds
from stack.webhook import read_received

log = logging.getLogger(__name__)

RUN_S = 20.0
"""How long a group consumes (and commits) before it is stopped."""
PRODUCE_EVERY_S = 0.1


class SteadyProducer:
    """One small record to `topic` on `bootstrap` every `PRODUCE_EVERY_S`, in a thread, until `stop`."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
        self.topic = topic
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name=f"steady-producer-{topic}", daemon=True)
        self._thread.start()

    def _produce(self) -> None:
        while not self._stop.wait(PRODUCE_EVERY_S):
            self.producer.send(self.topic, b"x" * 100)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self.producer.close(10)


class TimedGroupStops:
    """Group stops on the stack in `state.root` whose fleet is `zk` and `kraft`, on `topic` (on both
    clusters); a page or resolve waited for at most `timeout_s`; the Java consumers' logs in `log_dir`."""

    def __init__(
        self,
        state: State,
        zk: SandboxCluster,
        kraft: KRaftSandbox,
        topic: str,
        *,
        timeout_s: float,
        api: AirflowApi,
        log_dir: Path,
    ) -> None:
        self.received = Path(state.root) / "webhook" / "received.jsonl"
        self.clusters: dict[str, SandboxCluster | KRaftSandbox] = {"zk": zk, "kraft": kraft}
        self.topic, self.timeout_s, self.api, self.log_dir = topic, timeout_s, api, log_dir
        self.stops = 0

    def stop(self, mode: str) -> dict[str, Any]:
        """Start a group on the `mode` cluster, let it commit for `RUN_S`, stop it (a clean exit or
        SIGKILL, taking turns), wait for the page, start its consumer again, wait for the resolve; then
        stop it and delete the group. The fault's figures (None: never came)."""
        sandbox, name = self.clusters[mode], NAMES[mode]
        how = "left" if self.stops % 2 == 0 else "killed"
        self.stops += 1
        group = f"ttp-{mode}-{self.stops}-{uuid.uuid4().hex[:6]}"
        title = f"consumer group {group} is in ERR"
        producer = SteadyProducer(sandbox.bootstrap_servers, self.topic)
        try:
            consumer = self._consumer(sandbox, group)
            try:
                time.sleep(RUN_S)  # it consumes and commits meanwhile
            finally:
                start = datetime.now(UTC)
                log.info("time to page: consumer group %s of %s %s at %s", group, name, how, start.isoformat())
                if how == "left":
                    consumer.close()
                else:
                    consumer.kill()
            page = poll(lambda: paging.first_page(self._records(), name, start, title), self.timeout_s, 1)
            restarted = datetime.now(UTC)
            with self._consumer(sandbox, group):
                resolved = None
                if page is not None:
                    resolved = poll(lambda: paging.first_resolve(self._records(), name, page, restarted),
                                    self.timeout_s, 1)  # fmt: skip
        finally:
            producer.stop()
        _delete_group(sandbox, group)
        fault = {"cluster": name, "kind": mode, "group": group, "stop": how,
                 "stopped_at": start.isoformat(timespec="seconds"), "page_s": seconds(start, page.at if page else None),
                 "resolve_s": seconds(restarted, resolved)}  # fmt: skip
        if page is not None:
            fault |= collection_behind(self.api, start, page.at)
        log.info("time to page: %s", json.dumps(fault))
        return fault

    def _consumer(self, sandbox: SandboxCluster | KRaftSandbox, group: str) -> JavaConsumer:
        consumer = JavaConsumer(sandbox.bootstrap_servers, group, [self.topic], log_dir=self.log_dir)
        try:
            consumer.wait_until(lambda c: bool(c.committed), 120, "its first commit")
        except BaseException:
            consumer.kill()
            raise
        return consumer

    def _records(self) -> list[dict[str, Any]]:
        return read_received(self.received)


def collection_behind(api: AirflowApi, start: datetime, paged: datetime) -> dict[str, Any]:
    """Which collection paged, in seconds from the stop: the end of the first snapshot run that started
    after it (the change watch's), and the collection the page was read from with the page's delay after
    it. The snapshot run's `collect_groups` pages as soon as it committed the groups (`paged_by`
    `collection`: from that run's start, the collection included); otherwise the analysis did
    (`analysis`: from the end of the last snapshot run that ended before the paging analysis started)."""

    snapshots = [r for r in ended_runs(api, SNAPSHOT, start) if r["state"] == "success"]
    # the run that paged may still be running (its page is sent before its last tasks end)
    started = api.get(f"dags/{SNAPSHOT}/dagRuns", start_date_gte=start.isoformat(), order_by="start_date", limit=100)
    paging = next((r for r in started["dag_runs"] if _spans(r, paged)), None)
    read, paged_by = (at(paging["start_date"]), "collection") if paging is not None else (None, "analysis")
    analysis = next((r for r in ended_runs(api, ANALYSIS, start) if at(r["end_date"]) >= paged), None)
    if paging is None and analysis is not None:
        read = max((at(r["end_date"]) for r in snapshots if at(r["end_date"]) <= at(analysis["start_date"])),
                   default=None)  # fmt: skip
    return {
        "first_collection_s": seconds(start, at(snapshots[0]["end_date"]) if snapshots else None),
        "paging_collection_s": seconds(start, read),
        "collection_to_page_s": seconds(read, paged) if read is not None else None,
        "paged_by": paged_by,
    }


def _spans(run: dict[str, Any], moment: datetime) -> bool:
    """Whether the run had started by `moment` and had not ended before it."""
    return at(run["start_date"]) <= moment and (not run.get("end_date") or moment <= at(run["end_date"]))


def _delete_group(sandbox: SandboxCluster | KRaftSandbox, group: str) -> None:
    """Its offsets gone, the group is rated no more (its consumer is stopped, and the producer went on)."""
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=30_000)
    try:
        poll(lambda: admin.delete_groups([group]).get(group) == "OK" or None, 60, 2)
    finally:
        admin.close()
