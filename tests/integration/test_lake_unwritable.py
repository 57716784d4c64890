"""A lake that cannot be written fails a snapshot with one line naming the lake and the cause,
never a traceback, and publishes nothing: the path under a file, a read-only filesystem and a full disk.
The last two are real filesystems (a small tmpfs, then remounted read-only): as root, a read-only
directory would not stop a write, and a full disk cannot be produced any other way without filling the
machine's. Where mounting is not permitted those two cases are skipped, saying so."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_ops.lake.open import open_lake
from sandbox import SandboxCluster

pytestmark = pytest.mark.integration


FORMATS = pytest.mark.parametrize("fmt", ["delta", "parquet"])  # the default, and earlier versions' lakes
LAST_WORDS = {
    "parquet": "nothing was published",
    "delta": "it is not published (its commit row is missing); recover() removes its partial rows",
}


def snapshot_cli(sandbox: SandboxCluster, lake: Path, fmt: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", "snapshot", "--zookeeper", sandbox.zookeeper_connect,
         "--lake", str(lake), "--lake-format", fmt, "--cluster", "sandbox"],
        capture_output=True, text=True, timeout=120, check=False, env=os.environ.copy(),
    )  # fmt: skip


def assert_one_line_refusal(done: subprocess.CompletedProcess[str], lake: Path, fmt: str, cause: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    if fmt == "delta":  # on a full disk delta-rs's own writer thread (object_store 0.13.2) panics after our
        # error is raised and Rust prints that to stderr, out of Python's reach: allowed, nothing else
        rust = ("thread 'tokio-rt-worker'", "Already shut down", "stack backtrace:", "note: Some details")
        lines = [line for line in lines if line.strip() and not line.startswith(rust)]
    assert len(lines) == 1, done.stderr
    where = {"parquet": "lake", "delta": "Delta lake"}[fmt]
    assert lines[0].startswith("kafka-ops: cannot write batch ") and f"to the {where} at {lake}: " in lines[0]
    assert cause in lines[0] and lines[0].endswith(LAST_WORDS[fmt]), lines[0]


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs of our own, unmounted after the test."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "kafka-ops-test", str(mount_point)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


@FORMATS
def test_lake_path_under_a_file(healthy_sandbox: SandboxCluster, tmp_path: Path, fmt: str) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    lake = tmp_path / "a-file" / "lake"
    assert_one_line_refusal(snapshot_cli(healthy_sandbox, lake, fmt), lake, fmt, "Not a directory")


@FORMATS
def test_full_disk_then_room_again(healthy_sandbox: SandboxCluster, small_tmpfs: Path, fmt: str) -> None:
    lake = small_tmpfs / "lake"
    filler = small_tmpfs / "filler"
    with filler.open("wb") as f:  # leave less room than one snapshot's tables need
        f.write(b"\0" * (small_tmpfs.stat().st_blksize * 100))
        free = os.statvfs(small_tmpfs).f_bavail * os.statvfs(small_tmpfs).f_frsize
        f.write(b"\0" * max(0, free - 16 * 1024))
    assert_one_line_refusal(snapshot_cli(healthy_sandbox, lake, fmt), lake, fmt, "No space left on device")
    assert open_lake(lake, fmt).snapshots().num_rows == 0
    staging = lake / "_staging"
    assert not staging.exists() or not any(staging.iterdir()), "a failed publish left its staged files"

    filler.unlink()
    done = snapshot_cli(healthy_sandbox, lake, fmt)
    assert done.returncode == 0, done.stderr
    assert open_lake(lake, fmt).snapshots().num_rows == 1


@FORMATS
def test_read_only_filesystem(healthy_sandbox: SandboxCluster, small_tmpfs: Path, fmt: str) -> None:
    lake = small_tmpfs / "lake"
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    assert_one_line_refusal(snapshot_cli(healthy_sandbox, lake, fmt), lake, fmt, "Read-only file system")
