"""Benchmark: a Prometheus scrape of `/metrics` (the api-server plugin's app) on a big lake.

A synthetic lake (the default format, Delta) written by the real writers: a metadata snapshot of
(`synthetic_cluster.healthy_cluster`, `snapshot_batch`) with its `isr_health` findings, and a group
collection of `--groups` groups x `--group-partitions` partitions (`group_batch`) with its
`lag_status` / `lag_time` findings, published as `analysis.runner` publishes them.

The app runs its metrics refresher as deployed (`web.metrics`: a thread listing the commit logs every
`--refresh-seconds`, default the product's 5 s, re-reading and pre-rendering after a commit).
`cold_seconds`: the process' first scrape (nothing ready yet: it reads and renders inline);
`seconds`: a scrape through the real app (FastAPI's TestClient), best of `--runs`, between two commits
(what Prometheus sees every 15 s between two collections);
then a new group collection is committed and the refresher left to find it on its own:
`refresh_seconds`: from the commit landing to its rendering being ready (the wait for the refresher's
next listing included), `refresh_work_seconds`: of which the refresher's own listing, read and render;
`first_seconds`: the first scrape after that, which the benchmark checks serves the new commit: what a
Prometheus scrape waits right after a commit;
`baseline_seconds`: the same app with no refresher, reading the lake and rendering on every scrape, best
of `--runs`, in the same run; `ratio` = baseline / seconds.
Target: `seconds` and `first_seconds` <= 1 s at 100,000 partitions and 500 x 20.
Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
from _timing import best_of
from fastapi.testclient import TestClient
from synthetic_cluster import healthy_cluster

from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.model.groups import Commit, ConsumerGroup, GroupMember, GroupSnapshot, offset_rows
from kafka_ops.settings import ClusterConfig, Settings, WebSettings
from kafka_ops.snapshot.tables import snapshot_batch
from kafka_ops.sources.groups.tables import group_batch
from kafka_ops.web.app import build_app
from kafka_ops.web.metrics import REFRESH_SECONDS, MetricsEndpoint

CLUSTER = "healthy"
AT = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def analysis(lake: Lake, snapshot_id: str, source: str, at: datetime, tables: dict[str, list[dict[str, Any]]]) -> None:
    """Publish `tables` as the analysis of `snapshot_id`, as `analysis.runner` does."""
    counts = {t: {"ok": len(rows)} for t, rows in tables.items()}
    run = pa.table({
        "snapshot_id": [snapshot_id], "captured_at": pa.array([at], pa.timestamp("us", tz="UTC")),
        "analysed_at": pa.array([at + timedelta(seconds=30)], pa.timestamp("us", tz="UTC")), "source": [source],
        "detectors": [sorted(tables)], "findings": [json.dumps(counts)],
    })  # fmt: skip
    arrow = {t: pa.Table.from_pylist([{"snapshot_id": snapshot_id, **r} for r in rows]) for t, rows in tables.items()}
    lake.publish(Batch(f"{snapshot_id}.analysis", CLUSTER, at, {"analysis_runs": run, **arrow}, "analysis_runs"))


def build_lake(root: Path, partitions: int, groups: int, per_group: int) -> tuple[Lake, GroupSnapshot]:
    """The lake, and its group collection (to commit again later)."""
    lake, rng = open_lake(root), random.Random(7)  # the default format (Delta), as the settings below
    snap = healthy_cluster(partitions=partitions, topics=max(1, partitions // 50))
    snap.captured_at, snap.snapshot_id, snap.cluster = AT, "s1", CLUSTER
    lake.publish(snapshot_batch(snap))
    health = [
        {"topic": t, "partition": p, "replicas": list(r), "isr": list(r), "leader": r[0], "status": "ok",
         "under_replicated": False, "under_min_isr": False, "at_min_isr": False, "offline": False, "severity": "ok"}
        for t, a in snap.topics.items() for p, r in a.partitions.items()
    ]  # fmt: skip
    analysis(lake, "s1", "snapshots", AT, {"isr_health": health})
    topics = sorted(snap.topics)
    ends, offsets, described, status, times = {}, [], [], [], []
    for g in range(groups):
        topic, group = topics[g % len(topics)], f"group-{g:04d}"
        tps = [(topic, p % len(snap.topics[topic].partitions)) for p in range(per_group)]
        committed = {}
        for tp in tps:
            ends[tp] = end = ends.get(tp) or rng.randrange(1_000, 1_000_000)
            committed[tp] = Commit(end - rng.randrange(0, 500))
        members = tuple(GroupMember(f"{group}-m{i}", None, f"client-{i}", f"/10.0.{g % 250}.{i}", tuple(tps[i::4]))
                        for i in range(4))  # fmt: skip
        described.append(ConsumerGroup(group, "Stable", "consumer", "range", members))
        rows = offset_rows(group, committed, tps, frozenset(snap.partition_states), ends)
        offsets += rows
        for o in rows:
            key = {"group_id": group, "topic": o.topic, "partition": o.partition}
            status.append({**key, "status": "OK", "committed_offset": o.committed_offset, "lag": o.lag,
                           "lag_end": o.lag, "complete": 1.0, "severity": "ok"})  # fmt: skip
            times.append({**key, "lag": o.lag, "lag_seconds": float(o.lag or 0) / 10, "method": "interpolated",
                          "severity": "ok"})  # fmt: skip
    collected = AT + timedelta(seconds=20)
    collection = GroupSnapshot(CLUSTER, "g1", collected, "k1:9092", tuple(described), tuple(offsets), ends)
    lake.publish(group_batch(collection))
    group_rows = [{"group_id": g.group_id, "state": "Stable", "status": "OK", "severity": "ok"} for g in described]
    findings = {"lag_status_partitions": status, "lag_status_groups": group_rows, "lag_time_partitions": times}
    analysis(lake, "g1", "group_snapshots", collected, findings)
    return lake, collection


def scrape(client: TestClient) -> bytes:
    response = client.get("/metrics")
    if response.status_code != 200:
        raise SystemExit(f"scrape failed: {response.status_code} {response.text[:300]}")
    return response.content


def groups_collected_at(body: bytes) -> float:
    """`kafka_ops_collected_timestamp_seconds` of the groups, as scraped."""
    line = f'kafka_ops_collected_timestamp_seconds{{cluster="{CLUSTER}",source="groups"}} '.encode()
    start = body.index(line) + len(line)
    return float(body[start : body.index(b"\n", start)])


def refreshed(endpoint: MetricsEndpoint, snapshot_id: str, profile: str, timeout: float) -> float:
    """Seconds until the refresher, left alone, has read collection `snapshot_id` and rendered `profile`."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        ready = endpoint.ready
        if (
            ready is not None
            and all(v.groups is not None and v.groups.commit["snapshot_id"] == snapshot_id for v in ready.views)
            and any(key[0] == profile for key in ready.renderings)
        ):
            return time.perf_counter() - start
        time.sleep(0.005)
    raise SystemExit(f"the refresher did not render collection {snapshot_id} within {timeout} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--group-partitions", type=int, default=20)
    parser.add_argument("--profile", default="kafka-lag-exporter")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--refresh-seconds", type=float, default=REFRESH_SECONDS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lake, collection = build_lake(Path(tmp), args.partitions, args.groups, args.group_partitions)
        settings = Settings(tmp, (ClusterConfig(CLUSTER),), WebSettings(args.profile))
        now = AT + timedelta(minutes=2)  # the batches are fresh
        app = build_app(settings, clock=lambda: now, refresh_seconds=args.refresh_seconds)
        with TestClient(app) as client:  # its shutdown stops the refresher
            cold, body = best_of(1, lambda: scrape(client))
            seconds, _ = best_of(args.runs, lambda: scrape(client))
            again = dataclasses.replace(collection, snapshot_id="g2", captured_at=AT + timedelta(seconds=80))
            lake.publish(group_batch(again))
            refresh = refreshed(app.state.metrics, "g2", args.profile, timeout=600)
            ready = app.state.metrics.ready
            first, served = best_of(1, lambda: scrape(client))
            if groups_collected_at(served) != again.captured_at.timestamp():
                raise SystemExit("the scrape after the refresh did not serve the new collection")
        baseline, _ = best_of(
            args.runs,
            lambda: scrape(TestClient(build_app(settings, reuse=False, clock=lambda: now, refresh_seconds=None))),
        )
    figures = {
        "bench": "metrics_scrape", "partitions": args.partitions, "groups": args.groups,
        "group_partitions": args.group_partitions, "profile": args.profile, "bytes": len(body),
        "seconds": round(seconds, 4), "first_seconds": round(first, 4), "refresh_seconds": round(refresh, 3),
        "refresh_work_seconds": round(ready.seconds, 3), "refresh_interval_seconds": args.refresh_seconds,
        "cold_seconds": round(cold, 3), "baseline_seconds": round(baseline, 3), "ratio": round(baseline / seconds, 1),
        "target_seconds": 1.0,
    }  # fmt: skip
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
