"""`--detectors` for the analysis benchmarks: every detector by default (the published figures); a
few of them at the toy size `make test` runs, which checks the benchmark's own code in seconds
(each detector is tested on its own under tests/)."""

from __future__ import annotations

import argparse

from kafka_ops.analysis.detector import Detector
from kafka_ops.detectors.registry import DETECTORS


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--detectors", default="all", help=f"comma-separated, of {', '.join(DETECTORS)} (default: all of them)"
    )


def chosen(value: str) -> dict[str, Detector]:
    """The detectors `--detectors` names, in the registry's order."""
    if value == "all":
        return dict(DETECTORS)
    names = {n.strip() for n in value.split(",") if n.strip()}
    unknown = sorted(names - set(DETECTORS))
    if unknown or not names:
        raise SystemExit(f"--detectors {value!r}: no detector named {', '.join(unknown) or '(none given)'}")
    return {n: d for n, d in DETECTORS.items() if n in names}
