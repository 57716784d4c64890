"""Benchmark: Kafka's own assignors through the bridge, for what-ifs and at Kafka's test scales.

1. What-if: 1,000 members over 5,000 partitions (50 topics x 100, 3 replicas on 6 brokers in
   racks a/b/c), every member subscribed to every topic; seconds per assignor (range,
   roundrobin, sticky, cooperative-sticky), best of --runs, in three shapes:
   - fresh: no member owns anything;
   - owned: the group had the assignor's own assignment, then 100 members left and 200 joined;
     the others rejoin as kafka-clients does (`Member.rejoining`): the group grew, so the sticky
     assignors must take partitions from members that keep them, and cooperative-sticky settles
     over its follow-up rebalance (rounds and moved partitions reported);
   - racks: fresh, with member racks (KIP-881 rack-aware paths).
   And the consumer protocol's server-side assignors (KIP-848; Kafka 4.4's group coordinator
   `uniform` and `range`, in the same JVM): fresh, and owned (the group had the assignor's own
   assignment, then 100 members left and 200 joined, each keeping what it held).
2. Kafka's sticky scale tests (`AbstractStickyAssignorTest`, 3.9), their exact sizes and flow
   (assign; every consumer but the first rejoins with what it got; assign again), for both
   StickyAssignorTest and CooperativeStickyAssignorTest, each against its JUnit `@Timeout`:
   the ratio is seconds / limit (below 1 passes).

Each figure has two parts: `seconds` end to end (building the request, JSON both ways, the JVM)
and `assign_seconds` inside Kafka's `assign()` only. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from _timing import best_of

from kafka_ops.assignors import (
    ASSIGNORS,
    SERVER_ASSIGNORS,
    AssignorBridge,
    AssignorName,
    ClusterLayout,
    ConsumerGroupInput,
    ConsumerMember,
    GroupInput,
    KafkaTestHooks,
    Member,
    protocol,
)
from kafka_ops.model.groups import TopicPartition

RACKS = ("a", "b", "c", "d", "e", "f")


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- what-if


def whatif_cluster(topics: int, partitions: int) -> ClusterLayout:
    brokers = {b: RACKS[b % 3] for b in range(6)}
    layout = {
        f"topic-{t:02d}": tuple(tuple((p + t + r) % 6 for r in range(3)) for p in range(partitions))
        for t in range(topics)
    }
    return ClusterLayout(brokers, layout)


def whatif(
    bridge: AssignorBridge, members: int, topics: int, partitions: int, runs: int
) -> dict[str, dict[str, object]]:
    cluster = whatif_cluster(topics, partitions)
    names = tuple(cluster.topics)
    fresh = GroupInput(tuple(Member(f"member-{i:04d}", names) for i in range(members)), "what-if")
    racked = GroupInput(tuple(Member(f"member-{i:04d}", names, rack=RACKS[i % 3]) for i in range(members)), "racks")
    figures: dict[str, dict[str, object]] = {}
    for assignor in ASSIGNORS:
        seconds, result = best_of(runs, partial(bridge.assign, fresh, cluster, assignor))
        previous = result.assignment
        changed = rejoined_group(previous, names, assignor, members)
        owned_s, owned = best_of(runs, partial(bridge.assign, changed, cluster, assignor))
        racks_s, racked_result = best_of(runs, partial(bridge.assign, racked, cluster, assignor))
        moved = sum(1 for m, parts in owned.assignment.items() for tp in parts if tp not in set(previous.get(m, ())))
        figures[assignor] = {
            "fresh_seconds": round(seconds, 3),
            "fresh_assign_seconds": round(result.assign_seconds, 3),
            "owned_seconds": round(owned_s, 3),
            "owned_assign_seconds": round(owned.assign_seconds, 3),
            "owned_rounds": len(owned.rounds),
            "owned_moved_partitions": moved,
            "racks_seconds": round(racks_s, 3),
            "racks_assign_seconds": round(racked_result.assign_seconds, 3),
        }
        log(
            f"  {assignor:<19} fresh {seconds:6.3f}s (assign {result.assign_seconds:.3f}s)"
            f" | owned {owned_s:6.3f}s (assign {owned.assign_seconds:.3f}s, {len(owned.rounds)} round(s),"
            f" {moved} partitions moved) | racks {racks_s:6.3f}s (assign {racked_result.assign_seconds:.3f}s)"
        )
    return figures


def server_whatif(
    bridge: AssignorBridge, members: int, topics: int, partitions: int, runs: int
) -> dict[str, dict[str, object]]:
    """The server-side assignors on the same group: fresh, then after 100 left and 200 joined."""
    cluster = whatif_cluster(topics, partitions)
    names = tuple(cluster.topics)
    fresh = ConsumerGroupInput(tuple(ConsumerMember(f"member-{i:04d}", names) for i in range(members)), "what-if")
    figures: dict[str, dict[str, object]] = {}
    for assignor in SERVER_ASSIGNORS:
        seconds, result = best_of(runs, partial(bridge.server_assign, fresh, cluster, assignor))
        previous = result.assignment
        stay = [f"member-{i:04d}" for i in range(min(100, members), members)]
        joined = [f"joined-{i:04d}" for i in range(min(200, members))]
        changed = ConsumerGroupInput(
            tuple(ConsumerMember(m, names, tuple(previous.get(m, ()))) for m in stay)
            + tuple(ConsumerMember(m, names) for m in joined),
            "owned",
        )
        owned_s, owned = best_of(runs, partial(bridge.server_assign, changed, cluster, assignor))
        moved = sum(1 for m, parts in owned.assignment.items() for tp in parts if tp not in set(previous.get(m, ())))
        figures[assignor] = {
            "fresh_seconds": round(seconds, 3),
            "fresh_assign_seconds": round(result.assign_seconds, 3),
            "owned_seconds": round(owned_s, 3),
            "owned_assign_seconds": round(owned.assign_seconds, 3),
            "owned_moved_partitions": moved,
        }
        log(
            f"  server {assignor:<12} fresh {seconds:6.3f}s (assign {result.assign_seconds:.3f}s)"
            f" | owned {owned_s:6.3f}s (assign {owned.assign_seconds:.3f}s, {moved} partitions moved)"
        )
    return figures


def rejoined_group(
    previous: Mapping[str, tuple[TopicPartition, ...]], names: tuple[str, ...], assignor: AssignorName, members: int
) -> GroupInput:
    """Every 10th member left, 200 new ones joined, the rest rejoin holding their assignment."""
    stay = [
        Member.rejoining(f"member-{i:04d}", names, assignor, previous[f"member-{i:04d}"], 1)
        for i in range(members)
        if i % 10 != 0
    ]
    join = [Member.rejoining(f"member-new-{i:03d}", names, assignor, None, -1) for i in range(200)]
    return GroupInput(tuple(stay + join), "owned")


# ---------------------------------------------------------------- Kafka's scale tests


@dataclass(frozen=True)
class ScaleTest:
    name: str
    timeout_s: int
    has_consumer_rack: bool
    topic_count: int
    partition_count: int
    consumer_count: int
    topics_of: Callable[[int, list[str]], list[str]]


def scale_tests() -> list[ScaleTest]:
    def uniform(i: int, topics: list[str]) -> list[str]:
        return topics

    def last_on_one_topic(i: int, topics: list[str]) -> list[str]:
        return topics[:1] if i == 2_000 - 1 else topics

    def halves(i: int, topics: list[str]) -> list[str]:
        half = len(topics) // 2
        return topics[:half] if i % 4 == 0 else topics[half:]

    out = []
    for rack in (False, True):
        big = 50 if rack else 500  # Kafka's own numbers: fewer topics for the rack-aware runs
        out += [
            ScaleTest("testLargeAssignmentAndGroupWithUniformSubscription", 30, rack, big, 2_000, 2_000, uniform),
            ScaleTest(
                "testLargeAssignmentAndGroupWithNonEqualSubscription", 90, rack, big, 2_000, 2_000, last_on_one_topic
            ),
            ScaleTest(
                "testAssignmentAndGroupWithNonEqualSubscriptionNotTimeout",
                90,
                rack,
                50 if rack else 100,
                200,
                500,
                halves,
            ),
        ]
    return out


def canonical(prefix: str, i: int, max_num: int) -> str:
    return prefix + str(i).zfill(len(str(max_num)))


def kafka_cluster(topics: list[str], partition_count: int) -> ClusterLayout:
    """`initializeRacks`: replication factor 3 on 9 brokers in racks a/b/c; `partitionInfos` places
    partition i of the k-th topic on brokers (i + k + j) % 9."""
    shapes = [tuple((start + j) % 9 for j in range(3)) for start in range(9)]
    layout = {name: tuple(shapes[(i + k) % 9] for i in range(partition_count)) for k, name in enumerate(topics)}
    return ClusterLayout({b: RACKS[b % 3] for b in range(9)}, layout)


def run_scale_test(bridge: AssignorBridge, test: ScaleTest, flavor: AssignorName) -> tuple[float, float]:
    """Kafka's flow: assign; each consumer but the first rejoins with its partitions at
    generation 1 (built as StickyAssignorTest / CooperativeStickyAssignorTest build it); assign."""
    start = time.perf_counter()
    topics = [canonical("t", i, test.topic_count) for i in range(test.topic_count)]
    cluster = kafka_cluster(topics, test.partition_count)
    consumers = [canonical("c", i, test.consumer_count) for i in range(test.consumer_count)]

    def rack(i: int) -> str | None:
        return RACKS[i % 3] if test.has_consumer_rack else None

    hooks = KafkaTestHooks(prefer_rack_aware_logic=True)
    first = GroupInput(
        tuple(Member(c, tuple(test.topics_of(i, topics)), rack=rack(i)) for i, c in enumerate(consumers))
    )
    r1 = bridge.assign(first, cluster, flavor, settle=False, hooks=hooks)
    members = [first.members[0]]
    for i, c in enumerate(consumers[1:], start=1):
        got = r1.assignment[c]
        if flavor == "sticky":  # user data carries the assignment; the test builds no rack
            members.append(
                Member(
                    c, tuple(test.topics_of(i, topics)), got, 1, None, None, protocol.encode_sticky_user_data(got, 1)
                )
            )
        else:  # the test assignor's own user data (its generation is still -1), the consumer's rack
            members.append(
                Member(
                    c,
                    tuple(test.topics_of(i, topics)),
                    got,
                    1,
                    None,
                    rack(i),
                    protocol.encode_cooperative_user_data(-1),
                )
            )
    r2 = bridge.assign(GroupInput(tuple(members)), cluster, flavor, settle=False, hooks=hooks)
    return time.perf_counter() - start, r1.assign_seconds + r2.assign_seconds


def leaving_and_random(
    bridge: AssignorBridge, flavor: AssignorName, *, has_consumer_rack: bool, seed: int
) -> tuple[float, float]:
    """testLargeAssignmentWithMultipleConsumersLeavingAndRandomSubscription (@Timeout(60)), seeded."""
    start = time.perf_counter()
    rand = random.Random(seed)
    topics = [canonical("t", i, 40) for i in range(40)]
    counts = [rand.randrange(10) + 1 for _ in topics]
    shapes = [tuple((s + j) % 9 for j in range(3)) for s in range(9)]
    layout = {
        t: tuple(shapes[(i + k) % 9] for i in range(n)) for k, (t, n) in enumerate(zip(topics, counts, strict=True))
    }
    cluster = ClusterLayout({b: RACKS[b % 3] for b in range(9)}, layout)
    subs: dict[str, tuple[str, ...]] = {}
    for i in range(200):
        chosen, j = [], 0
        while j < rand.randrange(20):
            chosen.append(topics[rand.randrange(40)])
            j += 1
        subs[canonical("c", i, 200)] = tuple(chosen)

    def rack(name: str) -> str | None:
        return RACKS[int(name[1:]) % 3] if has_consumer_rack else None

    hooks = KafkaTestHooks(prefer_rack_aware_logic=True)
    r1 = bridge.assign(
        GroupInput(tuple(Member(c, t, rack=rack(c)) for c, t in subs.items())),
        cluster,
        flavor,
        settle=False,
        hooks=hooks,
    )
    leaving = {canonical("c", rand.randrange(200), 200) for _ in range(50)}
    members = []
    for c, t in subs.items():
        if c in leaving:
            continue
        got = r1.assignment[c]
        if c == "c000":
            members.append(Member(c, t, rack=rack(c)))
        elif flavor == "sticky":
            members.append(Member(c, t, got, 1, None, None, protocol.encode_sticky_user_data(got, 1)))
        else:
            members.append(Member(c, t, got, 1, None, rack(c), protocol.encode_cooperative_user_data(-1)))
    r2 = bridge.assign(GroupInput(tuple(members)), cluster, flavor, settle=False, hooks=hooks)
    return time.perf_counter() - start, r1.assign_seconds + r2.assign_seconds


def kafka_scale(bridge: AssignorBridge, runs: int, only: str = "") -> dict[str, dict[str, object]]:
    figures: dict[str, dict[str, object]] = {}
    flavors: tuple[AssignorName, ...] = ("sticky", "cooperative-sticky")
    cases: list[tuple[str, int, Callable[[AssignorName], tuple[float, float]]]] = []
    for test in scale_tests():
        label = f"{test.name}[hasConsumerRack={str(test.has_consumer_rack).lower()}]"
        cases.append((label, test.timeout_s, partial(run_scale_test, bridge, test)))
    for rack in (False, True):
        label = (
            f"testLargeAssignmentWithMultipleConsumersLeavingAndRandomSubscription[hasConsumerRack={str(rack).lower()}]"
        )
        cases.append((label, 60, partial(leaving_and_random, bridge, has_consumer_rack=rack, seed=1)))
    for label, limit, run in cases:
        if only not in label:
            continue
        for flavor in flavors:
            measured = [run(flavor) for _ in range(runs)]
            wall, jvm = min(measured)
            key = f"{'Sticky' if flavor == 'sticky' else 'CooperativeSticky'}AssignorTest.{label}"
            figures[key] = {
                "seconds": round(wall, 2),
                "assign_seconds": round(jvm, 2),
                "timeout": limit,
                "ratio": round(wall / limit, 3),
                "assign_ratio": round(jvm / limit, 3),
            }
            log(f"  {key}: {wall:6.2f}s end to end (assign {jvm:5.2f}s) vs @Timeout({limit}) -> {wall / limit:.2f}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=1_000)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--partitions", type=int, default=100, help="per topic")
    parser.add_argument("--runs", type=int, default=3, help="what-if runs per figure (best kept)")
    parser.add_argument("--scale-runs", type=int, default=1, help="runs per Kafka scale test (best kept)")
    parser.add_argument("--skip-scale", action="store_true", help="what-if figures only")
    parser.add_argument("--scale-only", default="", metavar="TEXT", help="only the scale tests whose name holds TEXT")
    args = parser.parse_args()

    start = time.perf_counter()
    with AssignorBridge(heap="3g", timeout_s=900) as bridge:
        log(f"assignor JVM up in {time.perf_counter() - start:.1f}s (kafka-clients {bridge.kafka_clients_version})")
        size = f"{args.members} members, {args.topics} topics x {args.partitions} partitions"
        log(f"what-if: {size} (best of {args.runs})")
        what = whatif(bridge, args.members, args.topics, args.partitions, args.runs)
        log("the consumer protocol's server-side assignors (Kafka 4.4 group coordinator):")
        server = server_whatif(bridge, args.members, args.topics, args.partitions, args.runs)
        scale: dict[str, dict[str, object]] = {}
        if not args.skip_scale:
            log("Kafka's sticky scale tests (exact sizes), against their JUnit @Timeout:")
            scale = kafka_scale(bridge, args.scale_runs, args.scale_only)
        version = bridge.kafka_clients_version
        coordinator = bridge.group_coordinator_version
    worst = max((float(str(f["ratio"])) for f in scale.values()), default=0.0)
    print(
        json.dumps(
            {
                "bench": "assignor_whatif",
                "kafka_clients": version,
                "members": args.members,
                "partitions": args.topics * args.partitions,
                "whatif": what,
                "group_coordinator": coordinator,
                "server_whatif": server,
                "kafka_scale": scale,
                "worst_ratio": round(worst, 3),
                "targets": {"ratio": 1.0},
            }
        )
    )


if __name__ == "__main__":
    main()
