"""What would Kafka's other assignors give this group? A what-if on the group's real members.

For each Stable classic consumer group, these questions, answered by Kafka's own assignors
(`kafka_ops.assignors`, through a JVM):

* **Prediction**: run the group's own assignor on exactly the JoinGroup metadata its members
  sent (subscriptions, owned partitions, generations, racks, user data). It reproduces today's
  assignment unless the inputs moved since the last rebalance (partitions added, a member's
  metadata no longer matching): then `prediction_matches` is false and the next rebalance will
  move partitions.
* **What-if**: for each of `range`, `roundrobin`, `sticky`, `cooperative-sticky`, the assignment
  the same members would get if they rejoined with that assignor while holding today's
  assignment (`Member.rejoining`: what kafka-clients 3.9 sends), settled through a cooperative
  group's follow-up rebalances. Rack-aware where members and replicas have racks.
* **Consumer protocol** (KIP-848): what the group coordinator's own `uniform` and `range`
  (Kafka 4.4's server-side assignors, same JVM) would give the same members after an online
  upgrade to `group.protocol=consumer`: each member's subscribed topics and rack from its
  subscription, its current assignment today's (the coordinator turns a classic group's
  assignment into the consumer group's target assignment, which the assignors keep where they
  can). Outcome rows carry `protocol` ("classic" or "consumer"): both protocols have a `range`.

A switch is recommended only when materially better than today: partitions-per-member spread
(max - min) lower by at least `min_improvement`, or the lag spread between members at most half
of today's with no worse partition spread. Among those: lowest spread, then lag spread, then
fewest partitions changing owner, then the least disruptive change (cooperative first; moving to
the consumer protocol last, as it takes a client upgrade and broker settings). A recommendation of
the consumer protocol carries its migration steps (`MIGRATION_STEPS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from kafka_ops.assignors import (
    ASSIGNORS,
    SERVER_ASSIGNORS,
    AssignFailure,
    AssignorBridge,
    AssignorBridgeError,
    AssignorName,
    AssignResult,
    ClusterLayout,
    ConsumerGroupInput,
    ConsumerMember,
    GroupInput,
    Member,
    ServerAssignResult,
)
from kafka_ops.errors import KafkaOpsError
from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.model.groups import ConsumerGroup, TopicPartition

Protocol = Literal["classic", "consumer"]
CLASSIC: Protocol = "classic"
CONSUMER: Protocol = "consumer"

PREFERENCE: tuple[tuple[Protocol, str], ...] = (
    (CLASSIC, "cooperative-sticky"),
    (CLASSIC, "sticky"),
    (CLASSIC, "roundrobin"),
    (CLASSIC, "range"),
    (CONSUMER, "uniform"),
    (CONSUMER, "range"),
)
"""Tie-break among equally good assignors: cooperative rebalancing never stops the whole group; a
move to the consumer protocol is the bigger change (clients and brokers), so it comes last."""

MIGRATION_STEPS = (
    "move to the consumer protocol (KIP-848) online: (1) brokers on Kafka 4.0+ with the consumer "
    "protocol enabled (group.version feature >= 1: kafka-features.sh describe; "
    "group.coordinator.rebalance.protocols includes consumer, the 4.x default) and {assignor} among "
    "group.consumer.assignors (default uniform,range); (2) the broker's group.consumer.migration.policy "
    "must allow the upgrade (upgrade or bidirectional, the default; disabled refuses to convert a "
    "non-empty classic group); the group must use the consumer embedded protocol and a built-in client "
    "assignor (a custom one blocks the conversion), and have no more members than group.consumer.max.size; "
    "(3) upgrade the consumers to a client that speaks the consumer protocol (Java kafka-clients 4.0+, "
    "where it is GA); (4) rolling restart them one at a time with group.protocol=consumer and "
    "group.remote.assignor={assignor}, removing partition.assignment.strategy, session.timeout.ms and "
    "heartbeat.interval.ms (not supported with the consumer protocol: the broker's "
    "group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms apply). The first "
    "member to rejoin converts the group, keeping today's assignment as its target; classic members "
    "keep working in the mixed group until restarted. To roll back, restart with group.protocol=classic "
    "(the group converts back when the last consumer-protocol member leaves, if the policy allows downgrade)"
)
"""How to move a classic group to the consumer protocol (`{assignor}`: the recommended server-side one)."""


@dataclass(frozen=True, slots=True)
class MemberToday:
    member_id: str
    group_instance_id: str | None
    client_id: str
    subscription: bytes
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class GroupToday:
    """A Stable consumer group as collected: its assignor (selected protocol) and members.
    `protocol` consumer: a group of the consumer protocol (KIP-848), assigned by the broker."""

    group_id: str
    assignor: str
    members: tuple[MemberToday, ...]
    protocol: Protocol = CLASSIC


@dataclass(frozen=True, slots=True)
class Spread:
    """How evenly an assignment spreads partitions and lag over the members."""

    min_partitions: int
    max_partitions: int
    lag_spread: int

    @property
    def spread(self) -> int:
        return self.max_partitions - self.min_partitions


@dataclass(frozen=True, slots=True)
class Outcome:
    """One assignor's what-if for one group (`error` set when Kafka's assignor refused it).

    `protocol` says whose assignor it is: a client's (`classic`) or the group coordinator's
    (`consumer`, KIP-848), whose assignment members reach without a stop-the-world rebalance, so
    `rebalance_rounds` is None there; `revoked_partitions` counts what members give up.
    """

    group_id: str
    assignor: str
    is_current: bool
    spread: Spread | None
    moved_partitions: int | None
    rebalance_rounds: int | None
    revoked_partitions: int | None
    error: str | None = None
    protocol: Protocol = CLASSIC


@dataclass(frozen=True, slots=True)
class Verdict:
    """Per group: today's spread, whether Kafka reproduces today's assignment, the advice."""

    group_id: str
    assignor: str
    members: int
    today: Spread
    prediction_matches: bool | None
    prediction_moves: int | None
    recommended: str | None
    reason: str
    error: str | None = None
    recommended_protocol: Protocol | None = None


def layout_of(snapshot: ClusterSnapshot) -> ClusterLayout:
    """The partition layout a group leader would see: replicas and broker racks."""
    return ClusterLayout(
        brokers={b.broker_id: b.rack for b in snapshot.brokers.values()},
        topics={t.topic: tuple(t.partitions[p] for p in sorted(t.partitions)) for t in snapshot.topics.values()},
    )


def topic_ids_of(snapshot: ClusterSnapshot) -> dict[str, str]:
    """Kafka's topic ids, where the snapshot has them (for the server-side assignors)."""
    return {t.topic: t.topic_id for t in snapshot.topics.values() if t.topic_id}


