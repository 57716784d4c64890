"""Reading a plan back from its JSON (`kafka_ops.remediation.store.plan_to_json` writes it).

The executor acts on what this returns, so the reader is strict: every field is checked against
Kafka's types (`kafka_ops.kafka_types`: topic names, int32 broker ids and partitions, replica lists
without duplicates, int64 sizes) and against what a planner writes (a known plan kind, each
partition reassigned or elected at most once). Anything else raises `PlanFormatError` naming the
document and the field's JSON path, e.g. `reassignments[3].target[1]: expected a broker id (int32)
from 0 to 2147483647, got -1`. Fields the reader does not know are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast, get_args

from kafka_ops.errors import PlanFormatError
from kafka_ops.kafka_types import INT32_MAX, INT64_MAX, NO_LEADER, JsonReader, path_of, shown, whole_number
from kafka_ops.planning.plan import BrokerLoad, DirMove, Election, Goal, GoalStatus, Move, Plan, PlanKind, Skip
from kafka_ops.planning.view import CORDON_FIRST, UNCORDON_FIRST

PLAN_KINDS: tuple[str, ...] = get_args(PlanKind)
REPLICATION_FACTOR_MAX = 2**15 - 1
"""Kafka's replication factor is an int16 (CreateTopics)."""
T = TypeVar("T")
_BROKER_BYTES = ("disk_capacity_bytes", "disk_bytes_before", "disk_bytes_after")
_BROKER_RATES = ("bytes_in_before", "bytes_in_after", "leader_bytes_in_before", "leader_bytes_in_after")
_BROKER_COUNTS = tuple(
    name
    for name in BrokerLoad.__slots__
    if name not in ("broker_id", "rack", "registered", *_BROKER_BYTES, *_BROKER_RATES)
)
GOAL_STATUSES: tuple[str, ...] = get_args(GoalStatus)


def plan_from_json(data: object, document: str = "plan JSON") -> Plan:
    """The `Plan` that `data` (parsed JSON) holds; `PlanFormatError` naming `document` and the field."""
    read = JsonReader(document, PlanFormatError)
    obj = read.mapping(data, "")
    if "kind" not in obj and "partitions" in obj:
        read.fail("", "this is one of Kafka's reassignment or election files, not a kafka-ops plan")
    moves = _each(read, obj, "reassignments", _move)
    elections = _each(read, obj, "elections", _election)
    _no_partition_twice(read, "reassignments", [(m.topic, m.partition) for m in moves])
    _no_partition_twice(read, "elections", [(e.topic, e.partition) for e in elections])
    return Plan(
        kind=cast(PlanKind, read.choice(read.field(obj, "kind", ""), "kind", PLAN_KINDS)),
        plan_id=read.text(read.field(obj, "plan_id", ""), "plan_id"),
        cluster=read.text(read.field(obj, "cluster", ""), "cluster"),
        snapshot_id=read.text(read.field(obj, "snapshot_id", ""), "snapshot_id"),
        captured_at=read.timestamp(read.field(obj, "captured_at", ""), "captured_at"),
        request=_request(read, read.field(obj, "request", "")),
        reassignments=moves,
        elections=elections,
        skipped=_each(read, obj, "skipped", _skip),
        brokers=_each(read, obj, "brokers", _load),
        figures=_figures(read, read.field(obj, "figures", "")),
        goals=tuple(
            _goal(read, v, path_of("goals", i)) for i, v in enumerate(read.array(obj.get("goals", []), "goals"))
        ),
        dir_moves=_dir_moves(read, obj),
    )


def _dir_moves(read: JsonReader, obj: Mapping[str, Any]) -> tuple[DirMove, ...]:
    """A log dir balance's moves (absent on other plans); a replica moves between dirs at most once."""
    moves = tuple(_dir_move(read, v, path_of("dir_moves", i))
                  for i, v in enumerate(read.array(obj.get("dir_moves", []), "dir_moves")))  # fmt: skip
    seen: set[tuple[str, int, int]] = set()
    for i, d in enumerate(moves):
        key = (d.topic, d.partition, d.broker)
        if key in seen:
            read.fail(path_of("dir_moves", i), f"{d.topic}-{d.partition} on broker {d.broker} is listed twice")
        if d.source_dir == d.target_dir:
            read.fail(path_of(path_of("dir_moves", i), "target_dir"), f"is its source dir {d.source_dir!r}")
        seen.add(key)
    return moves


def _dir_move(read: JsonReader, value: object, path: str) -> DirMove:
    d = read.mapping(value, path)
    return DirMove(
        topic=read.topic(read.field(d, "topic", path), path_of(path, "topic")),
        partition=read.partition(read.field(d, "partition", path), path_of(path, "partition")),
        broker=read.broker_id(read.field(d, "broker", path), path_of(path, "broker")),
        source_dir=read.text(read.field(d, "source_dir", path), path_of(path, "source_dir")),
        target_dir=read.text(read.field(d, "target_dir", path), path_of(path, "target_dir")),
        size_bytes=read.integer(read.field(d, "size_bytes", path), path_of(path, "size_bytes"), 0, INT64_MAX, "bytes"),
    )


def _each(
    read: JsonReader, obj: Mapping[str, Any], key: str, parse: Callable[[JsonReader, object, str], T]
) -> tuple[T, ...]:
    """The array `key` of the document, each element read by `parse`."""
    return tuple(parse(read, v, path_of(key, i)) for i, v in enumerate(read.array(read.field(obj, key, ""), key)))


