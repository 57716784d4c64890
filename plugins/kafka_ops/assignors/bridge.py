"""Kafka's own assignors in a long-lived JVM, for exact consumer-group what-ifs.

Why a JVM: the group leader is almost always a kafka-clients (Java) consumer, and what it hands
out is whatever Kafka's Java assignors compute. Re-implementations drift (kafka-python 3.0.12:
round-robin `KeyError` on unequal subscriptions, static members dropped, no rack awareness,
sticky user data Java cannot read, far too slow at scale), so this runs Kafka's classes
themselves (`AssignorBridge.java`, compiled once against the fetched kafka-clients jar) and only
owns the bridge: members, owned partitions, generations, user data, racks and replica racks go
in exactly as the leader would decode them; assignments come back in Java's order.

One JVM serves many requests (one JSON line each way). It starts on first use, dies with this
process, and is restarted after a crash or a timeout (a timed-out request cannot be cancelled
inside Java, so the JVM is stopped). Errors carry the tail of its stderr.
"""

from __future__ import annotations

import collections
import itertools
import json
import logging
import queue
import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kafka_ops.assignors import protocol, server, wire
from kafka_ops.assignors.model import (
    AssignFailure,
    AssignorName,
    AssignResult,
    ClusterLayout,
    GroupInput,
    KafkaTestHooks,
)
from kafka_ops.child_process import dying_with_parent
from kafka_ops.errors import KafkaOpsError
from kafka_ops.jars.fetch import ensure_kafka4_jars
from kafka_ops.jvm import compile_java, java_command
from kafka_ops.model.groups import TopicPartition

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("AssignorBridge.java")
SERVER_SOURCE = Path(__file__).with_name("ServerAssignorBridge.java")
MAIN_CLASS = "AssignorBridge"
_STDERR_LINES = 60
_CLUSTERS_KEPT = 4  # as CLUSTERS_KEPT in AssignorBridge.java


class AssignorBridgeError(KafkaOpsError):
    """The assignor JVM could not be built, started or reached, died, or did not answer in time."""


class AssignmentRejected(AssignorBridgeError):
    """Kafka's code refused the request (e.g. bytes it cannot decode); the JVM keeps running."""


@dataclass(frozen=True, slots=True)
class StickyMemberData:
    """How a sticky assignor reads one member (`AbstractStickyAssignor.MemberData`)."""

    partitions: tuple[TopicPartition, ...]
    generation: int | None
    rack: str | None


