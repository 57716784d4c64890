"""Benchmark: the remediation planners on a 100,000-partition cluster, against the lower bound
on moves and against Kafka's `--generate` (full re-placement).

Synthetic clusters (in memory, `synthetic_cluster.py`): 2,000 topics x 50 partitions, RF 3/2/1
(80/15/5 % of topics), 60 brokers in 3 racks. Scenarios, each planned from its own snapshot:
- add_6_brokers: 6 empty brokers join (2 per rack), then `plan_replica_balance`;
- decommission_3_brokers: brokers 1, 2, 3 (one per rack) leave, `plan_decommission`;
- rebalance_skewed: a skewed cluster (10 heavy brokers, a heavy rack), `plan_replica_balance`.
Planning time is the planner call as an operator runs it (for the balance scenarios that includes
the planner's own `--generate` comparison), best of `--runs`. `--generate` is Kafka's algorithm
with its random draws from `random.Random(--seed)`, over the brokers the plan targets.
Targets: <= 10 s planning per scenario; moves <= 1.05 x the lower bound.
Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from _timing import best_of
from synthetic_cluster import add_brokers, healthy_cluster, skewed_cluster

from kafka_ops.model.cluster import ClusterSnapshot
from kafka_ops.planning import Plan, plan_decommission, plan_replica_balance
from kafka_ops.planning.kafka_generate import generate_full_replacement, moves_between
from kafka_ops.planning.view import ClusterView

DECOMMISSION = [1, 2, 3]


def spread(plan: Plan, after: bool) -> int:
    """Max minus min replicas over the registered brokers that keep replicas."""
    counts = [b.replicas_after if after else b.replicas_before for b in plan.brokers
              if b.registered and b.broker_id not in plan.request.get("brokers", ())]  # fmt: skip
    return max(counts) - min(counts)


def figures(snap: ClusterSnapshot, seconds: float, plan: Plan, generate_moves: int) -> dict[str, Any]:
    bound = int(plan.figures["lower_bound_moves"] or 0)
    return {
        "partitions": snap.partition_count,
        "brokers": len(snap.brokers),
        "seconds": round(seconds, 3),
        "moves": plan.moves,
        "lower_bound": bound,
        "moves_over_lower_bound": round(plan.moves / bound, 4) if bound else 1.0,
        "generate_moves": generate_moves,
        "generate_over_plan": round(generate_moves / plan.moves, 2) if plan.moves else None,
        "partitions_touched": len(plan.reassignments),
        "replica_spread_before": spread(plan, after=False),
        "replica_spread_after": spread(plan, after=True),
        "skipped": len(plan.skipped),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=2_000)
    parser.add_argument("--brokers", type=int, default=60)
    parser.add_argument("--racks", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="seed of the --generate baseline's random draws")
    args = parser.parse_args()
    shape = {"partitions": args.partitions, "topics": args.topics, "brokers": args.brokers, "racks": args.racks}

    scenarios: dict[str, dict[str, Any]] = {}

    snap = healthy_cluster(**shape)
    add_brokers(snap, 6)
    seconds, plan = best_of(args.runs, lambda: plan_replica_balance(snap, generate_seed=args.seed))
    scenarios["add_6_brokers"] = figures(snap, seconds, plan, int(plan.figures["generate_moves"] or 0))

    snap = healthy_cluster(**shape)
    seconds, plan = best_of(args.runs, lambda: plan_decommission(snap, DECOMMISSION))
    view = ClusterView(snap)
    proposal = generate_full_replacement(view, sorted(view.live - set(DECOMMISSION)), args.seed)
    scenarios["decommission_3_brokers"] = figures(snap, seconds, plan, moves_between(view.assignment, proposal))

    snap = skewed_cluster(**shape)
    seconds, plan = best_of(args.runs, lambda: plan_replica_balance(snap, generate_seed=args.seed))
    scenarios["rebalance_skewed"] = figures(snap, seconds, plan, int(plan.figures["generate_moves"] or 0))

    for name, f in scenarios.items():
        print(f"{name:24s} {f['seconds']:6.2f}s  moves {f['moves']:>7,}  lower bound {f['lower_bound']:>7,}  "
              f"ratio {f['moves_over_lower_bound']:.3f}  --generate {f['generate_moves']:>7,} "
              f"({f['generate_over_plan']}x)  spread {f['replica_spread_before']} -> {f['replica_spread_after']}",
              flush=True)  # fmt: skip
    result = {
        "bench": "remediation_planning",
        "max_seconds": max(f["seconds"] for f in scenarios.values()),
        "max_moves_over_lower_bound": max(f["moves_over_lower_bound"] for f in scenarios.values()),
        "scenarios": scenarios,
        "generate_seed": args.seed,
        "targets": {"seconds": 10, "moves_over_lower_bound": 1.05},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
