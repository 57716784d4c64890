"""Benchmark: a consumer group's page straight from its collection (Burrow's rules read from the lake
without Spark, `validation.group_checks`), against the Spark analysis of the same lake (`lag_status`,
`analysis.runner.analyse`, on a warm local session), in the same run.

A lake holds `--collections` group collections `--every-s` apart (default: a day at 5 minutes) of
`--groups` groups of one member each, every group on its own topic of `--partitions` partitions, a
producer adding 0-100 records per partition between collections; every group commits behind the head,
each commit read from the commit log twice per collection, and one group in ten stops committing for the
last 5 collections (ERR). Each collection is published as `collect_groups` publishes it (`group_batch`
through `Lake.publish`). Then the newest collection is rated `--repeats` times by each path: the paging
path (`group_checks.look`) and the analysis' (`analyse` with the `lag_status` detector, its findings
published; one untimed run first warms the session, unless `--no-spark-warm-up`). Both must give the
same rows (`same_rows`).

Reports `paging_p50_s`, `spark_p50_s` and their `ratio` (how many times sooner the paging path rates the
groups), `group_partitions`, `collections`, `error_groups`. Target: `paging_p50_s` <= 5 s at the default
size (2,000 group partitions, a day of 5-minute collections), a small part of a minute's page. Last line:
one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _session import spark_session

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.lag_status import DETECTOR
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.model.groups import Commit, ConsumerGroup, GroupMember, GroupSnapshot, LoggedCommit, offset_rows
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.thresholds import Thresholds
from kafka_ops.validation import group_checks

CLUSTER = "bench"
START = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
STOPPED_FOR = 5
"""Collections at the end during which every tenth group commits nothing."""
TARGET_S = 5.0


def publish_history(lake: Lake, groups: int, partitions: int, collections: int, every_s: int) -> str:
    """The collections, published one by one; the newest's id."""
    rng = random.Random(7)
    tps = [(f"t{g}", p) for g in range(groups) for p in range(partitions)]
    ends = dict.fromkeys(tps, 1_000)
    committed = dict.fromkeys(tps, 900)
    snapshot_id = ""
    for i in range(collections):
        at = START + timedelta(seconds=every_s * i)
        ends = {tp: end + rng.randint(0, 100) for tp, end in ends.items()}
        stopping = i >= collections - STOPPED_FOR
        for tp in tps:
            if not (stopping and int(tp[0][1:]) % 10 == 0):
                committed[tp] = max(committed[tp], ends[tp] - rng.randint(0, 30))
        described, offsets, commits = [], [], []
        for g in range(groups):
            mine = [(f"t{g}", p) for p in range(partitions)]
            member = GroupMember(f"m{g}", None, f"app-{g}", "/127.0.0.1", tuple(mine))
            described.append(ConsumerGroup(f"g{g}", "Stable", "consumer", "range", (member,)))
            offsets += offset_rows(f"g{g}", {tp: Commit(committed[tp]) for tp in mine}, mine, frozenset(ends), ends)
            if not (stopping and g % 10 == 0):
                commits += [LoggedCommit(f"g{g}", t, p, committed[(t, p)], at - timedelta(seconds=s))
                            for t, p in mine for s in (40, 10)]  # fmt: skip
        snapshot_id = f"g{i:05d}"
        lake.publish(group_batch(GroupSnapshot(
            cluster=CLUSTER, snapshot_id=snapshot_id, captured_at=at, bootstrap_servers="127.0.0.1:9092",
            groups=tuple(described), offsets=tuple(offsets), end_offsets=ends, completed_at=at, commits=tuple(commits),
        )))  # fmt: skip
    return snapshot_id


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=100, help="partitions of each group's topic")
    parser.add_argument("--collections", type=int, default=288, help="288: a day at 5 minutes")
    parser.add_argument("--every-s", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lake-format", choices=("delta", "parquet"), default="delta")
    parser.add_argument(
        "--spark-warm-up",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one untimed Spark analysis first (off for the toy size, on a session already warm)",
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="group-paging-") as work:
        lake = open_lake(Path(work) / "lake", args.lake_format)
        started = time.perf_counter()
        latest = publish_history(lake, args.groups, args.partitions, args.collections, args.every_s)
        written_s = time.perf_counter() - started
        paging, looks = [], []
        for _ in range(args.repeats):
            started = time.perf_counter()
            looks.append(group_checks.look(lake, CLUSTER, latest, Thresholds()))
            paging.append(time.perf_counter() - started)
        spark = []
        with spark_session("bench-group-paging", args.lake_format) as session:
            for timed in ((False,) if args.spark_warm_up else ()) + (True,) * args.repeats:
                started = time.perf_counter()
                analyse(session, lake.root, CLUSTER, [DETECTOR], Thresholds(), lake_format=args.lake_format)
                if timed:
                    spark.append(time.perf_counter() - started)
        same = True
        for table in ("lag_status_partitions", "lag_status_groups"):
            published = [{k: v for k, v in r.items() if k not in ("cluster", "dt")}
                         for r in lake.read(table, CLUSTER, [latest]).to_pylist()]  # fmt: skip
            same &= sorted(looks[-1].findings.rows(table) or [], key=repr) == sorted(published, key=repr)
    paging_p50, spark_p50 = statistics.median(paging), statistics.median(spark)
    print(json.dumps({
        "bench": "group_paging",
        "group_partitions": args.groups * args.partitions,
        "collections": args.collections,
        "lake_format": args.lake_format,
        "written_s": round(written_s, 1),
        "paging_p50_s": round(paging_p50, 3),
        "spark_p50_s": round(spark_p50, 3),
        "ratio": round(spark_p50 / paging_p50, 2),
        "paging_runs_s": [round(s, 3) for s in paging],
        "spark_runs_s": [round(s, 3) for s in spark],
        "error_groups": sum(p.startswith("no_group_in_err:") for p in looks[-1].problems),
        "same_rows": same,
        "targets": {f"paging_p50_s<={TARGET_S:g}": paging_p50 <= TARGET_S, "same_rows": same},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
