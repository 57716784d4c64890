"""The JSON the bridge exchanges with `AssignorBridge.java`, one object per line.

In assign messages, topic names travel once per message (`names`); subscriptions list name
indexes, and partition lists are flat `[name index, partition, ...]`, in order (Kafka's tests
compare ordered lists): a million partitions then cost a few megabytes of integers rather than
a million small arrays. The protocol cross-check messages use readable runs,
`[[topic, [p, ...]], ...]`. Bytes travel as base64. Pure functions, tested without a JVM.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from kafka_ops.assignors import protocol
from kafka_ops.assignors.model import (
    AssignFailure,
    AssignorName,
    AssignResult,
    ClusterLayout,
    GroupInput,
    KafkaTestHooks,
    Member,
    Round,
    revoked_along,
)
from kafka_ops.model.groups import TopicPartition

Json = dict[str, Any]


def runs(partitions: Iterable[TopicPartition]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for topic, partition in partitions:
        if not out or out[-1][0] != topic:
            out.append([topic, []])
        out[-1][1].append(partition)
    return out


def from_runs(value: Sequence[Sequence[Any]]) -> tuple[TopicPartition, ...]:
    return tuple((topic, p) for topic, numbers in value for p in numbers)


class NameTable:
    """Topic names of one message, numbered in order of first use."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._index: dict[str, int] = {}

    def index(self, name: str) -> int:
        i = self._index.get(name)
        if i is None:
            i = self._index[name] = len(self.names)
            self.names.append(name)
        return i

    def flat(self, partitions: Iterable[TopicPartition]) -> list[int]:
        out: list[int] = []
        for topic, partition in partitions:
            i = self._index.get(topic)
            if i is None:
                i = self._index[topic] = len(self.names)
                self.names.append(topic)
            out.append(i)
            out.append(partition)
        return out


def from_flat(value: Sequence[int], names: Sequence[str]) -> tuple[TopicPartition, ...]:
    return tuple(zip([names[i] for i in value[0::2]], value[1::2], strict=True))


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def from_b64(value: str | None, where: str) -> bytes | None:
    if value is None:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"{where}: the bridge sent bytes that are not base64: {e}") from e


def member_json(member: Member, names: NameTable) -> Json:
    out: Json = {"member_id": member.member_id, "group_instance_id": member.group_instance_id}
    if member.metadata is not None:
        out["metadata"] = b64(member.metadata)
        return out
    out["topics"] = [names.index(t) for t in member.topics]
    out["user_data"] = b64(member.user_data)
    out["owned"] = names.flat(member.owned)
    out["generation"] = member.generation
    out["rack"] = member.rack
    out["version"] = member.version
    return out


def subscription_json(sub: protocol.Subscription) -> Json:
    return {
        "topics": list(sub.topics),
        "user_data": b64(sub.user_data),
        "owned": runs(sub.owned_partitions),
        "generation": sub.generation_id,
        "rack": sub.rack_id,
    }


def parse_subscription(value: Json, version: int) -> protocol.Subscription:
    return protocol.Subscription(
        topics=tuple(value["topics"]),
        user_data=from_b64(value["user_data"], "subscription user_data"),
        owned_partitions=from_runs(value["owned"]),
        generation_id=value["generation"],
        rack_id=value["rack"],
        version=version,
    )


def cluster_json(cluster: ClusterLayout) -> Json:
    topics: list[list[Any]] = []
    for name, replicas in cluster.topics.items():
        # A partition count says the same as empty replica lists, in far fewer bytes; replica
        # tuples go as they are (json writes tuples as arrays).
        layout: Any = len(replicas) if all(not r for r in replicas) else replicas
        topics.append([name, layout])
    return {"brokers": [[broker, rack] for broker, rack in cluster.brokers.items()], "topics": topics}


def group_json(
    group: GroupInput, assignor: AssignorName, settle: bool, hooks: KafkaTestHooks, names: NameTable
) -> Json:
    return {
        "group_id": group.group_id,
        "assignor": assignor,
        "settle": settle,
        "prefer_rack_aware_logic": hooks.prefer_rack_aware_logic,
        "check_sticky": hooks.check_sticky,
        "members": [member_json(m, names) for m in group.members],
    }


def parse_round(value: Json, names: Sequence[str], where: str) -> Round:
    transferring = value.get("transferring")
    return Round(
        assignment={member: from_flat(parts, names) for member, parts in value["assignment"]},
        user_data={member: from_b64(data, where) or b"" for member, data in value["user_data"]},
        transferring=None
        if transferring is None
        else {tp: owner for owner, parts in transferring for tp in from_flat(parts, names)},
        sticky=value.get("sticky"),
        assign_seconds=float(value["assign_seconds"]),
    )


def parse_group_result(
    value: Json, group: GroupInput, assignor: AssignorName, names: Sequence[str]
) -> AssignResult | AssignFailure:
    if "error" in value:
        return AssignFailure(group.group_id, assignor, str(value["error"]))
    where = f"group {group.group_id!r}"
    rounds = tuple(parse_round(r, names, where) for r in value["rounds"])
    return AssignResult(
        group_id=group.group_id,
        assignor=assignor,
        rounds=rounds,
        settled=bool(value["settled"]),
        revoked=revoked_along(_as_leader_sees(group.members), rounds),
    )


def _as_leader_sees(members: Sequence[Member]) -> list[Member]:
    """Members whose owned partitions are what the leader decodes (raw metadata, version cut-offs)."""
    return [
        dataclasses.replace(m, owned=()) if m.metadata is None and m.version < 1 and m.owned else m for m in members
    ]
