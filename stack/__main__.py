"""`python -m stack up [--lake local|s3] | down | status | soak --minutes N [--short]`: the running topology (see
the package docstring) and its soak under faults (`stack.soak`)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from stack import fleet
from stack.processes import StackError, stack_pids
from stack.state import State, stack_root
from stack.topology import ANALYSIS_SPARK, Topology


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stack", description=__doc__)
    parser.add_argument("verb", choices=["up", "down", "status", "soak"])
    parser.add_argument("--root", type=Path, default=None, help="the stack's folder (default: var/stack)")
    parser.add_argument("--lake", choices=["local", "s3"], default="local",
                        help="up: the lake in var/stack/lake (default) or in the object store's bucket")  # fmt: skip
    parser.add_argument("--zk-root", type=Path, default=None,
                        help="up: the ZooKeeper sandbox's folder (default: the sandbox CLI's)")  # fmt: skip
    parser.add_argument("--kraft-root", type=Path, default=None,
                        help="up: the KRaft sandbox's folder (default: the sandbox CLI's)")  # fmt: skip
    parser.add_argument("--snapshot-schedule", default=fleet.SNAPSHOT_SCHEDULE,
                        help="up: the snapshot DAG's cron heartbeat (default: every minute)")  # fmt: skip
    parser.add_argument("--analysis-spark", choices=ANALYSIS_SPARK, default="submit",
                        help="up: the analysis DAG's jobs through one spark-submit each (default) or on a Spark "
                        "Connect server the stack starts")  # fmt: skip
    parser.add_argument("--minutes", type=float, default=60, help="soak: how long the fault schedule runs")
    parser.add_argument("--short", action="store_true",
                        help="soak: one fault of each kind, shorter outages")  # fmt: skip
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the readiness polls
    logging.getLogger("kafka").setLevel(logging.WARNING)  # the soak's consumer group: every rebalance
    topology = Topology((args.root or stack_root()).resolve(), args.snapshot_schedule, args.analysis_spark)
    try:
        if args.verb == "up":
            state = topology.up(args.lake, {"zk": args.zk_root, "kraft": args.kraft_root})
            print(json.dumps({"urls": state.urls, "lake_root": state.lake_root, "pids": state.pids}, indent=2))
        elif args.verb == "soak":
            return soak(topology, args)
        elif args.verb == "down":
            stopped = topology.down()
            print(f"stopped: {', '.join(stopped) or 'nothing was running'}")
        else:
            status = topology.status()
            print(json.dumps(status, indent=2))
            return 0 if status["up"] else 3
    except (StackError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def soak(topology: Topology, args: argparse.Namespace) -> int:
    """Bring the stack up (or use the one that is up), soak it, bring it down, print the report; 4 when
    the report shows a failure (`stack.soak.failures`)."""
    from stack import soak  # noqa: PLC0415 - kafka-python and the lake only for the soak

    state = State.load(topology.root)
    if state is None or not topology.status()["up"]:
        topology.down()
        state = topology.up(args.lake, {"zk": args.zk_root, "kraft": args.kraft_root})
    try:
        soak.wait_for_first_snapshot(state, 900)
        report = soak.run_soak(state, soak.Clusters.of_stack(state), args.minutes, args.short)
    finally:
        topology.down()
    report["leftover_processes"] = len(stack_pids(topology.root))
    print(soak.text(report))
    print(soak.one_line(report))
    bad = soak.failures(report)
    for line in bad:
        print(f"soak failed: {line}", file=sys.stderr)
    return 4 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
