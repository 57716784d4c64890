"""Which of a plan's replication throttles may go now: a pure rule on a live read.

The executor removes the throttles it set only when no reassignment is in flight anywhere (as
Kafka's own tool does), so a plan whose last batch finished while another tool's reassignment was
still moving keeps them (recorded in its progress document). `clear_throttles` removes them on
the operator's request once nothing of the plan is in flight; what another move still needs stays:

* a topic's `leader/follower.replication.throttled.replicas` stay while a partition of that topic is
  in flight (they throttle that move);
* a broker's `leader/follower.replication.throttled.rate` stay while a partition in flight has a
  replica on that broker in its topic's throttled-replica lists (`"p:broker,..."`, or `*`: every
  replica of the partition, current or adding): that rate is what the move is throttled to. A rate
  no throttled move in flight names throttles nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from kafka_ops.model.cluster import ClusterSnapshot, TopicPartition, tp_text
from kafka_ops.planning.plan import FOLLOWER_THROTTLED, LEADER_THROTTLED
from kafka_ops.remediation.live import assigned

TOPIC_THROTTLES = (LEADER_THROTTLED, FOLLOWER_THROTTLED)


@dataclass(frozen=True)
class Clearance:
    """The throttles to remove now, and those kept with why (entity → reason)."""

    topics: tuple[str, ...]
    brokers: tuple[int, ...]
    kept: dict[str, str] = field(default_factory=dict)


def throttled_topics(live: ClusterSnapshot) -> dict[str, dict[str, str]]:
    """Topics whose dynamic config holds a throttled-replica list, with those lists."""
    return {
        c.entity_name: {k: c.config[k] for k in TOPIC_THROTTLES if c.config.get(k)}
        for c in live.configs
        if c.entity_type == "topic" and any(c.config.get(k) for k in TOPIC_THROTTLES)
    }


def listed_brokers(lists: Mapping[str, str], tp: TopicPartition, replicas: Collection[int]) -> set[int]:
    """The brokers `lists` (a topic's throttled-replica configs) throttle for partition `tp`;
    `replicas`: every replica of it (current and adding), which `*` stands for."""
    out: set[int] = set()
    for value in lists.values():
        for entry in (e.strip() for e in value.split(",")):
            if entry == "*":
                out |= set(replicas)
            partition, _, broker = entry.partition(":")
            if partition.strip() == str(tp[1]) and broker.strip().isdigit():
                out.add(int(broker))
    return out


def brokers_in_throttled_moves(live: ClusterSnapshot, moving: Mapping[TopicPartition, tuple[int, ...]]) -> set[int]:
    """Brokers a throttled move in flight goes through (module docstring)."""
    lists = throttled_topics(live)
    out: set[int] = set()
    for tp, target in moving.items():
        if tp[0] in lists:
            out |= listed_brokers(lists[tp[0]], tp, set(assigned(live, tp) or ()) | set(target))
    return out


def clearance(
    topics: Collection[str],
    brokers: Collection[int],
    live: ClusterSnapshot,
    moving: Mapping[TopicPartition, tuple[int, ...]],
) -> Clearance:
    """Of the throttles set on `topics` and `brokers`, those no move in flight (`moving`) needs."""
    kept: dict[str, str] = {}
    moving_by_topic: dict[str, list[TopicPartition]] = {}
    for tp in moving:
        moving_by_topic.setdefault(tp[0], []).append(tp)
    clear_topics = []
    for t in sorted(set(topics)):
        if t not in live.topics:
            continue  # deleted: its config went with it
        if t in moving_by_topic:
            kept[f"topic {t}"] = f"{tp_text(moving_by_topic[t])} in flight"
        else:
            clear_topics.append(t)
    busy = brokers_in_throttled_moves(live, moving)
    clear_brokers = []
    for b in sorted(set(brokers)):
        if b in busy:
            using = [tp for tp in moving if b in brokers_in_throttled_moves(live, {tp: moving[tp]})]
            kept[f"broker {b}"] = f"throttled move(s) in flight through it: {tp_text(using)}"
        else:
            clear_brokers.append(b)
    return Clearance(tuple(clear_topics), tuple(clear_brokers), kept)
