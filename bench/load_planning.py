"""Benchmark: the load-aware planners on a million replicas (200 brokers), by bytes.

Synthetic cluster (in memory, `synthetic_cluster.healthy_cluster`): topics placed by Kafka's own
rack-aware algorithm on 200 brokers in 5 racks, RF 3/2/1 (80/15/5 % of topics), about 1,000,000
replicas. Every partition has a size drawn from a log-normal distribution (median 1 GB, sigma 2:
a heavy tail, capped at 500 GB) and a bytes-in rate (its size over a week's retention, times a
log-normal factor); each broker has 80 TB of disk and 1.25 GB/s of network in, `max_disk_share`
0.8. Replica counts are even, bytes are not: the heavy tail skews disk use.

Scenarios, each in a fresh subprocess (so that its peak resident memory, `ru_maxrss`, is its own):
- add_brokers: 20 empty brokers join (4 per rack), `plan_replica_balance` with the load;
- decommission: 10 brokers (2 per rack) leave, `plan_decommission` with the load;
- rebalance: `plan_replica_balance` with the load on the cluster as it is.
Each scenario also runs the count-based planner (the same call without the load) in its own
subprocess as the same-run baseline: the bytes it would move and the disk spread it would leave.
Planning time covers the load model (`cluster_load`) and the planner; building the synthetic
snapshot is not timed. After planning, the benchmark checks every hard goal itself from the plan's
targets and the sizes (rack spread, disk limit, replica limit, no new replica on a drained broker).
Each scenario also reports, over the brokers that keep replicas, the spread (max - min) before and
after of leader bytes-in and inbound bytes/s and of leader counts, and the reorders and elections.
Targets: each plan <= 60 s and <= 4 GB resident; bytes moved <= 1.05 x the lower bound where the
bound is tight (add_brokers and decommission: what must reach the new brokers, what must leave
the old ones); every hard goal held.
Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import subprocess
import sys
import time
from typing import Any

from synthetic_cluster import add_brokers, healthy_cluster

from kafka_ops.capacities import BrokerCapacity, Capacities
from kafka_ops.model.cluster import ClusterSnapshot, ReplicaSize, TopicPartition
from kafka_ops.planning import Plan, plan_decommission, plan_replica_balance
from kafka_ops.planning.load import PartitionRates, cluster_load
from kafka_ops.planning.placement import spread, spread_kept
from kafka_ops.planning.view import ClusterView

SCENARIOS = ("add_brokers", "decommission", "rebalance")
TIGHT = ("add_brokers", "decommission")
"""Scenarios whose byte bound is tight: it counts only bytes that must move."""
GB = 1_000_000_000
DISK = 80_000 * GB
NETWORK_IN = 1.25 * GB
WEEK = 7 * 86_400


def sized(snap: ClusterSnapshot, seed: int) -> dict[TopicPartition, PartitionRates]:
    """Give every replica its partition's size (heavy-tailed); returns the partitions' rates."""
    rng = random.Random(seed)
    rates: dict[TopicPartition, PartitionRates] = {}
    rows: list[ReplicaSize] = []
    for topic in sorted(snap.topics):
        for p, replicas in sorted(snap.topics[topic].partitions.items()):
            size = min(int(rng.lognormvariate(math.log(GB), 2.0)), 500 * GB)
            rates[(topic, p)] = PartitionRates(size / WEEK * rng.lognormvariate(0.0, 0.5))
            rows.extend(ReplicaSize(topic, p, b, "/data", size) for b in replicas)
    snap.replica_sizes = rows
    return rates


def build(scenario: str, args: argparse.Namespace) -> tuple[ClusterSnapshot, dict[TopicPartition, PartitionRates]]:
    shape = {"partitions": args.partitions, "topics": args.topics, "brokers": args.brokers, "racks": args.racks}
    snap = healthy_cluster(**shape)
    rates = sized(snap, args.seed)
    if scenario == "add_brokers":
        add_brokers(snap, args.add)
    return snap, rates


def leaving(snap: ClusterSnapshot, count: int) -> list[int]:
    return sorted(snap.brokers)[:count]


def run_plan(scenario: str, snap: ClusterSnapshot, rates: Any, *, load_aware: bool, args: argparse.Namespace) -> Plan:
    capacities = Capacities(BrokerCapacity(DISK, NETWORK_IN, NETWORK_IN))
    load = cluster_load(snap, capacities, rates) if load_aware else None
    if scenario == "decommission":
        return plan_decommission(snap, leaving(snap, args.decommission), load=load)
    return plan_replica_balance(snap, generate_seed=None, load=load)


def check_hard_goals(scenario: str, snap: ClusterSnapshot, plan: Plan, args: argparse.Namespace) -> list[str]:
    """Every hard goal, checked from the plan's targets and the sizes alone (not the planner's state)."""
    view = ClusterView(snap)
    sizes = {(r.topic, r.partition): r.size_bytes for r in snap.replica_sizes}
    after = dict(view.assignment)
    drained = set(leaving(snap, args.decommission)) if scenario == "decommission" else set()
    standing = {b for b in view.live if b not in drained}
    racks = len({view.rack_of[b] for b in standing})
    broken: list[str] = []
    for m in plan.reassignments:
        tp = (m.topic, m.partition)
        after[tp] = m.target
        if len(set(m.target)) != len(m.target) or drained.intersection(m.target):
            broken.append(f"{tp}: target {m.target}")
        before_racks = spread(m.current, view.rack_of)
        if not spread_kept(before_racks, spread(m.target, view.rack_of), len(m.target), racks):
            broken.append(f"{tp}: rack spread {before_racks} -> {spread(m.target, view.rack_of)}")
    used: dict[int, int] = {}
    for tp, replicas in after.items():
        for b in replicas:
            used[b] = used.get(b, 0) + sizes.get(tp, 0)
    broken.extend(f"broker {b}: {u:,} bytes above 0.8 x disk" for b, u in used.items() if u > 0.8 * DISK)
    broken.extend(f"broker {b}: still holds replicas" for b in drained if used.get(b))
    return broken


def disk_spread(plan: Plan, after: bool) -> float:
    """Max minus min disk share over the brokers that keep replicas (registered, not drained)."""
    drained = set(plan.request.get("brokers", ()))
    values = [
        (b.disk_bytes_after if after else b.disk_bytes_before) or 0
        for b in plan.brokers
        if b.registered and b.broker_id not in drained
    ]
    return round((max(values) - min(values)) / DISK, 4)


def broker_spread(plan: Plan, field: str) -> float:
    """Max minus min of a `BrokerLoad` field over the brokers that keep replicas (as `disk_spread`)."""
    drained = set(plan.request.get("brokers", ()))
    values = [getattr(b, field) or 0 for b in plan.brokers if b.registered and b.broker_id not in drained]
    return round(max(values) - min(values), 1)


def leader_figures(plan: Plan) -> dict[str, Any]:
    """Leader bytes-in (bytes/s), leader count and inbound (bytes/s) spreads before → after."""
    out: dict[str, Any] = {}
    fields = (("leader_bytes_in", "leader_bytes_in"), ("leader_count", "leaders"), ("network_in", "bytes_in"))
    for name, field in fields:
        for when in ("before", "after"):
            out[f"{name}_spread_{when}"] = broker_spread(plan, f"{field}_{when}")
    out["leader_reorders"] = plan.figures.get("leader_reorders")
    out["leader_reorders_unmoved"] = plan.figures.get("leader_reorders_unmoved")
    out["elections"] = len(plan.elections)
    return out


def child(args: argparse.Namespace) -> dict[str, Any]:
    """One scenario, one planner, in this process: its figures and this process's peak memory."""
    snap, rates = build(args.scenario, args)
    load_aware = not args.count_based
    start = time.perf_counter()
    plan = run_plan(args.scenario, snap, rates, load_aware=load_aware, args=args)
    seconds = time.perf_counter() - start
    sizes = {(r.topic, r.partition): r.size_bytes for r in snap.replica_sizes}
    moved = sum(sizes.get((m.topic, m.partition), 0) * m.moves for m in plan.reassignments)
    figures: dict[str, Any] = {
        "seconds": round(seconds, 3),
        "rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 3),
        "replicas": sum(len(r) for t in snap.topics.values() for r in t.partitions.values()),
        "brokers": len(snap.brokers),
        "moves": plan.moves,
        "bytes_moved": moved,
    }
    if load_aware:
        bound = int(plan.figures.get("lower_bound_bytes") or 0)
        before = {b.broker_id: b for b in plan.brokers}
        figures.update({
            "lower_bound_bytes": bound,
            "bytes_over_lower_bound": round(moved / bound, 4) if bound else None,
            "disk_spread_before": disk_spread(plan, after=False),
            "disk_spread_after": disk_spread(plan, after=True),
            "hard_goals_broken": check_hard_goals(args.scenario, snap, plan, args)[:5],
            "brokers_over_disk_limit_before": sum(
                1 for b in before.values() if (b.disk_bytes_before or 0) > 0.8 * DISK
            ),
            "soft_goals": {g.goal: g.status for g in plan.goals if not g.hard},
            **leader_figures(plan),
        })  # fmt: skip
    else:
        figures["disk_spread_after"] = _count_based_spread(snap, plan, sizes)
    return figures


