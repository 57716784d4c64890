"""`python -m stack up [--lake local|s3] | down | status`: the running topology (see the package docstring)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from stack.processes import StackError
from stack.state import stack_root
from stack.topology import Topology


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stack", description=__doc__)
    parser.add_argument("verb", choices=["up", "down", "status"])
    parser.add_argument("--root", type=Path, default=None, help="the stack's folder (default: var/stack)")
    parser.add_argument("--lake", choices=["local", "s3"], default="local",
                        help="up: the lake in var/stack/lake (default) or in the object store's bucket")  # fmt: skip
    parser.add_argument("--zk-root", type=Path, default=None,
                        help="up: the ZooKeeper sandbox's folder (default: the sandbox CLI's)")  # fmt: skip
    parser.add_argument("--kraft-root", type=Path, default=None,
                        help="up: the KRaft sandbox's folder (default: the sandbox CLI's)")  # fmt: skip
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the readiness polls
    topology = Topology((args.root or stack_root()).resolve())
    try:
        if args.verb == "up":
            state = topology.up(args.lake, {"zk": args.zk_root, "kraft": args.kraft_root})
            print(json.dumps({"urls": state.urls, "lake_root": state.lake_root, "pids": state.pids}, indent=2))
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


if __name__ == "__main__":
    sys.exit(main())
