"""The what-if for a group already on the consumer protocol (KIP-848): server-side assignors only.

The broker assigns such a group, so no client assignor applies (its members sent no JoinGroup
metadata). What Kafka 4.4's `uniform` and `range` would give the same members, fed as the group
coordinator holds them (subscribed topics, rack, `group.instance.id`, current assignment), with the
same figures and the same "materially better" rule as for classic groups (`whatif`): the group's
own assignor is the prediction; a switch is a change of `group.remote.assignor`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafka_ops.assignors import AssignorBridge, ClusterLayout, ConsumerGroupInput, ConsumerMember
from kafka_ops.assignors.whatif import (
    CONSUMER,
    GroupToday,
    MemberToday,
    Outcome,
    Verdict,
    server_outcomes,
    spread_of,
    verdict_of,
)
from kafka_ops.model.groups import TopicPartition


@dataclass(frozen=True, slots=True)
class ConsumerProtocolGroup:
    """A Stable consumer-protocol group as collected: the broker's assignor and its members.
    `regex_members` subscribe by regular expression: which topics that means is the broker's
    business, so the what-if cannot run for the group."""

    group_id: str
    assignor: str
    members: tuple[ConsumerMember, ...]
    regex_members: tuple[str, ...] = ()

    def as_today(self) -> GroupToday:
        members = tuple(MemberToday(m.member_id, m.instance_id, "", b"", m.assigned) for m in self.members)
        return GroupToday(self.group_id, self.assignor, members, CONSUMER)


def what_if_consumer_groups(
    bridge: AssignorBridge,
    layout: ClusterLayout,
    groups: Sequence[ConsumerProtocolGroup],
    lags: Mapping[str, Mapping[TopicPartition, int]],
    min_improvement: int = 2,
    *,
    topic_ids: Mapping[str, str] | None = None,
) -> tuple[list[Outcome], list[Verdict]]:
    """Outcomes (group x server-side assignor) and one verdict per group, as `whatif.what_if`."""
    verdicts: dict[str, Verdict] = {}
    jobs: list[tuple[GroupToday, ConsumerGroupInput]] = []
    for g in groups:
        today = g.as_today()
        if g.regex_members:
            spread = spread_of({m.member_id: m.assigned for m in g.members}, lags.get(g.group_id, {}))
            error = f"members {', '.join(g.regex_members)} subscribe by regex, which only the broker resolves"
            verdicts[g.group_id] = Verdict(g.group_id, g.assignor, len(g.members), spread, None, None, None, "", error)
            continue
        jobs.append((today, ConsumerGroupInput(g.members, g.group_id)))
    outcomes, raw = server_outcomes(bridge, layout, jobs, lags, topic_ids=topic_ids or {})
    for today, _ in jobs:
        mine = [o for o in outcomes if o.group_id == today.group_id]
        prediction = raw.get((today.group_id, today.assignor))
        verdicts[today.group_id] = verdict_of(today, mine, prediction, lags.get(today.group_id, {}), min_improvement)
    return outcomes, [verdicts[g.group_id] for g in groups]
