"""Every benchmark in `bench/`, run at toy size with the arguments `make bench` would pass (a subprocess, from
the repository root; a Spark benchmark's `main` in this process instead, on the test run's warm Spark, as
a toy size is otherwise mostly a JVM's start and warm-up), its last line parsed as JSON and its figures
checked. A benchmark nobody runs rots: a new `bench/*.py` without a toy size here fails
`test_every_benchmark_has_a_toy_size`."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"


@dataclass(frozen=True)
class Toy:
    args: tuple[str, ...]
    keys: tuple[str, ...]  # figures the JSON line must carry (dotted for nested)
    positive: tuple[str, ...] = ()  # figures that must be > 0 (numbers) or not empty (lists, objects)
    marks: tuple[pytest.MarkDecorator, ...] = ()
    in_process: bool = False  # `main(args)` on the test run's Spark (`bench/_session.py`), not a subprocess


TOYS: dict[str, Toy] = {
    "zk_snapshot": Toy(
        ("--partitions", "300", "--topics", "10", "--brokers", "3", "--runs", "1"),
        ("partitions", "seconds", "collect_seconds", "baseline_seconds", "ratio", "targets"),
        ("seconds", "collect_seconds", "baseline_seconds", "ratio"),
        (pytest.mark.integration,),
    ),
    "kraft_snapshot": Toy(
        ("--partitions", "60", "--topics", "6", "--runs", "1"),
        ("partitions", "seconds", "baseline_seconds", "ratio", "requests", "targets"),
        ("seconds", "baseline_seconds", "ratio", "requests"),
        (pytest.mark.integration,),
    ),
    "group_collection": Toy(
        ("--groups", "5", "--live-groups", "1", "--runs", "1"),
        ("groups", "group_partitions", "seconds", "baseline_seconds", "ratio", "exact_lag_rows", "targets"),
        ("groups", "group_partitions", "seconds", "baseline_seconds", "ratio", "exact_lag_rows"),
        (pytest.mark.integration,),
    ),
    "health_analysis": Toy(
        (
            "--partitions",
            "200",
            "--snapshots",
            "6",
            "--scales",
            "1,2",
            "--warm-up",
            "none",
            "--detectors",
            "isr_health,broker_attribution",
        ),
        ("partitions", "snapshots", "rows", "detectors", "seconds", "seconds_1x", "seconds_2x", "growth_2x"),
        ("seconds", "seconds_2x", "growth_2x"),
        in_process=True,
    ),
    "assignor_whatif": Toy(
        ("--members", "20", "--topics", "3", "--partitions", "10", "--runs", "1", "--scale-only", "LeavingAndRandom"),
        ("kafka_clients", "members", "partitions", "whatif", "server_whatif", "kafka_scale", "worst_ratio", "targets"),
        ("whatif", "server_whatif", "kafka_scale"),
    ),
    "log_dirs_decode": Toy(
        ("--partitions", "300", "--topics", "10", "--brokers", "3", "--runs", "1"),
        ("replicas", "decode_seconds", "parse_seconds", "publish_seconds", "seconds", "with_zk_snapshot_seconds"),
        ("replicas", "decode_seconds", "parse_seconds", "seconds"),
    ),
    "load_planning": Toy(
        ("--partitions", "3000", "--topics", "60", "--brokers", "20", "--add", "3", "--decommission", "2"),
        ("max_seconds", "max_rss_gb", "max_bytes_over_lower_bound", "scenarios.add_brokers.count_based", "targets"),
        ("max_seconds", "max_rss_gb", "max_bytes_over_lower_bound", "hard_goals_held"),
    ),
    "lake_history": Toy(
        (
            "--partitions=50",
            "--days=2",
            "--snapshots-per-day=2",
            "--delta-days=1",
            "--histories=1,2",
            "--warm-up=none",
            "--repeats=1",
            "--detectors=isr_health,broker_attribution",
        ),
        (
            "seconds_1d_history",
            "seconds_2d_history",
            "parquet_seconds_1d_history",
            "parquet_seconds_2d_history",
            "files_per_table_day",
            "bytes_per_day",
            "parquet_bytes_per_day",
            "targets",
        ),
        ("seconds_1d_history", "seconds_2d_history", "files_per_table_day", "bytes_per_day", "same_findings"),
        in_process=True,
    ),
    "metrics_scrape": Toy(
        # the refresher lists the lake every 0.5 s (5 s deployed): the toy stays well under 15 s
        ("--partitions", "2000", "--groups", "10", "--group-partitions", "5", "--runs", "1", "--refresh-seconds=0.5"),
        (
            "partitions",
            "groups",
            "bytes",
            "seconds",
            "first_seconds",
            "refresh_seconds",
            "refresh_work_seconds",
            "cold_seconds",
            "baseline_seconds",
            "ratio",
        ),
        ("bytes", "seconds", "first_seconds", "refresh_seconds", "refresh_work_seconds", "baseline_seconds", "ratio"),
    ),
    "remediation_planning": Toy(
        ("--partitions", "2000", "--topics", "50", "--brokers", "12", "--runs", "1"),
        ("max_seconds", "max_moves_over_lower_bound", "scenarios", "targets"),
        ("max_seconds", "max_moves_over_lower_bound"),
    ),
    "analysis_latency": Toy(
        (
            "--partitions=50",
            "--snapshots-per-day=2",
            "--histories=2",  # one lake, a maintained day and today: one analysis
            "--repeats=1",
            "--cold-runs=0",
            "--warm=session",
            "--detectors=isr_health,broker_attribution",
        ),
        ("p50_s", "history_ratio", "p50_by_history_days", "runs", "partition_runs.timed", "targets"),
        ("p50_s", "history_ratio", "p50_by_history_days", "targets.timed_analyses_carried_their_runs"),
        in_process=True,
    ),
    "fleet": Toy(
        (
            "--partitions=200",
            "--topics=4",
            "--brokers=3",
            "--snapshots=6",
            "--spark-cores=2",
            "--spark=session",
            "--detectors=isr_health,broker_attribution",
        ),
        ("clusters", "cpu_s_per_cluster_hour", "cycle_s", "by_spark_cores", "targets"),
        ("cpu_s_per_cluster_hour", "cycle_s", "by_spark_cores"),
        (pytest.mark.integration,),
        in_process=True,
    ),
    "group_paging": Toy(
        (
            "--groups=3",
            "--partitions=4",
            "--collections=12",
            "--every-s=60",
            "--repeats=1",
            "--lake-format=parquet",
            "--no-spark-warm-up",
        ),
        ("paging_p50_s", "spark_p50_s", "ratio", "error_groups", "same_rows", "targets"),
        ("paging_p50_s", "spark_p50_s", "ratio", "error_groups", "same_rows"),
        in_process=True,
    ),
    "delta_publish": Toy(
        ("--partitions", "500", "--snapshots", "24", "--window", "4"),
        ("delta_first_s", "delta_last_s", "parquet_first_s", "parquet_last_s", "delta_growth", "ratio", "targets"),
        ("delta_first_s", "delta_last_s", "parquet_last_s", "ratio"),
    ),
}


NO_TOY = {
    "time_to_page": (
        "it brings up the whole running topology (sandboxes, Airflow on Celery and PostgreSQL, Spark, "
        "Prometheus) and waits for real pages: minutes at any size. Its readings and the baseline's configs "
        "are tested in tests/stack/test_paging.py"
    ),
}
"""Benchmarks with no toy run here, and why."""


def benchmarks() -> list[str]:
    """What `make bench` runs: every bench/*.py but the shared `_*` modules and `synthetic_*` generators."""
    return sorted(
        p.stem for p in BENCH.glob("*.py") if not p.name.startswith("_") and not p.name.startswith("synthetic_")
    )


def test_every_benchmark_has_a_toy_size() -> None:
    assert benchmarks() == sorted([*TOYS, *NO_TOY])


def figure(result: dict[str, object], dotted: str) -> object:
    value: object = result
    for part in dotted.split("."):
        assert isinstance(value, dict) and part in value, f"no figure {dotted!r} in {result}"
        value = value[part]
    return value


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=t.marks) for n, t in TOYS.items()])
def test_benchmark_runs_at_toy_size(
    name: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    toy = TOYS[name]
    if toy.in_process:
        request.getfixturevalue("spark")  # the session `_session.spark_session` finds running
        monkeypatch.syspath_prepend(str(BENCH))  # its sibling modules, as `python bench/<name>.py` has them
        monkeypatch.chdir(REPO)
        runpy.run_path(str(BENCH / f"{name}.py"), run_name=f"bench_{name}")["main"](list(toy.args))
        stdout, stderr = capsys.readouterr()
    else:
        done = subprocess.run(
            [sys.executable, str(BENCH / f"{name}.py"), *toy.args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"bench/{name}.py exited {done.returncode}:\n{done.stderr[-4000:]}"
        stdout, stderr = done.stdout, done.stderr
    lines = stdout.strip().splitlines()
    assert lines, f"bench/{name}.py printed nothing on stdout:\n{stderr[-2000:]}"
    result = json.loads(lines[-1])
    assert result["bench"] == name
    for key in toy.keys:
        figure(result, key)
    for key in toy.positive:
        value = figure(result, key)
        assert value if isinstance(value, list | dict) else isinstance(value, int | float) and value > 0, (
            f"{name}: {key} = {value!r}"
        )
