"""The Delta lake on an S3-compatible store (a real moto server): publish and committed reads with
the topology's AWS variables, the conditional puts that make concurrent Delta commits safe (checked
on the server itself first), and two writer processes racing on the same tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.object_store import ConditionalStore, s3_location
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[3]
EXPECTED_ROWS = {name: t.num_rows for name, t in snapshot_batch(small_snapshot("x")).tables.items()}


def test_publish_and_read_back_on_s3(s3_root: str) -> None:
    lake = open_lake(s3_root, "delta")
    assert isinstance(lake, DeltaLake) and lake.storage_options is not None
    assert "moto-test-secret" not in repr(lake.storage_options)  # credentials stay in the environment
    lake.publish(snapshot_batch(small_snapshot("s1")))
    lake.publish(snapshot_batch(small_snapshot("s2")))
    assert lake.latest_snapshot_id("c1") == "s2"
    for table, rows in EXPECTED_ROWS.items():
        assert lake.read(table, "c1").num_rows == 2 * rows, table
    # the tables are Delta tables in the bucket, with a log
    assert lake.fs.get_file_info(f"{lake.base}/snapshots/_delta_log/00000000000000000000.json").is_file
    assert open_lake(s3_root, "delta").latest_snapshot_id("c1") == "s2"  # a new process's view


def test_the_server_answers_conditional_writes(s3_root: str) -> None:
    """What delta-rs relies on: of writers racing to create one key with If-None-Match, exactly one
    wins; a replace with a stale ETag (If-Match) is refused (moto up to 5.2.0 answered wrongly)."""
    store = ConditionalStore(s3_location(s3_root))
    path = s3_root.removeprefix("s3://") + "/_race/key"
    barrier = threading.Barrier(8)
    wins: list[str] = []

    def create(i: int) -> None:
        barrier.wait()
        if store.create(path, f"writer {i}".encode()) is not None:
            wins.append(str(i))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    current = store.read(path)
    assert current is not None and current.content == f"writer {wins[0]}".encode()
    replaced = store.replace(path, b"second", current.etag)
    assert replaced is not None
    assert store.replace(path, b"lost", current.etag) is None  # stale ETag
    assert store.delete(path, current.etag) is False
    assert store.delete(path, replaced) is True
    assert store.read(path) is None


def test_two_writer_processes_race_on_s3(s3_root: str, tmp_path: Path) -> None:
    """Two processes publish batches to the same Delta tables at once: every Delta commit a writer lost
    is retried, so every batch it reports published is there whole, and no commit overwrote another."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins")])}
    barrier = tmp_path / "ready"
    barrier.mkdir()
    writers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.integration.s3.writers", s3_root, name, "3", str(barrier), "2"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for name in ("a", "b")
    ]  # fmt: skip
    published: list[str] = []
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        result = json.loads(out.splitlines()[-1])
        assert result["errors"] == []
        published += result["published"]
    assert sorted(published) == ["a-0", "a-1", "a-2", "b-0", "b-1", "b-2"]
    lake = DeltaLake(s3_root)
    assert sorted(lake.snapshots("c1").column("snapshot_id").to_pylist()) == sorted(published)
    for table, rows in EXPECTED_ROWS.items():
        if rows:
            counts = Counter(lake.read(table, "c1").column("snapshot_id").to_pylist())
            assert counts == dict.fromkeys(published, rows), table
    # one Delta version per commit, none lost: both writers' commits are in the log
    history = lake.open_table("snapshots")
    assert history is not None and len(history.history()) == len(published)