def group_today(group: ConsumerGroup) -> GroupToday:
    """A collected group as the what-if takes it (members without metadata get empty bytes)."""
    members = tuple(
        MemberToday(m.member_id, m.group_instance_id, m.client_id, m.subscription or b"", m.assignment)
        for m in group.members
    )
    return GroupToday(group.group_id, group.assignor, members)


def spread_of(assignment: Mapping[str, Sequence[TopicPartition]], lags: Mapping[TopicPartition, int]) -> Spread:
    counts = [len(tps) for tps in assignment.values()]
    member_lags = [sum(lags.get(tp, 0) for tp in tps) for tps in assignment.values()]
    return Spread(
        min(counts, default=0), max(counts, default=0), max(member_lags, default=0) - min(member_lags, default=0)
    )


def moved(before: Mapping[str, Sequence[TopicPartition]], after: Mapping[str, Sequence[TopicPartition]]) -> int:
    """Partitions whose owner differs (a partition unassigned before and assigned after counts)."""
    owner = {tp: m for m, tps in before.items() for tp in tps}
    return sum(1 for m, tps in after.items() for tp in tps if owner.get(tp) != m)


def what_if(
    bridge: AssignorBridge,
    layout: ClusterLayout,
    groups: Sequence[GroupToday],
    lags: Mapping[str, Mapping[TopicPartition, int]],
    min_improvement: int = 2,
    *,
    topic_ids: Mapping[str, str] | None = None,
) -> tuple[list[Outcome], list[Verdict]]:
    """Outcomes (group x assignor, both protocols) and one verdict per group; `lags` is group →
    partition → lag; `topic_ids` Kafka's topic ids where known (the server-side assignors order
    topics by id in places; unknown ones get an id fixed by the name)."""
    decoded: dict[str, tuple[Member, ...]] = {}
    verdicts: dict[str, Verdict] = {}
    for g in groups:
        today = {m.member_id: m.assignment for m in g.members}
        try:
            decoded[g.group_id] = tuple(
                Member.from_subscription(m.member_id, m.group_instance_id, m.subscription) for m in g.members
            )
        except KafkaOpsError as e:
            spread = spread_of(today, lags.get(g.group_id, {}))
            verdicts[g.group_id] = Verdict(g.group_id, g.assignor, len(g.members), spread, None, None, None, "", str(e))
    ready = [g for g in groups if g.group_id in decoded]
    predictions = _predictions(bridge, layout, ready, decoded)
    outcomes: list[Outcome] = []
    for name in ASSIGNORS:
        jobs = [(_rejoining(g, decoded[g.group_id], name), name) for g in ready]
        results = bridge.assign_many(layout, jobs) if jobs else []
        for g, result in zip(ready, results, strict=True):
            outcomes.append(_outcome(g, name, result, lags.get(g.group_id, {})))
    upgraded = [(g, as_consumer_group(g, decoded[g.group_id])) for g in ready]
    server, _ = server_outcomes(bridge, layout, upgraded, lags, topic_ids=topic_ids or {})
    outcomes.extend(server)
    for g in ready:
        mine = [o for o in outcomes if o.group_id == g.group_id]
        verdicts[g.group_id] = verdict_of(
            g, mine, predictions.get(g.group_id), lags.get(g.group_id, {}), min_improvement
        )
    return outcomes, [verdicts[g.group_id] for g in groups]


