"""Kafka's sticky scale tests (`AbstractStickyAssignorTest`, apache/kafka 3.9), both flavors.

Java bounds each with `@Timeout` over the whole test; the same bound applies here to the time
spent inside Kafka's `assign()` (what the limit is about: the algorithm at that scale). The wall
clock also pays for building and piping a million partitions through JSON, and on a shared
2-core machine it varies with others' load: `bench/assignor_whatif.py` reports it against the
same limits.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafka_ops.assignors import AssignorBridge
from tests.unit.assignors.kafka_harness import RackConfig, StickyTest, consumer_name, topic_name

pytestmark = pytest.mark.slow

FLAVORS = ["sticky", "cooperative-sticky"]


def run_scale_test(
    t: StickyTest,
    has_consumer_rack: bool,
    topic_count: int,
    partition_count: int,
    consumer_count: int,
    topics_of: Callable[[int, list[str]], list[str]],
    java_timeout_s: float,
) -> None:
    """The shared body of Kafka's large tests: assign, rebuild every consumer but the first with
    what it got (at `generationId`), assign again; both within the Java test's time limit."""
    t.initialize_racks(RackConfig.BROKER_AND_CONSUMER_RACK if has_consumer_rack else RackConfig.NO_CONSUMER_RACK)
    topics = [topic_name(i, topic_count) for i in range(topic_count)]
    ppt = {name: t.partition_infos(name, partition_count) for name in topics}
    for i in range(consumer_count):
        t.subscriptions[consumer_name(i, consumer_count)] = t.subscription(topics_of(i, topics), i)

    assignment = t.assignor.assign_partitions(ppt, t.subscriptions)
    for i in range(1, consumer_count):
        consumer = consumer_name(i, consumer_count)
        t.subscriptions[consumer] = t.build_subscription_v2_above(
            topics_of(i, topics), assignment[consumer], t.generation_id, i
        )
    second = t.assignor.assign_partitions(ppt, t.subscriptions)

    assert t.assignor.assign_seconds < java_timeout_s, f"Kafka's assign() took {t.assignor.assign_seconds:.1f}s"
    assert sum(len(p) for p in second.values()) == topic_count * partition_count  # everything assigned


@pytest.fixture(params=FLAVORS)
def t(request: pytest.FixtureRequest, bridge: AssignorBridge) -> StickyTest:
    return StickyTest(bridge, request.param)


# the million-partition cases take a minute each here: `make test-scale` runs them, `make bench` times them
MILLION = pytest.param(False, marks=pytest.mark.scale, id="False")


@pytest.mark.parametrize("has_consumer_rack", [MILLION, True])
def test_large_assignment_and_group_with_uniform_subscription(t: StickyTest, has_consumer_rack: bool) -> None:
    # testLargeAssignmentAndGroupWithUniformSubscription, @Timeout(30): 1 million partitions
    # without racks; 100,000 with (to keep Kafka's own run time down).
    run_scale_test(t, has_consumer_rack, 50 if has_consumer_rack else 500, 2_000, 2_000, lambda i, topics: topics, 30)


@pytest.mark.parametrize("has_consumer_rack", [MILLION, True])
def test_large_assignment_and_group_with_non_equal_subscription(t: StickyTest, has_consumer_rack: bool) -> None:
    # testLargeAssignmentAndGroupWithNonEqualSubscription, @Timeout(90): the last consumer
    # subscribes to the first topic only, which takes the general (unequal) algorithm.
    def topics_of(i: int, topics: list[str]) -> list[str]:
        return topics[:1] if i == 2_000 - 1 else topics

    run_scale_test(t, has_consumer_rack, 50 if has_consumer_rack else 500, 2_000, 2_000, topics_of, 90)


@pytest.mark.parametrize("has_consumer_rack", [False, True])
def test_assignment_and_group_with_non_equal_subscription_not_timeout(t: StickyTest, has_consumer_rack: bool) -> None:
    # testAssignmentAndGroupWithNonEqualSubscriptionNotTimeout, @Timeout(90)
    topic_count = 50 if has_consumer_rack else 100

    def topics_of(i: int, topics: list[str]) -> list[str]:
        return topics[: topic_count // 2] if i % 4 == 0 else topics[topic_count // 2 :]

    run_scale_test(t, has_consumer_rack, topic_count, 200, 500, topics_of, 90)
