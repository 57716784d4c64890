"""What a silence covers, and the silences that are refused (no end, no reason, too long, bad patterns)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.silences import Silence, decode, encode, kept, new_silence, parse_duration, silencing
from tests.unit.alerting.alerts import HOUR, T0


def silence(**fields: object) -> Silence:
    base: dict = {"starts_at": T0, "ends_at": T0 + HOUR, "reason": "broker 2 disk swap, ask ops", "created_by": "ana"}
    return new_silence("payments", **(base | fields))


def test_a_whole_cluster_silence_covers_every_problem_and_a_named_one_only_what_it_names() -> None:
    window = silence()
    assert window.covers("no_broker_down", brokers=[2]) and window.covers("anything")
    broker = silence(brokers=[2])
    assert broker.covers("no_broker_down", brokers=[2])
    assert not broker.covers("no_broker_down", brokers=[2, 3])  # another broker is down too: it pages
    # a partition under its min ISR while broker 2 is down still pages: produce fails there
    assert not broker.covers("no_under_min_isr_partitions", topics=["orders"], partitions=[("orders", 0)])
    topics = silence(topics=["orders", "audit-.*"])
    assert topics.covers("no_under_min_isr_partitions", topics=["orders", "audit-eu"])
    assert not topics.covers("no_under_min_isr_partitions", topics=["orders", "payments"])
    assert not topics.covers("no_under_min_isr_partitions", topics=["orders-dlq"])  # whole names only
    assert not topics.covers("no_broker_down", brokers=[2])
    groups = silence(groups=["billing-.*"])
    assert groups.covers("no_group_in_err:billing-eu", group="billing-eu")
    assert not groups.covers("no_group_in_err:search", group="search")
    keyed = silence(brokers=[2], keys=["leader_imbalance_within_threshold"])
    assert keyed.covers("leader_imbalance_within_threshold", brokers=[2])
    assert not keyed.covers("no_broker_down", brokers=[2])


def test_a_plans_silence_covers_its_own_partitions_and_brokers_only() -> None:
    plan = silence(partitions=[("orders", 0), ("orders", 1)], brokers=[1, 2], keys=["under_replicated_partitions"])
    assert plan.covers("under_replicated_partitions", topics=["orders"], partitions=[("orders", 0)])
    assert not plan.covers("under_replicated_partitions", topics=["orders"], partitions=[("orders", 0), ("orders", 2)])
    assert not plan.covers("under_replicated_partitions", topics=["orders"])  # more rows than listed: unknown
    assert not plan.covers("no_broker_down", brokers=[1])


def test_the_active_silence_ending_last_wins_and_expired_ones_are_kept_a_week() -> None:
    short, long = silence(), silence(ends_at=T0 + 3 * HOUR)
    assert silencing([short, long], T0 + HOUR / 2, "k") == long
    assert silencing([short, long], T0 + 3 * HOUR, "k") is None  # the end is exclusive
    assert silencing([silence(starts_at=T0 + HOUR, ends_at=T0 + 2 * HOUR)], T0, "k") is None  # not yet
    assert kept([short, long], T0 + timedelta(days=7, hours=1, minutes=1)) == (long,)
    assert kept([short], T0 + timedelta(days=7, hours=1, minutes=1)) == ()


def test_ending_a_silence_early_keeps_who_ended_it() -> None:
    s = silence(ends_at=T0 + 2 * HOUR)
    ended = s.ended(T0 + HOUR, "bo")
    assert (ended.ends_at, ended.ended_by, ended.active(T0 + HOUR)) == (T0 + HOUR, "bo", False)
    assert s.ended(T0 + 3 * HOUR, "bo") == s  # already over
    future = silence(starts_at=T0 + HOUR, ends_at=T0 + 2 * HOUR).ended(T0, "bo")
    assert not future.active(T0 + HOUR)
    assert decode(encode(ended)) == ended


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"ends_at": None}, "needs an end"),
        ({"reason": None}, "give a reason"),
        ({"reason": "  "}, "give a reason"),
        ({"ends_at": T0}, "before it starts"),
        ({"ends_at": T0 + timedelta(days=31)}, "longer than the longest silence"),
        ({"created_by": ""}, "created_by"),
        ({"topics": ["orders("]}, "topics[0]: 'orders(' is not a regular expression"),
        ({"groups": [""]}, "groups[0]: an empty pattern"),
        ({"brokers": [-1]}, "broker -1 is not a broker id"),
        ({"brokers": [True]}, "broker True is not a broker id"),
        ({"starts_at": T0.replace(tzinfo=None)}, "timezone-aware"),
    ],
)
def test_a_silence_without_an_end_or_a_reason_is_refused(fields: dict, says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        silence(**fields)
    assert says in str(refused.value) and ("'payments'" in str(refused.value))


def test_durations() -> None:
    assert [parse_duration(t, "x") for t in ("90m", "2h", "1.5h", "1d", "30 min")] == [
        timedelta(minutes=90), timedelta(hours=2), timedelta(hours=1.5), timedelta(days=1), timedelta(minutes=30),
    ]  # fmt: skip
    for bad in ("", "2", "0h", "-1h", "2 weeks", "1e3h"):
        with pytest.raises(ConfigError, match="--for"):
            parse_duration(bad, "silence add --for")