def _predictions(
    bridge: AssignorBridge,
    layout: ClusterLayout,
    groups: Sequence[GroupToday],
    decoded: Mapping[str, tuple[Member, ...]],
) -> dict[str, AssignResult | AssignFailure]:
    """Each group's own assignor on the metadata its members really sent."""
    out: dict[str, AssignResult | AssignFailure] = {}
    for name in ASSIGNORS:
        mine = [g for g in groups if g.assignor == name]
        jobs = [(GroupInput(decoded[g.group_id], g.group_id), name) for g in mine]
        for g, result in zip(mine, bridge.assign_many(layout, jobs) if jobs else [], strict=True):
            out[g.group_id] = result
    return out


def _rejoining(g: GroupToday, members: Sequence[Member], assignor: AssignorName) -> GroupInput:
    generation = max((m.generation for m in members), default=-1) + 1
    return GroupInput(
        tuple(
            Member.rejoining(
                m.member_id,
                m.topics,
                assignor,
                today.assignment,
                max(generation, 1),
                group_instance_id=m.group_instance_id,
                rack=m.rack,
            )
            for m, today in zip(members, g.members, strict=True)
        ),
        g.group_id,
    )


def as_consumer_group(g: GroupToday, members: Sequence[Member]) -> ConsumerGroupInput:
    """The group as the coordinator holds it after an online upgrade: each member's subscribed
    topics and rack from its subscription, today's assignment as its current one."""
    return ConsumerGroupInput(
        tuple(
            ConsumerMember(m.member_id, m.topics, today.assignment, m.group_instance_id, m.rack)
            for m, today in zip(members, g.members, strict=True)
        ),
        g.group_id,
    )


def server_outcomes(
    bridge: AssignorBridge,
    layout: ClusterLayout,
    jobs: Sequence[tuple[GroupToday, ConsumerGroupInput]],
    lags: Mapping[str, Mapping[TopicPartition, int]],
    *,
    topic_ids: Mapping[str, str],
) -> tuple[list[Outcome], dict[tuple[str, str], ServerAssignResult | AssignFailure]]:
    """What the consumer protocol's server-side assignors would give each group (`jobs`: the group
    as collected, and as the coordinator would hold it), and their raw results by (group, assignor).
    Without Kafka 4's jars (or when the JVM refuses the batch) each group gets an error row; the
    client-side rows stand."""
    out: list[Outcome] = []
    raw: dict[tuple[str, str], ServerAssignResult | AssignFailure] = {}
    for name in SERVER_ASSIGNORS:
        results: Sequence[ServerAssignResult | AssignFailure]
        try:
            results = (
                bridge.server_assign_many(layout, [(c, name) for _, c in jobs], topic_ids=topic_ids) if jobs else []
            )
        except AssignorBridgeError as e:
            results = [AssignFailure(g.group_id, name, f"server-side assignors unavailable: {e}") for g, _ in jobs]
        for (g, _), result in zip(jobs, results, strict=True):
            raw[g.group_id, name] = result
            out.append(_server_outcome(g, name, result, lags.get(g.group_id, {})))
    return out, raw


