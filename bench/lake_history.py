"""Benchmark: the last day's Spark analysis as the lake's history grows, on Delta Lake and on Parquet.

A 20,000-partition cluster snapshotted every 5 minutes for 30 days (8,640 snapshots, 172.8M
partition-state rows; `synthetic_history.py`: every day a broker outage, flaps, visible
shrink/expand, two controller elections and a reassignment, the state carried from day to day).
A snapshot's batch holds the tables `synthetic_history.py` builds in their exact schemas
(partitions, brokers, controller, configs, reassignments, ISR change notifications, the
`snapshots` commit row), made with numpy rather than by `snapshot_batch` from a
`ClusterSnapshot`, which would take longer than the writing. Every snapshot is its own publish,
through the lakes' own writers, the same batches into two lakes:

- the Parquet lake: `Lake.publish`, all 30 days;
- the Delta lake is a lake that ran on Parquet and was migrated: its first 23 days published by
  `Lake.publish` (one file per table per snapshot, as the collectors wrote them), then converted in
  place by `kafka-ops lake migrate` (`migrate_to_delta`), then its last `--delta-days` (default 7,
  every day a 7-day history reads) published by `DeltaLake.publish`, one snapshot at a time.
  Publishing all 8,640 snapshots to Delta would take 30 to 90 minutes on this shared 2-core
  machine (0.1-0.3 s a publish, slower under load); `--delta-days 30` does it;
- maintenance as the daily `kafka_lake_maintenance` DAG runs it, `kafka_ops.lake.maintenance.
  maintain` with the default `RetentionPolicy` (35 days kept, nothing expires): right after the
  migration and then after each Delta day but the last, with `now` the next day's 00:30. It
  compacts each earlier day to one file per table (the migrated days' 288 files per table too).
  The last day is "today": written but not compacted yet, as the analysis, run every 5 minutes,
  sees it.

`--cache DIR` keeps the written lakes (and the writing's figures) under DIR for the next run of
the same size; `--write-only` writes them and stops (it starts no Spark). Analyses then work on
copies.

The last snapshot (day 30, 23:55) is analysed by every detector, `analysis.runner.analyse` as the
analysis DAG's Spark job runs it (`lake_format` "delta" or "parquet"), in one local Spark session
(2 cores, Delta's connector loaded), on each lake with 30 days of history, then 7, then 1: between
the runs the older days are deleted (Delta: a delete of their partitions, a vacuum and a
checkpoint; Parquet: their `dt=` folders removed), which is what a lake keeping 7 days or 1 day
holds. The session is warmed up at full size first (`--warm-up full`, the default): each lake is
analysed once, untimed, with the longest history, so every timed run is a warm one (the JVM's JIT
and Spark's and Delta's caches): a warm-up on a small lake left the first full-size run, the
30-day one, paying the rest of it. `--warm-up none` (the toy size in the tests) skips it. Each
timed analysis is run `--repeats` times (default 2) and the fastest is reported (every run's time
is in `runs`): on this shared 2-core machine one run of the same analysis varied by a third with the
other engineers' load, more than the growth measured.

Reports the analysis times (`seconds_{1,7,30}d_history` on Delta, `parquet_seconds_*` on
Parquet) and whether both lakes gave the same findings; `files_per_table_day`, the most files any
Delta table has on any maintained day (`files_per_table_last_day`: today's); `bytes_per_day`, a
maintained day's live data files over all tables (its cost on disk once the vacuum has deleted
the small files compaction replaced, `vacuum_retention_hours` later) and each lake's bytes on
disk right after the writing; the mean publish time. Targets: 30-day time <= 1.2x the 1-day
time, 1-day time <= 90 s, <= 24 files per table per day after maintenance. Last line: one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from functools import partial
from itertools import product
from pathlib import Path

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")

import _detectors
from _session import spark_session
from deltalake import DeltaTable
from synthetic_history import DAY, START, snapshot_batches

from kafka_ops.analysis.detector import Detector
from kafka_ops.analysis.runner import analyse
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.maintenance import maintain
from kafka_ops.lake.migrate import migrate_to_delta
from kafka_ops.lake.policy import RetentionPolicy
from kafka_ops.lake.store import Lake
from kafka_ops.thresholds import Thresholds

CLUSTER = "synth"
FORMATS = ("delta", "parquet")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--snapshots-per-day", type=int, default=DAY, help="288: one every 5 minutes")
    parser.add_argument(
        "--delta-days", type=int, default=7, help="last days written by DeltaLake.publish (earlier: Parquet, migrated)"
    )
    parser.add_argument("--histories", default="1,7,30", help="days of history the last day is analysed with")
    parser.add_argument(
        "--cache", default=None, help="keep the written lakes here and reuse them (e.g. var/bench-lake-history)"
    )
    parser.add_argument("--write-only", action="store_true", help="write the lakes (into --cache), analyse nothing")
    parser.add_argument(
        "--warm-up",
        choices=("full", "none"),
        default="full",
        help="full: analyse each lake once, untimed, before the timed runs; none: the first timed run warms up",
    )
    parser.add_argument("--workdir", default=None, help="where the analysed copies go (default: a temp dir)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each timed analysis; the fastest counts")
    _detectors.add_option(parser)
    args = parser.parse_args(argv)
    detectors = _detectors.chosen(args.detectors)
    histories = sorted({int(d) for d in args.histories.split(",")}, reverse=True)
    if histories[0] > args.days or histories[-1] < 1 or not 1 <= args.delta_days <= args.days:
        raise SystemExit(f"--histories {args.histories} and --delta-days must lie in 1..--days ({args.days})")

    with tempfile.TemporaryDirectory(prefix="bench-lake-history-", dir=args.workdir) as work:
        written, figures = written_lakes(args, Path(work))
        if args.write_only:
            print(json.dumps({"bench": "lake_history", **figures}))
            return
        if written != Path(work):  # the cached lakes stay as written: retention deletes from copies
            for fmt in FORMATS:
                shutil.copytree(written / fmt, Path(work) / fmt)
        delta, parquet = DeltaLake(f"{work}/delta"), Lake(f"{work}/parquet")
        seconds, findings, runs = analyse_histories(
            delta,
            parquet,
            histories,
            args.days,
            list(detectors.values()),
            warm_up=args.warm_up == "full",
            repeats=args.repeats,
        )

    differences = {d: findings_differences(findings["delta"][d], findings["parquet"][d]) for d in histories}
    print(json.dumps({
        "bench": "lake_history",
        "partitions": args.partitions,
        "days": args.days,
        "delta_days": args.delta_days,
        "snapshots": args.days * args.snapshots_per_day,
        "warm_up": args.warm_up,
        "repeats": args.repeats,
        "detectors": sorted(detectors),
        **{f"seconds_{d}d_history": seconds["delta"][d] for d in histories},
        **{f"parquet_seconds_{d}d_history": seconds["parquet"][d] for d in histories},
        "growth": round(seconds["delta"][histories[0]] / seconds["delta"][histories[-1]], 3),
        "parquet_growth": round(seconds["parquet"][histories[0]] / seconds["parquet"][histories[-1]], 3),
        **figures,
        "same_findings": not any(differences.values()),
        "findings_differences": {d: diff for d, diff in differences.items() if diff},
        "runs": {fmt: {f"{d}d": runs[fmt][d] for d in histories} for fmt in FORMATS},
        "findings": findings["delta"][histories[-1]],
        "targets": {
            "growth": f"seconds_{histories[0]}d_history <= 1.2 x seconds_{histories[-1]}d_history",
            f"seconds_{histories[-1]}d_history": 90,
            "files_per_table_day": 24,
        },
    }))  # fmt: skip


def written_lakes(args: argparse.Namespace, work: Path) -> tuple[Path, dict[str, object]]:
    """The folder holding both written lakes and the figures of their writing: written now into
    `work`, or into `--cache` unless a complete earlier writing of the same size is there."""
    if args.cache is None:
        root = work
    else:
        root = Path(args.cache) / f"{args.partitions}p-{args.days}d-{args.snapshots_per_day}-{args.delta_days}"
        done = root / "written.json"
        if done.exists():
            print(f"the lakes as written earlier: {root}", file=sys.stderr)
            return root, {**json.loads(done.read_text()), "written_in_this_run": False}
        shutil.rmtree(root, ignore_errors=True)  # an interrupted writing
    figures: dict[str, object] = dict(write(root, args))
    delta, parquet = DeltaLake(root / "delta"), Lake(root / "parquet")
    last = f"{START + timedelta(days=args.days - 1):%Y-%m-%d}"  # today: written, not maintained yet
    layout = {"delta": delta_layout(delta), "parquet": parquet_layout(parquet)}
    figures.update({
        "files_per_table_day": layout["delta"].most_files(exclude=last) if args.days > 1 else None,
        "files_per_table_last_day": layout["delta"].most_files(only=last),
        "parquet_files_per_table_day": layout["parquet"].most_files(exclude=last) if args.days > 1 else None,
        "bytes_per_day": layout["delta"].bytes_per_day(exclude=last) if args.days > 1 else None,
        "parquet_bytes_per_day": layout["parquet"].bytes_per_day(exclude=last) if args.days > 1 else None,
        "lake_bytes_on_disk": du(root / "delta"),
        "parquet_lake_bytes_on_disk": du(root / "parquet"),
    })  # fmt: skip
    if args.cache is not None:
        (root / "written.json").write_text(json.dumps(figures))  # last: the cache is complete
    return root, {**figures, "written_in_this_run": True}


# -- writing --------------------------------------------------------------------------------------


def write(root: Path, args: argparse.Namespace) -> dict[str, float]:
    """Every snapshot into both lakes under `root`, maintenance daily (see the module docstring);
    the writing times. The Delta lake is a Parquet lake migrated to Delta before `--delta-days`."""
    per_day, days = args.snapshots_per_day, args.days
    first_delta_day = days - args.delta_days
    parquet, before_migration, delta = Lake(root / "parquet"), Lake(root / "delta"), DeltaLake(root / "delta")
    spent: dict[str, float] = defaultdict(float)
    started = time.perf_counter()
    for i, batch in enumerate(snapshot_batches(CLUSTER, args.partitions, days * per_day, per_day=per_day)):
        day, tick = divmod(i, per_day)
        if tick == 0 and day == first_delta_day > 0:  # the operator migrates, the daily maintenance follows
            spent["migration"] += timed(partial(migrate_to_delta, root / "delta"))
            spent["maintenance"] += timed(partial(maintain, delta, RetentionPolicy(), START + timedelta(days=day)))
        spent["parquet"] += timed(partial(parquet.publish, batch))
        if day < first_delta_day:
            spent["before_migration"] += timed(partial(before_migration.publish, batch))
        else:
            spent["delta"] += timed(partial(delta.publish, batch))
        if tick == per_day - 1 and first_delta_day <= day < days - 1:
            now = START + timedelta(days=day + 1, minutes=30)
            spent["maintenance"] += timed(partial(maintain, delta, RetentionPolicy(), now))
        if tick == per_day - 1:
            print(f"day {day + 1}/{days} written ({time.perf_counter() - started:.0f}s)", file=sys.stderr, flush=True)
    return {
        "write_seconds": round(time.perf_counter() - started, 1),
        "delta_publish_seconds": round(spent["delta"] / (args.delta_days * per_day), 4),
        "parquet_publish_seconds": round(spent["parquet"] / (days * per_day), 4),
        "migration_seconds": round(spent["migration"], 2),
        "maintenance_seconds_per_day": round(spent["maintenance"] / args.delta_days, 2),
    }


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# -- layout ---------------------------------------------------------------------------------------


class Layout:
    """Data files of a lake: how many per (table, day) and their bytes per day."""

    def __init__(self, files: Iterable[tuple[str, str]]) -> None:
        self.count: dict[tuple[str, str], int] = defaultdict(int)
        self.bytes: dict[str, int] = defaultdict(int)
        for table, path in files:
            dt = day_of(path)
            self.count[table, dt] += 1
            self.bytes[dt] += os.path.getsize(path)

    def most_files(self, exclude: str | None = None, only: str | None = None) -> int:
        return max(n for (_, dt), n in self.count.items() if dt != exclude and (only is None or dt == only))

    def bytes_per_day(self, exclude: str) -> int:
        days = [b for dt, b in self.bytes.items() if dt != exclude]
        return round(sum(days) / len(days))


def delta_layout(lake: DeltaLake) -> Layout:
    """The live files of every Delta table's latest version (not those a vacuum has yet to delete)."""
    return Layout(
        (Path(t.table_uri).name, uri.removeprefix("file://")) for t in delta_tables(lake) for uri in t.file_uris()
    )