def _move(read: JsonReader, value: object, path: str) -> Move:
    m = read.mapping(value, path)
    size = read.field(m, "size_bytes", path)
    return Move(
        topic=read.topic(read.field(m, "topic", path), path_of(path, "topic")),
        partition=read.partition(read.field(m, "partition", path), path_of(path, "partition")),
        current=read.replicas(read.field(m, "current", path), path_of(path, "current"), empty=True),
        target=read.replicas(read.field(m, "target", path), path_of(path, "target")),
        size_bytes=None if size is None else read.integer(size, path_of(path, "size_bytes"), 0, INT64_MAX, "bytes"),
    )


def _election(read: JsonReader, value: object, path: str) -> Election:
    e = read.mapping(value, path)
    leader = read.field(e, "leader", path)
    return Election(
        topic=read.topic(read.field(e, "topic", path), path_of(path, "topic")),
        partition=read.partition(read.field(e, "partition", path), path_of(path, "partition")),
        leader=read.integer(leader, path_of(path, "leader"), NO_LEADER, INT32_MAX, "a broker id, or -1 for none"),
        preferred=read.broker_id(read.field(e, "preferred", path), path_of(path, "preferred")),
    )


def _skip(read: JsonReader, value: object, path: str) -> Skip:
    s = read.mapping(value, path)
    partition = read.field(s, "partition", path)
    return Skip(
        topic=read.text(read.field(s, "topic", path), path_of(path, "topic")),  # a name asked for may not exist
        partition=None if partition is None else read.partition(partition, path_of(path, "partition")),
        reason=read.text(read.field(s, "reason", path), path_of(path, "reason"), empty=True),
    )


def _load(read: JsonReader, value: object, path: str) -> BrokerLoad:
    b = read.mapping(value, path)
    counts = {name: read.count(read.field(b, name, path), path_of(path, name)) for name in _BROKER_COUNTS}
    sizes = {name: _optional_number(read, b.get(name), path_of(path, name), whole=True) for name in _BROKER_BYTES}
    rates = {name: _optional_number(read, b.get(name), path_of(path, name), whole=False) for name in _BROKER_RATES}
    return BrokerLoad(
        broker_id=read.broker_id(read.field(b, "broker_id", path), path_of(path, "broker_id")),
        rack=read.optional_text(read.field(b, "rack", path), path_of(path, "rack")),
        registered=read.boolean(read.field(b, "registered", path), path_of(path, "registered")),
        **counts,
        **sizes,
        **rates,
    )


def _optional_number(read: JsonReader, value: object, path: str, *, whole: bool) -> Any:
    """A load figure of a load-aware plan (absent or null on count-based plans): bytes or bytes/s >= 0."""
    if value is None:
        return None
    if whole:
        return read.integer(value, path, 0, INT64_MAX, "bytes")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
        read.fail(path, f"expected a rate in bytes/s >= 0, got {shown(value)}")
    return float(value)


def _goal(read: JsonReader, value: object, path: str) -> Goal:
    g = read.mapping(value, path)
    broker = g.get("broker")
    before, after = (read.json_value(g.get(k), path_of(path, k)) for k in ("before", "after"))
    for key, number in (("before", before), ("after", after)):
        if number is not None and (isinstance(number, bool) or not isinstance(number, int | float)):
            read.fail(path_of(path, key), f"expected a number or null, got {shown(number)}")
    return Goal(
        goal=read.text(read.field(g, "goal", path), path_of(path, "goal")),
        hard=read.boolean(read.field(g, "hard", path), path_of(path, "hard")),
        status=cast(GoalStatus, read.choice(read.field(g, "status", path), path_of(path, "status"), GOAL_STATUSES)),
        detail=read.text(g.get("detail", ""), path_of(path, "detail"), empty=True),
        broker=None if broker is None else read.broker_id(broker, path_of(path, "broker")),
        before=before,
        after=after,
    )


def _request(read: JsonReader, value: object) -> dict[str, Any]:
    """The planner's request: any JSON object, with the keys the executor compares Params against typed."""
    request = {
        read.text(k, "request"): read.json_value(v, path_of("request", k))
        for k, v in read.mapping(value, "request").items()
    }
    topics = request.get("topics")
    if topics is not None:
        for i, t in enumerate(read.array(topics, "request.topics")):
            read.topic(t, path_of("request.topics", i))
    for key in ("brokers", "exclude_brokers", CORDON_FIRST, UNCORDON_FIRST):
        if request.get(key) is not None:
            read.replicas(request[key], path_of("request", key), empty=True)
    if request.get("replication_factor") is not None:
        read.integer(request["replication_factor"], "request.replication_factor", 1, REPLICATION_FACTOR_MAX)
    return request


def _figures(read: JsonReader, value: object) -> dict[str, int | float | None]:
    figures: dict[str, int | float | None] = {}
    for key, number in read.mapping(value, "figures").items():
        path = path_of("figures", read.text(key, "figures"))
        checked = read.json_value(number, path)
        if checked is not None and not whole_number(checked) and not isinstance(checked, float):
            read.fail(path, f"expected a number or null, got {shown(checked)}")
        figures[key] = checked
    return figures


def _no_partition_twice(read: JsonReader, path: str, partitions: list[tuple[str, int]]) -> None:
    seen: set[tuple[str, int]] = set()
    for i, tp in enumerate(partitions):
        if tp in seen:
            read.fail(path_of(path, i), f"{tp[0]}-{tp[1]} is listed twice")
        seen.add(tp)