def _count_based_spread(snap: ClusterSnapshot, plan: Plan, sizes: dict[TopicPartition, int]) -> float:
    view = ClusterView(snap)
    after = dict(view.assignment)
    after.update({(m.topic, m.partition): m.target for m in plan.reassignments})
    used = dict.fromkeys(view.live - set(plan.request.get("brokers", ())), 0)
    for tp, replicas in after.items():
        for b in replicas:
            if b in used:
                used[b] += sizes.get(tp, 0)
    return round((max(used.values()) - min(used.values())) / DISK, 4)


def spawn(scenario: str, count_based: bool, argv: list[str]) -> dict[str, Any]:
    command = [sys.executable, __file__, *argv, "--scenario", scenario, *(["--count-based"] if count_based else [])]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"scenario {scenario} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=364_000)
    parser.add_argument("--topics", type=int, default=4_000)
    parser.add_argument("--brokers", type=int, default=200)
    parser.add_argument("--racks", type=int, default=5)
    parser.add_argument("--add", type=int, default=20, help="brokers added in add_brokers")
    parser.add_argument("--decommission", type=int, default=10, help="brokers leaving in decommission")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--scenario", choices=SCENARIOS, help=argparse.SUPPRESS)
    parser.add_argument("--count-based", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scenario:
        print(json.dumps(child(args)))
        return
    argv = sys.argv[1:]
    scenarios: dict[str, dict[str, Any]] = {}
    for name in SCENARIOS:
        figures = spawn(name, False, argv)
        baseline = spawn(name, True, argv)
        figures["count_based"] = baseline
        figures["count_based_bytes_over_plan"] = (
            round(baseline["bytes_moved"] / figures["bytes_moved"], 3) if figures["bytes_moved"] else None
        )
        scenarios[name] = figures
        print(f"{name:14s} {figures['seconds']:6.2f}s {figures['rss_gb']:.2f} GB  moves {figures['moves']:>7,}  "
              f"bytes {figures['bytes_moved'] / GB:>10,.0f} GB (bound {figures['lower_bound_bytes'] / GB:,.0f} GB, "
              f"x{figures['bytes_over_lower_bound']})  disk spread {figures['disk_spread_before']:.3f} -> "
              f"{figures['disk_spread_after']:.3f}  count-based: {baseline['bytes_moved'] / GB:,.0f} GB, spread "
              f"{baseline['disk_spread_after']:.3f}  hard goals broken: {len(figures['hard_goals_broken'])}\n"
              f"{'':14s} leader bytes-in spread {figures['leader_bytes_in_spread_before'] / 1e6:,.1f} -> "
              f"{figures['leader_bytes_in_spread_after'] / 1e6:,.1f} MB/s, leader count spread "
              f"{figures['leader_count_spread_before']:.0f} -> {figures['leader_count_spread_after']:.0f}, inbound "
              f"spread {figures['network_in_spread_before'] / 1e6:,.1f} -> "
              f"{figures['network_in_spread_after'] / 1e6:,.1f} MB/s ({figures['leader_reorders']} reorders, "
              f"{figures['leader_reorders_unmoved']} of unmoved "
              f"partitions, {figures['elections']} elections)",
              flush=True)  # fmt: skip
    tight = [scenarios[n]["bytes_over_lower_bound"] for n in TIGHT if scenarios[n]["bytes_over_lower_bound"]]
    result = {
        "bench": "load_planning",
        "max_seconds": max(f["seconds"] for f in scenarios.values()),
        "max_rss_gb": max(f["rss_gb"] for f in scenarios.values()),
        "max_bytes_over_lower_bound": max(tight) if tight else 1.0,
        "hard_goals_held": all(not f["hard_goals_broken"] for f in scenarios.values()),
        "scenarios": scenarios,
        "targets": {"seconds": 60, "rss_gb": 4, "bytes_over_lower_bound": 1.05},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