def _server_outcome(
    g: GroupToday, name: str, result: ServerAssignResult | AssignFailure, lags: Mapping[TopicPartition, int]
) -> Outcome:
    current = g.protocol == CONSUMER and g.assignor == name
    if isinstance(result, AssignFailure):
        return Outcome(g.group_id, name, current, None, None, None, None, result.message, CONSUMER)
    today = {m.member_id: m.assignment for m in g.members}
    after = {m: tuple(result.assignment.get(m, ())) for m in today}
    revoked = sum(len(set(today[m]) - set(after[m])) for m in today)
    return Outcome(
        g.group_id, name, current, spread_of(after, lags), moved(today, after), None, revoked, None, CONSUMER
    )


def _outcome(
    g: GroupToday, name: str, result: AssignResult | AssignFailure, lags: Mapping[TopicPartition, int]
) -> Outcome:
    current = g.assignor == name
    if isinstance(result, AssignFailure):
        return Outcome(g.group_id, name, current, None, None, None, None, result.message)
    today = {m.member_id: m.assignment for m in g.members}
    after = {m: tuple(result.assignment.get(m, ())) for m in today}
    revoked = sum(len(tps) for tps in result.revoked.values())
    return Outcome(g.group_id, name, current, spread_of(after, lags), moved(today, after), len(result.rounds), revoked)


def verdict_of(
    g: GroupToday,
    outcomes: Sequence[Outcome],
    prediction: AssignResult | ServerAssignResult | AssignFailure | None,
    lags: Mapping[TopicPartition, int],
    min_improvement: int,
) -> Verdict:
    """The advice for `g` from its `outcomes` (both protocols) by the "materially better" rule."""
    today = {m.member_id: m.assignment for m in g.members}
    now = spread_of(today, lags)
    matches: bool | None = None
    moves: int | None = None
    if isinstance(prediction, (AssignResult, ServerAssignResult)):
        predicted = {m: tuple(prediction.assignment.get(m, ())) for m in today}
        moves = moved(today, predicted)
        matches = all(sorted(predicted[m]) == sorted(today[m]) for m in today)
    better = [
        (o, o.spread)
        for o in outcomes
        if o.spread is not None
        and not o.is_current
        and (
            o.spread.spread <= now.spread - min_improvement
            or (now.lag_spread > 0 and o.spread.lag_spread * 2 <= now.lag_spread and o.spread.spread <= now.spread)
        )
    ]
    if not better:
        return Verdict(
            g.group_id, g.assignor, len(g.members), now, matches, moves, None, "no assignor does materially better"
        )
    best, best_spread = min(
        better,
        key=lambda pair: (
            pair[1].spread,
            pair[1].lag_spread,
            pair[0].moved_partitions,
            PREFERENCE.index((pair[0].protocol, pair[0].assignor)),
        ),
    )
    target = best.assignor if best.protocol == CLASSIC else f"the consumer protocol's {best.assignor} assignor"
    reason = (
        f"switch {g.group_id} from {g.assignor or 'unknown'} to {target}: partitions per member max-min "
        f"{now.spread} -> {best_spread.spread}, lag spread {now.lag_spread:,} -> {best_spread.lag_spread:,}; "
        f"{best.moved_partitions} partitions change owner"
    )
    if best.protocol == CONSUMER and g.protocol == CONSUMER:
        reason += (
            f"; set group.remote.assignor={best.assignor} on the consumers (a rolling restart; the broker's "
            "group.consumer.assignors must list it)"
        )
    elif best.protocol == CONSUMER:
        reason += "; " + MIGRATION_STEPS.format(assignor=best.assignor)
    elif best.assignor == "cooperative-sticky" and g.assignor in {"range", "roundrobin", "sticky"}:
        reason += " (upgrade in two rolling bounces, KIP-429: first list both assignors, then drop the old one)"
    return Verdict(
        g.group_id, g.assignor, len(g.members), now, matches, moves, best.assignor, reason, None, best.protocol
    )