class AssignorBridge:
    """Kafka's assignors behind a JSON-lines pipe. Use as a context manager, or `close()` it.

    `heap` bounds the JVM (a million partitions want about 3g); `timeout_s` bounds each request
    unless a call gives its own. Thread-safe: requests are serialized.
    """

    def __init__(
        self,
        *,
        heap: str = "1g",
        timeout_s: float = 300.0,
        start_timeout_s: float = 120.0,
        jvm_flags: Sequence[str] = (),
    ) -> None:
        self.heap = heap
        self.jvm_flags = tuple(jvm_flags)
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self.kafka_clients_version = ""
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._next_id = 0
        # Clusters the JVM holds, most recently used last; it keeps the same number, in the same order.
        self._clusters: list[tuple[ClusterLayout, str]] = []
        self._cluster_ids = itertools.count(1)
        self.group_coordinator_version = ""
        self._server_loaded: subprocess.Popen[str] | None = None  # the JVM that loaded them

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> AssignorBridge:
        with self._lock:
            self._ensure_started()
        return self

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def close(self) -> None:
        with self._lock:
            self._stop(graceful=True)

    def __enter__(self) -> AssignorBridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure_started(self) -> subprocess.Popen[str]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        if self._process is not None:
            self._stop(graceful=False)
        try:
            classes = compile_java([SOURCE])
        except KafkaOpsError as e:
            raise AssignorBridgeError(f"cannot build the assignor bridge: {e}") from e
        command = java_command(
            classes,
            MAIN_CLASS,
            heap=self.heap,
            jvm_flags=[
                "-XX:+ExitOnOutOfMemoryError",
                "-XX:+DisplayVMOutputToStderr",  # the JVM's own messages must not mix with the protocol
                f"-Xms{self.heap}",  # growing the heap step by step costs full collections at scale
                *self.jvm_flags,
            ],
        )
        self._lines = queue.Queue()
        self._stderr.clear()
        self._clusters.clear()
        try:
            process = subprocess.Popen(
                dying_with_parent(command),  # the JVM must not outlive us
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1 << 20,
            )
        except OSError as e:
            raise AssignorBridgeError(f"cannot start {command[0]!r} (a Java 17+ runtime must be on PATH): {e}") from e
        self._process = process
        threading.Thread(
            target=self._pump, args=(process.stdout, self._lines), name="assignor-out", daemon=True
        ).start()
        threading.Thread(target=self._drain, args=(process.stderr,), name="assignor-err", daemon=True).start()
        hello = self._answer(self.start_timeout_s, "start")
        if not hello.get("ready"):
            self._stop(graceful=False)
            raise AssignorBridgeError(f"the assignor JVM greeted with {hello!r} instead of a ready line")
        self.kafka_clients_version = str(hello.get("kafka_clients", ""))
        log.info("assignor bridge up (pid %s, kafka-clients %s)", process.pid, self.kafka_clients_version)
        return process

    @staticmethod
    def _pump(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
        if stream is not None:
            for line in stream:
                lines.put(line)
        lines.put(None)

    def _drain(self, stream: IO[str] | None) -> None:
        if stream is None:
            return
        for line in stream:
            self._stderr.append(line.rstrip("\n"))
            log.debug("assignor JVM: %s", line.rstrip("\n"))

    def _stop(self, graceful: bool) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if graceful and process.poll() is None and process.stdin is not None:
            try:
                process.stdin.close()  # the JVM ends its loop at end of input
                process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if process.poll() is None:
            process.kill()
            process.wait(10)
        for stream in (process.stdin, process.stdout, process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def _stderr_tail(self) -> str:
        tail = "\n".join(self._stderr)
        return f"; its stderr ends with:\n{tail}" if tail else "; it wrote nothing to stderr"

    def _read(self, timeout_s: float, what: str) -> str:
        process = self._process
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            self._stop(graceful=False)
            raise AssignorBridgeError(
                f"the assignor JVM gave no answer to {what} within {timeout_s:g}s and was stopped"
                f" (it restarts on the next request){self._stderr_tail()}"
            ) from None
        if line is None:
            code = None if process is None else process.wait(10)
            self._stop(graceful=False)
            raise AssignorBridgeError(f"the assignor JVM exited (code {code}) during {what}{self._stderr_tail()}")
        return line

    def _answer(self, timeout_s: float, what: str) -> dict[str, Any]:
        """The next JSON line; a stray non-JSON line (a message printed by the JVM) is logged and skipped."""
        while True:
            line = self._read(timeout_s, what)
            try:
                answer: dict[str, Any] = json.loads(line)
                return answer
            except ValueError:
                self._stderr.append(f"(on stdout) {line.rstrip()}")
                log.warning("assignor JVM printed on stdout: %s", line.rstrip())

    # ------------------------------------------------------------------ requests

    def _call(self, request: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        with self._lock:
            process = self._ensure_started()
            self._next_id += 1
            request = {**request, "id": self._next_id}
            line = json.dumps(request, separators=(",", ":"))
            if process.stdin is None:
                raise AssignorBridgeError("the assignor JVM has no stdin pipe")
            try:
                process.stdin.write(line + "\n")
                process.stdin.flush()
            except OSError as e:
                self._read(1.0, request["op"])  # reports the exit and stderr when the JVM is gone
                raise AssignorBridgeError(f"cannot write to the assignor JVM: {e}{self._stderr_tail()}") from e
            answer = self._answer(self.timeout_s if timeout_s is None else timeout_s, request["op"])
        if answer.get("id") != request["id"]:
            raise AssignorBridgeError(f"the assignor JVM answered request {answer.get('id')} to {request['id']}")
        if "error" in answer:
            raise AssignmentRejected(str(answer["error"]))
        return answer

    def assign(
        self,
        group: GroupInput,
        cluster: ClusterLayout,
        assignor: AssignorName,
        *,
        settle: bool = True,
        timeout_s: float | None = None,
        hooks: KafkaTestHooks | None = None,
    ) -> AssignResult:
        """What Kafka's `assignor` gives `group`'s members on `cluster` (see `AssignResult`).

        `settle` runs a cooperative group's follow-up rebalances until nothing is withheld;
        without it, the result is the single rebalance Kafka's `assign()` computes.
        """
        (result,) = self.assign_many(cluster, [(group, assignor)], settle=settle, timeout_s=timeout_s, hooks=hooks)
        if isinstance(result, AssignFailure):
            raise AssignmentRejected(result.message)
        return result

    def assign_many(
        self,
        cluster: ClusterLayout,
        requests: Iterable[tuple[GroupInput, AssignorName]],
        *,
        settle: bool = True,
        timeout_s: float | None = None,
        hooks: KafkaTestHooks | None = None,
    ) -> list[AssignResult | AssignFailure]:
        """Many groups on one cluster in one round trip; a group Kafka refuses fails alone."""
        jobs = list(requests)
        hooks = hooks or KafkaTestHooks()
        names = wire.NameTable()
        groups = [wire.group_json(group, assignor, settle, hooks, names) for group, assignor in jobs]
        request: dict[str, Any] = {"op": "assign", "names": names.names, "groups": groups}
        try:
            answer = self._call(self._with_cluster(request, cluster, resend=False), timeout_s)
        except AssignmentRejected as e:
            if "is not known here" not in str(e):
                raise
            answer = self._call(self._with_cluster(request, cluster, resend=True), timeout_s)
        results, out_names = answer["results"], answer["names"]
        return [wire.parse_group_result(r, g, a, out_names) for r, (g, a) in zip(results, jobs, strict=True)]

    def _with_cluster(self, request: dict[str, Any], cluster: ClusterLayout, resend: bool) -> dict[str, Any]:
        """The request naming `cluster` by id, with its content unless the JVM holds it already
        (the same object was sent recently: a `ClusterLayout` is immutable)."""
        with self._lock:
            known = next((i for i, (c, _) in enumerate(self._clusters) if c is cluster), None)
            if known is None:
                cluster_id = f"c{next(self._cluster_ids)}"
                self._clusters.append((cluster, cluster_id))
                del self._clusters[:-_CLUSTERS_KEPT]
            else:
                self._clusters.append(self._clusters.pop(known))
                cluster_id = self._clusters[-1][1]
        request = {**request, "cluster_id": cluster_id}
        if known is None or resend:
            request["cluster"] = wire.cluster_json(cluster)
        return request

    # ------------------------------------------------------------------ the consumer protocol's server-side assignors

    def server_assign(
        self,
        group: server.ConsumerGroupInput,
        cluster: ClusterLayout,
        assignor: server.ServerAssignorName,
        *,
        topic_ids: Mapping[str, str] | None = None,
        hooks: server.ServerTestHooks | None = None,
        timeout_s: float | None = None,
    ) -> server.ServerAssignResult:
        """What the group coordinator's `assignor` (Kafka 4's `uniform` or `range`) gives `group`."""
        (result,) = self.server_assign_many(
            cluster, [(group, assignor)], topic_ids=topic_ids, hooks=hooks, timeout_s=timeout_s
        )
        if isinstance(result, AssignFailure):
            raise AssignmentRejected(result.message)
        return result

    def server_assign_many(
        self,
        cluster: ClusterLayout,
        requests: Iterable[tuple[server.ConsumerGroupInput, server.ServerAssignorName]],
        *,
        topic_ids: Mapping[str, str] | None = None,
        hooks: server.ServerTestHooks | None = None,
        timeout_s: float | None = None,
    ) -> list[server.ServerAssignResult | AssignFailure]:
        """Many consumer-protocol groups on one cluster in one round trip; a group Kafka refuses
        (e.g. `PartitionAssignorException`) fails alone. `topic_ids` are Kafka's topic ids (base64,
        as `Uuid.toString`) where known: the assignors order topics by id in places."""
        jobs = list(requests)
        if not jobs:
            return []
        hooks = hooks or server.ServerTestHooks()
        self._load_server_assignors()
        names = wire.NameTable()
        groups = [server.group_json(group, assignor, hooks, names) for group, assignor in jobs]
        request: dict[str, Any] = {
            "op": "server_assign",
            "names": names.names,
            "cluster": server.cluster_json(cluster, topic_ids or {}),
            "groups": groups,
        }
        answer = self._call(request, timeout_s)
        results, out_names = answer["results"], answer["names"]
        return [server.parse_result(r, g, a, out_names) for r, (g, a) in zip(results, jobs, strict=True)]

    def _load_server_assignors(self) -> None:
        """Builds ServerAssignorBridge against Kafka 4's jars and has the running JVM load it (once per JVM)."""
        with self._lock:
            process = self._ensure_started()
        if self._server_loaded is process:
            return
        try:
            jars = ensure_kafka4_jars()
            classes = compile_java([SERVER_SOURCE], jars=jars)
        except KafkaOpsError as e:
            raise AssignorBridgeError(
                f"cannot build the server-side assignors (Kafka 4's group coordinator): {e}"
            ) from e
        classpath = [str(classes), *sorted(str(jar) for jar in jars.glob("*.jar"))]
        answer = self._call({"op": "load_server_assignors", "classpath": classpath})
        self.group_coordinator_version = str(answer.get("group_coordinator", ""))
        self._server_loaded = self._process

    # ------------------------------------------------------------------ Kafka's protocol code, for cross-checks

    def serialize_subscription(self, subscription: protocol.Subscription, version: int) -> bytes:
        """`ConsumerProtocol.serializeSubscription(subscription, version)` in Java."""
        answer = self._call(
            {"op": "serialize_subscription", "subscription": wire.subscription_json(subscription), "version": version}
        )
        return wire.from_b64(answer["bytes"], "serialized subscription") or b""

    def deserialize_subscription(self, data: bytes) -> protocol.Subscription:
        """`ConsumerProtocol.deserializeSubscription` in Java; `AssignmentRejected` if Java cannot."""
        answer = self._call({"op": "deserialize_subscription", "bytes": wire.b64(data)})
        return wire.parse_subscription(answer["subscription"], answer["version"])

    def serialize_assignment(self, assignment: protocol.Assignment, version: int) -> bytes:
        answer = self._call(
            {
                "op": "serialize_assignment",
                "assignment": {
                    "partitions": wire.runs(assignment.partitions),
                    "user_data": wire.b64(assignment.user_data),
                },
                "version": version,
            }
        )
        return wire.from_b64(answer["bytes"], "serialized assignment") or b""

    def deserialize_assignment(self, data: bytes) -> protocol.Assignment:
        answer = self._call({"op": "deserialize_assignment", "bytes": wire.b64(data)})
        value = answer["assignment"]
        return protocol.Assignment(
            wire.from_runs(value["partitions"]), wire.from_b64(value["user_data"], "assignment"), answer["version"]
        )

    def subscription_user_data(
        self,
        assignor: AssignorName,
        topics: Sequence[str],
        assigned: Sequence[TopicPartition] | None,
        generation: int,
        *,
        member_id: str = "",
        group_id: str = "",
        group_instance_id: str | None = None,
    ) -> bytes | None:
        """The user data a Java consumer sends after `onAssignment(assigned, generation)`
        (`assigned=None`: a consumer that has not been assigned yet)."""
        answer = self._call(
            {
                "op": "user_data",
                "assignor": assignor,
                "topics": list(topics),
                "assigned": None if assigned is None else wire.runs(assigned),
                "generation": generation,
                "member_id": member_id,
                "group_id": group_id,
                "group_instance_id": group_instance_id,
            }
        )
        return wire.from_b64(answer["bytes"], "user data")

    def member_data(self, assignor: AssignorName, subscription: protocol.Subscription) -> StickyMemberData:
        """What a sticky assignor's `memberData` makes of `subscription` (built directly in Java)."""
        answer = self._call(
            {"op": "member_data", "assignor": assignor, "subscription": wire.subscription_json(subscription)}
        )
        return StickyMemberData(wire.from_runs(answer["partitions"]), answer["generation"], answer["rack"])