def parquet_layout(lake: Lake) -> Layout:
    return Layout((p.parts[-4], str(p)) for p in Path(lake.base).glob(f"*/cluster={CLUSTER}/dt=*/*.parquet"))


def delta_tables(lake: DeltaLake) -> list[DeltaTable]:
    return [DeltaTable(str(p.parent)) for p in sorted(Path(lake.base).glob("*/_delta_log"))]


def day_of(path: str) -> str:
    return next(part.removeprefix("dt=") for part in path.split("/") if part.startswith("dt="))


def partition_days(paths: Iterable[str]) -> set[str]:
    return {day_of(p) for p in paths}


def du(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


# -- analysis -------------------------------------------------------------------------------------


def analyse_histories(
    delta: DeltaLake,
    parquet: Lake,
    histories: list[int],
    days: int,
    detectors: list[Detector],
    *,
    warm_up: bool,
    repeats: int,
) -> tuple[
    dict[str, dict[int, float]], dict[str, dict[int, dict[str, dict[str, int]]]], dict[str, dict[int, list[float]]]
]:
    """The last snapshot analysed by `detectors` on each lake with each history (longest first, older days deleted
    between the runs), after an untimed analysis of each lake with the longest history if `warm_up`,
    `repeats` times each; the fastest run's seconds, the findings counts, and every run's seconds, by
    format and days of history."""
    seconds: dict[str, dict[int, float]] = {fmt: {} for fmt in FORMATS}
    findings: dict[str, dict[int, dict[str, dict[str, int]]]] = {fmt: {} for fmt in FORMATS}
    runs: dict[str, dict[int, list[float]]] = {fmt: defaultdict(list) for fmt in FORMATS}
    with spark_session("kafka-ops bench: lake history", "delta") as spark:  # Delta's connector; reads Parquet too
        keep_days(delta, parquet, START + timedelta(days=days - histories[0]))
        for fmt, lake in (("delta", delta), ("parquet", parquet)) if warm_up else ():
            t = time.perf_counter()
            analyse(spark, lake.root, CLUSTER, detectors, Thresholds(), lake_format=fmt)
            print(f"{fmt}, warm-up: {time.perf_counter() - t:.1f}s", file=sys.stderr, flush=True)
        for history in histories:
            keep_days(delta, parquet, START + timedelta(days=days - history))
            for _, (fmt, lake) in product(range(repeats), (("delta", delta), ("parquet", parquet))):
                t = time.perf_counter()
                result = analyse(spark, lake.root, CLUSTER, detectors, Thresholds(), lake_format=fmt)
                runs[fmt][history].append(round(time.perf_counter() - t, 2))
                seconds[fmt][history] = min(runs[fmt][history])
                findings[fmt][history] = result.counts
                print(f"{fmt}, {history} days of history: {runs[fmt][history][-1]:.1f}s", file=sys.stderr, flush=True)
    return seconds, findings, runs


def findings_differences(delta: dict[str, dict[str, int]], parquet: dict[str, dict[str, int]]) -> dict[str, object]:
    """Findings tables whose counts differ between the lakes: table -> {"delta": ..., "parquet": ...}."""
    return {
        name: {"delta": delta.get(name), "parquet": parquet.get(name)}
        for name in sorted(set(delta) | set(parquet))
        if delta.get(name) != parquet.get(name)
    }


def keep_days(delta: DeltaLake, parquet: Lake, since: datetime) -> None:
    """Retention: delete every day before `since` from both lakes."""
    first = f"{since:%Y-%m-%d}"
    for table in delta_tables(delta):
        if any(dt < first for dt in partition_days(table.file_uris())):
            table.delete(f"cluster = '{CLUSTER}' AND dt < '{first}'")
            table.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
            table.create_checkpoint()
    for folder in Path(parquet.base).glob(f"*/cluster={CLUSTER}/dt=*"):
        if folder.name.removeprefix("dt=") < first:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
